#include "recorder.hpp"

#include "datatypes.hpp"
#include "handle_queues.hpp"
#include "mpi_ids.hpp"

#include <sys/resource.h>

#include <dlfcn.h>
#define UNW_LOCAL_ONLY  // this process only: the fast local unwinder
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tracefold/analysis_basic.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/record.hpp"
#include "tracefold/timeline_io.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::record {

namespace {
FieldId scalar_field(const char* n) {
  return FieldTable::intern(n, FieldKind::kScalar);
}
FieldId list_field(const char* n) {
  return FieldTable::intern(n, FieldKind::kList);
}
}  // namespace

const FieldId kPeer = scalar_field("peer"), kPeerRecv = scalar_field("rpeer"),
              kTag = scalar_field("tag"), kRtag = scalar_field("rtag"),
              kCount = scalar_field("count"), kDtype = scalar_field("dtype"),
              kDsize = scalar_field("dsize"), kRcount = scalar_field("rcount"),
              kRdtype = scalar_field("rdtype"), kRdsize = scalar_field("rdsize"),
              kCounts = list_field("counts"), kRcounts = list_field("rcounts"),
              kRoot = scalar_field("root"), kRedop = scalar_field("redop"),
              kColor = scalar_field("color"), kKey = scalar_field("key"),
              kNdims = scalar_field("ndims"), kFlag = scalar_field("flag"),
              kIndex = scalar_field("index"), kOutcount = scalar_field("outcount"),
              kTarget = scalar_field("target"), kSrc = scalar_field("src"),
              kMtag = scalar_field("mtag"), kNewcomm = scalar_field("newcomm"),
              kLinks = list_field("links"), kSrcs = list_field("srcs"),
              kMtags = list_field("mtags"), kPcomm = scalar_field("pcomm"),
              kRleader = scalar_field("rleader"), kHigh = scalar_field("high"),
              kIndices = list_field("indices");

namespace {

const FieldId kComm = scalar_field("comm");

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

struct RequestInfo {
  uint64_t event = 0;
  bool wild_source = false;
  bool wild_tag = false;
};

using RequestTable = HandleQueues<MPI_Request, RequestInfo>;

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

  static std::size_t probe_index(uintptr_t ret) { return (ret * 0x9E3779B97F4A7C15ull) >> 57; }
  static std::size_t set_index(uintptr_t ret, uintptr_t anchor, uintptr_t first) {
    return ((ret ^ (anchor >> 4) * 0xC2B2AE3D27D4EB4Full ^ first * 0x9E3779B97F4A7C15ull) *
            0x165667B19E3779F9ull) >>
           58;
  }
};
static_assert(PathCache::kProbes == 128 && PathCache::kSets == 64, "index bits");

TRACEFOLD_STATIC_TLS thread_local PathCache* tl_path_cache = nullptr;

// ------------------------------------------------------------- statistics

class BytesStatistic final : public Statistic {
 public:
  std::string name() const override { return "bytes"; }
  void start() override {}
  int64_t end(const Event& ev) override { return static_cast<int64_t>(event_bytes(ev)); }
};

class MinorFaultsStatistic final : public Statistic {
 public:
  std::string name() const override { return "minflt"; }
  void start() override { begin_ = faults(); }
  int64_t end(const Event&) override { return faults() - begin_; }

 private:
  static int64_t faults() {
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt;
  }
  int64_t begin_ = 0;
};

struct StatisticRegistry {
  std::mutex mu;
  std::vector<std::unique_ptr<Statistic>> available;
  std::vector<Statistic*> enabled;
};

StatisticRegistry& statistics() {
  static auto* r = [] {
    auto* reg = new StatisticRegistry;
    reg->available.push_back(std::make_unique<BytesStatistic>());
    reg->available.push_back(std::make_unique<MinorFaultsStatistic>());
    return reg;
  }();
  return *r;
}

class Recorder {
 public:
  std::recursive_mutex mu;
  bool initialized = false;
  bool finalized = false;
  bool disabled = false;
  int rank = 0;
  int size = 1;
  MPI_Comm private_comm = MPI_COMM_NULL;
  std::optional<Folder> folder;
  SiteTable sites;
  CommTable comms;
  int64_t last_exit_ns = 0;
  // `record --timeline`: every call's enter/exit time, next to the trace.
  TimelineWriter timeline;
  uint64_t timeline_max = uint64_t{256} << 20;
  bool timeline_warned = false;
  int64_t timeline_offset0 = 0;
  uint64_t event_count = 0;
  // Events recorded but not folded yet (see append): slots reused batch
  // after batch, so their vectors keep their capacity.
  std::vector<Event> unfolded;
  std::size_t unfolded_n = 0;
  std::size_t fold_batch = 1024;
  // List fields grow with the communicator (v-collectives carry one count
  // per rank): at thousands of ranks a full queue of them would hold tens of
  // megabytes, so the queue is also folded once its lists reach this many
  // entries (1 MiB).
  static constexpr std::size_t kUnfoldedListBudget = std::size_t{1} << 17;
  std::size_t unfolded_list_entries = 0;
  // Per queue slot: the times of the unsuccessful polls that repeated the
  // slot's event right after it (see repeat_of_last). A waiting loop polls
  // thousands of times; kept as times only, a repeat takes no queue slot
  // and is folded by Folder::append_repeats in a few steps, not one fold
  // step each. The queue is folded once it holds kRepeatBudget of them.
  std::vector<std::vector<RepeatTiming>> unfolded_repeats;
  static constexpr std::size_t kRepeatBudget = 4096;
  std::size_t unfolded_repeat_n = 0;
  std::array<OpId, 6> poll_ops{};
  // Events that created or (re)started requests, numbered from 1: links count
  // back in these, so polling loops (Test, Iprobe) do not shift them.
  uint64_t request_events = 0;
  int stack_depth = 6;
  int site_tolerance = 0;  // 0: exact call sites (lossless)
  bool no_timing = false;  // TRACEFOLD_NO_TIMING: drop the time histograms, keep parameters
  std::string output = "tracefold.tf";
  std::string rawlog_dir;
  std::ofstream rawlog;
  // Per handle, oldest first: an MPI library may hand out one handle for
  // several requests that completed at once (Open MPI's empty request).
  RequestTable requests;
  std::unordered_map<MPI_Comm, int64_t> comm_ids;
  std::unordered_map<int64_t, uint64_t> creations;
  DatatypeRegistry types;
  std::unordered_map<MPI_Op, int64_t> op_ids;
  std::unordered_map<int64_t, std::pair<int32_t, int32_t>> positions;  // see position_in
  std::unordered_map<uintptr_t, FrameInfo> frames;
  std::unordered_map<StackKey, SiteId, StackKeyHash> stacks;
  uintptr_t own_base = 0;
  // Address range of libtracefold's own loaded segments: frames there are
  // skipped without a lookup.
  uintptr_t own_lo = 0, own_hi = 0;

  bool recording() const { return initialized && !finalized && !disabled; }

  // One line on stderr, then this rank stops tracing; the application goes on.
  void fail(const std::string& what) {
    if (disabled) return;
    disabled = true;
    std::fprintf(stderr, "tracefold: rank %d: %s; tracing is off for this rank\n", rank,
                 what.c_str());
  }

