// Call-path sampling: timers, the signal handler, threads and the
// interposed pthread_create/dlopen/dlclose (docs/sampling.md); the rings'
// contents go into the samples file in sampler_write.cpp.
//
// What runs in the handler is async-signal-safe: clock_gettime, libunwind's
// local unwinder (unw_init_local2 on the signal context, unw_step; set up
// once per thread outside the handler, per-thread cache), timer_settime,
// lock-free atomics and stores into a ring that was mapped when the thread
// started. Everything else — module lookup (dladdr, which takes the
// loader's lock), the context tree, compression, the file — happens in the
// recorder's MPI wrappers, under the recorder's lock, never in the handler.
#include "sampler.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>
#include <unordered_map>

#include "recorder_impl.hpp"
#include "sampler_impl.hpp"
#include "tracefold/samples.hpp"

namespace tracefold::record {

TRACEFOLD_STATIC_TLS constinit thread_local SamplerThreadMarks tl_sampler_marks;
std::atomic<uint64_t> g_samples_produced{0};
uint64_t g_samples_consumed = 0;

namespace sampling {
namespace {

TRACEFOLD_STATIC_TLS constinit thread_local ThreadState* tl_state = nullptr;
// Inside dlopen, dlclose or dl_iterate_phdr on this thread: the loader's
// lists may be half changed, and its list lock half taken or released.
// libunwind walks the lists (dl_iterate_phdr) to find unwind tables, under
// that lock: a recursive mutex, but one whose owner is noted only after
// the lock word is taken (and cleared before it is released), so a handler
// that unwinds in between waits for its own thread forever.
TRACEFOLD_STATIC_TLS constinit thread_local int tl_loader_depth = 0;

using DlIterateFn = int (*)(int (*)(dl_phdr_info*, std::size_t, void*), void*);
// The C library's dl_iterate_phdr: found outside any handler (dlsym takes
// the loader's lock), at the first call or when sampling starts.
std::atomic<DlIterateFn> g_dl_iterate_phdr{nullptr};

DlIterateFn real_dl_iterate_phdr() {
  DlIterateFn f = g_dl_iterate_phdr.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<DlIterateFn>(dlsym(RTLD_NEXT, "dl_iterate_phdr"));
    g_dl_iterate_phdr.store(f, std::memory_order_release);
  }
  return f;
}

int64_t clock_ns(clockid_t c) {
  timespec ts;
  clock_gettime(c, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// The next tick stays on the period's grid even when that is already past
// (the handler was preempted): the timer then fires at once, and that
// tick stands for the ones missed (on_tick), however many.
void arm(ThreadState& st) {
  st.next_ns += st.period_ns;
  itimerspec its{};
  its.it_value.tv_sec = st.next_ns / 1000000000LL;
  its.it_value.tv_nsec = st.next_ns % 1000000000LL;
  timer_settime(st.timer, TIMER_ABSTIME, &its, nullptr);
}

// The depth (1 = outermost) of the deepest frame whose (return address,
// stack pointer) pair is the one it had at this thread's previous sample,
// comparing from the outermost frame in. Leaves are not compared (their
// address is where the thread was, not a call in progress). A frame that
// called MPI since the previous sample (this thread's call count moved)
// has the same pair but a new call in progress: frames at or below the
// lowest stack address an MPI call was entered at, plus the slack the
// wrapper's frames may take, are not trusted then. Limit: a frame that
// returned and was called again from the same place at the same stack
// depth without MPI in between looks unchanged (docs/sampling.md).
uint16_t lca_of(const ThreadState& st, const uintptr_t* ip, const uintptr_t* sp, int n,
                bool calls_moved, uintptr_t low_mpi_sp) {
  const int m = std::min(n, st.prev_n) - 1;
  int k = 0;
  for (; k < m; ++k) {
    const int a = n - 1 - k, b = st.prev_n - 1 - k;
    if (ip[a] != st.prev_ip[b] || sp[a] != st.prev_sp[b]) break;
    if (calls_moved && low_mpi_sp != UINTPTR_MAX && sp[a] <= low_mpi_sp + kWrapperSlack) break;
  }
  return static_cast<uint16_t>(k);
}

// The program counter the signal interrupted, from the signal context
// alone (no unwinding); 0 where the platform is not known here.
uintptr_t interrupted_pc(void* ucontext) {
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

// The thread's call path into s (innermost first) and the comparison with
// its previous sample; false if the unwinder gives up at the first frame.
bool unwind_into(ThreadState& st, RawSample& s, void* ucontext) {
  unw_cursor_t cursor;
  if (unw_init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) < 0)
    return false;
  uintptr_t sp[kMaxFrames];
  int n = 0;
  bool truncated = false;
  for (;;) {
    unw_word_t ip = 0, spv = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    if (n == kMaxFrames) {
      truncated = true;
      break;
    }
    unw_get_reg(&cursor, UNW_REG_SP, &spv);
    s.ip[n] = ip;
    sp[n] = spv;
    ++n;
    if (unw_step(&cursor) <= 0) break;
  }
  if (n == 0) return false;
  SamplerThreadMarks& marks = tl_sampler_marks;
  if (!truncated) {
    s.lca = lca_of(st, s.ip, sp, n, marks.calls != st.prev_calls, marks.low_mpi_sp);
    // Between copies nothing moved: the whole path but the leaf.
    s.copy_lca = static_cast<uint16_t>(n - 1);
  }
  s.n = static_cast<uint16_t>(n);
  std::memcpy(st.prev_ip, s.ip, sizeof(uintptr_t) * static_cast<std::size_t>(n));
  std::memcpy(st.prev_sp, sp, sizeof(uintptr_t) * static_cast<std::size_t>(n));
  st.prev_n = truncated ? 0 : n;
  st.prev_calls = marks.calls;
  marks.low_mpi_sp = UINTPTR_MAX;
  return true;
}

// `missed`: ticks that fell due while this thread did not run (see on_tick),
// from `due` on; the slot notes how many, and the drain writes them as
// copies of this sample at their own times (sampler_write.cpp). Times are
// kept unskewed until then. A full ring drops the tick and its copies.
void take(ThreadState& st, void* ucontext, int64_t t0, int64_t due, uint32_t missed) {
  Recorder& r = recorder();
  const int64_t period = st.period_ns;
  if (tl_in_call) {
    // Inside a wrapped call the recorder knows the call and its site: no walk.
    const uint64_t h = st.mpi_head.load(std::memory_order_relaxed);
    if (h - st.mpi_tail.load(std::memory_order_acquire) >= kMpiSlots) {
      st.dropped.fetch_add(1 + uint64_t{missed}, std::memory_order_relaxed);
      return;
    }
    const SamplerThreadMarks& marks = tl_sampler_marks;
    // Until the wrapper has read the call's enter time the call is not
    // timed (and timed_call may still be the previous call's): the call
    // is the next event to be recorded.
    const bool enter_known = marks.enter_ns != 0;
    const uint64_t event = enter_known && marks.timed_call == marks.calls
                               ? marks.timed_event
                               : r.events_timed.load(std::memory_order_relaxed);
    // Ticks that fell due before the call's enter time (the thread was off
    // its core in the wrapper), or all of them and this one while that
    // time is still to be read, lie outside the call the timeline records.
    const uint32_t outside = copies_outside(missed, due, period, enter_known, marks.enter_ns);
    MpiSample& m = st.mpi_ring[h & (kMpiSlots - 1)];
    m.time_ns = t0;
    m.first_ns = missed > 0 ? due : t0;
    m.mpi_event = event;
    m.period_ns = period;
    m.copies = missed;
    m.outside = outside;
    st.mpi_head.store(h + 1, std::memory_order_release);
    g_samples_produced.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint64_t h = st.head.load(std::memory_order_relaxed);
  if (h - st.tail.load(std::memory_order_acquire) >= kRingSlots) {
    st.dropped.fetch_add(1 + uint64_t{missed}, std::memory_order_relaxed);
    return;
  }
  RawSample& s = st.ring[h & (kRingSlots - 1)];
  s.time_ns = t0;
  s.first_ns = missed > 0 ? due : t0;
  s.mpi_event = r.events_timed.load(std::memory_order_relaxed);
  s.period_ns = period;
  s.copies = missed;
  s.lca = s.copy_lca = 0;
  s.n = 0;
  // Where the thread may not be unwound (inside the loader, see
  // tl_loader_depth) or the unwinder gives up, the sample keeps the
  // interrupted instruction alone: its time still counts, in the function
  // it was in, and the next sample compares with nothing.
  if (tl_loader_depth > 0 || !unwind_into(st, s, ucontext)) {
    const uintptr_t pc = interrupted_pc(ucontext);
    if (pc == 0) {
      st.dropped.fetch_add(1 + uint64_t{missed}, std::memory_order_relaxed);
      return;
    }
    s.ip[0] = pc;
    s.n = 1;
    st.prev_n = 0;
  }
  st.head.store(h + 1, std::memory_order_release);
  g_samples_produced.fetch_add(1, std::memory_order_relaxed);
}

void on_tick(int, siginfo_t* info, void* ucontext) {
  ThreadState* st = tl_state;
  // Another sender's signal, or a tick queued before the timer was deleted.
  if (!st || info->si_code != SI_TIMER || !sampler().on.load(std::memory_order_relaxed)) return;
  const int saved_errno = errno;
  const int64_t t0 = clock_ns(CLOCK_MONOTONIC);
  // A tick that found the thread off its core (more threads than cores)
  // arrives when it runs again, possibly many periods late. The thread did
  // not move meanwhile, so this sample stands for the ticks it missed too,
  // at their due times: wall-clock counts stay one per period. (A thread
  // that had blocked the signal did move: docs/sampling.md.)
  const int64_t due = st->next_ns;
  uint32_t missed = 0;
  if (st->clock == CLOCK_MONOTONIC && t0 - due >= st->period_ns)
    missed = static_cast<uint32_t>(std::min<int64_t>((t0 - due) / st->period_ns, UINT32_MAX - 1));
  // The rate under the handler's cost (sampler_rate.hpp), from this sample
  // on; a window that ends on a late tick waits for an on-time one, since
  // a late tick's copies stand for ticks that fell due at the old period.
  if (missed == 0) st->period_ns = next_period(st->rate, st->period_ns, sampler().period_ns);
  const int64_t period = st->period_ns;
  take(*st, ucontext, t0, due, missed);
  st->next_ns = due + static_cast<int64_t>(missed) * period;
  if (st->timer_live.load(std::memory_order_relaxed)) arm(*st);
  Sampler& s = sampler();
  int64_t cost = clock_ns(CLOCK_MONOTONIC) - t0;
  const bool hooked = s.extra_cost_ticks < 0 || st->ticks < s.extra_cost_ticks;
  if (s.set_cost)
    cost = hooked ? s.extra_cost_ns : 0;
  else if (hooked)
    cost += s.extra_cost_ns;
  ++st->ticks;
  st->cost[cost_bucket(cost)].fetch_add(1, std::memory_order_relaxed);
  // A full window stops counting until it is decided.
  if (st->rate.ticks < kCostWindow) note_tick_cost(st->rate, cost, period);
  errno = saved_errno;
}

// At thread exit (pthread key destructor): no timer outlives its thread.
void thread_gone(void* p) {
  auto* st = static_cast<ThreadState*>(p);
  if (st->timer_live.exchange(false)) timer_delete(st->timer);
  tl_state = nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  st->exited.store(true, std::memory_order_release);
}

// Gives the calling thread its state and timer. Outside any handler.
void begin_thread(bool main_thread) {
  Sampler& s = sampler();
  if (!s.on.load(std::memory_order_relaxed) || tl_state) return;
  // libunwind sets itself up on first use (a lock, its caches): not in the handler.
  unw_context_t ctx;
  unw_cursor_t cursor;
  if (unw_getcontext(&ctx) == 0 && unw_init_local(&cursor, &ctx) == 0) unw_step(&cursor);
  void* mem = mmap(nullptr, sizeof(ThreadState), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::lock_guard lock(s.threads_mu);
    ++s.timer_failures;
    return;
  }
  auto* st = new (mem) ThreadState;
  st->period_ns = st->written_period_ns = s.period_ns;
  st->clock = s.clock == SampleClock::kWall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
  sigevent sev{};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = s.signal;
  sev._sigev_un._tid = gettid();
  {
    std::lock_guard lock(s.threads_mu);
    if (timer_create(st->clock, &sev, &st->timer) != 0) {
      ++s.timer_failures;
      munmap(mem, sizeof(ThreadState));
      return;
    }
    st->thread = s.next_thread++;
    s.threads.push_back(st);
  }
  // The MPI_Init thread has its stream already; other threads get theirs
  // at their first call (sampler_note_stream).
  if (const ThreadStream* ts = tl_stream) st->stream.store(ts->number, std::memory_order_release);
  tl_state = st;
  if (!main_thread) pthread_setspecific(s.key, st);
  st->timer_live.store(true);
  st->next_ns = clock_ns(st->clock);
  arm(*st);
}

struct StartArgs {
  void* (*fn)(void*);
  void* arg;
};

void* sampled_start(void* p) {
  const StartArgs a = *static_cast<StartArgs*>(p);
  delete static_cast<StartArgs*>(p);
  begin_thread(false);
  return a.fn(a.arg);
}

}  // namespace
}  // namespace sampling

using namespace sampling;

void sampler_note_stream(int number) {
  if (ThreadState* st = tl_state) st->stream.store(number, std::memory_order_release);
}

void start_sampler(Recorder& r, const char* timeline_dir) {
  const char* p = env("TRACEFOLD_SAMPLE");
  if (!p || r.disabled) return;
  Sampler& s = sampler();
  const long long period = std::atoll(p);
  if (period < 10000) {
    std::fprintf(stderr, "tracefold: rank %d: TRACEFOLD_SAMPLE=%s is no period (ns); no samples\n",
                 r.rank, p);
    return;
  }
  s.period_ns = period;
  // NS, or NS,TICKS: only each thread's first TICKS ticks; =NS[,TICKS]
  // sets the cost instead of adding to it.
  if (const char* x = env("TRACEFOLD_TEST_SAMPLE_COST_NS")) {
    s.set_cost = *x == '=';
    if (s.set_cost) ++x;
    s.extra_cost_ns = std::atoll(x);
    if (const char* comma = std::strchr(x, ',')) s.extra_cost_ticks = std::atoll(comma + 1);
  }
  if (const char* x = env("TRACEFOLD_TEST_EXIT_DELAY_NS")) r.test_exit_delay_ns = std::atoll(x);
  const char* c = env("TRACEFOLD_SAMPLE_CLOCK");
  s.clock = c && std::strcmp(c, "cpu") == 0 ? SampleClock::kCpu : SampleClock::kWall;
  // A realtime signal, not SIGPROF: profilers and gprof-built programs own
  // SIGPROF, while a realtime signal above the libc's own is rarely taken;
  // and one a program did take is left alone.
  s.signal = SIGRTMIN + 5;
  if (const char* sig = env("TRACEFOLD_SAMPLE_SIGNAL")) s.signal = std::atoi(sig);
  struct sigaction old {};
  if (sigaction(s.signal, nullptr, &old) != 0) {
    std::fprintf(stderr, "tracefold: rank %d: no samples: signal %d: %s\n", r.rank, s.signal,
                 std::strerror(errno));
    return;
  }
  if ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
    std::fprintf(stderr,
                 "tracefold: rank %d: signal %d has a handler of the program's; no samples "
                 "(TRACEFOLD_SAMPLE_SIGNAL picks another)\n",
                 r.rank, s.signal);
    return;
  }
  s.path = samples_path(timeline_dir, r.rank);
  try {
    s.writer.open(s.path, r.rank, r.size, s.period_ns, s.clock, r.timeline_max, r.block_bytes());
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "tracefold: rank %d: no samples: %s\n", r.rank, ex.what());
    return;
  }
  if (pthread_key_create(&s.key, &thread_gone) != 0) {
    std::fprintf(stderr, "tracefold: rank %d: no samples: no thread key\n", r.rank);
    return;
  }
  // Before any handler can call it (through libunwind).
  if (!real_dl_iterate_phdr()) {
    std::fprintf(stderr, "tracefold: rank %d: no samples: no dl_iterate_phdr\n", r.rank);
    return;
  }
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  struct sigaction sa {};
  sa.sa_sigaction = &on_tick;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(s.signal, &sa, nullptr);
  r.sampling = true;
  s.on.store(true);
  begin_thread(true);
}

}  // namespace tracefold::record

