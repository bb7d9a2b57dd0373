// The recorder behind the MPI wrappers: its state and the pieces of it that
// the recorder's source files share (internal to libtracefold).
#pragma once

#include "recorder.hpp"

#include "datatypes.hpp"
#include "handle_queues.hpp"
#include "path_cache.hpp"
#include "rawlog_file.hpp"
#include "thread_stream.hpp"

#include <signal.h>
#include <time.h>

#define UNW_LOCAL_ONLY  // this process only: the fast local unwinder
#include <libunwind.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "tracefold/event_log.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/record.hpp"
#include "tracefold/timeline_io.hpp"

// Hidden: calls between the recorder's files stay direct (no PLT) and inlinable.
#pragma GCC visibility push(hidden)

namespace tracefold::record {

extern const FieldId kComm;

// True if the MPI the recorder's calls reach is not the one it was built
// for; says so once on stderr (mpi_flavour.cpp).
bool foreign_mpi();

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

inline const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

struct StatisticRegistry {
  std::mutex mu;
  std::vector<std::unique_ptr<Statistic>> available;
  std::vector<Statistic*> enabled;
};

StatisticRegistry& statistics();
/// Notes the calling thread's processor time as the end of its last call,
/// where the compute_cpu statistic counts the next computation from.
void mark_compute_cpu();
/// The calling thread's processor time in ns (statistics.cpp).
int64_t thread_cpu_ns();

class Recorder {
 public:
  RecorderLock mu;
  // Every thread's stream, by thread number (threads.cpp); changed and
  // read under `mu`.
  std::vector<std::unique_ptr<ThreadStream>> streams;
  // Per thread number: omp_get_thread_num() at its first call inside an
  // OpenMP parallel region, else -1.
  std::vector<int> stream_omp;
  FoldOptions fold_options;
  // The calling thread's stream, numbered and made at its first call.
  [[gnu::always_inline]] ThreadStream& stream() {
    if (ThreadStream* s = tl_stream) [[likely]]
      return *s;
    return new_stream();
  }
  [[gnu::noinline]] ThreadStream& new_stream();
  // Thread `t`'s empty stream (caller holds `mu`).
  std::unique_ptr<ThreadStream> make_stream(int t);
  // Bumped (under `mu`) whenever a handle's communicator, datatype or
  // operation id may change: the threads' HandleCaches then refill.
  std::atomic<uint64_t> registry_gen{1};
  void registry_changed() { registry_gen.fetch_add(1, std::memory_order_release); }
  // The calls' appends take `mu` (for the raw log, timeline, samples,
  // event log or statistics, which are the rank's): set at start.
  bool locked_append = false;
  // ~Call may queue a call whose site the call-path cache remembers
  // itself (queue_event), without append's checks: nothing takes `mu` and
  // no check compares the cache with the stack walk. Set at start.
  bool queue_inline = false;
  // MPI_THREAD_SERIALIZED or MULTIPLE was provided: point-to-point calls
  // note how many calls of other threads on their key came since the
  // thread's last one (note_thread_order).
  bool thread_order = false;
  // Set by the first call of a second thread (share_thread_order). Until
  // then the only thread's counts are the rank's, kept in its own
  // order_seen without order_mu; a program that asks for MULTIPLE but calls
  // MPI from one thread never takes the lock. order_solo_busy: that
  // thread is counting so (the hand-over waits it out).
  std::atomic<bool> order_shared{false};
  std::atomic<bool> order_solo_busy{false};
  std::mutex order_mu;
  OrderCounts order_counts;
  bool initialized = false;
  // Read by every thread's calls without the lock.
  std::atomic<bool> finalized{false};
  std::atomic<bool> disabled{false};
  std::string disabled_reason;  // fail()'s message, for the trace's lossy label
  int rank = 0;
  int size = 1;
  MPI_Comm private_comm = MPI_COMM_NULL;
  SiteTable sites;
  CommTable comms;
  // `record --timeline`: every call's enter/exit time, next to the trace.
  TimelineWriter timeline;
  uint64_t timeline_max = uint64_t{256} << 20;
  // Block size of each bounded file (timeline, event log, samples): a
  // block is written whole or not at all, so small bounds get small blocks
  // and still keep something.
  std::size_t block_bytes() const {
    return static_cast<std::size_t>(
        std::clamp<uint64_t>(timeline_max ? timeline_max / 8 : 65536, 256, 65536));
  }
  bool timeline_warned = false;
  ClockSample timeline_start;  // offset to rank 0's clock at MPI_Init
  // Test hook TRACEFOLD_TEST_CLOCK_SKEW_NS (clock_sync.cpp): this rank's
  // timeline clock runs off by an offset and a rate, as on another host.
  int64_t skew_ns = 0;
  double skew_ppm = 0.0;
  int64_t skew_origin_ns = 0;
  int skew_rank = -1;  // the rank the hook skews, -1 without the hook
  int64_t skewed(int64_t t) const {
    if (skew_ppm == 0.0) return t + skew_ns;
    return t + skew_ns +
           static_cast<int64_t>(static_cast<double>(t - skew_origin_ns) * skew_ppm * 1e-6);
  }
  // Events timestamped so far: the index of the next timeline record, which
  // samples name (sampler.cpp reads it in its signal handler).
  std::atomic<uint64_t> events_timed{0};  // counted only while `sampling`
  bool sampling = false;                  // set once by start_sampler, before any timer
  // Test hook (TRACEFOLD_TEST_EXIT_DELAY_NS, docs/sampling.md): a sampled
  // call waits this long between its exit time and its timestamp, as a
  // call preempted there on a loaded machine does.
  int64_t test_exit_delay_ns = 0;
  // The timeline file, and why it could not be created (for report_status).
  std::string timeline_path, timeline_open_error;
  // `record --sample-only` (TRACEFOLD_SAMPLE_ONLY with a timeline): no
  // folder; each event goes to the event log as it is recorded, its
  // declarations (modules, sites, communicators) first (log_event).
  bool sample_only = false;
  EventLogWriter event_log;
  std::string event_log_file, event_log_open_error;
  std::size_t logged_sites = 0;
  std::set<std::string> logged_modules;
  bool event_log_warned = false;
  void open_event_log(const char* dir);
  void log_event(const Event& ev);
  void close_event_log();
  std::size_t fold_batch = 1024;  // a stream's queue length
  // The polls whose unsuccessful repeats are counted (repeat_of_last), one
  // bit per op id: tested on every call, so a bit test, not a search.
  std::array<uint64_t, (std::size_t{1} << (8 * sizeof(OpId))) / 64> poll_op_bits{};
  bool is_poll(OpId op) const { return (poll_op_bits[op >> 6] >> (op & 63)) & 1u; }
  // The poll fast path (poll_fastpath.cpp) may be used: set at start.
  bool poll_fastpath = false;
  // TRACEFOLD_POLL_FASTPATH=check: an armed poll that found nothing is
  // recorded by the slow path all the same, which must find it a repeat.
  bool poll_check = false;
  uint64_t poll_checked = 0, poll_mismatches = 0;
  // Each stream's fast path counts a repeat while its unfolded_repeat_n is
  // below this: kRepeatBudget - 1 (the budget's last repeat is the slow
  // path's, which folds the queue), 0 in the check mode (no poll counts).
  std::size_t fast_repeat_limit = ThreadStream::kRepeatBudget - 1;
  int stack_depth = 6;
  int site_tolerance = 0;  // 0: exact call sites (lossless)
  // TRACEFOLD_STATS named some: every call asks them (set at start).
  bool any_statistics = false;
  bool compute_cpu = false;  ///< the compute_cpu statistic is on (mark_compute_cpu)
  bool no_timing = false;    // TRACEFOLD_NO_TIMING: drop the time histograms, keep parameters
  std::string output = "tracefold.tf";
  std::string rawlog_dir;
  RawLogFile rawlog;
  int rawlog_thread = 0;  // the thread the raw log's last event line belongs to
  std::unordered_map<MPI_Comm, int64_t> comm_ids;
  std::unordered_map<int64_t, uint64_t> creations;
  DatatypeRegistry types;
  std::unordered_map<MPI_Op, int64_t> op_ids;
  std::unordered_map<uintptr_t, FrameInfo> frames;
  std::unordered_map<StackKey, SiteId, StackKeyHash> stacks;
  // Path, build-id and base of each module frames name (modules.cpp).
  std::map<std::string, Module> modules;
  uintptr_t own_base = 0;
  // Address range of libtracefold's own loaded segments: frames there are
  // skipped without a lookup.
  uintptr_t own_lo = 0, own_hi = 0;