  // The stack of the function this is inlined into (~Call, start_recording),
  // which then hands it to append. A call path seen before on this thread is
  // taken from the thread's PathCache once its return addresses are read
  // back from the stack; otherwise libunwind walks the stack.
  // `site` (if given) is pointed at the cache's memo of this path's call
  // site id, or set to null.
  [[gnu::always_inline]] StackKey capture_stack(SiteId** site = nullptr) {
    if (site) *site = nullptr;
#ifdef TRACEFOLD_PATH_CACHE
    if (path_cache_mode != PathCacheMode::kOff && own_hi != 0) {
      const auto anchor = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
      const auto ret = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
      if (PathCache::Entry* e = cached_path(ret, anchor)) {
        if (site) *site = &e->site;
        if (path_cache_mode == PathCacheMode::kCheck) {
          // The walk's answer is recorded; append also checks the site memo.
          StackKey walked = walk_stack();
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
      StackKey key = walk_stack();
      PathCache::Entry* e = learn_on_second_miss(ret, anchor, key);
      if (e && site) *site = &e->site;
      return key;
    }
#endif
    return walk_stack();
  }

  // Our own frames (the function this is inlined into, the wrapper) come
  // first and are skipped; a few more than the depth suffice. The window of
  // stack_depth + 2 frames is the one this always used (stack_depth + 4,
  // counted from two frames further in). Needs no lock unless the own
  // address range is unknown (own_hi == 0).
  [[gnu::always_inline]] StackKey walk_stack() {
    void* buf[40];
    const int n = unw_backtrace(buf, std::min(40, stack_depth + 2));
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

  static PathCache::Entry* cached_path(uintptr_t ret, uintptr_t anchor) {
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
      bool hold = true;
      for (uint8_t i = 0; i < e.frames && hold; ++i)
        hold = *reinterpret_cast<const uintptr_t*>(anchor + e.offset[i]) == e.value[i];
      if (hold) return &e;
    }
    return nullptr;
  }

  static StackKey key_of(const PathCache::Entry& e) {
    StackKey key;
    for (uint8_t i = 0; i < e.frames; ++i)
      if (e.in_key & (1u << i)) key.addr[key.n++] = e.value[i];
    return key;
  }

  // TRACEFOLD_PATH_CACHE=check: the unwinder's answer is recorded, and any
  // difference is reported (a test runs with this).
  void check_cached(const StackKey& cached, const StackKey& walked) {
    path_hits.fetch_add(1, std::memory_order_relaxed);
    if (cached == walked) return;
    uint8_t i = 0;
    while (i < cached.n && i < walked.n && cached.addr[i] == walked.addr[i]) ++i;
    if (path_mismatches.fetch_add(1, std::memory_order_relaxed) == 0)
      std::fprintf(stderr,
                   "tracefold: rank %d: call-path cache gave %u frames, the stack walk %u; "
                   "frame %u differs (%#lx, %#lx)\n",
                   rank, unsigned(cached.n), unsigned(walked.n), unsigned(i),
                   static_cast<unsigned long>(i < cached.n ? cached.addr[i] : 0),
                   static_cast<unsigned long>(i < walked.n ? walked.addr[i] : 0));
  }

  void report_memo_mismatch(SiteId memo, SiteId walked) {
    if (path_mismatches.fetch_add(1, std::memory_order_relaxed) == 0)
      std::fprintf(stderr,
                   "tracefold: rank %d: call-path cache remembered site %u, the stack walk gives "
                   "site %u\n",
                   rank, unsigned(memo), unsigned(walked));
  }

  static PathCache* path_cache() {
    if (PathCache* pc = tl_path_cache) return pc;
    PathCache* pc = tl_path_cache = new (std::nothrow) PathCache;
    if (!pc) return nullptr;
    static thread_local struct Owner {
      ~Owner() {
        PathCache* pc = tl_path_cache;
        tl_path_cache = nullptr;  // before the delete: a signal may still look
        delete pc;
      }
    } owner;
    (void)owner;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* lo = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
        pc->stack_lo = reinterpret_cast<uintptr_t>(lo);
        pc->stack_hi = pc->stack_lo + size;
      }
      pthread_attr_destroy(&attr);
    }
    // glibc derives the main thread's stack bottom from the stack limit;
    // under `ulimit -s unlimited` that range covers the heap, where
    // coroutine stacks live. The mapping that holds the stack is the truth.
    pc->main_thread = getpid() == static_cast<pid_t>(syscall(SYS_gettid));
    if (pc->main_thread) {
      pc->stack_lo = pc->stack_hi;
      refresh_main_stack(*pc);
    }
    return pc;
  }

  // Moves the main thread's stack bottom to that of the mapping holding its
  // top (the stack only grows, so a bottom once read stays valid).
  static void refresh_main_stack(PathCache& pc) {
    if (pc.stack_hi == 0) return;
    const int saved_errno = errno;  // the application may be looking at it
    if (FILE* maps = std::fopen("/proc/self/maps", "re")) {
      char chunk[512];
      bool line_start = true;  // a long line comes in several chunks
      while (std::fgets(chunk, sizeof chunk, maps)) {
        unsigned long lo = 0, hi = 0;
        if (line_start && std::sscanf(chunk, "%lx-%lx", &lo, &hi) == 2 && lo < pc.stack_hi &&
            pc.stack_hi <= hi) {
          pc.stack_lo = lo;
          break;
        }
        line_start = std::strchr(chunk, '\n') != nullptr;
      }
      std::fclose(maps);
    }
    errno = saved_errno;
  }

  // True if `anchor` lies in this thread's stack, so that every slot between
  // it and the stack's top can be read. Stacks of their own (coroutines,
  // alternate signal stacks) are not cached.
  static bool stack_holds(PathCache& pc, uintptr_t anchor) {
    if (anchor >= pc.stack_lo && anchor < pc.stack_hi) return true;
    // The main thread's stack may have grown since its bottom was read; a
    // few rereads for anchors just below it (coroutine stacks on the heap
    // lie far below and do not use them up), then such calls are walked.
    constexpr uintptr_t kGrowth = uintptr_t{64} << 20;
    if (pc.main_thread && anchor < pc.stack_lo && anchor + kGrowth >= pc.stack_lo &&
        pc.stack_refreshes < 16) {
      ++pc.stack_refreshes;
      refresh_main_stack(pc);
      return anchor >= pc.stack_lo;
    }
    return false;
  }

  // A path is learned on its second miss; one whose learning failed is not
  // tried again while its mark stays in the table.
  PathCache::Entry* learn_on_second_miss(uintptr_t ret, uintptr_t anchor, const StackKey& key) {
    if (path_cache_mode == PathCacheMode::kCheck)
      path_misses.fetch_add(1, std::memory_order_relaxed);
    if (key.n == 0) return nullptr;
    PathCache* pc = path_cache();
    if (!pc) return nullptr;
    const uint64_t h =
        ((ret * 0x9E3779B97F4A7C15ull) ^ (anchor * 0xC2B2AE3D27D4EB4Full) ^ key.addr[0]) & ~1ull;
    // Two marks per bucket, newest first, so two paths that alternate in
    // one bucket do not keep erasing each other's mark.
    auto& bucket = pc->seen[(h * 0x165667B19E3779F9ull) >> 57];
    uint64_t* mark = bucket[0] >> 1 == h >> 1   ? &bucket[0]
                     : bucket[1] >> 1 == h >> 1 ? &bucket[1]
                                                : nullptr;
    if (!mark) {
      bucket[1] = bucket[0];
      bucket[0] = h;
      return nullptr;
    }
    if (*mark != h) return nullptr;  // learning this path failed before
    PathCache::Entry* e = remember_path(pc, ret, anchor, key);
    if (!e) *mark = h | 1;
    return e;
  }

  // Learns where the return addresses of `key` (and of our own frames before
  // and between them) sit relative to `anchor`, by walking the stack again
  // with registers. Nothing is cached unless the walk agrees with `key`
  // frame for frame, no frame is a signal frame, and every slot lies in this
  // thread's stack.
  [[gnu::noinline]] PathCache::Entry* remember_path(PathCache* pc, uintptr_t ret, uintptr_t anchor,
                                                    const StackKey& key) {
    if (!stack_holds(*pc, anchor)) return nullptr;
    unw_context_t ctx;
    unw_cursor_t cur;
    if (unw_getcontext(&ctx) != 0 || unw_init_local(&cur, &ctx) != 0) return nullptr;
    PathCache::Entry e;
    PathCache::Tag tag{ret, anchor, 0};
    // Slots are checked in this order on a hit, so a slot is read only once
    // everything that places it has matched.
    auto add = [&](uintptr_t slot, uintptr_t value, bool in_key) {
      if (e.frames == PathCache::kMaxFrames || slot < anchor ||
          slot + sizeof(uintptr_t) > pc->stack_hi || slot - anchor > UINT32_MAX ||
          *reinterpret_cast<const uintptr_t*>(slot) != value)
        return false;
      if (in_key) e.in_key |= 1u << e.frames;
      e.offset[e.frames] = static_cast<uint32_t>(slot - anchor);
      e.value[e.frames] = value;
      ++e.frames;
      return true;
    };
    bool started = false;
    uint8_t matched = 0;
    unw_word_t prev_fp = 0, prev_sp = 0;
    unw_save_loc_t prev_fp_loc{};
    while (matched < key.n) {
      if (unw_step(&cur) <= 0) return nullptr;
      unw_word_t ip = 0, sp = 0;
      if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cur, UNW_REG_SP, &sp) != 0)
        return nullptr;
      // A frame a signal interrupted sits where the kernel's saved stack
      // pointer says, which no slot records.
      if (unw_is_signal_frame(&cur) > 0) return nullptr;
      if (!started) {
        // Frames of remember_path and the capturing function come first.
        if (ip != ret) continue;
        started = true;
      } else if (sp == prev_fp + 16) {
        // The previous frame was found from its frame pointer (alloca, VLAs,
        // code built with frame pointers): its size can change between
        // calls, so its saved frame pointer is checked too.
        if (prev_fp_loc.type != UNW_SLT_MEMORY || !add(prev_fp_loc.u.addr, prev_fp, false))
          return nullptr;
      } else if (prev_fp >= prev_sp + 8 && prev_fp < sp &&
                 *reinterpret_cast<const uintptr_t*>(prev_fp - 8) == sp) {
        // A frame pointer inside the previous frame that does not give its
        // position: GCC's realignment through another register (a VLA or
        // alloca with an over-aligned local or AVX value), where the frame's
        // position is kept at [RBP - 8]. Both are checked.
        if (prev_fp_loc.type != UNW_SLT_MEMORY || !add(prev_fp_loc.u.addr, prev_fp, false) ||
            !add(prev_fp - 8, sp, false))
          return nullptr;
      }
      prev_sp = sp;
      const bool in_key = ip == key.addr[matched];
      if (!in_key && (ip < own_lo || ip >= own_hi))
        return nullptr;  // the two walks disagree: leave this path uncached
      if (!add(sp - sizeof(uintptr_t), ip, in_key)) return nullptr;
      if (in_key) ++matched;
      if (unw_get_reg(&cur, UNW_X86_64_RBP, &prev_fp) != 0 ||
          unw_get_save_loc(&cur, UNW_X86_64_RBP, &prev_fp_loc) != 0)
        return nullptr;
    }
    for (uint8_t i = 0; i < e.frames; ++i) {
      if (!(e.in_key & (1u << i))) continue;
      tag.first = e.value[i];
      auto& bucket = pc->probes[PathCache::probe_index(ret)];
      if (bucket[0].ret != ret) bucket[1] = bucket[0];
      bucket[0] = {ret, e.offset[i]};
      break;
    }
    // This path missed, so no way holds it; the same helper reached from
    // several call sites has one way each here.
    const std::size_t set = PathCache::set_index(ret, anchor, tag.first);
    std::size_t way = pc->victim[set];
    for (std::size_t w = 0; w < PathCache::kWays; ++w)
      if (pc->entries[set][w].frames == 0) {
        way = w;
        break;
      }
    if (way == pc->victim[set])
      pc->victim[set] = static_cast<uint8_t>((way + 1) % PathCache::kWays);
    pc->tags[set][way] = tag;
    pc->entries[set][way] = e;
    return &pc->entries[set][way];
  }
