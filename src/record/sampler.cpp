// Call-path sampling: timers, the signal handler, and the conversion of its
// raw addresses into the samples file (docs/sampling.md).
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
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>
#include <unordered_map>

#include "recorder_impl.hpp"
#include "tracefold/samples.hpp"

namespace tracefold::record {

TRACEFOLD_STATIC_TLS constinit thread_local SamplerThreadMarks tl_sampler_marks;
std::atomic<uint64_t> g_samples_produced{0};
uint64_t g_samples_consumed = 0;

namespace {

// Deeper stacks keep their innermost frames (placed under the root, with
// no LCA marker).
constexpr int kMaxFrames = 48;
constexpr uint64_t kRingSlots = 1024;  // 1 s at 1 kHz between two drains
// Samples inside MPI calls need no frames: a ring of their own, long
// enough for a wait of 16 s at 1 kHz without a drain (no call completes
// during a wait, and drains happen in the MPI wrappers).
constexpr uint64_t kMpiSlots = 16384;
// Ticks one late tick stores as copies of its sample (see on_tick).
constexpr int64_t kMaxCopies = kRingSlots / 4;
// The handler's cost: 64 ns buckets up to 65.5 us, 4 us buckets up to
// 4.26 ms (a handler preempted half way, on a loaded machine), then one
// overflow bucket.
constexpr int kFineBuckets = 1024, kCostBuckets = 2048;
constexpr int64_t kFineNs = 64, kCoarseNs = 4096;
int cost_bucket(int64_t ns) {
  if (ns < kFineBuckets * kFineNs) return static_cast<int>(std::max<int64_t>(ns, 0) / kFineNs);
  return static_cast<int>(
      std::min<int64_t>(kFineBuckets + (ns - kFineBuckets * kFineNs) / kCoarseNs, kCostBuckets));
}
// A bucket's middle (its start for the overflow bucket).
int64_t cost_of_bucket(int b) {
  if (b < kFineBuckets) return b * kFineNs + kFineNs / 2;
  const int64_t start = kFineBuckets * kFineNs + (b - kFineBuckets) * kCoarseNs;
  return b < kCostBuckets ? start + kCoarseNs / 2 : start;
}
// Stack bytes that a wrapper and Call::Call may take below the caller's
// stack pointer (see lca_of).
constexpr uintptr_t kWrapperSlack = 1024;

struct RawSample {
  int64_t time_ns;
  uint64_t mpi_event;
  uint16_t n;    // frames in ip, innermost first
  uint16_t lca;  // depth of the deepest unchanged frame
  uint8_t in_mpi;
  uintptr_t ip[kMaxFrames];
};

struct MpiSample {
  int64_t time_ns;
  uint64_t mpi_event;
};

// One thread's sampling state, in its own anonymous mapping: pages of the
// rings are touched only as samples fill them.
struct ThreadState {
  std::atomic<uint64_t> head{0}, mpi_head{0};  // written by the handler
  std::atomic<uint64_t> tail{0}, mpi_tail{0};  // written by drain_samples
  // Samples lost here; the file's "taken" is those written plus these.
  std::atomic<uint64_t> dropped{0};
  std::atomic<bool> timer_live{false};
  std::atomic<bool> exited{false};
  timer_t timer{};
  clockid_t clock = CLOCK_MONOTONIC;
  uint32_t thread = 0;
  int64_t next_ns = 0;  // the timer's next expiry (absolute, on `clock`)
  // The previous unwound sample, for the LCA marker.
  uintptr_t prev_ip[kMaxFrames];
  uintptr_t prev_sp[kMaxFrames];
  int prev_n = 0;  // 0: none usable
  uint64_t prev_calls = 0;
  std::atomic<uint32_t> cost[kCostBuckets + 1];
  RawSample ring[kRingSlots];
  MpiSample mpi_ring[kMpiSlots];
};

struct CtxKey {
  uint32_t parent, module;
  uint64_t offset;
  bool operator==(const CtxKey&) const = default;
};
struct CtxHash {
  std::size_t operator()(const CtxKey& k) const {
    return std::hash<uint64_t>()(k.offset * 0x9E3779B97F4A7C15ull ^ (uint64_t{k.parent} << 20) ^
                                 k.module);
  }
};

struct Sampler {
  std::atomic<bool> on{false};
  int signal = 0;
  int64_t period_ns = 0;
  SampleClock clock = SampleClock::kWall;
  pthread_key_t key{};
  // The threads' states. Never taken in the handler.
  std::mutex threads_mu;
  std::vector<ThreadState*> threads;
  uint32_t next_thread = 0;
  uint32_t timer_failures = 0;
  // Of threads that exited and were unmapped.
  uint64_t gone_dropped = 0;
  std::array<uint64_t, kCostBuckets + 1> gone_cost{};
  // Under the recorder's lock.
  SamplesWriter writer;
  std::string path;
  std::unordered_map<uintptr_t, std::pair<uint32_t, uint64_t>> places;  // address -> module, offset
  std::unordered_map<std::string, uint32_t> module_ids;
  std::unordered_map<CtxKey, uint32_t, CtxHash> contexts;
  bool warned_budget = false;
};

Sampler& sampler() {
  static Sampler* s = new Sampler;  // never destroyed: handlers and atexit may still look
  return *s;
}

TRACEFOLD_STATIC_TLS constinit thread_local ThreadState* tl_state = nullptr;
// Inside dlopen/dlclose on this thread: the loader's lists may be half
// changed, and libunwind walks them (dl_iterate_phdr) to find unwind tables.
TRACEFOLD_STATIC_TLS constinit thread_local int tl_loader_depth = 0;

int64_t clock_ns(clockid_t c) {
  timespec ts;
  clock_gettime(c, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// The next tick stays on the period's grid even when that is already past
// (the handler was preempted): the timer then fires at once, and that
// tick stores the ones missed as copies (on_tick). Only beyond what one
// tick may copy are ticks skipped, counted as dropped.
void arm(ThreadState& st, int64_t now) {
  const int64_t period = sampler().period_ns;
  st.next_ns += period;
  if (const int64_t behind = now - st.next_ns; behind > kMaxCopies * period) {
    const int64_t skipped = behind / period;
    st.dropped.fetch_add(static_cast<uint64_t>(skipped), std::memory_order_relaxed);
    st.next_ns += skipped * period;
  }
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

// `missed`: ticks that fell due while this thread did not run (see on_tick),
// stored as copies of this sample at their own times, `due` onwards.
void take(ThreadState& st, void* ucontext, int64_t t0, int64_t due, uint64_t missed) {
  Recorder& r = recorder();
  if (tl_in_call) {
    // Inside a wrapped call the recorder knows the call and its site: no walk.
    const uint64_t h = st.mpi_head.load(std::memory_order_relaxed);
    if (kMpiSlots - (h - st.mpi_tail.load(std::memory_order_acquire)) < 1 + missed) {
      st.dropped.fetch_add(1 + missed, std::memory_order_relaxed);
      return;
    }
    const SamplerThreadMarks& marks = tl_sampler_marks;
    const uint64_t event = marks.timed_call == marks.calls
                               ? marks.timed_event
                               : r.events_timed.load(std::memory_order_relaxed);
    for (uint64_t k = 0; k <= missed; ++k) {
      MpiSample& m = st.mpi_ring[(h + k) & (kMpiSlots - 1)];
      m.time_ns = r.skewed(k < missed ? due + static_cast<int64_t>(k) * sampler().period_ns : t0);
      m.mpi_event = event;
    }
    st.mpi_head.store(h + 1 + missed, std::memory_order_release);
    g_samples_produced.fetch_add(1 + missed, std::memory_order_relaxed);
    return;
  }
  const uint64_t h = st.head.load(std::memory_order_relaxed);
  const uint64_t room = kRingSlots - (h - st.tail.load(std::memory_order_acquire));
  if (room < 1 + missed || tl_loader_depth > 0) {
    st.dropped.fetch_add(1 + missed, std::memory_order_relaxed);
    return;
  }
  RawSample& s = st.ring[h & (kRingSlots - 1)];
  s.time_ns = r.skewed(t0);
  s.mpi_event = r.events_timed.load(std::memory_order_relaxed);
  s.lca = 0;
  s.n = 0;
  s.in_mpi = 0;
  {
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) <
        0) {
      st.dropped.fetch_add(1 + missed, std::memory_order_relaxed);
      return;
    }
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
    if (n == 0) {
      st.dropped.fetch_add(1 + missed, std::memory_order_relaxed);
      return;
    }
    SamplerThreadMarks& marks = tl_sampler_marks;
    if (!truncated) s.lca = lca_of(st, s.ip, sp, n, marks.calls != st.prev_calls, marks.low_mpi_sp);
    s.n = static_cast<uint16_t>(n);
    std::memcpy(st.prev_ip, s.ip, sizeof(uintptr_t) * static_cast<std::size_t>(n));
    std::memcpy(st.prev_sp, sp, sizeof(uintptr_t) * static_cast<std::size_t>(n));
    st.prev_n = truncated ? 0 : n;
    st.prev_calls = marks.calls;
    marks.low_mpi_sp = UINTPTR_MAX;
  }
  if (missed > 0) {
    // The copies come first (earlier times); the frames are unchanged, so
    // each copy's marker is the whole path but the leaf.
    RawSample& last = st.ring[(h + missed) & (kRingSlots - 1)];
    std::memcpy(&last, &s, offsetof(RawSample, ip) + sizeof(uintptr_t) * s.n);
    const uint16_t whole = s.n > 0 && st.prev_n > 0 ? static_cast<uint16_t>(s.n - 1) : 0;
    for (uint64_t k = 1; k < missed; ++k) {
      RawSample& copy = st.ring[(h + k) & (kRingSlots - 1)];
      std::memcpy(&copy, &s, offsetof(RawSample, ip) + sizeof(uintptr_t) * s.n);
      copy.time_ns = r.skewed(due + static_cast<int64_t>(k) * sampler().period_ns);
      copy.lca = whole;
    }
    s.time_ns = r.skewed(due);
    last.lca = whole;
  }
  st.head.store(h + 1 + missed, std::memory_order_release);
  g_samples_produced.fetch_add(1 + missed, std::memory_order_relaxed);
}

void on_tick(int, siginfo_t* info, void* ucontext) {
  ThreadState* st = tl_state;
  // Another sender's signal, or a tick queued before the timer was deleted.
  if (!st || info->si_code != SI_TIMER || !sampler().on.load(std::memory_order_relaxed)) return;
  const int saved_errno = errno;
  const int64_t t0 = clock_ns(CLOCK_MONOTONIC);
  // A tick that found the thread off its core (more threads than cores)
  // arrives when it runs again, possibly periods late. The thread did not
  // move meanwhile, so the ticks it missed are stored as copies of this
  // sample at their due times: wall-clock counts stay per period. (A
  // thread that had blocked the signal did move: docs/sampling.md.)
  const int64_t period = sampler().period_ns;
  const int64_t due = st->next_ns;
  uint64_t missed = 0;
  if (st->clock == CLOCK_MONOTONIC && t0 - due >= period)
    missed = static_cast<uint64_t>(std::min<int64_t>((t0 - due) / period, kMaxCopies));
  take(*st, ucontext, t0, due, missed);
  st->next_ns = due + static_cast<int64_t>(missed) * period;
  const int64_t t1 = clock_ns(CLOCK_MONOTONIC);
  if (st->timer_live.load(std::memory_order_relaxed))
    arm(*st, st->clock == CLOCK_MONOTONIC ? t1 : clock_ns(st->clock));
  const int64_t cost = clock_ns(CLOCK_MONOTONIC) - t0;
  st->cost[cost_bucket(cost)].fetch_add(1, std::memory_order_relaxed);
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
  tl_state = st;
  if (!main_thread) pthread_setspecific(s.key, st);
  st->timer_live.store(true);
  st->next_ns = clock_ns(st->clock);
  arm(*st, st->next_ns);
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

// Module and offset of `a` (a PC, or a return address minus one).
std::pair<uint32_t, uint64_t> place_of(Recorder& r, Sampler& s, uintptr_t a) {
  if (auto it = s.places.find(a); it != s.places.end()) return it->second;
  if (s.places.size() > (1u << 20)) s.places.clear();  // a bound, not a cache policy
  Dl_info info;
  std::string name = "?";
  uintptr_t base = 0;
  if (dladdr(reinterpret_cast<void*>(a), &info) && info.dli_fbase) {
    base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    const std::string path = info.dli_fname ? info.dli_fname : "?";
    name = path.substr(path.find_last_of('/') + 1);
    for (char& c : name)
      if (c == ' ') c = '_';
  }
  auto id = s.module_ids.find(name);
  if (id == s.module_ids.end()) {
    Module m;
    m.name = name;
    if (name != "?") {
      r.note_module(name, base);  // the recorder's table: path, build-id, ELF base
      m = r.modules.at(name);
    }
    id = s.module_ids.emplace(name, s.writer.add_module(m)).first;
  }
  const std::pair<uint32_t, uint64_t> place{id->second, a - base};
  s.places.emplace(a, place);
  return place;
}

void write_one(Recorder& r, Sampler& s, const ThreadState& st, const RawSample& raw) {
  uint32_t ctx = 0;
  for (int i = raw.n - 1; i >= 0; --i) {
    // Callers' addresses are return addresses: step back into the call.
    const uintptr_t a = i == 0 ? raw.ip[0] : raw.ip[i] - 1;
    const auto [module, offset] = place_of(r, s, a);
    const CtxKey key{ctx, module, offset};
    auto it = s.contexts.find(key);
    if (it == s.contexts.end())
      it = s.contexts.emplace(key, s.writer.add_context(ctx, module, offset)).first;
    ctx = it->second;
  }
  Sample out;
  out.time_ns = raw.time_ns;
  out.context = ctx;
  out.thread = st.thread;
  out.mpi_event = raw.mpi_event;
  out.lca_depth = raw.lca;
  out.in_mpi = raw.in_mpi != 0;
  s.writer.add_sample(out);
}

// -1 when nothing was measured.
int64_t percentile(const std::array<uint64_t, kCostBuckets + 1>& h, double q) {
  uint64_t total = 0;
  for (uint64_t c : h) total += c;
  if (total == 0) return -1;
  const auto want = static_cast<uint64_t>(q * static_cast<double>(total - 1));
  uint64_t seen = 0;
  for (int b = 0; b <= kCostBuckets; ++b) {
    seen += h[static_cast<std::size_t>(b)];
    if (seen > want) return cost_of_bucket(b);
  }
  return cost_of_bucket(kCostBuckets);
}

}  // namespace

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
    s.writer.open(s.path, r.rank, r.size, s.period_ns, s.clock, r.timeline_max, 1 << 16);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "tracefold: rank %d: no samples: %s\n", r.rank, ex.what());
    return;
  }
  if (pthread_key_create(&s.key, &thread_gone) != 0) {
    std::fprintf(stderr, "tracefold: rank %d: no samples: no thread key\n", r.rank);
    return;
  }
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  struct sigaction sa {};
  sa.sa_sigaction = &on_tick;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(s.signal, &sa, nullptr);
  s.on.store(true);
  begin_thread(true);
}