  bool recording() const { return initialized && !finalized && !disabled; }

  // One line on stderr, then this rank stops tracing; the application goes on.
  void fail(const std::string& what) {
    std::lock_guard lock(mu);
    if (disabled) return;
    disabled = true;
    disabled_reason = what;
    std::replace(disabled_reason.begin(), disabled_reason.end(), '\n', ' ');
    // An armed poll no longer counts (poll_counted compares it).
    for (auto& s : streams) s->bump_queue_seq();
    std::fprintf(stderr, "tracefold: rank %d: %s; tracing is off for this rank\n", rank,
                 what.c_str());
  }

  // The stack of the function this is inlined into (~Call, start_recording),
  // which then hands it to append. A call path seen before on this thread is
  // taken from the thread's PathCache once its return addresses are read
  // back from the stack; otherwise libunwind walks the stack.
  // `site` (if given) is pointed at the cache's memo of this path's call
  // site id, or set to null. `extra`: own frames between the wrapper and
  // the function this is inlined into (see Call::caller).
  [[gnu::always_inline]] StackKey capture_stack(SiteId** site = nullptr, int extra = 0) {
    if (site) *site = nullptr;
#ifdef TRACEFOLD_PATH_CACHE
    if (path_cache_mode != PathCacheMode::kOff && own_hi != 0) {
      const auto anchor = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
      const auto ret = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
      if (PathCache::Entry* e = cached_path(ret, anchor)) {
        if (site) *site = &e->site;
        if (path_cache_mode == PathCacheMode::kCheck) {
          // The walk's answer is recorded; append also checks the site memo.
          StackKey walked = walk_stack(extra);
          check_cached(key_of(*e), walked);
          return walked;
        }
        // append needs the stack only to find the site id the first time.
        if (site && e->site != PathCache::kSiteUnknown) {
          StackKey unused;  // n == 0; the frames are left unset
          return unused;
        }
        return key_of(*e);
      }
      StackKey key = walk_stack(extra);
      PathCache::Entry* e = learn_on_second_miss(ret, anchor, key);
      if (e && site) *site = &e->site;
      return key;
    }
#endif
    return walk_stack(extra);
  }

