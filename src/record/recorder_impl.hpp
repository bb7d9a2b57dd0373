// The recorder behind the MPI wrappers: its state and the pieces of it that
// the recorder's source files share (internal to libtracefold).
#pragma once

#include "recorder.hpp"

#include "datatypes.hpp"
#include "handle_queues.hpp"
#include "rawlog_file.hpp"

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

struct RequestInfo {
  uint64_t event = 0;
  bool wild_source = false;
  bool wild_tag = false;
};

using RequestTable = HandleQueues<MPI_Request, RequestInfo>;

// The times of a queue slot's repeats (Recorder::unfolded_repeats). Not a
// std::vector: its push_back is not inlined into the poll wrappers (the
// growth path comes with it); here only the growth is a call.
class RepeatList {
 public:
  RepeatList() = default;
  RepeatList(const RepeatList&) = delete;
  RepeatList& operator=(const RepeatList&) = delete;
  RepeatList(RepeatList&& o) noexcept { *this = std::move(o); }
  RepeatList& operator=(RepeatList&& o) noexcept {
    buf_ = std::move(o.buf_);
    next_ = o.next_;
    end_ = o.end_;
    o.next_ = o.end_ = nullptr;
    return *this;
  }
  // Two pointers, not a count and a capacity: a push loads two words,
  // compares them and stores through one.
  [[gnu::always_inline]] void push_back(RepeatTiming t) {
    if (next_ == end_) [[unlikely]]
      grow();
    *next_++ = t;
  }
  // The poll fast path pushes inline only when there is room
  // (push_unchecked); its growing push is out of line (poll_count_growing).
  bool has_room() const { return next_ != end_; }
  [[gnu::always_inline]] void push_unchecked(RepeatTiming t) { *next_++ = t; }
  bool empty() const { return next_ == buf_.data(); }
  void clear() { next_ = buf_.data(); }
  std::span<const RepeatTiming> span() const {
    return {buf_.data(), static_cast<std::size_t>(next_ - buf_.data())};
  }

 private:
  [[gnu::noinline]] void grow() {
    const std::size_t n = static_cast<std::size_t>(next_ - buf_.data());
    buf_.resize(std::max<std::size_t>(64, 2 * buf_.size()));
    next_ = buf_.data() + n;
    end_ = buf_.data() + buf_.size();
  }
  std::vector<RepeatTiming> buf_;  // its size is the capacity
  RepeatTiming* next_ = nullptr;   // the first unused entry of buf_
  RepeatTiming* end_ = nullptr;
};

// Stack of raw return addresses identifying one call site.
struct StackKey {
  std::array<uintptr_t, 32> addr;  // only the first n are set or read
  uint8_t n = 0;
  bool operator==(const StackKey& o) const {
    return n == o.n && std::equal(addr.begin(), addr.begin() + n, o.addr.begin());
  }
};
struct StackKeyHash {
  std::size_t operator()(const StackKey& k) const {
    uint64_t h = 1469598103934665603ull;
    for (uint8_t i = 0; i < k.n; ++i) h = (h ^ k.addr[i]) * 1099511628211ull;
    return h;
  }
};

struct FrameInfo {
  bool own = false;  // inside libtracefold itself: not part of the signature
  Frame frame;
};

// The library is preloaded or linked in, so its thread-locals can live in
// the static TLS block: reaching them then needs no __tls_get_addr call,
// which otherwise costs several of them per wrapped MPI call.
#define TRACEFOLD_STATIC_TLS [[gnu::tls_model("initial-exec")]]

#if defined(__x86_64__)
#define TRACEFOLD_PATH_CACHE 1
#endif