#endif

  SiteId site_of(const StackKey& key) {
    auto it = stacks.find(key);
    if (it != stacks.end()) return it->second;
    CallSite cs;
    for (uint8_t i = 0; i < key.n; ++i) cs.frames.push_back(frame_of(key.addr[i]).frame);
    if (cs.frames.empty()) cs.frames.push_back(Frame{"unknown", 0});
    if (site_tolerance > 0) {
      // Approximate call-site matching (seed 000, 5.2.3; lossy, opt-in): a
      // new stack that differs from a known one in fewer than
      // `site_tolerance` frames, compared from the outermost frame inwards,
      // is taken to be that call site.
      for (SiteId id = 0; id < sites.size(); ++id) {
        const auto& known = sites.at(id).frames;
        if (known.size() != cs.frames.size()) continue;
        int differing = 0;
        for (std::size_t f = known.size(); f-- > 0 && differing < site_tolerance;)
          if (!(known[f] == cs.frames[f])) ++differing;
        if (differing < site_tolerance) {
          stacks.emplace(key, id);
          return id;
        }
      }
    }
    const std::size_t before = sites.size();
    const SiteId id = sites.intern(cs);
    if (sites.size() != before && rawlog.is_open())
      rawlog << "site " << id << " " << SiteTable::format(cs) << "\n";
    stacks.emplace(key, id);
    return id;
  }

  const FrameInfo& frame_of(uintptr_t a) {
    auto it = frames.find(a);
    if (it != frames.end()) return it->second;
    FrameInfo fi;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(a), &info) && info.dli_fbase) {
      const auto base = reinterpret_cast<uintptr_t>(info.dli_fbase);
      fi.own = base == own_base;
      std::string path = info.dli_fname ? info.dli_fname : "?";
      fi.frame.module = path.substr(path.find_last_of('/') + 1);
      // A return address points after the call; step back into it.
      fi.frame.offset = a - base - 1;
    } else {
      fi.frame.module = "?";
      fi.frame.offset = a;
    }
    for (char& c : fi.frame.module)
      if (c == ' ') c = '_';
    return frames.emplace(a, fi).first->second;
  }

  // World ranks of `g`'s members, in group order; frees `g`.
  static std::vector<int32_t> world_ranks_of(MPI_Group g) {
    MPI_Group world;
    int n = 0;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_size(g, &n);
    std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
    PMPI_Group_translate_ranks(g, n, in.data(), world, out.data());
    PMPI_Group_free(&g);
    PMPI_Group_free(&world);
    return {out.begin(), out.end()};
  }

  std::vector<int32_t> world_members(MPI_Comm c) {
    MPI_Group g;
    PMPI_Comm_group(c, &g);
    return world_ranks_of(g);
  }

  // World ranks of an intercommunicator's remote group.
  std::vector<int32_t> remote_world_members(MPI_Comm c) {
    MPI_Group g;
    PMPI_Comm_remote_group(c, &g);
    return world_ranks_of(g);
  }

  void define_comm(int64_t id, MPI_Comm c) {
    CommGroup g;
    g.members = world_members(c);
    for (int32_t m : g.members)
      if (m < 0) throw std::runtime_error("communicator has members outside MPI_COMM_WORLD");
    if (!comms.group_of(id, rank)) {
      comms.define(id, g);
      if (rawlog.is_open()) rawlog << format_comm_line(id, g) << "\n";
    }
    comm_ids[c] = id;
  }

  int64_t comm_id(MPI_Comm c) {
    if (c == MPI_COMM_WORLD) return CommTable::kWorld;
    auto it = comm_ids.find(c);
    if (it != comm_ids.end()) return it->second;
    // Not created through a wrapped call (e.g. MPI_COMM_SELF): name it by
    // its members so every holder agrees.
    auto members = world_members(c);
    uint64_t h = 1469598103934665603ull;
    for (int32_t m : members) h = (h ^ static_cast<uint64_t>(m)) * 1099511628211ull;
    const int64_t id = static_cast<int64_t>((h & 0x3FFFFFFFull) | (1ull << 31));
    define_comm(id, c);
    return id;
  }

  int64_t op_id(MPI_Op o) {
    auto it = op_ids.find(o);
    if (it != op_ids.end()) return it->second;
    std::size_t n = 0;
    const MPI_Op* named = mpi_ids::named_ops(n);
    int64_t id = -1;
    for (std::size_t i = 0; i < n; ++i)
      if (named[i] == o) id = static_cast<int64_t>(i) + 1;
    if (id < 0) id = mpi_ids::kFirstUserOp + static_cast<int64_t>(op_ids.size());
    op_ids.emplace(o, id);
    return id;
  }

  void start(int64_t t0) {
    std::lock_guard lock(mu);
    if (initialized) return;
    if (env("TRACEFOLD_DISABLE")) return;  // the same on every rank: nobody merges
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    // From here on this rank takes part in the merge at MPI_Finalize even if
    // the rest of the set-up fails (with an empty trace), so no rank waits
    // forever for it.
    PMPI_Comm_dup(MPI_COMM_WORLD, &private_comm);
    initialized = true;
    try {
      if (const char* o = env("TRACEFOLD_OUTPUT")) output = o;
      if (const char* d = env("TRACEFOLD_STACK_DEPTH"))
        stack_depth = std::max(1, std::min(32, std::atoi(d)));
#ifdef TRACEFOLD_PATH_CACHE
      if (const char* c = env("TRACEFOLD_PATH_CACHE")) {
        const std::string mode = c;
        if (mode == "off" || mode == "0")
          path_cache_mode = PathCacheMode::kOff;
        else if (mode == "check")
          path_cache_mode = PathCacheMode::kCheck;
        else if (mode != "on" && mode != "1")
          throw std::runtime_error("TRACEFOLD_PATH_CACHE must be on, off or check, not '" + mode +
                                   "'");
      }
#endif
      no_timing = env("TRACEFOLD_NO_TIMING") != nullptr;
      if (const char* t = env("TRACEFOLD_SITE_TOLERANCE"))
        site_tolerance = std::max(0, std::atoi(t));
      if (const char* list = env("TRACEFOLD_STATS")) {
        auto& reg = statistics();
        std::lock_guard slock(reg.mu);
        std::string names = list;
        std::size_t pos = 0;
        while (pos <= names.size()) {
          const std::size_t comma = std::min(names.find(',', pos), names.size());
          const std::string want = names.substr(pos, comma - pos);
          pos = comma + 1;
          if (want.empty()) continue;
          auto found = std::find_if(reg.available.begin(), reg.available.end(),
                                    [&](const auto& st) { return st->name() == want; });
          if (found == reg.available.end())
            throw std::runtime_error("unknown statistic '" + want + "' in TRACEFOLD_STATS");
          reg.enabled.push_back(found->get());
        }
      }
      FoldOptions opts;
      if (const char* w = env("TRACEFOLD_WINDOW"))
        opts.window = static_cast<std::size_t>(std::max(2, std::atoi(w)));
      if (const char* s = env("TRACEFOLD_SIMILARITY")) opts.min_similarity = std::atof(s);
      if (const char* h = env("TRACEFOLD_HISTOGRAM_THRESHOLD"))
        opts.histogram_threshold = static_cast<std::size_t>(std::atoi(h));
      folder.emplace(rank, opts);
      if (const char* b = env("TRACEFOLD_FOLD_BATCH"))
        fold_batch = static_cast<std::size_t>(std::max(1, std::atoi(b)));
      unfolded.resize(fold_batch);
      unfolded_repeats.resize(fold_batch);
      const char* const polls[] = {"MPI_Test",    "MPI_Testany", "MPI_Testsome",
                                   "MPI_Testall", "MPI_Iprobe",  "MPI_Improbe"};
      for (std::size_t i = 0; i < poll_ops.size(); ++i) poll_ops[i] = *OpTable::find(polls[i]);
      comms.define_world(size);
      Dl_info self;
      if (dladdr(reinterpret_cast<void*>(&now_ns), &self)) {
        own_base = reinterpret_cast<uintptr_t>(self.dli_fbase);
        find_own_range();
      }
      if (const char* d = env("TRACEFOLD_RAWLOG")) {
        rawlog_dir = d;
        std::error_code ec;
        std::filesystem::create_directories(rawlog_dir, ec);
        rawlog.open(std::filesystem::path(rawlog_dir) / ("rank-" + std::to_string(rank) + ".txt"));
        if (!rawlog) throw std::runtime_error("cannot write raw log in " + rawlog_dir);
        rawlog << "rank " << rank << " size " << size << "\n";
      }
      last_exit_ns = t0;
      install_handlers();
    } catch (const std::exception& ex) {
      fail(std::string("initialization failed: ") + ex.what());
    }
    // Collective (every rank takes part whatever happened above), so no
    // rank is left waiting for another's clock.
    if (const char* dir = env("TRACEFOLD_TIMELINE")) start_timeline(dir, t0);
  }

  // Offset to add to this rank's clock to read rank 0's: the exchange with
  // the shortest round trip of a few, midpoint estimate. Collective over
  // the private communicator.
  int64_t clock_offset() {
    constexpr int kTag = 7, kRounds = 5;
    int64_t offset = 0;
    // Ranks on rank 0's host read the very same CLOCK_MONOTONIC: their
    // offset is exactly 0, better than any estimate.
    char host0[MPI_MAX_PROCESSOR_NAME] = {}, mine[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    PMPI_Get_processor_name(mine, &len);
    std::memcpy(host0, mine, sizeof host0);
    PMPI_Bcast(host0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, private_comm);
    int remote = std::strncmp(host0, mine, MPI_MAX_PROCESSOR_NAME) != 0;
    std::vector<int> remotes(static_cast<std::size_t>(rank == 0 ? size : 1));
    PMPI_Gather(&remote, 1, MPI_INT, remotes.data(), 1, MPI_INT, 0, private_comm);
    for (int peer = 1; peer < size; ++peer) {
      if (rank == 0 && !remotes[static_cast<std::size_t>(peer)]) continue;
      if (rank == peer && !remote) continue;
      if (rank == 0) {
        for (int k = 0; k < kRounds; ++k) {
          int64_t ping = 0;
          PMPI_Recv(&ping, 1, MPI_INT64_T, peer, kTag, private_comm, MPI_STATUS_IGNORE);
          const int64_t t = now_ns();
          PMPI_Send(&t, 1, MPI_INT64_T, peer, kTag, private_comm);
        }
      } else if (rank == peer) {
        int64_t best = INT64_MAX;
        for (int k = 0; k < kRounds; ++k) {
          const int64_t t1 = now_ns();
          int64_t t0 = 0;
          PMPI_Send(&t1, 1, MPI_INT64_T, 0, kTag, private_comm);
          PMPI_Recv(&t0, 1, MPI_INT64_T, 0, kTag, private_comm, MPI_STATUS_IGNORE);
          const int64_t t2 = now_ns();
          if (t2 - t1 < best) {
            best = t2 - t1;
            offset = t0 - (t1 + t2) / 2;
          }
        }
      }
    }
    return offset;
  }

  void start_timeline(const char* dir, int64_t t0) {
    const int64_t offset = clock_offset();
    const int64_t at = now_ns();
    timeline_offset0 = offset;
    if (disabled) return;
    try {
      if (const char* m = env("TRACEFOLD_TIMELINE_MAX"))
        timeline_max = std::strtoull(m, nullptr, 10);
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      const std::string path =
          (std::filesystem::path(dir) / ("rank-" + std::to_string(rank) + ".tft")).string();
      // Small bounds get small blocks, so some events still fit.
      const std::size_t block = static_cast<std::size_t>(
          std::clamp<uint64_t>(timeline_max ? timeline_max / 8 : 65536, 256, 65536));
      timeline.open(path, rank, size, t0, timeline_max, block);
      timeline.set_start_offset(offset, at);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "tracefold: rank %d: no timeline: %s\n", rank, ex.what());
    }
  }

  // Caller holds `mu`; only for events the folder took.
  void timestamp(OpId op, int64_t enter_ns, int64_t exit_ns) {
    if (!timeline.is_open()) return;
    timeline.add(op, enter_ns, exit_ns);
    if (timeline.over_budget() && !timeline_warned) {
      timeline_warned = true;
      std::fprintf(stderr,
                   "tracefold: rank %d: timeline size bound reached (%llu bytes, "
                   "TRACEFOLD_TIMELINE_MAX) after "
                   "%llu events; later events are counted but not timestamped\n",
                   rank, static_cast<unsigned long long>(timeline_max),
                   static_cast<unsigned long long>(timeline.recorded()));
    }
    if (!timeline.error().empty()) {
      std::fprintf(stderr, "tracefold: rank %d: timeline: %s\n", rank, timeline.error().c_str());
      timeline.close(0, 0);
    }
  }

  void close_timeline(int64_t offset, int64_t at) {
    if (!timeline.is_open()) return;
    timeline.close(offset, at);
    if (!timeline.error().empty())
      std::fprintf(stderr, "tracefold: rank %d: timeline: %s\n", rank, timeline.error().c_str());
  }

  // [own_lo, own_hi): the PT_LOAD segments of the object loaded at own_base.
  // Left empty if not found (frame_of's dladdr test is used then).
  void find_own_range() {
    struct Range {
      uintptr_t base, lo = 0, hi = 0;
    } range{own_base};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
          auto* r = static_cast<Range*>(data);
          uintptr_t lo = UINTPTR_MAX, hi = 0;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const auto& ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_LOAD) continue;
            lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
            hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
          }
          // dladdr's base is the lowest loaded address of the object.
          if (hi == 0 || lo > r->base || r->base >= hi) return 0;
          r->lo = lo;
          r->hi = hi;
          return 1;
        },
        &range);
    own_lo = range.lo;
    own_hi = range.hi;
  }

  // This rank's rank in communicator `id` (kAbsent: the world) and its
  // size, for relative peers. A rank's group in an id never changes once
  // defined, so the answer is cached.
  std::pair<int32_t, int32_t> position_in(int64_t id) {
    if (id == kAbsent) id = CommTable::kWorld;
    auto it = positions.find(id);
    if (it != positions.end()) return it->second;
    const CommGroup* g = comms.group_of(id, rank);
    if (!g)
      throw std::invalid_argument("communicator " + format_value(id) + " is not defined for rank " +
                                  std::to_string(rank));
    const std::pair<int32_t, int32_t> pos{comms.rank_in(id, rank),
                                          static_cast<int32_t>(g->members.size())};
    positions.emplace(id, pos);
    return pos;
  }

  // Caller holds `mu`. Takes `ev`'s contents (swapped for an old slot's, so
  // the caller's buffers stay allocated).
  //
  // The event is only queued here; folding waits for a full batch. With
  // several ranks per core, the other ranks and the application's arrays
  // push the folder's tables out of the caches between two calls, and
  // folding one event at a time then pays those misses on every call;
  // folded back to back, a batch finds them warm after its first event.
  // The call site is still taken now: the raw log's site lines must come
  // before the first event that uses them.
  // `site_memo`: the call-path cache's memo of this stack's site id, if any.
  bool append(Event& ev, const StackKey& stack, SiteId* site_memo = nullptr) {
    if (!recording()) return false;
    try {
#ifdef TRACEFOLD_PATH_CACHE
      const bool checking = path_cache_mode == PathCacheMode::kCheck;
#else
      const bool checking = false;
#endif
      if (site_memo && *site_memo != PathCache::kSiteUnknown && !checking) {
        ev.site = *site_memo;
      } else {
        ev.site = site_of(stack);
        if (site_memo) {
#ifdef TRACEFOLD_PATH_CACHE
          if (checking && *site_memo != PathCache::kSiteUnknown && *site_memo != ev.site)
            report_memo_mismatch(*site_memo, ev.site);
#endif
          *site_memo = ev.site;
        }
      }
      if (rawlog.is_open()) rawlog << format_event_line(ev, true) << "\n";
      if (repeat_of_last(ev)) return true;
      for (const FieldValue& f : ev.fields) unfolded_list_entries += f.list.size();
      std::swap(unfolded[unfolded_n++], ev);
      ++event_count;
      if (unfolded_n == unfolded.size() || unfolded_list_entries >= kUnfoldedListBudget)
        fold_unfolded();
      return true;
    } catch (const std::exception& ex) {
      fail(ex.what());
      return false;
    }
  }

  // Caller holds `mu`. Whether `ev` is a poll that found nothing and repeats
  // the last queued event exactly (times aside); if so it is counted there.
  // Only polls: elsewhere two identical calls in a row are rare, and the
  // comparison would cost every call something.
  bool repeat_of_last(const Event& ev) {
    if (unfolded_n == 0) return false;
    const Event& last = unfolded[unfolded_n - 1];
    if (last.op != ev.op || last.site != ev.site) return false;
    if (std::find(poll_ops.begin(), poll_ops.end(), ev.op) == poll_ops.end()) return false;
    if (!ev.stats.empty() || !last.stats.empty() || last.fields != ev.fields) return false;
    if (ev.get(kFlag) != 0 && ev.get(kOutcount) != 0) return false;
    unfolded_repeats[unfolded_n - 1].push_back({ev.compute_ns, ev.comm_ns});
    ++event_count;
    if (++unfolded_repeat_n >= kRepeatBudget) fold_unfolded();
    return true;
  }

  // Caller holds `mu`. Whatever reads the folder (local_trace: the merge at
  // MPI_Finalize, partial traces) folds the queue first, so nothing recorded
  // is left out. From append this runs with tl_holding set, so a signal in
  // the middle of a batch writes no partial trace rather than a damaged one.
  void fold_unfolded() {
    const std::size_t n = unfolded_n;
    unfolded_n = 0;
    unfolded_list_entries = 0;
    unfolded_repeat_n = 0;
    struct ClearRepeats {
      std::vector<std::vector<RepeatTiming>>& repeats;
      std::size_t n;
      ~ClearRepeats() {
        for (std::size_t i = 0; i < n; ++i) repeats[i].clear();
      }
    } clear_repeats{unfolded_repeats, n};
    if (disabled) return;
    try {
      for (std::size_t i = 0; i < n; ++i) {
        Event& ev = unfolded[i];
        if (has_relative_fields(ev)) {
          const auto [me, size_in] = position_in(ev.get(kComm));
          encode_relative(ev, me, size_in);
        }
        folder->append(ev);
        if (!unfolded_repeats[i].empty()) folder->append_repeats(ev, unfolded_repeats[i]);
        // A folded slot may wait long for its next event (batches cut short
        // by the list budget): let its lists go now, not then.
        for (FieldValue& f : ev.fields)
          if (f.list.capacity() > 64) std::vector<int64_t>().swap(f.list);
      }
    } catch (const std::exception& ex) {
      fail(ex.what());
    }
  }

  Trace local_trace() {
    if (folder) fold_unfolded();
    if (folder && !disabled) {
      try {
        Trace t = folder->finish(size, sites, comms);
        if (no_timing) drop_timing(t);
        if (site_tolerance > 0) {
          const std::string what =
              "call sites matched within " + std::to_string(site_tolerance) + " differing frames";
          t.lossy = t.lossy.empty() ? what : t.lossy + "; " + what;
        }
        return t;
      } catch (const std::exception& ex) {
        fail(std::string("finishing the trace failed: ") + ex.what());
      }
    }
    Trace t;
    t.world_size = size;
    t.comms.define_world(size);
    return t;
  }

  void write_partial(const char* why) {
    // A launcher's SIGTERM (sent to every rank once one has exited) must
    // not cut this write short: it waits until the file is saved, then
    // finds the work done and lets the signal take its course.
    sigset_t terminating, before;
    sigemptyset(&terminating);
    sigaddset(&terminating, SIGTERM);
    sigaddset(&terminating, SIGINT);
    pthread_sigmask(SIG_BLOCK, &terminating, &before);
    struct Restore {
      sigset_t* mask;
      ~Restore() { pthread_sigmask(SIG_SETMASK, mask, nullptr); }
    } restore{&before};
    std::lock_guard lock(mu);
    if (!initialized || finalized) return;
    finalized = true;
    try {
      if (rawlog.is_open()) rawlog.flush();
      // No other rank can be asked for the clock any more: keep the start offset.
      close_timeline(timeline_offset0, now_ns());
      std::filesystem::path dir = output + ".partial";
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      save_trace(local_trace(), dir / ("rank-" + std::to_string(rank) + ".tf"));
      std::fprintf(stderr,
                   "tracefold: rank %d: %s; wrote what was recorded to %s/ "
                   "(combine with: tracefold merge %s -o %s)\n",
                   rank, why, dir.c_str(), dir.c_str(), output.c_str());
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "tracefold: rank %d: could not save partial trace: %s\n", rank,
                   ex.what());
    }
  }

  void finish() {
    std::unique_lock lock(mu);
    if (!initialized || finalized) return;
    finalized = true;
    if (rawlog.is_open()) rawlog.close();
#ifdef TRACEFOLD_PATH_CACHE
    if (path_cache_mode == PathCacheMode::kCheck)
      std::fprintf(stderr,
                   "tracefold: rank %d: call-path cache: %llu hits, %llu walks, %llu mismatches\n",
                   rank, static_cast<unsigned long long>(path_hits.load()),
                   static_cast<unsigned long long>(path_misses.load()),
                   static_cast<unsigned long long>(path_mismatches.load()));
#endif
    if (env("TRACEFOLD_TIMELINE")) {
      const int64_t offset = clock_offset();
      close_timeline(offset, now_ns());
    }
    struct PmpiExchange final : Exchange {
      MPI_Comm comm;
      int r, n;
      int rank() const override { return r; }
      int size() const override { return n; }
      void send(int to, const std::string& bytes) override {
        uint64_t len = bytes.size();
        PMPI_Send(&len, 1, MPI_UINT64_T, to, 1, comm);
        for (uint64_t off = 0; off < len; off += (1u << 30)) {
          const int chunk = static_cast<int>(std::min<uint64_t>(len - off, 1u << 30));
          PMPI_Send(bytes.data() + off, chunk, MPI_BYTE, to, 2, comm);
        }
      }
      std::string receive(int from) override {
        uint64_t len = 0;
        PMPI_Recv(&len, 1, MPI_UINT64_T, from, 1, comm, MPI_STATUS_IGNORE);
        std::string bytes(len, '\0');
        for (uint64_t off = 0; off < len; off += (1u << 30)) {
          const int chunk = static_cast<int>(std::min<uint64_t>(len - off, 1u << 30));
          PMPI_Recv(bytes.data() + off, chunk, MPI_BYTE, from, 2, comm, MPI_STATUS_IGNORE);
        }
        return bytes;
      }
    } ex;
    ex.comm = private_comm;
    ex.r = rank;
    ex.n = size;
    const double t0 = PMPI_Wtime();
    try {
      std::vector<std::string> errors;
      auto merged = reduce_trace(local_trace(), ex, 2, {}, &errors);
      for (const auto& e : errors)
        std::fprintf(stderr, "tracefold: rank %d: %s\n", rank, e.c_str());
      if (merged) {
        save_trace(*merged, output);
        const double secs = PMPI_Wtime() - t0;
        if (!env("TRACEFOLD_QUIET"))
          std::fprintf(
              stderr, "tracefold: wrote %s (%llu bytes, %zu nodes, %d ranks, merged in %.3f s)\n",
              output.c_str(), static_cast<unsigned long long>(std::filesystem::file_size(output)),
              merged->nodes.size(), size, secs);
      }
    } catch (const std::exception& ex2) {
      std::fprintf(stderr, "tracefold: rank %d: merging the trace failed: %s\n", rank, ex2.what());
      finalized = false;
      lock.unlock();
      write_partial("merge at MPI_Finalize failed");
    }
    PMPI_Comm_free(&private_comm);
  }

  static void on_signal(int sig);
  void install_handlers();
};

