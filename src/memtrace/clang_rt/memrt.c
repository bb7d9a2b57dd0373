/* libtracefold_memrt: per-thread recording of clang's load/store callbacks.
 *
 * The hot path touches only the calling thread's own buffer (thread-local,
 * initial-exec) and one global flag: threads record concurrently, with no
 * lock. Threads are numbered in creation order by wrapping pthread_create
 * (the number is taken in the creating thread, before the thread exists);
 * a thread the wrapper did not start (the main thread, or one started
 * before this library was loaded) gets the next number when it first
 * records. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memrt.h"

static const char* g_dir;   /* TRACEFOLD_MEM_DIR, NULL: the library does nothing */
static int g_on;            /* recording now (START/STOP) */
static int g_enabled;       /* a directory was given and nothing failed for good */
static int g_quiet;         /* TRACEFOLD_MEM_QUIET: no summary at exit */
static uint32_t g_next = 0; /* next thread number */
static pthread_key_t g_key; /* its destructor closes a thread's stream */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* registry, totals */

#define MEMRT_MAX_THREADS 4096
static MemrtThread* g_threads[MEMRT_MAX_THREADS];
static uint32_t g_thread_count;
static uint64_t g_loads, g_stores;
static int g_write_failed;

static __thread MemrtThread* tls_thread __attribute__((tls_model("initial-exec")));
/* A thread whose stream is closed records nothing more. */
static MemrtThread g_closed = {.busy = 1, .fd = -1};

static void memrt_error(const char* fmt, const char* a, int err) {
  fprintf(stderr, "tracefold-memrt: error: ");
  fprintf(stderr, fmt, a);
  if (err) fprintf(stderr, ": %s", strerror(err));
  fputc('\n', stderr);
}

static int write_all(int fd, const void* data, size_t len) {
  const char* p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Writes the buffer as format records, normalising each address. */
static void flush(MemrtThread* t) {
  enum { CHUNK = 1024 };
  TfmRawRecord out[CHUNK];
  if (t->fd < 0) {
    t->used = 0;
    return;
  }
  memrt_addr_refresh();
  for (uint32_t i = 0; i < t->used; i += CHUNK) {
    uint32_t n = t->used - i < CHUNK ? t->used - i : CHUNK;
    for (uint32_t j = 0; j < n; j++) {
      const MemrtHot* h = &t->buf[i + j];
      TfmRawRecord* r = &out[j];
      memrt_normalise(t, h->daddr, r);
      r->iaddr = h->iaddr_meta & MEMRT_ADDR_MASK;
      r->daddr = h->daddr;
      r->context = 0;
      r->size = (uint16_t)((h->iaddr_meta >> MEMRT_META_SHIFT) & 0x7fff);
      r->index = 0;
      r->flags |= (h->iaddr_meta & MEMRT_STORE_BIT) ? TFM_RAW_STORE : 0;
    }
    int err = write_all(t->fd, out, n * sizeof(TfmRawRecord));
    if (err) {
      /* The program goes on; this thread's stream stops here. */
      char what[64];
      snprintf(what, sizeof what, "%u", t->number);
      memrt_error("writing the raw stream of thread %s failed; the raw log is incomplete", what,
                  err);
      __atomic_store_n(&g_write_failed, 1, __ATOMIC_RELAXED);
      close(t->fd);
      t->fd = -1;
      break;
    }
  }
  t->used = 0;
}

/* Opens DIR/thread-N.bin and writes its header; errno-style code. */
static int open_stream(MemrtThread* t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/thread-%u.bin", g_dir, t->number);
  t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (t->fd < 0) {
    int err = errno;
    memrt_error("cannot create %s (TRACEFOLD_MEM_DIR must name a writable directory)", path, err);
    return err;
  }
  TfmRawHeader h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, TFM_RAW_MAGIC, sizeof h.magic);
  h.version = TFM_RAW_VERSION;
  h.record_size = sizeof(TfmRawRecord);
  h.thread = t->number;
  h.pid = (uint32_t)getpid();
  return write_all(t->fd, &h, sizeof h);
}

