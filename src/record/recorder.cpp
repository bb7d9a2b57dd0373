#include "recorder_impl.hpp"
#include "sampler.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <dlfcn.h>
#include <time.h>

#include <cerrno>

#include <filesystem>

#include "tracefold/analysis_basic.hpp"
#include "tracefold/rawlog.hpp"

namespace tracefold::record {

namespace {
// TRACEFOLD_TEST_EXIT_DELAY_NS: off the core, as a preempted thread is;
// the sampler's ticks interrupt the sleep, which then goes on.
[[gnu::noinline, gnu::cold]] void test_delay(int64_t ns) {
  timespec left{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

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

const FieldId kComm = scalar_field("comm");

void Recorder::start(int64_t t0) {
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
    if (const char* t = env("TRACEFOLD_SITE_TOLERANCE")) site_tolerance = std::max(0, std::atoi(t));
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
      any_statistics = !reg.enabled.empty();
      compute_cpu = std::any_of(reg.enabled.begin(), reg.enabled.end(), [](const Statistic* st) {
        return st->name() == kComputeCpuStatistic;
      });
    }
    FoldOptions opts;
    if (const char* w = env("TRACEFOLD_WINDOW"))
      opts.window = static_cast<std::size_t>(std::max(2, std::atoi(w)));
    if (const char* s = env("TRACEFOLD_SIMILARITY")) opts.min_similarity = std::atof(s);
    if (const char* h = env("TRACEFOLD_HISTOGRAM_THRESHOLD"))
      opts.histogram_threshold = static_cast<std::size_t>(std::atoi(h));
    // 0: no walk path (for side-by-side measurements; docs/recording.md).
    if (const char* w = env("TRACEFOLD_WALK")) opts.elastic_iterations = std::atoi(w) != 0;
    // Without a timeline there would be nothing to number the events by.
    sample_only = env("TRACEFOLD_SAMPLE_ONLY") && env("TRACEFOLD_TIMELINE");
    fold_options = opts;
    if (const char* b = env("TRACEFOLD_FOLD_BATCH"))
      fold_batch = static_cast<std::size_t>(std::max(1, std::atoi(b)));
    // Without a folder each event goes to the event log at once, through
    // the batch path (fold_unfolded): the per-call path stays as it is.
    if (sample_only) fold_batch = 1;
    const char* const polls[] = {"MPI_Test",    "MPI_Testany", "MPI_Testsome",
                                 "MPI_Testall", "MPI_Iprobe",  "MPI_Improbe"};
    for (const char* name : polls) {
      const OpId id = *OpTable::find(name);
      poll_op_bits[id >> 6] |= uint64_t{1} << (id & 63);
    }
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
      rawlog.open(
          (std::filesystem::path(rawlog_dir) / ("rank-" + std::to_string(rank) + ".txt")).string(),
          "rank " + std::to_string(rank));
      rawlog << "rank " << rank << " size " << size << "\n";
    }
    // The thread that starts MPI is thread 0.
    streams.push_back(make_stream(0));
    streams[0]->last_exit_ns = t0;
    tl_stream = streams[0].get();
    stream_omp.push_back(-1);
#ifdef TRACEFOLD_PATH_CACHE
    // Only where a poll's event is exactly what the slow path would record
    // and no other thread can record meanwhile (see poll_fastpath.cpp).
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    const std::string fast = env("TRACEFOLD_POLL_FASTPATH") ? env("TRACEFOLD_POLL_FASTPATH") : "on";
    if (fast != "on" && fast != "1" && fast != "off" && fast != "0" && fast != "check")
      throw std::runtime_error("TRACEFOLD_POLL_FASTPATH must be on, off or check, not '" + fast +
                               "'");
    // The check records every call, so the raw log may be on for it.
    poll_check = fast == "check";
    if (poll_check) fast_repeat_limit = streams[0]->fast_repeat_limit = 0;
    poll_fastpath = fast != "off" && fast != "0" && level != MPI_THREAD_MULTIPLE &&
                    path_cache_mode == PathCacheMode::kOn && statistics().enabled.empty() &&
                    (poll_check || !rawlog.is_open()) && !env("TRACEFOLD_TIMELINE");
#endif
    install_handlers();
  } catch (const std::exception& ex) {
    fail(std::string("initialization failed: ") + ex.what());
  }
  // Collective (every rank takes part whatever happened above), so no
  // rank is left waiting for another's clock.
  if (const char* dir = env("TRACEFOLD_TIMELINE")) {
    start_timeline(dir, t0);
    if (sample_only) open_event_log(dir);
    start_sampler(*this, dir);
  }
  // What every thread's calls write to the rank's own files or ask its
  // statistics goes under the lock; the rest of a call needs none.
  locked_append = rawlog.is_open() || sampling || timeline.is_open() || sample_only ||
                  any_statistics || event_log.is_open();
#ifdef TRACEFOLD_PATH_CACHE
  queue_inline = !locked_append && path_cache_mode != PathCacheMode::kCheck;
#endif
}

// Caller holds `mu`; only for events the folder took.
void Recorder::timestamp(OpId op, int64_t enter_ns, int64_t exit_ns, int thread) {
  // A recording without samples skips their bookkeeping on every call.
  if (sampling) {
    const uint64_t index = events_timed.load(std::memory_order_relaxed);
    sampler_note_timed(index, exit_ns);
    events_timed.store(index + 1, std::memory_order_relaxed);
    maybe_drain_samples(*this);
  }
  if (!timeline.is_open()) return;
  timeline.add(op, skewed(enter_ns), skewed(exit_ns), thread);
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

// Appends to `s`, the calling thread's stream (or, under `mu`, any
// stream: start, the end of recording); the rank's shared state (call
// sites, and with `locked_append` the files) is taken under `mu`. Takes
// `ev`'s contents (swapped for an old slot's, so the caller's buffers stay
// allocated).
//
// The event is only queued here; folding waits for a full batch. With
// several ranks per core, the other ranks and the application's arrays
// push the folder's tables out of the caches between two calls, and
// folding one event at a time then pays those misses on every call;
// folded back to back, a batch finds them warm after its first event.
// The call site is still taken now: the raw log's site lines must come
// before the first event that uses them.
// `site_memo`: the call-path cache's memo of this stack's site id, if any.
bool Recorder::append(ThreadStream& s, Event& ev, const StackKey& stack, SiteId* site_memo,
                      std::size_t list_entries, bool lists) {
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
      std::lock_guard lock(mu);  // the rank's call sites
      ev.site = site_of(stack);
      if (site_memo) {
#ifdef TRACEFOLD_PATH_CACHE
        if (checking && *site_memo != PathCache::kSiteUnknown && *site_memo != ev.site)
          report_memo_mismatch(*site_memo, ev.site);
#endif
        *site_memo = ev.site;
      }
    }
    if (rawlog.is_open()) {
      // The raw log is per rank: a thread's events follow `thread T`.
      if (s.number != rawlog_thread) [[unlikely]] {
        rawlog << "thread " << s.number << "\n";
        rawlog_thread = s.number;
      }
      rawlog << format_event_line(ev, true) << "\n";
    }
    if (is_poll(ev.op) && repeat_of_last(s, ev)) return true;
    if (list_entries == kCountLists) {
      list_entries = 0;
      lists = false;
      for (const FieldValue& f : ev.fields) {
        list_entries += f.list.size();
        lists |= f.list.data() != nullptr;
      }
    }
    queue_event(s, ev, list_entries, lists);
    return true;
  } catch (const std::exception& ex) {
    fail(ex.what());
    return false;
  }
}

