/* Internal interface between the parts of the tracefold-mem Valgrind tool.
 * Valgrind tools have no libc: everything goes through the VG_(...) API. */
#ifndef TRACEFOLD_MEMTRACE_VGTOOL_TM_H
#define TRACEFOLD_MEMTRACE_VGTOOL_TM_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

#include "../raw_format.h"

/* Command-line options (tm_main.c). */
extern const HChar* tm_clo_raw_log; /* NULL: no raw streams */
extern Bool tm_clo_libs;            /* instrument code outside the executable too */

/* Recording switch flipped by TRACEFOLD_MEM_START/STOP; read by the helper. */
extern Bool tm_active;

typedef struct {
  Addr sp;   /* stack pointer just after the call pushed its return address */
  UInt ctx;  /* the caller's context, restored on return */
  Bool only; /* the call entered the --only function */
} TmFrame;

/* Per-thread stream (tm_stream.c). */
typedef struct {
  UInt number; /* creation order, 0 = main thread */
  Int fd;      /* -1 without --raw-log */
  UInt used;   /* records in buf */
  ULong loads, stores;
  TfmRawRecord* buf;
  UInt ctx; /* current call-path context (tm_context.c) */
  UInt depth, frames_len;
  UInt only_frames; /* frames on the shadow stack that entered --only's function */
  TmFrame* frames;  /* shadow stack */
  /* Address normalisation (tm_addr.c). */
  Bool stack_known;              /* set when the thread first runs */
  Addr stack_base;               /* its stack pointer then */
  Addr stack_lo, stack_hi;       /* its stack, inclusive */
  struct _VgHashTable* ordinals; /* allocation context -> blocks allocated so far */
  ULong hp_generation;           /* cached heap block, valid in this generation */
  Addr hp_lo, hp_hi;
  UInt hp_ctx, hp_owner, hp_ordinal;
  ULong st_generation; /* cached static segment, valid in this generation */
  Addr st_lo, st_hi;   /* inclusive */
  Addr st_base;
  UInt st_module;
} TmThread;

/* The thread running client code, set on every scheduler switch. */
extern TmThread* tm_current;

void tm_stream_init(void);
void tm_thread_created(ThreadId tid);
TmThread* tm_thread_of(ThreadId tid); /* creates the stream on first sight */
void tm_thread_exited(ThreadId tid);
TmThread* tm_stack_owner(Addr a); /* the live thread whose stack holds a, or NULL */
void tm_streams_finish(void);     /* flush and close every live stream, print totals */
void tm_streams_drop_all(void);   /* in a forked child: the streams are the parent's */
void tm_flush(TmThread* t);

/* Filters (tm_filter.c): --only=FUNC and --addr-range. */
extern const HChar* tm_clo_only;                /* NULL: no --only */
Bool tm_filter_parse_ranges(const HChar* spec); /* False: malformed */
Bool tm_filter_addr(Addr a);                    /* in a --addr-range (True without) */
Bool tm_is_only_target(Addr target);            /* a call to this address enters FUNC */
void tm_filter_unmapped(Addr a, SizeT len);     /* forgets call targets in [a, a+len) */
void tm_filter_finish(void);                    /* says if FUNC was never entered */

/* Call-path contexts (tm_context.c). */
extern Bool tm_clo_call_paths;
void tm_ctx_init(void);
void tm_ctx_write(const HChar* dir); /* DIR/contexts.bin */
/* Creates DIR/FILE (its name left in path) and writes a table header of
   `count` records; returns the descriptor, or -1 after saying that WHAT
   was not written. *good: the header was written whole. */
Int tm_table_create(const HChar* dir, const HChar* file, const HChar* what, const char* magic,
                    UInt version, UInt record_size, UInt count, HChar* path, SizeT path_size,
                    Bool* good);
void tm_on_call(Addr site, Addr sp, Addr target);
void tm_on_ret(Addr sp);

/* Address normalisation and the malloc replacement (tm_addr.c). */
extern Bool tm_forked_child;
void tm_addr_init(void); /* from pre_clo_init: registers the malloc replacement */
void tm_addr_thread_starts(TmThread* t, ThreadId tid);
void tm_addr_thread_done(TmThread* t);
void tm_normalise(TmThread* t, Addr a, TfmRawRecord* r); /* after r->flags is set */
void tm_modules_write(const HChar* dir);                 /* DIR/modules.bin */

/* Instrumentation (tm_instr.c). */
void tm_instr_init(void);
IRSB* tm_instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                    const VexGuestExtents* vge, const VexArchInfo* archinfo_host, IRType gWordTy,
                    IRType hWordTy);

#endif
