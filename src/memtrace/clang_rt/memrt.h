/* libtracefold_memrt: the runtime of the clang front end. Programs compiled
 * with clang's -fsanitize-coverage=func,trace-loads,trace-stores call
 * __sanitizer_cov_loadN / __sanitizer_cov_storeN before each load and store
 * of their IR; this library turns those calls into the raw per-thread
 * streams that the tracefold-mem Valgrind tool writes (raw_format.h), so
 * that memreplay and memtrace-stats read both alike. Internal header. */
#ifndef TRACEFOLD_MEMRT_H
#define TRACEFOLD_MEMRT_H

#include <stdint.h>

#include "raw_format.h"

/* What the hot path stores: 16 bytes instead of the format's 48; the
 * normalised address is worked out when a buffer is written. */
typedef struct {
  uint64_t iaddr_meta; /* return address | size << 48 | store << 63 */
  uint64_t daddr;
} MemrtHot;

#define MEMRT_META_SHIFT 48
#define MEMRT_STORE_BIT (1ull << 63)
#define MEMRT_ADDR_MASK ((1ull << MEMRT_META_SHIFT) - 1)

/* 65536 records = 1 MiB per thread: a write() per 65536 accesses. */
#define MEMRT_BUF 65536u

typedef struct MemrtThread {
  uint32_t number; /* creation order, main thread 0 */
  int fd;          /* DIR/thread-N.bin, -1 once closed or failed */
  uint32_t used;
  int busy; /* set while the runtime itself runs on this thread (signal handlers) */
  uint64_t loads, stores;
  uintptr_t stack_lo, stack_hi, stack_base; /* own stack and the normalisation base */
  MemrtHot* buf;
} MemrtThread;

/* memrt_addr.c: address normalisation when a buffer is written. */
void memrt_addr_init(void);
void memrt_addr_refresh(void);              /* reload the modules if dlopen/dlclose ran */
void memrt_addr_register(MemrtThread* t);   /* a thread's stack, looked up by others */
void memrt_addr_unregister(MemrtThread* t); /* its stack is gone */
void memrt_normalise(const MemrtThread* t, uint64_t daddr, TfmRawRecord* out);
int memrt_write_modules(const char* dir); /* DIR/modules.bin; 0 on success */

#endif