void drain_samples(Recorder& r) {
  Sampler& s = sampler();
  std::lock_guard lock(s.threads_mu);
  for (std::size_t i = 0; i < s.threads.size();) {
    ThreadState* st = s.threads[i];
    const bool exited = st->exited.load(std::memory_order_acquire);
    // The two rings are merged by time. A handler publishes its samples
    // later than every earlier handler's, and their times are later too:
    // so if no sample entered the frame ring between reading its head and
    // the MPI ring's, every sample left for the next drain is later than
    // every one taken now, and the file stays in time order per thread.
    uint64_t h, mh;
    do {
      h = st->head.load(std::memory_order_acquire);
      mh = st->mpi_head.load(std::memory_order_acquire);
    } while (st->head.load(std::memory_order_acquire) != h);
    uint64_t t = st->tail.load(std::memory_order_relaxed);
    uint64_t mt = st->mpi_tail.load(std::memory_order_relaxed);
    while (t < h || mt < mh) {
      const RawSample* raw = t < h ? &st->ring[t & (kRingSlots - 1)] : nullptr;
      const MpiSample* in_mpi = mt < mh ? &st->mpi_ring[mt & (kMpiSlots - 1)] : nullptr;
      if (raw && in_mpi && in_mpi->time_ns < raw->time_ns) raw = nullptr;
      if (s.writer.is_open()) {
        try {
          if (raw) {
            write_one(r, s, *st, *raw);
          } else {
            Sample x;
            x.time_ns = in_mpi->time_ns;
            x.thread = st->thread;
            x.mpi_event = in_mpi->mpi_event;
            x.in_mpi = true;
            s.writer.add_sample(x);
          }
        } catch (const std::exception&) {
          s.writer.add_dropped(1);  // out of memory in the tables: the program goes on
        }
      }
      (raw ? t : mt)++;
      ++g_samples_consumed;
    }
    st->tail.store(t, std::memory_order_release);
    st->mpi_tail.store(mt, std::memory_order_release);
    if (!exited) {
      ++i;
      continue;
    }
    // Its handler can run no more: keep its counts, give its pages back.
    s.gone_dropped += st->dropped.load();
    for (int b = 0; b <= kCostBuckets; ++b)
      s.gone_cost[static_cast<std::size_t>(b)] += st->cost[b].load(std::memory_order_relaxed);
    munmap(st, sizeof(ThreadState));
    s.threads.erase(s.threads.begin() + static_cast<std::ptrdiff_t>(i));
  }
  if (s.writer.over_budget() && !s.warned_budget) {
    s.warned_budget = true;
    std::fprintf(stderr,
                 "tracefold: rank %d: samples size bound reached (TRACEFOLD_TIMELINE_MAX); later "
                 "samples are counted, not kept\n",
                 r.rank);
  }
}