/* Sets up the calling thread as stream `number`; base: where its stack
 * offsets count from. NULL when the stream cannot be opened. */
static MemrtThread* thread_begin(uint32_t number, uintptr_t base) {
  MemrtThread* t = calloc(1, sizeof *t);
  if (t) t->buf = malloc(MEMRT_BUF * sizeof(MemrtHot));
  if (!t || !t->buf) {
    free(t);
    tls_thread = &g_closed;
    return NULL;
  }
  t->number = number;
  t->busy = 1;
  pthread_attr_t attr;
  void* lo;
  size_t size;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
      t->stack_lo = (uintptr_t)lo;
      t->stack_hi = (uintptr_t)lo + size;
    }
    pthread_attr_destroy(&attr);
  }
  t->stack_base = base ? base : t->stack_hi;
  if (open_stream(t) != 0) {
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
  }
  pthread_mutex_lock(&g_lock);
  if (g_thread_count < MEMRT_MAX_THREADS) g_threads[g_thread_count++] = t;
  pthread_mutex_unlock(&g_lock);
  memrt_addr_register(t);
  pthread_setspecific(g_key, t);
  tls_thread = t;
  t->busy = 0;
  return t;
}

static void thread_end(MemrtThread* t) {
  t->busy = 1;
  flush(t);
  if (t->fd >= 0) close(t->fd);
  t->fd = -1;
  memrt_addr_unregister(t);
  pthread_mutex_lock(&g_lock);
  g_loads += t->loads;
  g_stores += t->stores;
  t->loads = t->stores = 0;
  pthread_mutex_unlock(&g_lock);
}

static void key_destructor(void* p) {
  MemrtThread* t = p;
  thread_end(t);
  tls_thread = &g_closed;
  /* Only the thread itself may free its buffer: at process exit another
   * thread may still be writing into it. */
  free(t->buf);
  t->buf = NULL;
}

static void record(uint64_t addr, uint64_t meta, void* ra) {
  MemrtThread* t = tls_thread;
  if (__builtin_expect(t == NULL, 0)) {
    if (!__atomic_load_n(&g_enabled, __ATOMIC_RELAXED)) return;
    uintptr_t base = 0;
    t = thread_begin(__atomic_fetch_add(&g_next, 1, __ATOMIC_RELAXED), base);
    if (!t) return;
  }
  if (t->busy) return;
  MemrtHot* h = &t->buf[t->used];
  h->iaddr_meta = ((uint64_t)(uintptr_t)ra & MEMRT_ADDR_MASK) | meta;
  h->daddr = addr;
  if (meta & MEMRT_STORE_BIT)
    t->stores++;
  else
    t->loads++;
  if (++t->used == MEMRT_BUF) {
    t->busy = 1;
    flush(t);
    t->busy = 0;
  }
}

/* The callbacks clang emits (-fsanitize-coverage=...,trace-loads,trace-stores):
 * one per IR load or store, called before it with its address. */
#define MEMRT_CB(name, bytes, store)                                                    \
  __attribute__((visibility("default"))) void name(void* p) {                           \
    if (__builtin_expect(__atomic_load_n(&g_on, __ATOMIC_RELAXED), 1))                  \
      record((uint64_t)(uintptr_t)p,                                                    \
             ((uint64_t)(bytes) << MEMRT_META_SHIFT) | ((store) ? MEMRT_STORE_BIT : 0), \
             __builtin_return_address(0));                                              \
  }