  // Our own frames (the function this is inlined into, the wrapper) come
  // first and are skipped; a few more than the depth suffice. The window of
  // stack_depth + 2 frames is the one this always used (stack_depth + 4,
  // counted from two frames further in), `extra` more when more of our own
  // frames come first. Needs no lock unless the own address range is
  // unknown (own_hi == 0).
  [[gnu::always_inline]] StackKey walk_stack(int extra = 0) {
    void* buf[40];
    const int n = unw_backtrace(buf, std::min(40, stack_depth + 2 + extra));
    StackKey key;
    for (int i = 0; i < n && key.n < stack_depth && key.n < key.addr.size(); ++i) {
      auto a = reinterpret_cast<uintptr_t>(buf[i]);
      if (a >= own_lo && a < own_hi) continue;
      if (own_hi == 0 && frame_of(a).own) continue;
      key.addr[key.n++] = a;
    }
    return key;
  }

#ifdef TRACEFOLD_PATH_CACHE
  enum class PathCacheMode { kOff, kOn, kCheck };
  PathCacheMode path_cache_mode = PathCacheMode::kOn;
  std::atomic<uint64_t> path_hits{0}, path_misses{0}, path_mismatches{0};

  [[gnu::always_inline]] static PathCache::Entry* cached_path(uintptr_t ret, uintptr_t anchor) {
    PathCache* pc = tl_path_cache;
    if (!pc) return nullptr;
    const auto& bucket = pc->probes[PathCache::probe_index(ret)];
    const PathCache::Probe& p = bucket[0].ret == ret ? bucket[0] : bucket[1];
    // The slot must lie in this thread's stack even if this anchor is
    // nearer its top than the one the offset was learned with.
    if (p.ret != ret || anchor < pc->stack_lo || anchor + p.offset + 8 > pc->stack_hi)
      return nullptr;
    const uintptr_t first = *reinterpret_cast<const uintptr_t*>(anchor + p.offset);
    const std::size_t set = PathCache::set_index(ret, anchor, first);
    for (std::size_t w = 0; w < PathCache::kWays; ++w) {
      const PathCache::Tag& t = pc->tags[set][w];
      if (t.ret != ret || t.anchor != anchor || t.first != first) continue;
      PathCache::Entry& e = pc->entries[set][w];
      // Every slot is read (the entry's slots all lie in this thread's
      // stack, above the anchor): no branch per frame on the hit path, four
      // at a time (remember_path pads the entry with copies of slot 0).
      uintptr_t differ = 0;
      auto slot = [&](std::size_t i) {
        return *reinterpret_cast<const uintptr_t*>(anchor + e.offset[i]) ^ e.value[i];
      };
      for (std::size_t i = 0; i < e.frames; i += PathCache::kGroup)
        differ |= slot(i) | slot(i + 1) | slot(i + 2) | slot(i + 3);
      if (differ == 0) return &e;
    }
    return nullptr;
  }

