// The poll fast path (see poll_fastpath.cpp for the argument): the
// per-thread memo of the last poll that found nothing, and the checks every
// C poll wrapper makes inline, so that a repeated unsuccessful poll costs a
// few comparisons, two clock reads and a repeat count, no call into the
// recorder.
#pragma once

#include "recorder_impl.hpp"

#pragma GCC visibility push(hidden)

namespace tracefold::record {

struct PollMemo {
  static constexpr std::size_t kMaxRequests = 16;
  static constexpr std::size_t kMaxSlots = PathCache::kMaxFrames;
  // op + 1 while armed, 0 when not: one comparison says both.
  uint32_t key = 0;
  int n = 0;
  // The wrapper's frame address (its saved frame pointer's slot; its
  // return address lies right above) at the armed poll, and at the latest
  // poll's entry (arm_poll takes it from there).
  uintptr_t frame = 0;
  uintptr_t entry_frame = 0;
  // Taken when armed, so a repeat needs neither recorder()'s guard nor the
  // index of the last queued event: both stay valid while queue_seq does.
  Recorder* rec = nullptr;
  uint64_t seq = 0;
  RepeatList* times = nullptr;
  int index = 0, source = 0, tag = 0;
  // Not MPI_COMM_NULL, which may be the address of a library object: a
  // thread_local with such an initializer is initialized on first use, and
  // every access then pays a guard check through __tls_get_addr.
  MPI_Comm comm{};
  // TRACEFOLD_POLL_FASTPATH=check: record every poll on the slow path, and
  // `expect_repeat`: the one being recorded found nothing on the fast path,
  // so its slow-path append must have been a repeat.
  bool check = false;
  bool expect_repeat = false;
  uint8_t slots = 0;
  // The stack slots at and above `frame` that decide the call path (return
  // addresses, saved frame pointers), as addresses and the values they
  // held: the frame is fixed while armed.
  std::array<const uintptr_t*, kMaxSlots> slot{};
  std::array<uintptr_t, kMaxSlots> value{};
  std::array<MPI_Request, kMaxRequests> requests{};
};

TRACEFOLD_STATIC_TLS extern constinit thread_local PollMemo tl_poll;

// Whether the armed poll's place is this one: the same frame, no recorder
// call of this thread under way, nothing queued or folded since, room in
// the repeat budget (a full one folds: the slow path does that), and every
// slot that decides the call path holding what it held. Unrolled, one
// load, xor and or per slot.
[[gnu::always_inline]] inline bool poll_place_armed(const PollMemo& m, uintptr_t frame) {
  if (m.frame != frame || tl_in_call) return false;
  const Recorder& r = *m.rec;
  if (r.queue_seq.load(std::memory_order_relaxed) != m.seq ||
      r.unfolded_repeat_n + 1 >= Recorder::kRepeatBudget)
    return false;
  uintptr_t d = 0;
#define TF_SLOT(i)                \
  case i + 1:                     \
    d |= *m.slot[i] ^ m.value[i]; \
    [[fallthrough]]
  switch (m.slots) {
    TF_SLOT(23);
    TF_SLOT(22);
    TF_SLOT(21);
    TF_SLOT(20);
    TF_SLOT(19);
    TF_SLOT(18);
    TF_SLOT(17);
    TF_SLOT(16);
    TF_SLOT(15);
    TF_SLOT(14);
    TF_SLOT(13);
    TF_SLOT(12);
    TF_SLOT(11);
    TF_SLOT(10);
    TF_SLOT(9);
    TF_SLOT(8);
    TF_SLOT(7);
    TF_SLOT(6);
    TF_SLOT(5);
    TF_SLOT(4);
    TF_SLOT(3);
    TF_SLOT(2);
    TF_SLOT(1);
    TF_SLOT(0);
    default:
      break;
  }
#undef TF_SLOT
  static_assert(PollMemo::kMaxSlots == 24, "one case per slot");
  return d == 0;
}

// A request poll (MPI_Test*) with these arguments at this frame is armed.
[[gnu::always_inline]] inline bool poll_armed(PollMemo& m, OpId op, int n,
                                              const MPI_Request* requests, uintptr_t frame) {
  m.entry_frame = frame;
  if (m.key != op + 1u || m.n != n || (n > 0 && !requests)) return false;
  for (int i = 0; i < n; ++i)
    if (m.requests[static_cast<std::size_t>(i)] != requests[i]) return false;
  return poll_place_armed(m, frame);
}

// The same for a probe (MPI_Iprobe, MPI_Improbe).
[[gnu::always_inline]] inline bool probe_armed(PollMemo& m, OpId op, int source, int tag,
                                               MPI_Comm comm, uintptr_t frame) {
  m.entry_frame = frame;
  if (m.key != op + 1u || m.source != source || m.tag != tag || m.comm != comm) return false;
  return poll_place_armed(m, frame);
}

// After the library's call on the fast path (entered at t0): true if it
// found nothing again (`index` as the armed poll's) and was counted as a
// repeat of the last queued event; false if the wrapper must record it in
// full with Call(op, t0) (it found something, or the check mode wants it).
[[gnu::always_inline]] inline bool poll_counted(PollMemo& m, int64_t t0, bool nothing, int index) {
  const int64_t t1 = now_ns();
  if (!nothing || index != m.index) return false;
  if (m.check) {
    m.expect_repeat = true;  // recorded by the slow path: see arm_poll
    return false;
  }
  Recorder& r = *m.rec;
  // A signal on this thread sees tl_holding and writes no partial trace;
  // one on another thread (or its exit) waits in wait_fast_polls.
  tl_holding = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  r.fast_busy.exchange(1);
  // After the end of recording (or with tracing off) a poll is not
  // recorded, as on the slow path. Never a full budget here (checked).
  if (!r.finalized && !r.disabled) {
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

// The armed poll's request handles as they were before the call (the
// library may have replaced completed ones with MPI_REQUEST_NULL).
inline const MPI_Request* poll_requests() {
  return tl_poll.requests.data();
}

}  // namespace tracefold::record

#pragma GCC visibility pop