// Call paths this thread has walked, so a repeated call from the same place
// skips the unwinder (see Recorder::capture_stack). An entry is found by the
// return address into the wrapper, the capturing frame's address and the
// application's return address (read at the stack slot where this wrapper's
// caller keeps it), and is used only after everything that placed its
// frames is read back from the slot it was found in, innermost first: every
// return address it remembers, the saved frame pointer of each frame placed
// by it (alloca, VLAs), and the [RBP - 8] slot of frames realigned through
// another register. A helper called from two places at the same stack depth
// differs in an outer return address, so the two are not confused. x86-64
// only: there a call pushes its return address just below the caller's
// stack pointer.
struct PathCache {
  static constexpr std::size_t kSets = 64, kWays = 8, kProbes = 128, kMaxFrames = 24;
  static constexpr std::size_t kGroup = 4;  // slots checked at a time (cached_path)
  static_assert(kMaxFrames % kGroup == 0, "an entry pads its slots to whole groups");
  static constexpr std::size_t kSeen = 256;
  // A helper reached from several call sites at one stack depth has one
  // tag per call site in the same set: the ways hold them side by side.
  struct Tag {
    uintptr_t ret = 0, anchor = 0, first = 0;  // first: the signature's first frame
  };
  static constexpr SiteId kSiteUnknown = UINT32_MAX;
  struct Entry {
    SiteId site = kSiteUnknown;  // filled by the first append of this path
    uint8_t frames = 0;
    uint32_t in_key = 0;  // bit i: slot i holds a frame of the StackKey (not ours)
    std::array<uint32_t, kMaxFrames> offset{};  // slot address - anchor
    std::array<uintptr_t, kMaxFrames> value{};  // return address (or frame pointer) there
  };
  // Per wrapper return address: where (from the anchor) the signature's
  // first return address sits. Only a hint: entries verify everything.
  struct Probe {
    uintptr_t ret = 0;
    uint32_t offset = 0;
  };
  std::array<std::array<Probe, 2>, kProbes> probes{};  // two per bucket, newest first
  std::array<std::array<Tag, kWays>, kSets> tags{};
  std::array<std::array<Entry, kWays>, kSets> entries{};
  std::array<uint8_t, kSets> victim{};
  // Paths missed once (a path is learned when it misses again, so calls
  // from ever-changing stack depths do not pay for learning), or whose
  // learning failed (low bit set: never tried again).
  std::array<std::array<uint64_t, 2>, kSeen / 2> seen{};
  uintptr_t stack_lo = 0, stack_hi = 0;  // this thread's stack
  bool main_thread = false;
  int stack_refreshes = 0;  // of the main thread's stack bottom, see Recorder::stack_holds
  // Entries written so far: an entry remembered by address (the poll fast
  // path) is still the same path while this is unchanged.
  uint64_t learned = 0;
  uint64_t learn_attempts = 0;  // remember_path calls (each walks the stack with registers)
  // Valid entries each set has had to give up for a new one. More paths
  // than ways that share a set's (wrapper, stack depth, caller) -- a
  // V-cycle reaching one helper through different outer frames at every
  // level -- would be learned again and again, each time by a walk with
  // registers that costs many times a plain walk: past kThrash such
  // evictions a set learns nothing more and its misses are plain walks.
  static constexpr uint16_t kThrash = 4 * kWays;
  std::array<uint16_t, kSets> evictions{};

  static std::size_t probe_index(uintptr_t ret) { return (ret * 0x9E3779B97F4A7C15ull) >> 57; }
  static std::size_t set_index(uintptr_t ret, uintptr_t anchor, uintptr_t first) {
    return ((ret ^ (anchor >> 4) * 0xC2B2AE3D27D4EB4Full ^ first * 0x9E3779B97F4A7C15ull) *
            0x165667B19E3779F9ull) >>
           58;
  }
};
static_assert(PathCache::kProbes == 128 && PathCache::kSets == 64, "index bits");

// constinit on the declarations too: without it every access from another
// file first tests for a dynamic initializer (a weak TLS init function).
TRACEFOLD_STATIC_TLS extern constinit thread_local PathCache* tl_path_cache;

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

