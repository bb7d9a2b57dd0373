/* Raw memory-reference stream written by the Valgrind tool tracefold-mem
 * (--raw-log=DIR): one file per thread, DIR/thread-N.bin, N numbering the
 * threads in creation order (the main thread is 0). Valgrind reuses its own
 * thread ids once a thread has exited, so they cannot name a stream.
 *
 * Plain C with fixed-width fields so that the tool (which has no libc) and the
 * C++ reader share one definition. All integers are little-endian (the tool
 * only runs on amd64-linux); a file is a header followed by records until EOF.
 */
#ifndef TRACEFOLD_MEMTRACE_RAW_FORMAT_H
#define TRACEFOLD_MEMTRACE_RAW_FORMAT_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
#define TFM_STATIC_ASSERT static_assert
#else
#include <stddef.h>
#include <stdint.h>
#define TFM_STATIC_ASSERT _Static_assert
#endif

#define TFM_RAW_MAGIC "TFMRAW\0\0" /* 8 bytes, NULs included */
#define TFM_RAW_VERSION 2u         /* 1: 24-byte records without the normalised address */

typedef struct {
  char magic[8];        /* TFM_RAW_MAGIC */
  uint32_t version;     /* TFM_RAW_VERSION */
  uint32_t record_size; /* sizeof(TfmRawRecord): lets a reader reject a mismatch */
  uint32_t thread;      /* creation-order number, as in the file name */
  uint32_t pid;         /* the traced process */
} TfmRawHeader;

/* flags */
#define TFM_RAW_STORE 0x1u /* else a load */
/* Bits 1-2 of flags: what the data address was normalised against (version
 * 2). The normalised form names the same byte in every run and, where the
 * threads' code is the same, in every thread: */
#define TFM_RAW_KIND_SHIFT 1
#define TFM_RAW_KIND_MASK 0x6u
#define TFM_ADDR_OTHER 0u  /* none fits (e.g. an mmap of the program's own): offset = daddr */
#define TFM_ADDR_STATIC 1u /* region = module id (modules.bin), offset from its base */
#define TFM_ADDR_STACK 2u  /* owner = thread, offset from its stack base (negative below) */
#define TFM_ADDR_HEAP 3u   /* region = allocation context, ordinal, owner: see below */

/* One access. A guest instruction may make several (a read-modify-write
 * instruction, a CAS, a masked vector move, a dirty helper such as fxsave):
 * `index` is the access's position among the instruction's accesses in
 * Valgrind's IR, 0 first, fixed when the instruction is translated. So
 * (iaddr, index) names one access site, and a guarded access whose guard is
 * false at run time leaves its index unused (a masked load of lanes 0 and 2
 * records indices 0 and 2). Records of one execution come in index order.
 * An access that is both read and written (a dirty helper's Ifx_Modify, a
 * CAS) is two records: the load, then the store.
 *
 * The normalised address (version 2) by kind:
 *  - static: a byte of a loaded file's mappings, or of the anonymous mapping
 *    right after them (.bss); region = module id, offset = daddr minus the
 *    start of the module's mapping at file offset 0 (its load base);
 *  - stack: the accessing thread's own stack; owner = its number, offset =
 *    daddr minus the stack pointer the thread started with;
 *  - heap: a block of the tool's malloc replacement; region = the call-path
 *    context of the allocating call, owner = the allocating thread, ordinal =
 *    how many blocks that thread allocated in that context before (from 0),
 *    offset = daddr minus the block's start. free() ends the block: its
 *    memory is not heap again until a new block covers it.
 * Unused fields are 0. */
typedef struct {
  uint64_t iaddr;   /* guest address of the instruction */
  uint64_t daddr;   /* data address accessed */
  uint32_t context; /* call-path context id (contexts.bin); 0 = the thread's root */
  uint16_t size;    /* bytes; larger accesses are split in 65535-byte pieces */
  uint8_t index;    /* access site within the instruction (saturates at 255) */
  uint8_t flags;    /* TFM_RAW_STORE | kind << TFM_RAW_KIND_SHIFT */
  uint32_t region;  /* static: module id; heap: allocation context */
  uint32_t ordinal; /* heap: allocation ordinal */
  uint32_t owner;   /* heap: allocating thread; stack: the thread */
  uint32_t reserved;
  int64_t offset; /* within the region */
} TfmRawRecord;

