// The poll fast path (see poll_fastpath.cpp for the argument): the
// per-thread memo of the last poll that found nothing, and the checks every
// C poll wrapper makes inline, so that a repeated unsuccessful poll costs a
// few comparisons, two clock reads and a repeat count, no call into the
// recorder. Everything else (the first poll, one that found something) is
// out of line in the generated wrappers, so the fast path's frame holds
// only what it needs itself.
#pragma once

#include "recorder_impl.hpp"

#pragma GCC visibility push(hidden)

namespace tracefold::record {

struct PollMemo {
  static constexpr std::size_t kMaxRequests = 16;
  static constexpr std::size_t kMaxSlots = PathCache::kMaxFrames;
  // The armed wrapper's number (gen_wrappers.py numbers the poll wrappers
  // from 1, a constant in each) while armed, 0 when not: one comparison
  // with an immediate says both.
  uint32_t key = 0;
  // Set by the out-of-line part of a poll wrapper before its Call: which
  // wrapper and which frame the call went through (arm_poll takes them).
  uint32_t entry_key = 0;
  int n = 0;
  // The wrapper's frame address (its saved frame pointer's slot; its
  // return address lies right above) at the armed poll, and at the latest
  // slow poll's entry.
  uintptr_t frame = 0;
  uintptr_t entry_frame = 0;
  // The thread's stream, taken when armed, so a repeat needs neither
  // recorder()'s guard nor the index of the last queued event: both stay
  // valid while its queue_seq does.
  ThreadStream* rec = nullptr;
  uint64_t seq = 0;
  RepeatList* times = nullptr;
  // `index`: the armed poll's (Testany's index, else 0).
  int index = 0, source = 0, tag = 0;
  // The armed poll's entry time and the library's result: read by
  // poll_counted and, if it did not count (it found something, or the
  // check mode), by the out-of-line part.
  int64_t found_t0 = 0;
  int found_rc = 0;
  // Not MPI_COMM_NULL, which may be the address of a library object: a
  // thread_local with such an initializer is initialized on first use, and
  // every access then pays a guard check through __tls_get_addr.
  MPI_Comm comm{};
  // TRACEFOLD_POLL_FASTPATH=check: record every poll on the slow path, and
  // `expect_repeat`: the one being recorded found nothing as the armed one
  // did, so its slow-path append must have been a repeat.
  bool check = false;
  bool expect_repeat = false;
  uint8_t slots = 0;
  // The stack slots at and above `frame` that decide the call path (return
  // addresses, saved frame pointers), as addresses and the values they
  // held: the frame is fixed while armed.
  std::array<const uintptr_t*, kMaxSlots> slot{};
  std::array<uintptr_t, kMaxSlots> value{};
  std::array<MPI_Request, kMaxRequests> requests{};
  // The fast path's pointer arguments, kept here across its first clock
  // read rather than in callee-saved registers: a store and a load each,
  // where a register costs a push, a pop and two moves. The count, source,
  // tag and communicator are read back from the fields above, which the
  // armed check found equal to them.
  std::array<void*, 4> arg{};
};

TRACEFOLD_STATIC_TLS extern constinit thread_local PollMemo tl_poll;

// Whether the armed poll's place is this one: the same frame, no recorder
// call of this thread under way, nothing queued or folded since (so the
// request table and the communicators are as they were: the library is
// called with the caller's statuses, as the armed poll was), and every
// slot that decides the call path holding what it held. Unrolled, one
// load, xor and or per slot. Whether the queue has room is asked after the
// library's call (poll_counted).
// `kSeq`: whether the queue must be unchanged before the library's call
// too. Only a poll with a status array needs that: the slow path may hand
// the library a status buffer of its own when the request table holds a
// wildcard receive among the requests, which only an unchanged queue rules
// out. For the others, poll_counted's check after the call suffices: a
// changed queue there sends the poll to the out-of-line part, which records
// it in full from the arguments, as the slow path would.
template <bool kSeq>
[[gnu::always_inline]] inline bool poll_place_armed(const PollMemo& m, uintptr_t frame) {
  if (m.frame != frame || tl_in_call) return false;
  if (kSeq && m.rec->queue_seq.load(std::memory_order_relaxed) != m.seq) return false;
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
    case 0:
      break;
    default:
      // arm_poll never keeps more than kMaxSlots: no bounds check before
      // the jump table.
      __builtin_unreachable();
  }
#undef TF_SLOT
  static_assert(PollMemo::kMaxSlots == 24, "one case per slot");
  return d == 0;
}