Recorder& recorder() {
  static Recorder* r = new Recorder;  // never destroyed: atexit and signals may still use it
  return *r;
}

TRACEFOLD_STATIC_TLS thread_local bool tl_in_call = false;

struct sigaction old_actions[65];

TRACEFOLD_STATIC_TLS thread_local bool tl_holding = false;

// Marks a scope that changes the recorder's state under its lock, for
// on_signal; restores the previous mark (scopes can nest inside a Call).
struct HoldingMark {
  bool before = tl_holding;
  HoldingMark() { tl_holding = true; }
  ~HoldingMark() { tl_holding = before; }
};

void Recorder::on_signal(int sig) {
  if (tl_holding) {
    // The signal interrupted this thread half way through changing the
    // recorder's state: folding it now could crash or save nonsense.
    char line[160];
    const int n = std::snprintf(line, sizeof line,
                                "tracefold: rank %d: signal %d arrived inside the recorder; "
                                "no partial trace for this rank\n",
                                recorder().rank, sig);
    if (n > 0) (void)!write(STDERR_FILENO, line, static_cast<std::size_t>(n));
  } else {
    char why[64];
    std::snprintf(why, sizeof why, "killed by signal %d (%s)", sig, strsignal(sig));
    recorder().write_partial(why);
  }
  sigaction(sig, &old_actions[sig], nullptr);
  raise(sig);
}