/* DIR/modules.bin, written at exit: the modules that static addresses and
 * code addresses (instructions, call sites) name. Header as contexts.bin's
 * (record_size = sizeof(TfmModRecord), the fixed part), then per module a
 * TfmModRecord followed by name_len bytes of its file name (no NUL). Ids
 * run 1..count: first the modules whose statics were accessed, in order of
 * first access, then every other file with code mapped at exit. The text
 * extent lets a reader turn a code address into the module and an offset
 * from its base, which is the same in every run wherever the file loaded. */
#define TFM_MOD_MAGIC "TFMMOD\0\0"
#define TFM_MOD_VERSION 2u /* 1: 16-byte records without the text extent */

typedef struct {
  uint32_t id;
  uint32_t name_len;
  uint64_t base;    /* load base in this run (start of the file-offset-0 mapping) */
  uint64_t text_lo; /* its executable mappings: [text_lo, text_hi); both 0 if none */
  uint64_t text_hi;
} TfmModRecord;

/* DIR/contexts.bin, written at exit: the call-path contexts of every thread,
 * one table for the whole process so that threads running the same code
 * share ids. A context is its parent context plus the call instruction that
 * entered it; id 0 is the root (a thread's start, before any call seen) and
 * is not listed. Records are sorted by id, ids run 1..count. Contexts come
 * from a shadow stack kept on call and return instructions of all code,
 * libraries included. Beyond TFM_CTX_LIMIT contexts, new paths get
 * TFM_CTX_OVERFLOW. */
#define TFM_CTX_MAGIC "TFMCTX\0\0"
#define TFM_CTX_VERSION 1u
#define TFM_CTX_LIMIT 4000000u
#define TFM_CTX_OVERFLOW 0xffffffffu

typedef struct {
  char magic[8];        /* TFM_CTX_MAGIC (TFM_MOD_MAGIC for modules.bin) */
  uint32_t version;     /* TFM_CTX_VERSION */
  uint32_t record_size; /* sizeof(TfmCtxRecord) */
  uint32_t count;       /* records that follow */
  uint32_t reserved;    /* 0 */
} TfmCtxHeader;

typedef struct {
  uint32_t id;
  uint32_t parent;    /* 0 = root */
  uint64_t call_site; /* guest address of the call instruction */
} TfmCtxRecord;

/* The layout above is the file format: pin it. */
TFM_STATIC_ASSERT(sizeof(TfmRawHeader) == 24, "raw header layout");
TFM_STATIC_ASSERT(sizeof(TfmRawRecord) == 48, "raw record layout");
TFM_STATIC_ASSERT(offsetof(TfmRawRecord, daddr) == 8, "raw record layout");
TFM_STATIC_ASSERT(offsetof(TfmRawRecord, context) == 16, "raw record layout");
TFM_STATIC_ASSERT(offsetof(TfmRawRecord, size) == 20, "raw record layout");
TFM_STATIC_ASSERT(offsetof(TfmRawRecord, index) == 22, "raw record layout");
TFM_STATIC_ASSERT(offsetof(TfmRawRecord, flags) == 23, "raw record layout");
TFM_STATIC_ASSERT(offsetof(TfmRawRecord, region) == 24, "raw record layout");
TFM_STATIC_ASSERT(offsetof(TfmRawRecord, offset) == 40, "raw record layout");
TFM_STATIC_ASSERT(sizeof(TfmModRecord) == 32, "module record layout");
TFM_STATIC_ASSERT(sizeof(TfmCtxHeader) == 24, "context header layout");
TFM_STATIC_ASSERT(sizeof(TfmCtxRecord) == 16, "context record layout");
TFM_STATIC_ASSERT(offsetof(TfmCtxRecord, call_site) == 8, "context record layout");

#endif