void stop_sampler(Recorder& r) {
  Sampler& s = sampler();
  if (!s.on.exchange(false)) return;
  {
    std::lock_guard lock(s.threads_mu);
    for (ThreadState* st : s.threads)
      if (st->timer_live.exchange(false)) timer_delete(st->timer);
  }
  drain_samples(r);
  // Live threads' states stay mapped: a handler may still be running on one.
  std::array<uint64_t, kCostBuckets + 1> cost = s.gone_cost;
  uint64_t dropped = s.gone_dropped;
  {
    std::lock_guard lock(s.threads_mu);
    for (ThreadState* st : s.threads) {
      dropped += st->dropped.load();
      for (int b = 0; b <= kCostBuckets; ++b)
        cost[static_cast<std::size_t>(b)] += st->cost[b].load(std::memory_order_relaxed);
    }
  }
  s.writer.add_dropped(dropped);
  s.writer.close(percentile(cost, 0.5), percentile(cost, 0.99));
  if (!s.writer.error().empty())
    std::fprintf(stderr, "tracefold: rank %d: samples: %s\n", r.rank, s.writer.error().c_str());
  if (s.timer_failures)
    std::fprintf(stderr, "tracefold: rank %d: samples: %u threads got no timer\n", r.rank,
                 s.timer_failures);
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
  if (!R::sampler().on.load(std::memory_order_relaxed)) return real(thread, attr, start, arg);
  auto* a = new (std::nothrow) R::StartArgs{start, arg};
  if (!a) return real(thread, attr, start, arg);
  const int rc = real(thread, attr, &R::sampled_start, a);
  if (rc != 0) delete a;
  return rc;
}

// While the loader changes its lists, this thread's samples are dropped
// (counted). Without sampling the call is a tail call, so the library
// searches paths as for its real caller (RUNPATH); with sampling, as for
// libtracefold (docs/sampling.md).
extern "C" void* dlopen(const char* file, int mode) {
  using Fn = void* (*)(const char*, int);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "dlopen"));
  if (!R::sampler().on.load(std::memory_order_relaxed)) return real(file, mode);
  ++R::tl_loader_depth;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  void* h = real(file, mode);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --R::tl_loader_depth;
  return h;
}

extern "C" int dlclose(void* handle) {
  using Fn = int (*)(void*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "dlclose"));
  if (!R::sampler().on.load(std::memory_order_relaxed)) return real(handle);
  ++R::tl_loader_depth;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const int rc = real(handle);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --R::tl_loader_depth;
  return rc;
}