// A request poll (MPI_Test*) of wrapper `key` with these arguments at
// this frame is armed (`kStatuses`: it has a status array).
template <bool kStatuses>
[[gnu::always_inline]] inline bool poll_armed(const PollMemo& m, uint32_t key, int n,
                                              const MPI_Request* requests, uintptr_t frame) {
  if (m.key != key || m.n != n) return false;
  if (n > 0) {
    if (!requests || m.requests[0] != requests[0]) return false;
    // Mostly one request: the loop only for more.
    for (std::size_t i = 1; i < static_cast<std::size_t>(n); ++i)
      if (m.requests[i] != requests[i]) [[unlikely]]
        return false;
  }
  return poll_place_armed<kStatuses>(m, frame);
}

// The same for a probe (MPI_Iprobe, MPI_Improbe).
[[gnu::always_inline]] inline bool probe_armed(const PollMemo& m, uint32_t key, int source, int tag,
                                               MPI_Comm comm, uintptr_t frame) {
  if (m.key != key || m.source != source || m.tag != tag || m.comm != comm) return false;
  return poll_place_armed<false>(m, frame);
}

// poll_counted's count when the repeat list is full: grows it, then counts
// (out of line, so that no value of poll_counted's must survive a call).
[[gnu::noinline]] bool poll_count_growing(PollMemo& m, int64_t t1);

// After the library's call on the fast path, which found nothing again
// (as the armed poll did; the wrapper compares): counts it as a repeat of
// the last queued event, entered at m.found_t0, and returns true; false
// if the wrapper must record it in full after all (the check mode wants
// it, or the queue changed or is full: the out-of-line part records it as
// the slow path would). The check mode sets the recorder's repeat limit to
// 0, so that no poll counts here. The entry time and the library's result
// are kept in the memo and the only call after the clock read returns the
// result, so the wrapper keeps few values in callee-saved registers.
[[gnu::always_inline]] inline bool poll_counted(PollMemo& m) {
  const int64_t t1 = now_ns();
  ThreadStream& r = *m.rec;
  // The end of recording (MPI_Finalize, a signal or exit on another
  // thread) and a failure advance queue_seq before waiting for fast_busy
  // (wait_fast_polls): either it sees this thread busy, or this thread
  // sees the new queue_seq and leaves the poll to the recorder. A signal
  // meanwhile writes no partial trace (Recorder::on_signal reads
  // fast_busy: only one thread at a time can be here, as the fast path is
  // off under MPI_THREAD_MULTIPLE).
  r.fast_busy.exchange(1);
  const bool counted = r.queue_seq.load(std::memory_order_seq_cst) == m.seq &&
                       r.unfolded_repeat_n < r.fast_repeat_limit;
  if (counted) [[likely]] {
    if (!m.times->has_room()) [[unlikely]]
      return poll_count_growing(m, t1);
    const int64_t t0 = m.found_t0;
    m.times->push_unchecked({std::max<int64_t>(0, t0 - r.last_exit_ns), t1 - t0});
    ++r.unfolded_repeat_n;
    r.last_exit_ns = t1;
  }
  r.fast_busy.store(0, std::memory_order_release);
  return counted;
}

// The out-of-line part of a poll wrapper, first thing: which wrapper and
// frame this call goes through (the frame is the wrapper's when it was
// reached by a tail call, as gen_wrappers.py's wrappers are; otherwise the
// layout check in arm_poll fails and the poll is not armed), and, for an
// armed poll that did not count, whether the check mode expects a repeat.
[[gnu::always_inline]] inline void poll_entry(PollMemo& m, uint32_t key, uintptr_t frame) {
  m.entry_key = key;
  m.entry_frame = frame;
}
[[gnu::always_inline]] inline void poll_not_counted(PollMemo& m, bool nothing, int index) {
  // As poll_counted would have counted it: the queue unchanged and not full.
  if (m.check && nothing && index == m.index &&
      m.rec->queue_seq.load(std::memory_order_relaxed) == m.seq &&
      m.rec->unfolded_repeat_n + 1 < ThreadStream::kRepeatBudget)
    m.expect_repeat = true;
}

// The armed poll's request handles as they were before the call (the
// library may have replaced completed ones with MPI_REQUEST_NULL).
inline const MPI_Request* poll_requests() {
  return tl_poll.requests.data();
}

}  // namespace tracefold::record

#pragma GCC visibility pop