namespace R = tracefold::record;

// New threads get their own timer while sampling is on; otherwise the call
// goes straight through.
extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) {
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_create"));
  if (!real) return EAGAIN;
  if (!R::sampling::sampler().on.load(std::memory_order_relaxed))
    return real(thread, attr, start, arg);
  auto* a = new (std::nothrow) R::sampling::StartArgs{start, arg};
  if (!a) return real(thread, attr, start, arg);
  const int rc = real(thread, attr, &R::sampling::sampled_start, a);
  if (rc != 0) delete a;
  return rc;
}

// While the loader's lists are walked on this thread (by the program, a
// library, the recorder's module table, or libunwind in this thread's own
// handler), a tick here drops its sample (counted) instead of unwinding:
// the unwinder would take the loader's list lock again, and in the lock's
// own window that waits forever (tl_loader_depth). With sampling off the
// call is a tail call, so the C library sees its real caller (the caller's
// link-map namespace, for code loaded with dlmopen).
extern "C" int dl_iterate_phdr(int (*callback)(dl_phdr_info*, std::size_t, void*), void* data) {
  const R::sampling::DlIterateFn real = R::sampling::real_dl_iterate_phdr();
  if (!real) return 0;
  if (!R::sampling::sampler().on.load(std::memory_order_relaxed)) return real(callback, data);
  ++R::sampling::tl_loader_depth;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const int rc = real(callback, data);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --R::sampling::tl_loader_depth;
  return rc;
}

// While the loader changes its lists, this thread's samples are dropped
// (counted). Without sampling the call is a tail call, so the library
// searches paths as for its real caller (RUNPATH); with sampling, as for
// libtracefold (docs/sampling.md).
extern "C" void* dlopen(const char* file, int mode) {
  using Fn = void* (*)(const char*, int);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "dlopen"));
  if (!R::sampling::sampler().on.load(std::memory_order_relaxed)) return real(file, mode);
  ++R::sampling::tl_loader_depth;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  void* h = real(file, mode);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --R::sampling::tl_loader_depth;
  return h;
}

extern "C" int dlclose(void* handle) {
  using Fn = int (*)(void*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "dlclose"));
  if (!R::sampling::sampler().on.load(std::memory_order_relaxed)) return real(handle);
  ++R::sampling::tl_loader_depth;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const int rc = real(handle);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --R::sampling::tl_loader_depth;
  return rc;
}