void Recorder::install_handlers() {
  if (env("TRACEFOLD_NO_SIGNALS")) return;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT}) {
    struct sigaction sa {};
    sa.sa_handler = &Recorder::on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(sig, &sa, &old_actions[sig]);
  }
  std::atexit([] { recorder().write_partial("the program exited without MPI_Finalize"); });
}

}  // namespace

DatatypeRegistry& datatype_registry() {
  return recorder().types;
}

void register_statistic(std::unique_ptr<Statistic> statistic) {
  auto& reg = statistics();
  std::lock_guard lock(reg.mu);
  reg.available.push_back(std::move(statistic));
}

OpId op(const char* name) {
  auto id = OpTable::find(name);
  return id ? *id : OpId{0};
}

Event& thread_event() {
  TRACEFOLD_STATIC_TLS thread_local Event ev;
  return ev;
}

namespace {
struct CallBuffers {
  std::vector<MPI_Request> pending;
  std::vector<std::pair<bool, bool>> pending_wild;
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
CallBuffers& thread_buffers() {
  TRACEFOLD_STATIC_TLS thread_local CallBuffers b;
  return b;
}
}  // namespace

Call::Call(OpId op)
    : op_(op),
      pending_(thread_buffers().pending),
      pending_wild_(thread_buffers().pending_wild),
      ev_(thread_event()) {
  if (tl_in_call) {
    nested_ = true;
    return;
  }
  Recorder& r = recorder();
  if (!r.recording()) return;
  tl_in_call = true;
  active_ = true;
  for (Statistic* st : statistics().enabled) st->start();
  enter_ns_ = now_ns();
  auto& spare = thread_buffers().spare_links;
  for (FieldValue& f : ev_.fields)
    if (f.field == kLinks && f.list.capacity() > spare.capacity()) spare.swap(f.list);
  ev_.fields.clear();
  ev_.stats.clear();
  pending_.clear();
  pending_wild_.clear();
  ev_.op = op;
  ev_.site = 0;
}

void Call::hold() {
  if (!lock_.owns_lock()) {
    lock_ = std::unique_lock(recorder().mu);
    tl_holding = true;
  }
}

void Call::release() {
  if (lock_.owns_lock()) {
    tl_holding = false;
    lock_.unlock();
  }
}

Call::~Call() {
  if (nested_) return;
  if (!active_) return;
  const int64_t exit_ns = now_ns();
  Recorder& r = recorder();
  if (r.own_hi == 0) hold();  // capture_stack falls back on the frame table
  SiteId* site_memo = nullptr;
  const StackKey stack = r.capture_stack(&site_memo);
  hold();
  const OpId op = ev_.op;
  ev_.comm_ns = exit_ns - enter_ns_;
  ev_.compute_ns = std::max<int64_t>(0, enter_ns_ - r.last_exit_ns);
  for (Statistic* st : statistics().enabled) {
    try {
      ev_.stats.emplace_back(st->name(), st->end(ev_));
    } catch (const std::exception& ex) {
      r.fail("statistic " + st->name() + " failed: " + ex.what());
    }
  }
  if (r.append(ev_, stack, site_memo)) r.timestamp(op, enter_ns_, exit_ns);
  // Read after append, so a batch folded there counts as the recorder's
  // time, not as the application's computation before its next call.
  r.last_exit_ns = now_ns();
  tl_holding = false;  // the state is whole again; lock_ lets go right after
  tl_in_call = false;
}

void Call::comm(MPI_Comm c) {
  comm_ = c;
  if (c == MPI_COMM_NULL) return;
  hold();
  try {
    ev_.set(kComm, recorder().comm_id(c));
  } catch (const std::exception& ex) {
    recorder().fail(ex.what());
  }
}

void Call::comm_field(FieldId f, MPI_Comm c) {
  hold();
  try {
    ev_.set(f, c == MPI_COMM_NULL ? kNull : recorder().comm_id(c));
  } catch (const std::exception& ex) {
    recorder().fail(ex.what());
  }
}

void Call::scalar(FieldId f, int64_t value) {
  ev_.set(f, value);
}

void Call::peer(FieldId f, int rank) {
  if (rank == MPI_PROC_NULL) {
    ev_.set(f, kNull);
  } else if (rank == MPI_ANY_SOURCE) {
    ev_.set(f, kAny);
    wild_source_ = true;
  } else {
    ev_.set(f, rank);
  }
}

void Call::tag(FieldId f, int tag) {
  if (tag == MPI_ANY_TAG) {
    ev_.set(f, kAny);
    wild_tag_ = true;
  } else {
    ev_.set(f, tag);
  }
}

void Call::counts(FieldId f, const int* counts) {
  if (!counts || comm_ == MPI_COMM_NULL) return;
  int n = 0, inter = 0;
  PMPI_Comm_test_inter(comm_, &inter);
  if (inter)
    PMPI_Comm_remote_size(comm_, &n);
  else
    PMPI_Comm_size(comm_, &n);
  ev_.set_list(f, std::vector<int64_t>(counts, counts + n));
}

void Call::redop(MPI_Op o) {
  hold();
  ev_.set(kRedop, recorder().op_id(o));
}

void Call::status(const MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE || st == nullptr) return;
  // Test/Iprobe that found nothing: the status holds nothing meaningful.
  if (ev_.get(kFlag) == 0) return;
  // Waitany/Testany: the completed request decides what was a wildcard.
  const int64_t index = ev_.get(kIndex);
  if (index != kAbsent && index >= 0 && static_cast<std::size_t>(index) < pending_wild_.size()) {
    wild_source_ = pending_wild_[static_cast<std::size_t>(index)].first;
    wild_tag_ = pending_wild_[static_cast<std::size_t>(index)].second;
  }
  if (!wild_source_ && !wild_tag_) return;
  // An empty status (an inactive persistent request, MPI_REQUEST_NULL) or
  // a cancelled receive matched nothing: its MPI_SOURCE is no rank (as in
  // Call::statuses).
  if (st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG) return;
  int cancelled = 0;
  PMPI_Test_cancelled(st, &cancelled);
  if (cancelled) return;
  if (wild_source_) ev_.set(kSrc, st->MPI_SOURCE);
  if (wild_tag_) ev_.set(kMtag, st->MPI_TAG);
}