  static StackKey key_of(const PathCache::Entry& e) {
    StackKey key;
    for (uint8_t i = 0; i < e.frames; ++i)
      if (e.in_key & (1u << i)) key.addr[key.n++] = e.value[i];
    return key;
  }

  void check_cached(const StackKey& cached, const StackKey& walked);
  void report_memo_mismatch(SiteId memo, SiteId walked);
  static PathCache* path_cache();
  static void refresh_main_stack(PathCache& pc);
  static bool stack_holds(PathCache& pc, uintptr_t anchor);
  PathCache::Entry* learn_on_second_miss(uintptr_t ret, uintptr_t anchor, const StackKey& key);
  [[gnu::noinline]] PathCache::Entry* remember_path(PathCache* pc, uintptr_t ret, uintptr_t anchor,
                                                    const StackKey& key);
#endif

  SiteId site_of(const StackKey& key);
  const FrameInfo& frame_of(uintptr_t a);
  void note_module(const std::string& name, uintptr_t load_base);
  void find_own_range();
  static std::vector<int32_t> world_ranks_of(MPI_Group g);
  std::vector<int32_t> world_members(MPI_Comm c);
  std::vector<int32_t> remote_world_members(MPI_Comm c);
  void define_comm(int64_t id, MPI_Comm c);
  // Without `mu` from a call's hot path: through the thread's HandleCache,
  // the registry itself (under `mu`) only when that misses.
  int64_t comm_id(MPI_Comm c);
  int64_t op_id(MPI_Op o);
  // Under `mu`: the registries themselves.
  int64_t registered_comm_id(MPI_Comm c);
  int64_t registered_op_id(MPI_Op o);
  // This rank's position in communicator `id` (kAbsent: the world) and the
  // communicator's size. Consecutive events mostly use one communicator, so
  // the stream's last answer is checked first, inline.
  std::pair<int32_t, int32_t> position_in(ThreadStream& s, int64_t id) {
    if (id == kAbsent) id = CommTable::kWorld;
    if (id == s.last_position_id) return s.last_position;
    return find_position(s, id);
  }
  std::pair<int32_t, int32_t> find_position(ThreadStream& s, int64_t id);
  void start(int64_t t0);
  // `thread`: the caller's stream number (first-call order); the timeline's
  // trailer maps it to the trace's (timeline_threads).
  void timestamp(OpId op, int64_t enter_ns, int64_t exit_ns, int thread);
  // `list_entries`: the entries of ev's lists, and `lists`: whether any list
  // field was set, when the caller kept count (Call::set_list); else counted.
  static constexpr std::size_t kCountLists = SIZE_MAX;
  bool append(ThreadStream& s, Event& ev, const StackKey& stack, SiteId* site_memo = nullptr,
              std::size_t list_entries = kCountLists, bool lists = true);
  bool repeat_of_last(ThreadStream& s, const Event& ev);
  // append's end: `ev` (its site set, a poll's repeat already counted)
  // joins the queue, which is folded once full. No exception leaves it
  // (fold_unfolded catches its own). `comm`: ev's communicator field if
  // the caller knows it, else kUndefined (ThreadStream::unfolded_comm).
  [[gnu::always_inline]] void queue_event(ThreadStream& s, Event& ev, std::size_t list_entries,
                                          bool lists, int64_t comm = kUndefined) {
    s.unfolded_list_entries += list_entries;
    s.unfolded_has_lists[s.unfolded_n] = lists;
    s.unfolded_comm[s.unfolded_n] = comm;
    s.unfolded[s.unfolded_n++].swap(ev);
    s.bump_queue_seq();
    if (s.unfolded_n == s.unfolded.size() ||
        s.unfolded_list_entries >= ThreadStream::kUnfoldedListBudget)
      fold_unfolded(s);
  }
  void fold_unfolded(ThreadStream& s);
  void read_clock_skew(int64_t t0);
  ClockSample clock_sample();
  void start_timeline(const char* dir, int64_t t0);
  void close_timeline(const ClockSample& end);
  // This rank's trace: every thread's stream (threads.cpp), each folded
  // by stream_trace.
  Trace local_trace();
  // Each thread's trace and the order local_trace writes them in, made
  // once: the timeline's trailer names that order before local_trace runs
  // (threads.cpp).
  void order_threads();
  std::vector<Trace> ordered_parts;
  std::vector<int> written_order;
  bool threads_ordered = false;
  // Per stream number, the trace's number of that thread; empty when they
  // are the same.
  std::vector<int32_t> timeline_threads();
  Trace stream_trace(ThreadStream& s);
  void write_partial(const char* why);
  // `partial`: the partial trace's status lines, if one was attempted.
  void report_status(const std::string& partial);
  void finish();