MEMRT_CB(__sanitizer_cov_load1, 1, 0)
MEMRT_CB(__sanitizer_cov_load2, 2, 0)
MEMRT_CB(__sanitizer_cov_load4, 4, 0)
MEMRT_CB(__sanitizer_cov_load8, 8, 0)
MEMRT_CB(__sanitizer_cov_load16, 16, 0)
MEMRT_CB(__sanitizer_cov_store1, 1, 1)
MEMRT_CB(__sanitizer_cov_store2, 2, 1)
MEMRT_CB(__sanitizer_cov_store4, 4, 1)
MEMRT_CB(__sanitizer_cov_store8, 8, 1)
MEMRT_CB(__sanitizer_cov_store16, 16, 1)

/* TRACEFOLD_MEM_START/STOP (include/tracefold/memtrace.h) call these when
 * the program is linked with this library. One switch for the process, as
 * under the Valgrind tool. */
__attribute__((visibility("default"))) void tracefold_memrt_start(void) {
  if (__atomic_load_n(&g_enabled, __ATOMIC_RELAXED)) __atomic_store_n(&g_on, 1, __ATOMIC_RELAXED);
}
__attribute__((visibility("default"))) void tracefold_memrt_stop(void) {
  __atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
}

typedef struct {
  void* (*fn)(void*);
  void* arg;
  uint32_t number;
} MemrtStart;

static void* start_thread(void* p) {
  MemrtStart s = *(MemrtStart*)p;
  free(p);
  /* The wrapper's frame is where this thread's own frames begin: the same
   * offset in every run and every thread running the same code. */
  thread_begin(s.number, (uintptr_t)__builtin_frame_address(0));
  return s.fn(s.arg);
}

typedef int (*PthreadCreate)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

__attribute__((visibility("default"))) int pthread_create(pthread_t* id, const pthread_attr_t* attr,
                                                          void* (*fn)(void*), void* arg) {
  static PthreadCreate real;
  if (!real) {
    /* POSIX's way to turn dlsym's object pointer into a function pointer. */
    void* sym = dlsym(RTLD_NEXT, "pthread_create");
    memcpy(&real, &sym, sizeof real);
  }
  if (!real) return EAGAIN;
  if (!__atomic_load_n(&g_enabled, __ATOMIC_RELAXED)) return real(id, attr, fn, arg);
  MemrtStart* s = malloc(sizeof *s);
  if (!s) return EAGAIN;
  s->fn = fn;
  s->arg = arg;
  s->number = __atomic_fetch_add(&g_next, 1, __ATOMIC_RELAXED);
  int rc = real(id, attr, start_thread, s);
  if (rc != 0) {
    /* The number is taken: leave its stream empty rather than a gap, which
     * readers refuse. */
    MemrtThread empty = {.number = s->number, .fd = -1};
    free(s);
    if (open_stream(&empty) == 0 || empty.fd >= 0) close(empty.fd);
  }
  return rc;
}

static void child_after_fork(void) {
  /* The parent's open files and buffers are not the child's to write. */
  __atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&g_enabled, 0, __ATOMIC_RELAXED);
  g_dir = NULL;
  tls_thread = &g_closed;
}

static void write_contexts(void) {
  /* No shadow stack here: every access is in the root context, so the
   * table is empty (readers need the file to be well formed, not present). */
  char path[4096];
  snprintf(path, sizeof path, "%s/contexts.bin", g_dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  TfmCtxHeader h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, TFM_CTX_MAGIC, sizeof h.magic);
  h.version = TFM_CTX_VERSION;
  h.record_size = sizeof(TfmCtxRecord);
  if (fd < 0 || write_all(fd, &h, sizeof h) != 0) memrt_error("cannot write %s", path, errno);
  if (fd >= 0) close(fd);
}

/* TRACEFOLD_MEM_DIR with %p (pid) and %q{VAR} (an environment variable)
 * expanded, as the tool's --raw-log: under mpirun each rank names its own
 * directory. NULL, after a message, when it cannot be expanded. */