// On `s` as append. Whether `ev` is a poll that found nothing and repeats
// the last queued event exactly (times aside); if so it is counted there.
// Only polls (append asks is_poll first): elsewhere two identical calls in
// a row are rare, and the comparison would cost every call something.
bool Recorder::repeat_of_last(ThreadStream& s, const Event& ev) {
  if (s.unfolded_n == 0) return false;
  const Event& last = s.unfolded[s.unfolded_n - 1];
  if (last.op != ev.op || last.site != ev.site) return false;
  if (!ev.stats.empty() || !last.stats.empty() || last.fields != ev.fields) return false;
  if (ev.get(kFlag) != 0 && ev.get(kOutcount) != 0) return false;
  if (s.count_repeat(ev.compute_ns, ev.comm_ns)) fold_unfolded(s);
  return true;
}

namespace {
// encode_relative's work inline for the usual case, the peers of a
// point-to-point call or of a probe that matched a wildcard (peer and src):
// scalar peers only, this rank a member and every peer in range. Returns
// false, with `peers` unchanged, for anything else (lists, a peer outside
// the communicator: encode_relative's error), which then takes the call.
// `comm`: the event's communicator field.
[[gnu::always_inline]] inline bool encode_scalar_peers(Recorder& r, ThreadStream& s, int64_t comm,
                                                       std::span<FieldValue> peers) {
  if (peers.size() == 1) {  // most calls: one peer, in one pass
    int64_t& v = peers[0].scalar;
    if (!peers[0].list.empty()) return false;
    if (is_sentinel(v)) return true;
    const auto [me, size_in] = r.position_in(s, comm);
    if (me < 0 || me >= size_in || v < 0 || v >= size_in) return false;
    v = v >= me ? v - me : v - me + size_in;
    return true;
  }
  bool any = false;
  for (const FieldValue& f : peers) {
    if (!f.list.empty()) return false;
    any |= !is_sentinel(f.scalar);
  }
  if (!any) return true;
  const auto [me, size_in] = r.position_in(s, comm);
  if (me < 0 || me >= size_in) return false;
  for (const FieldValue& f : peers)
    if (!is_sentinel(f.scalar) && (f.scalar < 0 || f.scalar >= size_in)) return false;
  for (FieldValue& f : peers) {
    int64_t& v = f.scalar;
    if (!is_sentinel(v)) v = v >= me ? v - me : v - me + size_in;
  }
  return true;
}
}  // namespace

