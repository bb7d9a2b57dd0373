// The poll fast path: a poll that finds nothing again costs two clock reads
// and a repeat count, no Call.
//
// A waiting loop polls thousands of times, and every poll that finds
// nothing would be recorded as a repeat of the last queued event anyway
// (Recorder::repeat_of_last). When the slow path queued such a poll, the
// thread remembers what made its event what it was: the op and argument
// values, the recorder's queue_seq (no event queued or folded since, so the
// request table, the communicators and the last queued event are
// unchanged), the frame the call path was found from and the path-cache
// entry that named its call site. A later poll that matches all of them,
// and whose stack still holds every return address of that entry, would
// give an event equal to the queued one if it again finds nothing: it is
// then counted as a repeat directly. If it finds something, the wrapper
// builds the full event from the remembered arguments, as the slow path
// would have.
//
// Off where those assumptions fail: MPI_THREAD_MULTIPLE (another thread
// could record between the check and the count), statistics (their values
// differ per call), the raw log and the timeline (per-call lines), the
// call-path cache off or checked, TRACEFOLD_POLL_FASTPATH=0.

#include <sched.h>

#include <cstddef>

#include "recorder_impl.hpp"

namespace tracefold::record {
namespace {

struct PollMemo {
  static constexpr std::size_t kMaxRequests = 16;
  bool armed = false;
  OpId op = 0;
  int n = 0;
  std::array<MPI_Request, kMaxRequests> requests{};
  // Not MPI_COMM_NULL, which may be the address of a library object: a
  // thread_local with such an initializer is initialized on first use, and
  // every access then pays a guard check through __tls_get_addr. Unused
  // until armed.
  MPI_Comm comm{};
  int source = 0, tag = 0, index = 0;
  uint64_t seq = 0;
  uintptr_t anchor = 0;
  uint64_t learned = 0;
  // Taken when armed, so a repeat needs neither recorder()'s guard nor the
  // index of the last queued event: both stay valid while queue_seq does.
  Recorder* rec = nullptr;
  std::vector<RepeatTiming>* times = nullptr;
  // The entry's stack slots as addresses (the anchor is fixed while armed)
  // and the values they held, slot 0 left out (see armed_at): the check
  // reads each slot without recomputing where it is. Checked four at a
  // time without a branch per slot: the slots past the entry's point at
  // kPad, which holds the value they expect.
  static constexpr std::size_t kGroup = 4;
  static constexpr std::size_t kSlots = (PathCache::kMaxFrames + kGroup - 1) / kGroup * kGroup;
  uint8_t groups = 0;
  std::array<const uintptr_t*, kSlots> slot{};
  std::array<uintptr_t, kSlots> value{};
  // Check mode: the poll being recorded found nothing on the fast path,
  // so its slow-path append must have been a repeat.
  bool expect_repeat = false;
};

TRACEFOLD_STATIC_TLS constinit thread_local PollMemo tl_poll;
constexpr uintptr_t kPad = 0;

static_assert(offsetof(PathCache::Entry, site) == 0, "arm_poll finds the entry by its site memo");

// Everything but the arguments: the same place, nothing recorded since.
[[gnu::always_inline]] inline int64_t armed_at(const PollMemo& m, uintptr_t anchor) {
  if (anchor != m.anchor || tl_in_call) return 0;
  const Recorder& r = *m.rec;
  if (!r.recording() || r.queue_seq.load(std::memory_order_relaxed) != m.seq ||
      r.unfolded_repeat_n + 1 >= Recorder::kRepeatBudget)
    return 0;  // a full repeat budget folds: the slow path does that
  const PathCache* pc = tl_path_cache;
  if (!pc || pc->learned != m.learned) return 0;
  // Slot 0 holds the return address into the wrapper from ~Call, which the
  // wrapper's own call of this function has overwritten; the wrapper is the
  // same (op, frame). Every other slot is read back as capture_stack does.
  uintptr_t differ = 0;
  for (std::size_t g = 0; g < m.groups; ++g) {
    const std::size_t i = g * PollMemo::kGroup;
    differ |= (*m.slot[i] ^ m.value[i]) | (*m.slot[i + 1] ^ m.value[i + 1]) |
              (*m.slot[i + 2] ^ m.value[i + 2]) | (*m.slot[i + 3] ^ m.value[i + 3]);
  }
  if (differ != 0) return 0;
  return now_ns();
}

}  // namespace

void arm_poll(Recorder& r, OpId op, const std::vector<MPI_Request>& requests, MPI_Comm comm,
              int source, int tag, int index, uintptr_t anchor, SiteId* site_memo) {
  PollMemo& m = tl_poll;
  if (m.expect_repeat) {
    m.expect_repeat = false;
    // A repeat leaves queue_seq as the armed poll saw it.
    if (r.queue_seq.load(std::memory_order_relaxed) == m.seq) {
      ++r.poll_checked;
    } else if (r.poll_mismatches++ == 0) {
      std::fprintf(stderr,
                   "tracefold: rank %d: poll fast path: an armed %s that found nothing was not a "
                   "repeat of the last event\n",
                   r.rank, OpTable::name(op).c_str());
    }
  }
  m.armed = false;
  if (!r.poll_fastpath || !site_memo || *site_memo == PathCache::kSiteUnknown ||
      r.unfolded_n == 0 || requests.size() > PollMemo::kMaxRequests)
    return;
  const auto* e = reinterpret_cast<const PathCache::Entry*>(site_memo);
  const PathCache* pc = tl_path_cache;
  // Slot 0 must be the return address into the wrapper (see armed_at).
  if (!pc || e->frames < 2 || e->offset[0] != sizeof(uintptr_t) || (e->in_key & 1u)) return;
  m.op = op;
  m.n = static_cast<int>(requests.size());
  std::copy(requests.begin(), requests.end(), m.requests.begin());
  m.comm = comm;
  m.source = source;
  m.tag = tag;
  m.index = index;
  m.seq = r.queue_seq.load(std::memory_order_relaxed);
  m.anchor = anchor;
  const std::size_t slots = e->frames - 1u;
  m.groups = static_cast<uint8_t>((slots + PollMemo::kGroup - 1) / PollMemo::kGroup);
  for (std::size_t i = 0; i < m.groups * PollMemo::kGroup; ++i) {
    m.slot[i] = i < slots ? reinterpret_cast<const uintptr_t*>(anchor + e->offset[i + 1]) : &kPad;
    m.value[i] = i < slots ? e->value[i + 1] : kPad;
  }
  m.rec = &r;
  m.times = &r.unfolded_repeats[r.unfolded_n - 1];
  m.learned = pc->learned;
  m.armed = true;
}

[[gnu::noinline]] int64_t poll_armed(OpId op, int n, const MPI_Request* requests) {
  const PollMemo& m = tl_poll;
  if (!m.armed || m.op != op || m.n != n || (n > 0 && !requests)) return 0;
  for (int i = 0; i < n; ++i)
    if (m.requests[static_cast<std::size_t>(i)] != requests[i]) return 0;
  return armed_at(m, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
}

[[gnu::noinline]] int64_t probe_armed(OpId op, int source, int tag, MPI_Comm comm) {
  const PollMemo& m = tl_poll;
  if (!m.armed || m.op != op || m.source != source || m.tag != tag || m.comm != comm) return 0;
  return armed_at(m, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
}

bool poll_repeated(int64_t t0, bool nothing, int index) {
  const int64_t t1 = now_ns();
  PollMemo& m = tl_poll;
  if (!nothing || index != m.index) return false;
  Recorder& r = *m.rec;
  if (r.poll_check) {
    m.expect_repeat = true;  // recorded by the slow path: see arm_poll
    return false;
  }
  // A signal on this thread sees tl_holding and writes no partial trace;
  // one on another thread (or its exit) waits in wait_fast_polls.
  tl_holding = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  r.fast_busy.exchange(1);
  // After the end of recording a poll is not recorded, as on the slow path.
  if (!r.finalized) {
    // Never full here: armed_at leaves a full budget to the slow path.
    // count_repeat without finding the queue slot again (m.times is it).
    m.times->push_back({std::max<int64_t>(0, t0 - r.last_exit_ns), t1 - t0});
    ++r.event_count;
    ++r.unfolded_repeat_n;
    ++r.fast_polls;
    r.last_exit_ns = t1;
  }
  r.fast_busy.store(0, std::memory_order_release);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tl_holding = false;
  return true;
}

const MPI_Request* poll_requests() {
  return tl_poll.requests.data();
}

void wait_fast_polls(Recorder& r) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  while (r.fast_busy.load() != 0) sched_yield();
}

}  // namespace tracefold::record