void Call::indices(int outcount, const int* indices, int index_base) {
  if (outcount == MPI_UNDEFINED || outcount < 0 || (outcount > 0 && !indices)) return;
  std::vector<int64_t> out(static_cast<std::size_t>(outcount));
  for (int k = 0; k < outcount; ++k) out[static_cast<std::size_t>(k)] = indices[k] - index_base;
  ev_.set_list(kIndices, std::move(out));
}

void Call::request_out(const MPI_Request* req) {
  if (!req) return;
  Recorder& r = recorder();
  hold();
  // Counted even when the library hands back MPI_REQUEST_NULL: readers
  // (replay, export matching) number every request-making call
  // (OpTable::makes_request), so links must count the same events.
  ++r.request_events;
  if (*req != MPI_REQUEST_NULL)
    r.requests.push(*req, RequestInfo{r.request_events, wild_source_, wild_tag_});
}

namespace {
// How often reqs[i] appeared before position i: the k-th repeat of a handle
// stands for its k-th oldest live request. Short arrays (the usual case) are
// scanned; long ones are counted in a map.
struct RepeatCounter {
  std::unordered_map<MPI_Request, std::size_t> seen;
  std::size_t before(const MPI_Request* reqs, int n, int i) {
    if (n <= 32) {
      std::size_t k = 0;
      for (int j = 0; j < i; ++j) k += reqs[j] == reqs[i];
      return k;
    }
    return seen[reqs[i]]++;
  }
};
}  // namespace

void Call::requests_in(int n, const MPI_Request* reqs) {
  // A count of 0 may come with a null array (MPI_Waitall(0, NULL, ...) on a
  // rank without neighbours); its links are still the empty list, as for
  // any other array, so the call reads the same whatever the pointer.
  if (n < 0 || (n > 0 && !reqs)) return;
  Recorder& r = recorder();
  hold();
  std::vector<int64_t> links = std::move(thread_buffers().spare_links);
  links.assign(static_cast<std::size_t>(n), 0);
  pending_wild_.assign(static_cast<std::size_t>(n), {false, false});
  RepeatCounter repeats;
  for (int i = 0; i < n; ++i) {
    auto& link = links[static_cast<std::size_t>(i)];
    if (reqs[i] == MPI_REQUEST_NULL) {
      link = kNull;
      continue;
    }
    const RequestInfo* info = r.requests.find(reqs[i], repeats.before(reqs, n, i));
    if (!info) {
      link = kUndefined;
      continue;
    }
    link = static_cast<int64_t>(r.request_events - info->event + 1);
    pending_wild_[static_cast<std::size_t>(i)] = {info->wild_source, info->wild_tag};
    any_wild_ = any_wild_ || info->wild_source || info->wild_tag;
  }
  if (n == 1) {
    // A completion of one wildcard receive reports what it matched.
    wild_source_ = pending_wild_[0].first;
    wild_tag_ = pending_wild_[0].second;
  }
  ev_.set_list(kLinks, std::move(links));
  // Remember the handles: completed ones are forgotten afterwards.
  pending_.assign(reqs, reqs + n);
}