// On `s` as append. Whatever reads the folder (local_trace: the merge at
// MPI_Finalize, partial traces) folds the queue first, so nothing recorded
// is left out. From append this runs with tl_holding set, so a signal in
// the middle of a batch writes no partial trace rather than a damaged one.
void Recorder::fold_unfolded(ThreadStream& s) {
  const std::size_t n = s.unfolded_n;
  s.unfolded_n = 0;
  s.bump_queue_seq();
  s.unfolded_list_entries = 0;
  s.repeats_folded += s.unfolded_repeat_n;
  s.unfolded_repeat_n = 0;
  struct ClearRepeats {
    std::vector<RepeatList>& repeats;
    std::size_t n;
    ~ClearRepeats() {
      for (std::size_t i = 0; i < n; ++i) repeats[i].clear();
    }
  } clear_repeats{s.unfolded_repeats, n};
  if (disabled) return;
  if (sample_only) {
    for (std::size_t i = 0; i < n; ++i) log_event(s.unfolded[i]);
    return;
  }
  try {
    for (std::size_t i = 0; i < n; ++i) {
      Event& ev = s.unfolded[i];
      const std::span<FieldValue> peers = leading_peer_fields(ev);
      if (!peers.empty()) {
        const int64_t comm = s.unfolded_comm[i] != kUndefined ? s.unfolded_comm[i] : ev.get(kComm);
        if (!encode_scalar_peers(*this, s, comm, peers) && has_relative_fields(peers)) {
          const auto [me, size_in] = position_in(s, comm);
          encode_relative(peers, me, size_in);
        }
      }
      s.folder->append(ev);
      if (!s.unfolded_repeats[i].empty())
        s.folder->append_repeats(ev, s.unfolded_repeats[i].span());
      // A folded slot may wait long for its next event (batches cut short
      // by the list budget): let its lists go now, not then.
      if (s.unfolded_has_lists[i])
        for (FieldValue& f : ev.fields)
          if (f.list.capacity() > 64) std::vector<int64_t>().swap(f.list);
    }
  } catch (const std::exception& ex) {
    fail(ex.what());
  }
}

TRACEFOLD_STATIC_TLS constinit thread_local bool tl_in_call = false;
TRACEFOLD_STATIC_TLS constinit thread_local bool tl_holding = false;

DatatypeRegistry& datatype_registry() {
  return recorder().types;
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the lock word is a futex");

// Drepper's mutex ("Futexes are tricky"): 2 says a thread may sleep, so
// the release wakes one.
void RecorderLock::lock_contended() {
  while (state_.exchange(2, std::memory_order_acquire) != 0)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAIT_PRIVATE, 2, nullptr,
            nullptr, 0);
}

void RecorderLock::wake() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
          0);
}

OpId op(const char* name) {
  auto id = OpTable::find(name);
  return id ? *id : OpId{0};
}

Event& thread_event() {
  TRACEFOLD_STATIC_TLS thread_local Event ev;
  return ev;
}

CallBuffers& thread_buffers() {
  TRACEFOLD_STATIC_TLS thread_local CallBuffers b;
  return b;
}