// A thread's own event stream (docs/recording.md "Threads"): everything the
// recorder changes on a call of that thread. Only its thread writes it
// while recording, reached through tl_stream without a lock; the end of
// recording (under `mu`, once the threads' calls are over) reads them all.
// Aligned so that two threads' streams share no cache line.
struct alignas(64) ThreadStream {
  int number = 0;  // by the order of the threads' first calls
  std::optional<Folder> folder;
  // Events recorded but not folded yet (see Recorder::append): slots reused
  // batch after batch, so their vectors keep their capacity.
  std::vector<Event> unfolded;
  std::size_t unfolded_n = 0;
  std::vector<uint8_t> unfolded_has_lists;  // per slot: a field's list holds a buffer
  // List fields grow with the communicator (v-collectives carry one count
  // per rank): at thousands of ranks a full queue of them would hold tens of
  // megabytes, so the queue is also folded once its lists reach this many
  // entries (1 MiB).
  static constexpr std::size_t kUnfoldedListBudget = std::size_t{1} << 17;
  std::size_t unfolded_list_entries = 0;
  // Per queue slot: the times of the unsuccessful polls that repeated the
  // slot's event right after it (Recorder::repeat_of_last). A waiting loop
  // polls thousands of times; kept as times only, a repeat takes no queue
  // slot and is folded by Folder::append_repeats in a few steps, not one
  // fold step each. The queue is folded once it holds kRepeatBudget of them.
  std::vector<RepeatList> unfolded_repeats;
  static constexpr std::size_t kRepeatBudget = 4096;
  std::size_t unfolded_repeat_n = 0;
  // Counts one more repeat of the last queued event (both the slow path's
  // repeat_of_last and the poll fast path); true when the budget is full
  // and the queue must be folded.
  bool count_repeat(int64_t compute_ns, int64_t comm_ns) {
    unfolded_repeats[unfolded_n - 1].push_back({compute_ns, comm_ns});
    ++slow_repeats;
    return ++unfolded_repeat_n >= kRepeatBudget;
  }
  // Changes whenever the queue changes other than by a repeat (an event
  // queued, the queue folded) and when recording stops: while it stands,
  // the last queued event and the request table are as they were (every
  // call that changes those queues an event). Read by the poll fast path.
  std::atomic<uint64_t> queue_seq{0};
  void bump_queue_seq() {
    queue_seq.store(queue_seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // Set by the fast path while it adds a repeat; the end of recording
  // waits for it to clear (wait_fast_polls).
  std::atomic<int> fast_busy{0};
  // Recorder::fast_repeat_limit, here for the inline fast path.
  std::size_t fast_repeat_limit = kRepeatBudget - 1;
  // Repeats counted by the slow path, and those folded so far: the fast
  // path's are what the others leave (fast_polls), so it keeps no count.
  uint64_t slow_repeats = 0, repeats_folded = 0;
  uint64_t fast_polls() const { return repeats_folded + unfolded_repeat_n - slow_repeats; }
  // This thread's events that created or (re)started requests, numbered
  // from 1: links count back in these, so polling loops (Test, Iprobe) do
  // not shift them.
  uint64_t request_events = 0;
  // Per handle, oldest first: an MPI library may hand out one handle for
  // several requests that completed at once (Open MPI's empty request).
  // Another thread may complete a request this one made, so the table is
  // changed by its thread, and read by others, under `requests_mu` (taken
  // by others only when their own table lacks a handle).
  RequestTable requests;
  RecorderLock requests_mu;
  int64_t last_exit_ns = 0;
  // This rank's position and size per communicator id (Recorder::position_in).
  std::unordered_map<int64_t, std::pair<int32_t, int32_t>> positions;
  int64_t last_position_id = kAbsent;
  std::pair<int32_t, int32_t> last_position{};
};

// The calling thread's stream; null before its first recorded call.
TRACEFOLD_STATIC_TLS extern constinit thread_local ThreadStream* tl_stream;

// A few handles' registry answers (communicator, datatype, operation ids)
// kept per thread, so a call reads the shared registries without their
// lock: an entry holds while the registries' generation
// (Recorder::registry_gen) is the one it was filled under.
template <class Value>
struct HandleCache {
  static constexpr std::size_t kSlots = 16;
  struct Slot {
    uint64_t gen = 0;  // 0: empty (generations start at 1)
    uintptr_t handle = 0;
    Value value{};
  };
  std::array<Slot, kSlots> slots{};
  template <class H>
  static uintptr_t bits(H h) {
    if constexpr (std::is_pointer_v<H>)
      return reinterpret_cast<uintptr_t>(h);
    else
      return static_cast<uintptr_t>(h);
  }
  static std::size_t index(uintptr_t h) { return (h * 0x9E3779B97F4A7C15ull) >> 60; }
  const Value* find(uintptr_t h, uint64_t gen) const {
    const Slot& s = slots[index(h)];
    return s.gen == gen && s.handle == h ? &s.value : nullptr;
  }
  void put(uintptr_t h, uint64_t gen, const Value& v) { slots[index(h)] = {gen, h, v}; }
};

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
  void timestamp(OpId op, int64_t enter_ns, int64_t exit_ns);
  // `list_entries`: the entries of ev's lists, and `lists`: whether any list
  // field was set, when the caller kept count (Call::set_list); else counted.
  static constexpr std::size_t kCountLists = SIZE_MAX;
  bool append(ThreadStream& s, Event& ev, const StackKey& stack, SiteId* site_memo = nullptr,
              std::size_t list_entries = kCountLists, bool lists = true);
  bool repeat_of_last(ThreadStream& s, const Event& ev);
  void fold_unfolded(ThreadStream& s);
  void read_clock_skew(int64_t t0);
  ClockSample clock_sample();
  void start_timeline(const char* dir, int64_t t0);
  void close_timeline(const ClockSample& end);
  // This rank's trace: every thread's stream (threads.cpp), each folded
  // by stream_trace.
  Trace local_trace();
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