static const char* expand_dir(const char* in) {
  static char out[4096];
  size_t n = 0;
  for (const char* p = in; *p; p++) {
    char piece[32];
    const char* add = piece;
    size_t len;
    if (*p != '%') {
      piece[0] = *p;
      len = 1;
    } else if (p[1] == '%') {
      piece[0] = '%';
      len = 1;
      p++;
    } else if (p[1] == 'p') {
      len = (size_t)snprintf(piece, sizeof piece, "%d", (int)getpid());
      p++;
    } else if (p[1] == 'q' && p[2] == '{' && strchr(p + 3, '}')) {
      char var[256];
      size_t vlen = (size_t)(strchr(p + 3, '}') - (p + 3));
      if (vlen == 0 || vlen >= sizeof var) {
        memrt_error("TRACEFOLD_MEM_DIR=%s: bad %%q{...}", in, 0);
        return NULL;
      }
      memcpy(var, p + 3, vlen);
      var[vlen] = '\0';
      add = getenv(var);
      if (!add) {
        char what[600];
        snprintf(what, sizeof what, "%s: the environment has no %s", in, var);
        memrt_error("TRACEFOLD_MEM_DIR=%s", what, 0);
        return NULL;
      }
      len = strlen(add);
      p += 3 + vlen;
    } else {
      memrt_error("TRACEFOLD_MEM_DIR=%s: only %%p, %%q{VAR} and %%%% expand", in, 0);
      return NULL;
    }
    if (n + len >= sizeof out) {
      memrt_error("TRACEFOLD_MEM_DIR=%s: too long once expanded", in, 0);
      return NULL;
    }
    memcpy(out + n, add, len);
    n += len;
  }
  out[n] = '\0';
  return out;
}

__attribute__((constructor(101))) static void memrt_init(void) {
  const char* dir = getenv("TRACEFOLD_MEM_DIR");
  if (!dir || !*dir) return;
  g_dir = expand_dir(dir);
  if (!g_dir) _exit(2);
  const char* q = getenv("TRACEFOLD_MEM_QUIET");
  g_quiet = q && *q && strcmp(q, "0") != 0;
  if (pthread_key_create(&g_key, key_destructor) != 0) return;
  pthread_atfork(NULL, NULL, child_after_fork);
  memrt_addr_init();
  g_enabled = 1;
  /* The main thread is stream 0, its stack counted from where the process
   * started (glibc's __libc_stack_end), as the Valgrind tool does. */
  extern void* __libc_stack_end;
  if (!thread_begin(__atomic_fetch_add(&g_next, 1, __ATOMIC_RELAXED),
                    (uintptr_t)__libc_stack_end) ||
      tls_thread->fd < 0) {
    /* Nothing can be recorded: stop before the program runs, as the tool
     * does for a --raw-log it cannot write. */
    _exit(2);
  }
  const char* at_start = getenv("TRACEFOLD_MEM_RECORD_AT_START");
  g_on = !(at_start && strcmp(at_start, "no") == 0);
}

__attribute__((destructor(101))) static void memrt_fini(void) {
  if (!g_dir || !g_enabled) return;
  __atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&g_enabled, 0, __ATOMIC_RELAXED);
  /* Threads still alive at exit (the main thread at least): their buffers
   * are written here. A thread still running now loses what it records. */
  pthread_mutex_lock(&g_lock);
  uint32_t n = g_thread_count;
  pthread_mutex_unlock(&g_lock);
  for (uint32_t i = 0; i < n; i++)
    if (g_threads[i]->fd >= 0) thread_end(g_threads[i]);
  write_contexts();
  if (memrt_write_modules(g_dir) != 0) __atomic_store_n(&g_write_failed, 1, __ATOMIC_RELAXED);
  if (!g_quiet) {
    uint32_t threads = __atomic_load_n(&g_next, __ATOMIC_RELAXED);
    fprintf(stderr,
            "tracefold-memrt: %u thread%s, %llu loads, %llu stores recorded; raw streams in "
            "%s%s\n",
            threads, threads == 1 ? "" : "s", (unsigned long long)g_loads,
            (unsigned long long)g_stores, g_dir, g_write_failed ? " (incomplete)" : "");
  }
}