// enter_ns 0: the call is entered now.
[[gnu::always_inline]] inline void Call::begin(OpId op, int64_t enter_ns) {
  if (tl_in_call) {
    nested_ = true;
    return;
  }
  Recorder& r = recorder();
  if (!r.recording()) return;
  sampler_note_entering(enter_ns);
  tl_in_call = true;
  sampler_note_call(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  active_ = true;
  if (r.any_statistics)
    for (Statistic* st : statistics().enabled) st->start();
  enter_ns_ = enter_ns != 0 ? enter_ns : now_ns();
  sampler_note_enter(enter_ns_);
  auto& spare = thread_buffers().spare_links;
  for (FieldValue& f : ev_.fields)
    if (f.field == kLinks && f.list.capacity() > spare.capacity()) spare.swap(f.list);
  ev_.fields.clear();
  ev_.stats.clear();
  list_entries_ = 0;
  lists_ = false;
  pending_.clear();
  pending_wild_.clear();
  ev_.op = op;
  ev_.site = 0;
}

Call::Call(OpId op)
    : op_(op),
      pending_(thread_buffers().pending),
      pending_wild_(thread_buffers().pending_wild),
      ev_(thread_event()) {
  begin(op, 0);
}

Call::Call(OpId op, int64_t enter_ns)
    : op_(op),
      pending_(thread_buffers().pending),
      pending_wild_(thread_buffers().pending_wild),
      ev_(thread_event()) {
  begin(op, enter_ns);
}

void Call::poll_result(bool nothing, int index, bool statuses) {
  // With a wildcard receive among the requests, Testall/Testsome record
  // what the statuses say, which may need statuses_in's buffer.
  poll_nothing_ = nothing && !(statuses && any_wild_);
  poll_index_ = index;
}

void Call::probe_result(bool nothing, int source, int tag) {
  poll_nothing_ = nothing;
  poll_source_ = source;
  poll_tag_ = tag;
}

void Call::caller(const void* return_address) {
  if (!active_) return;
  Recorder& r = recorder();
  const auto a = reinterpret_cast<uintptr_t>(return_address);
  bool own = a >= r.own_lo && a < r.own_hi;
  if (r.own_hi == 0) {
    hold();
    own = r.frame_of(a).own;
  }
  extra_frames_ = own ? 1 : 0;
}

void Call::hold() {
  if (!lock_.owns_lock()) {
    Recorder& r = recorder();
    lock_ = std::unique_lock(r.mu);
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
  const StackKey stack = r.capture_stack(&site_memo, extra_frames_);
  // The rest changes this thread's own stream: no lock, unless the rank's
  // files or statistics take part.
  if (r.locked_append) [[unlikely]]
    hold();
  ThreadStream& s = r.stream();
  tl_holding = true;
  const OpId op = ev_.op;
  ev_.comm_ns = exit_ns - enter_ns_;
  ev_.compute_ns = std::max<int64_t>(0, enter_ns_ - s.last_exit_ns);
  if (r.any_statistics) {
    for (Statistic* st : statistics().enabled) {
      try {
        ev_.stats.emplace_back(st->name(), st->end(ev_));
      } catch (const std::exception& ex) {
        r.fail("statistic " + st->name() + " failed: " + ex.what());
      }
    }
  }
  if (r.thread_order) [[unlikely]]
    note_thread_order(r, s, ev_);
  // The usual call, its site remembered by the call-path cache, is queued
  // here: append's call and checks took about 40 of the recorder's 500
  // instructions per such call on amg_like (docs/benchmarks.md).
  bool queued;
  if (r.queue_inline && site_memo && *site_memo != PathCache::kSiteUnknown && r.recording()) {
    ev_.site = *site_memo;
    if (!(r.is_poll(op) && r.repeat_of_last(s, ev_)))
      r.queue_event(s, ev_, list_entries_, lists_, comm_id_);
    queued = true;
  } else {
    queued = r.append(s, ev_, stack, site_memo, list_entries_, lists_);
  }
  if (queued) {
    if (r.locked_append) [[unlikely]] {
      if (r.test_exit_delay_ns > 0) [[unlikely]]
        test_delay(r.test_exit_delay_ns);
      r.timestamp(op, enter_ns_, exit_ns, s.number);
    }
    if (poll_nothing_)
      arm_poll(r, s, op, pending_, comm_, poll_source_, poll_tag_, poll_index_,
               reinterpret_cast<uintptr_t>(__builtin_frame_address(0)), site_memo);
  }
  // Read after append, so a batch folded there counts as the recorder's
  // time, not as the application's computation before its next call.
  s.last_exit_ns = now_ns();
  if (r.compute_cpu) mark_compute_cpu();
  tl_holding = false;  // the state is whole again; lock_ (if taken) lets go right after
  tl_in_call = false;
}

}  // namespace tracefold::record
