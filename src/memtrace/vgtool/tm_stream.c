/* Per-thread raw streams of tracefold-mem: numbering threads by creation
 * order, buffering records and writing DIR/thread-N.bin. */
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_vki.h"

#include "tm.h"

/* 4096 records = 96 KiB per thread: few write() calls without holding much
 * memory per thread. */
#define TM_BUF_RECORDS 4096

TmThread* tm_current = NULL;

/* Indexed by Valgrind's ThreadId; a slot is reused when Valgrind reuses the
 * id, but the stream number never is. */
static TmThread** by_tid = NULL;
static UInt by_tid_len = 0;
static UInt next_number = 0;
static UInt threads_seen = 0;
static ULong total_loads = 0, total_stores = 0;
static Bool write_failed = False;

void tm_stream_init(void) {
  by_tid_len = 64;
  by_tid = VG_(calloc)("tm.by_tid", by_tid_len, sizeof(TmThread*));
}

static void write_all(TmThread* t, const void* data, SizeT len) {
  const UChar* p = data;
  while (len > 0 && !write_failed) {
    Int n = VG_(write)(t->fd, p, (Int)len);
    if (n <= 0) {
      /* The application must go on: stop writing, say so once at exit. */
      write_failed = True;
      VG_(umsg)
      ("tracefold-mem: writing the raw stream of thread %u failed; "
       "the raw log is incomplete\n",
       t->number);
      return;
    }
    p += n;
    len -= (SizeT)n;
  }
}

void tm_flush(TmThread* t) {
  if (t->used > 0 && t->fd >= 0) write_all(t, t->buf, (SizeT)t->used * sizeof(TfmRawRecord));
  t->used = 0;
}

static void open_stream(TmThread* t) {
  HChar path[4096];
  VG_(snprintf)(path, sizeof path, "%s/thread-%u.bin", tm_clo_raw_log, t->number);
  SysRes r = VG_(open)(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0644);
  if (sr_isError(r)) {
    VG_(fmsg)("tracefold-mem: cannot create %s (does the --raw-log directory exist?)\n", path);
    VG_(exit)(1);
  }
  t->fd = (Int)sr_Res(r);
  TfmRawHeader h;
  VG_(memset)(&h, 0, sizeof h);
  VG_(memcpy)(h.magic, TFM_RAW_MAGIC, sizeof h.magic);
  h.version = TFM_RAW_VERSION;
  h.record_size = sizeof(TfmRawRecord);
  h.thread = t->number;
  h.pid = (uint32_t)VG_(getpid)();
  write_all(t, &h, sizeof h);
}

void tm_thread_created(ThreadId tid) {
  if (tid >= by_tid_len) {
    UInt n = by_tid_len;
    while (n <= tid) n *= 2;
    by_tid = VG_(realloc)("tm.by_tid", by_tid, n * sizeof(TmThread*));
    for (UInt i = by_tid_len; i < n; i++) by_tid[i] = NULL;
    by_tid_len = n;
  }
  if (by_tid[tid] != NULL) tm_thread_exited(tid); /* missed exit: never merge two threads */
  TmThread* t = VG_(calloc)("tm.thread", 1, sizeof(TmThread));
  t->number = next_number++;
  t->fd = -1;
  threads_seen++;
  if (tm_clo_raw_log != NULL) {
    t->buf = VG_(malloc)("tm.buf", TM_BUF_RECORDS * sizeof(TfmRawRecord));
    open_stream(t);
  }
  by_tid[tid] = t;
  if (VG_(clo_verbosity) > 1)
    VG_(umsg)("tracefold-mem: stream %u is Valgrind thread %u\n", t->number, (UInt)tid);
}

TmThread* tm_thread_of(ThreadId tid) {
  if (tid >= by_tid_len || by_tid[tid] == NULL) tm_thread_created(tid);
  return by_tid[tid];
}

static void close_thread(TmThread* t) {
  tm_flush(t);
  if (t->fd >= 0) VG_(close)(t->fd);
  total_loads += t->loads;
  total_stores += t->stores;
  if (t->buf != NULL) VG_(free)(t->buf);
  if (t->frames != NULL) VG_(free)(t->frames);
  tm_addr_thread_done(t);
  if (tm_current == t) tm_current = NULL;
  VG_(free)(t);
}

TmThread* tm_stack_owner(Addr a) {
  for (UInt i = 0; i < by_tid_len; i++) {
    TmThread* t = by_tid[i];
    if (t != NULL && t->stack_known && a >= t->stack_lo && a <= t->stack_hi) return t;
  }
  return NULL;
}

void tm_thread_exited(ThreadId tid) {
  if (tid >= by_tid_len || by_tid[tid] == NULL) return;
  close_thread(by_tid[tid]);
  by_tid[tid] = NULL;
}

void tm_streams_finish(void) {
  for (UInt i = 0; i < by_tid_len; i++) tm_thread_exited(i);
  if (tm_clo_raw_log != NULL && tm_clo_call_paths) tm_ctx_write(tm_clo_raw_log);
  if (tm_clo_raw_log != NULL) tm_modules_write(tm_clo_raw_log);
  tm_filter_finish();
  if (VG_(clo_verbosity) == 0) return;
  const HChar* where = tm_clo_raw_log ? tm_clo_raw_log : "";
  VG_(umsg)
  ("tracefold-mem: %u thread%s, %llu loads, %llu stores recorded%s%s\n", threads_seen,
   threads_seen == 1 ? "" : "s", total_loads, total_stores,
   tm_clo_raw_log ? "; raw streams in " : "", where);
}

void tm_streams_drop_all(void) {
  for (UInt i = 0; i < by_tid_len; i++) {
    TmThread* t = by_tid[i];
    if (t == NULL) continue;
    if (t->fd >= 0) VG_(close)(t->fd);
    if (t->buf != NULL) VG_(free)(t->buf);
    if (t->frames != NULL) VG_(free)(t->frames);
    tm_addr_thread_done(t);
    VG_(free)(t);
    by_tid[i] = NULL;
  }
  tm_current = NULL;
}

/* Called from generated code for every recorded access (tm_instr.c). */
void tm_record(Addr iaddr, Addr daddr, UWord packed);
void tm_record(Addr iaddr, Addr daddr, UWord packed) {
  TmThread* t = tm_current;
  if (!tm_active || t == NULL) return;
  if (tm_clo_only != NULL && t->only_frames == 0) return;
  if (!tm_filter_addr(daddr)) return;
  UInt flags = (UInt)(packed >> 24) & 0xff;
  if (flags & TFM_RAW_STORE)
    t->stores++;
  else
    t->loads++;
  if (t->fd < 0) return;
  TfmRawRecord* r = &t->buf[t->used];
  r->iaddr = iaddr;
  r->daddr = daddr;
  r->context = t->ctx;
  r->size = (uint16_t)(packed & 0xffff);
  r->index = (uint8_t)((packed >> 16) & 0xff);
  r->flags = (uint8_t)flags;
  tm_normalise(t, daddr, r);
  if (++t->used == TM_BUF_RECORDS) tm_flush(t);
}