  static void on_signal(int sig);
  void install_handlers();
};

inline Recorder& recorder() {
  static Recorder* r = new Recorder;  // never destroyed: atexit and signals may still use it
  return *r;
}

TRACEFOLD_STATIC_TLS extern constinit thread_local bool tl_in_call;
// Set while this thread changes the recorder's state under its lock (see
// Recorder::on_signal).
TRACEFOLD_STATIC_TLS extern constinit thread_local bool tl_holding;

// Marks a scope that changes the recorder's state under its lock, for
// on_signal; restores the previous mark (scopes can nest inside a Call).
struct HoldingMark {
  bool before = tl_holding;
  HoldingMark() { tl_holding = true; }
  ~HoldingMark() { tl_holding = before; }
};

struct CallBuffers {
  std::vector<MPI_Request> pending;
  std::vector<std::pair<bool, bool>> pending_wild;
  // Per pending request: the stream of the other thread that made it
  // (Call::requests_in), null for the calling thread's own.
  std::vector<ThreadStream*> pending_owner;
  // Stand-ins for MPI_STATUSES_IGNORE / MPI_F_STATUSES_IGNORE; they only grow.
  std::vector<MPI_Status> statuses;
  std::vector<MPI_Fint> fstatuses;
  std::vector<int64_t> srcs, mtags;
  std::vector<std::size_t> entry_of;
  // A request-links list's buffer, handed from one call's event to the
  // next: MPI_Test and MPI_Wait* would otherwise allocate and free one per
  // call, a polling loop thousands of times.
  std::vector<int64_t> spare_links;
};
CallBuffers& thread_buffers();

// The poll fast path (poll_fastpath.cpp). Caller holds `mu`, from ~Call
// right after `r.append` queued a poll that found nothing: the next equal
// poll from the same place may skip the Call. `anchor`/`site_memo` are
// those of capture_stack.
void arm_poll(Recorder& r, ThreadStream& s, OpId op, const std::vector<MPI_Request>& requests,
              MPI_Comm comm, int source, int tag, int index, uintptr_t anchor, SiteId* site_memo);
// End of recording: waits until no fast path is adding a repeat.
void wait_fast_polls(Recorder& r);
// Fields `others` (send or receive) and `rothers` (a Sendrecv's receive) of
// a point-to-point call under MPI_THREAD_SERIALIZED or MULTIPLE (docs/format.md "Message
// order across threads"); only where other threads came in between.
void note_thread_order(Recorder& r, ThreadStream& s, Event& ev);
// The first call of a second thread: the first thread's counts become the
// rank's (caller holds `mu`).
void share_thread_order(Recorder& r, ThreadStream& first);

// INTEGERs per Fortran status: what the configure probe read from the
// Fortran binding, else MPI-4's C name for it, else the C struct's ints
// (right for Open MPI and MPICH with 4-byte INTEGERs).
constexpr std::size_t fortran_status_size() {
#if defined(TRACEFOLD_F_STATUS_SIZE)
  return TRACEFOLD_F_STATUS_SIZE;  // asked of the Fortran binding at configure time
#elif defined(MPI_F_STATUS_SIZE)
  return MPI_F_STATUS_SIZE;
#else
  return sizeof(MPI_Status) / sizeof(MPI_Fint);
#endif
}
bool fortran_statuses_ignored(const MPI_Fint* statuses);
bool fortran_status_ignored(const MPI_Fint* status);

}  // namespace tracefold::record

#pragma GCC visibility pop