MPI_Status* Call::statuses_in(int n, MPI_Status* statuses) {
  if (!any_wild_ || statuses != MPI_STATUSES_IGNORE || n <= 0) return statuses;
  auto& buf = thread_buffers().statuses;
  if (buf.size() < static_cast<std::size_t>(n)) buf.resize(static_cast<std::size_t>(n));
  return buf.data();
}

namespace {
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

// The same wrapper bodies serve mpif.h/use mpi and mpi_f08, and an mpi_f08
// binding may mark an ignored status with objects of its own (MPI-4's
// MPI_F08_STATUS(ES)_IGNORE: MPICH does; Open MPI 4 passes the mpif.h ones).
bool is_ignore_marker(const MPI_Fint* p, const MPI_Fint* mpif_marker, const void* f08_marker) {
  return p == nullptr || p == mpif_marker || static_cast<const void*>(p) == f08_marker;
}

bool fortran_statuses_ignored(const MPI_Fint* statuses) {
#if MPI_VERSION >= 4
  return is_ignore_marker(statuses, MPI_F_STATUSES_IGNORE, MPI_F08_STATUSES_IGNORE);
#else
  return is_ignore_marker(statuses, MPI_F_STATUSES_IGNORE, nullptr);
#endif
}

bool fortran_status_ignored(const MPI_Fint* status) {
#if MPI_VERSION >= 4
  return is_ignore_marker(status, MPI_F_STATUS_IGNORE, MPI_F08_STATUS_IGNORE);
#else
  return is_ignore_marker(status, MPI_F_STATUS_IGNORE, nullptr);
#endif
}
}  // namespace

MPI_Fint* Call::fstatuses_in(int n, MPI_Fint* statuses) {
  if (!any_wild_ || !fortran_statuses_ignored(statuses) || n <= 0) return statuses;
  auto& buf = thread_buffers().fstatuses;
  const std::size_t need = static_cast<std::size_t>(n) * fortran_status_size();
  if (buf.size() < need) buf.resize(need);
  return buf.data();
}

template <class StatusAt>
void Call::record_matches(int n, int outcount, const int* indices, int index_base,
                          StatusAt&& status_at) {
  // Testall that found some request unfinished completed none of them.
  if (outcount < 0 && ev_.get(kFlag) == 0) return;
  if (outcount == MPI_UNDEFINED) return;
  const std::size_t count =
      std::min(static_cast<std::size_t>(std::max(n, 0)), pending_wild_.size());
  auto& buffers = thread_buffers();
  auto& srcs = buffers.srcs;
  auto& mtags = buffers.mtags;
  // Entry j of the lists belongs to the j-th wildcard receive of the
  // request array.
  auto& entry_of = buffers.entry_of;
  entry_of.assign(count, SIZE_MAX);
  srcs.clear();
  for (std::size_t i = 0; i < count; ++i) {
    if (!(pending_wild_[i].first || pending_wild_[i].second)) continue;
    entry_of[i] = srcs.size();
    srcs.push_back(kUndefined);
  }
  mtags.assign(srcs.size(), kUndefined);
  auto fill = [&](std::size_t request, const MPI_Status& st) {
    if (request >= count || entry_of[request] == SIZE_MAX) return;
    // An empty status (inactive request) or a cancelled receive matched
    // nothing.
    if (st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG) return;
    int cancelled = 0;
    PMPI_Test_cancelled(&st, &cancelled);
    if (cancelled) return;
    srcs[entry_of[request]] = st.MPI_SOURCE;
    mtags[entry_of[request]] = st.MPI_TAG;
  };
  if (outcount < 0) {
    for (std::size_t i = 0; i < count; ++i)
      if (entry_of[i] != SIZE_MAX) fill(i, status_at(i));
  } else {
    for (int k = 0; k < outcount; ++k) {
      const int index = indices[k] - index_base;
      if (index >= 0) fill(static_cast<std::size_t>(index), status_at(static_cast<std::size_t>(k)));
    }
  }
  if (std::all_of(srcs.begin(), srcs.end(), [](int64_t v) { return v == kUndefined; })) return;
  ev_.set_list(kSrcs, srcs);
  ev_.set_list(kMtags, mtags);
}

void Call::statuses(int n, const MPI_Status* statuses, int outcount, const int* indices,
                    int index_base) {
  if (!any_wild_ || statuses == MPI_STATUSES_IGNORE || statuses == nullptr) return;
  record_matches(n, outcount, indices, index_base,
                 [&](std::size_t k) -> const MPI_Status& { return statuses[k]; });
}

void Call::fstatuses(int n, const MPI_Fint* statuses, int outcount, const int* indices,
                     int index_base) {
  if (!any_wild_ || fortran_statuses_ignored(statuses)) return;
  MPI_Status converted;
  record_matches(n, outcount, indices, index_base, [&](std::size_t k) -> const MPI_Status& {
    if (MPI_Status_f2c(statuses + k * fortran_status_size(), &converted) != MPI_SUCCESS) {
      converted.MPI_SOURCE = MPI_ANY_SOURCE;  // read as empty: recorded as undef
      converted.MPI_TAG = MPI_ANY_TAG;
    }
    return converted;
  });
}

void Call::requests_done(int n, const MPI_Request* after) {
  Recorder& r = recorder();
  hold();
  for (int i = 0; i < n && static_cast<std::size_t>(i) < pending_.size(); ++i) {
    const MPI_Request before = pending_[static_cast<std::size_t>(i)];
    if (before == MPI_REQUEST_NULL || after[i] != MPI_REQUEST_NULL) continue;
    r.requests.pop_oldest(before);
  }
}

void Call::requests_started(int n, const MPI_Request* reqs) {
  Recorder& r = recorder();
  hold();
  const uint64_t number = ++r.request_events;
  for (int i = 0; i < n; ++i)
    if (RequestInfo* info = r.requests.oldest(reqs[i])) info->event = number;
}

void Call::newcomm(MPI_Comm parent, MPI_Comm created) {
  Recorder& r = recorder();
  hold();
  try {
    // Every member of `parent` creates communicators from it in the same
    // order (MPI's collective rule), so (parent id, creation number) names
    // the new communicator identically on all of them. Ranks that get
    // MPI_COMM_NULL still count the creation, or their numbering drifts.
    int64_t pid = parent == MPI_COMM_NULL ? 0 : r.comm_id(parent);
    // Counted under the parent whatever the result, an intercommunicator
    // too: members of an intercommunicator that MPI_Comm_split or
    // MPI_Comm_create leaves without one count it here, and the others must
    // as well, or a later MPI_Intercomm_merge of the parent is numbered
    // differently on them.
    uint64_t seq = ++r.creations[pid];
    int inter = 0;
    if (created != MPI_COMM_NULL) PMPI_Comm_test_inter(created, &inter);
    std::vector<int32_t> pair;
    if (inter) {
      // The two groups of an intercommunicator come from different parents,
      // so (parent, creation number) would name it differently on each side.
      // Both sides know both groups without communicating: name it by the
      // pair (the group holding the lower world rank first) and by how many
      // intercommunicators joined this pair before.
      std::vector<int32_t> local = r.world_members(created),
                           remote = r.remote_world_members(created);
      if (!remote.empty() && (local.empty() || remote.front() < local.front()))
        std::swap(local, remote);
      pair = local;
      pair.push_back(-1);
      pair.insert(pair.end(), remote.begin(), remote.end());
      uint64_t ph = 1469598103934665603ull;
      for (int32_t m : pair)
        ph = (ph ^ static_cast<uint64_t>(static_cast<uint32_t>(m))) * 1099511628211ull;
      pid = static_cast<int64_t>(ph & 0x3FFFFFFFull) | (int64_t{1} << 40);
      seq = ++r.creations[pid];
    }
    if (created == MPI_COMM_NULL) {
      ev_.set(kNewcomm, kNull);
      return;
    }
    uint64_t h = 1469598103934665603ull;
    h = (h ^ static_cast<uint64_t>(pid)) * 1099511628211ull;
    h = (h ^ seq) * 1099511628211ull;
    const int64_t id = static_cast<int64_t>((h & 0x3FFFFFFFull) | 0x40000000ull);
    r.define_comm(id, created);
    ev_.set(kNewcomm, id);
  } catch (const std::exception& ex) {
    r.fail(ex.what());
  }
}

