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
  Addr sp;  /* stack pointer just after the call pushed its return address */
  UInt ctx; /* the caller's context, restored on return */
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
  TmFrame* frames; /* shadow stack */
} TmThread;

/* The thread running client code, set on every scheduler switch. */
extern TmThread* tm_current;

void tm_stream_init(void);
void tm_thread_created(ThreadId tid);
TmThread* tm_thread_of(ThreadId tid); /* creates the stream on first sight */
void tm_thread_exited(ThreadId tid);
void tm_streams_finish(void);   /* flush and close every live stream, print totals */
void tm_streams_drop_all(void); /* in a forked child: the streams are the parent's */
void tm_flush(TmThread* t);

/* Call-path contexts (tm_context.c). */
extern Bool tm_clo_call_paths;
void tm_ctx_init(void);
void tm_ctx_write(const HChar* dir); /* DIR/contexts.bin */
void tm_on_call(Addr site, Addr sp);
void tm_on_ret(Addr sp);

/* Instrumentation (tm_instr.c). */
void tm_instr_init(void);
IRSB* tm_instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                    const VexGuestExtents* vge, const VexArchInfo* archinfo_host, IRType gWordTy,
                    IRType hWordTy);

#endif