const MPI_Status* status_f2c(MPI_Fint* fstatus, MPI_Status* out) {
  if (fortran_status_ignored(fstatus)) return MPI_STATUS_IGNORE;
  if (MPI_Status_f2c(fstatus, out) != MPI_SUCCESS) return MPI_STATUS_IGNORE;
  return out;
}

FortranEntry f08_entry(const char* name, FortranEntry fallback) {
  // RTLD_NEXT skips this library, so the wrapper never finds itself; the
  // pmpi_ name first, as the other Fortran wrappers call the profiling entry.
  for (const char* prefix : {"pmpi_", "mpi_"}) {
    const std::string sym = std::string(prefix) + name;
    if (void* p = dlsym(RTLD_NEXT, sym.c_str())) return reinterpret_cast<FortranEntry>(p);
  }
  if (fallback != nullptr) return fallback;
  std::fprintf(stderr, "tracefold: the MPI library has no mpi_%s; cannot forward the call\n", name);
  std::abort();
}

}  // namespace tracefold::record

// ------------------------------------------------------------ hand-written
// Environment calls need more than argument roles: they start and stop the
// recorder, and their Fortran forms call the library's Fortran entry points.

namespace tracefold::record {
namespace {

void start_recording(int64_t t0, const char* name) {
  Recorder& r = recorder();
  const bool was = r.initialized;
  r.start(t0);
  if (was || !r.recording()) return;
  std::lock_guard lock(r.mu);
  HoldingMark holding;
  Event ev;
  ev.op = op(name);
  ev.compute_ns = 0;
  const int64_t exit_ns = now_ns();
  ev.comm_ns = exit_ns - t0;
  const OpId init_op = ev.op;  // append takes ev's contents
  if (r.append(ev, r.capture_stack())) r.timestamp(init_op, t0, exit_ns);
  r.last_exit_ns = now_ns();
}

void record_finalize() {
  { Call c(op("MPI_Finalize")); }
  recorder().finish();
}

void record_abort(MPI_Comm comm, int code) {
  {
    Call c(op("MPI_Abort"));
    if (c.active()) {
      c.comm(comm);
      c.scalar(FieldTable::intern("code", FieldKind::kScalar), code);
    }
  }
  recorder().write_partial("MPI_Abort was called");
}

}  // namespace
}  // namespace tracefold::record

namespace R = tracefold::record;

// Some MPI libraries (MPICH) implement the Fortran MPI_INIT on top of the C
// MPI_Init: the Fortran wrapper then starts the recorder, not the C one.
extern "C" int MPI_Init(int* argc, char*** argv) {
  if (R::tl_in_call) return PMPI_Init(argc, argv);
  const int64_t t0 = R::now_ns();
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) R::start_recording(t0, "MPI_Init");
  return rc;
}

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  if (R::tl_in_call) return PMPI_Init_thread(argc, argv, required, provided);
  const int64_t t0 = R::now_ns();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) R::start_recording(t0, "MPI_Init_thread");
  return rc;
}

extern "C" int MPI_Finalize(void) {
  R::record_finalize();
  return PMPI_Finalize();
}

extern "C" int MPI_Abort(MPI_Comm comm, int errorcode) {
  R::record_abort(comm, errorcode);
  return PMPI_Abort(comm, errorcode);
}

namespace {
int traced_pcontrol(int level) {
  static const tracefold::OpId op = R::op("MPI_Pcontrol");
  static const tracefold::FieldId level_field =
      tracefold::FieldTable::intern("level", tracefold::FieldKind::kScalar);
  R::Call c(op);
  if (c.active()) c.scalar(level_field, level);
  return PMPI_Pcontrol(level);
}

// MPI_PCONTROL(LEVEL) has no IERROR argument, unlike every other Fortran
// binding, so it cannot come from the generated wrappers; and the varargs
// C entry is the one thing both MPI libraries' Fortran bindings call.
void fortran_pcontrol(const MPI_Fint* level) {
  traced_pcontrol(static_cast<int>(*level));
}
}  // namespace

extern "C" int MPI_Pcontrol(const int level, ...) {
  return traced_pcontrol(level);
}

extern "C" void mpi_pcontrol_(const MPI_Fint* level) {
  fortran_pcontrol(level);
}
extern "C" void mpi_pcontrol__(const MPI_Fint* level) {
  fortran_pcontrol(level);
}
extern "C" void mpi_pcontrol(const MPI_Fint* level) {
  fortran_pcontrol(level);
}
extern "C" void MPI_PCONTROL(const MPI_Fint* level) {
  fortran_pcontrol(level);
}
// mpi_f08's MPI_Pcontrol(level) passes the INTEGER the same way.
extern "C" void mpi_pcontrol_f08_(const MPI_Fint* level) {
  fortran_pcontrol(level);
}

extern "C" void pmpi_init_(MPI_Fint* ierr);
extern "C" void pmpi_init_thread_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr);
extern "C" void pmpi_finalize_(MPI_Fint* ierr);
extern "C" void pmpi_abort_(MPI_Fint* comm, MPI_Fint* code, MPI_Fint* ierr);

namespace {
using InitEntry = void (*)(MPI_Fint*);
using InitThreadEntry = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);
using FinalizeEntry = void (*)(MPI_Fint*);
using AbortEntry = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);

void f_init(InitEntry fwd, MPI_Fint* ierr) {
  const int64_t t0 = R::now_ns();
  R::tl_in_call = true;
  fwd(ierr);
  R::tl_in_call = false;
  if (*ierr == MPI_SUCCESS) R::start_recording(t0, "MPI_Init");
}
void f_init_thread(InitThreadEntry fwd, MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  const int64_t t0 = R::now_ns();
  R::tl_in_call = true;
  fwd(required, provided, ierr);
  R::tl_in_call = false;
  if (*ierr == MPI_SUCCESS) R::start_recording(t0, "MPI_Init_thread");
}
void f_finalize(FinalizeEntry fwd, MPI_Fint* ierr) {
  R::record_finalize();
  fwd(ierr);
}
void f_abort(AbortEntry fwd, MPI_Fint* comm, MPI_Fint* code, MPI_Fint* ierr) {
  R::record_abort(MPI_Comm_f2c(*comm), static_cast<int>(*code));
  fwd(comm, code, ierr);
}

// The library's mpi_f08 entry, or the mpif.h one (same ABI) without it.
template <typename Entry>
Entry f08(const char* name, Entry fallback) {
  return reinterpret_cast<Entry>(R::f08_entry(name, reinterpret_cast<R::FortranEntry>(fallback)));
}
}  // namespace

#define TF_FORTRAN_ALL(lower, upper, params, args) \
  extern "C" void lower##_ params {                \
    args;                                          \
  }                                                \
  extern "C" void lower##__ params {               \
    args;                                          \
  }                                                \
  extern "C" void lower params {                   \
    args;                                          \
  }                                                \
  extern "C" void upper params {                   \
    args;                                          \
  }

TF_FORTRAN_ALL(mpi_init, MPI_INIT, (MPI_Fint * ierr), f_init(pmpi_init_, ierr))
TF_FORTRAN_ALL(mpi_init_thread, MPI_INIT_THREAD,
               (MPI_Fint * required, MPI_Fint* provided, MPI_Fint* ierr),
               f_init_thread(pmpi_init_thread_, required, provided, ierr))
TF_FORTRAN_ALL(mpi_finalize, MPI_FINALIZE, (MPI_Fint * ierr), f_finalize(pmpi_finalize_, ierr))
TF_FORTRAN_ALL(mpi_abort, MPI_ABORT, (MPI_Fint * comm, MPI_Fint* code, MPI_Fint* ierr),
               f_abort(pmpi_abort_, comm, code, ierr))

// use mpi_f08 (Open MPI's names; MPICH's are the same for these four). The
// optional ierror arrives as a null pointer when the program leaves it out:
// the library then gets a local one.
extern "C" void mpi_init_f08_(MPI_Fint* ierr) {
  MPI_Fint local = MPI_SUCCESS;
  static const InitEntry fwd = f08("init_f08_", pmpi_init_);
  f_init(fwd, ierr != nullptr ? ierr : &local);
}
extern "C" void mpi_init_thread_f08_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  MPI_Fint local = MPI_SUCCESS;
  static const InitThreadEntry fwd = f08("init_thread_f08_", pmpi_init_thread_);
  f_init_thread(fwd, required, provided, ierr != nullptr ? ierr : &local);
}
extern "C" void mpi_finalize_f08_(MPI_Fint* ierr) {
  MPI_Fint local = MPI_SUCCESS;
  static const FinalizeEntry fwd = f08("finalize_f08_", pmpi_finalize_);
  f_finalize(fwd, ierr != nullptr ? ierr : &local);
}
extern "C" void mpi_abort_f08_(MPI_Fint* comm, MPI_Fint* code, MPI_Fint* ierr) {
  MPI_Fint local = MPI_SUCCESS;
  static const AbortEntry fwd = f08("abort_f08_", pmpi_abort_);
  f_abort(fwd, comm, code, ierr != nullptr ? ierr : &local);
}
