// The rank-wide order of point-to-point calls across threads under
// MPI_THREAD_SERIALIZED or MULTIPLE (docs/format.md "Message order across threads").
// MPI matches the messages of one (communicator, peer, tag) in the order
// their calls were posted, rank-wide, and each thread's stream has only its
// own calls. A call therefore notes how many calls of other threads of its
// rank on the same key came since the thread's own previous one. That is 0
// when threads keep to keys of their own, and then no field is written, so
// such traces are what they were.
//
// Memory: one count per key (direction, communicator, peer, tag) in the
// rank's map and in each thread's, kept to the end. A key cannot be
// forgotten: a thread's first call on it counts every earlier call of the
// other threads on it, however long ago. So a program that numbers its
// messages by tag grows both maps with every tag (by some 100 bytes an
// entry); one that reuses its tags, as halo exchanges and pipelines do,
// stays at its communicators x peers x tags.

#include <thread>

#include "recorder_impl.hpp"
#include "tracefold/thread_order.hpp"

namespace tracefold::record {
namespace {

void note(Recorder& r, ThreadStream& s, Event& ev, const std::optional<OrderKey>& key,
          FieldId field) {
  if (!key) return;
  uint64_t before = 0;
  {
    std::lock_guard lock(r.order_mu);
    before = r.order_counts[*key]++;
  }
  uint64_t& seen = s.order_seen[*key];
  const uint64_t others = before - seen;
  seen = before + 1;
  if (others > 0) ev.set(field, static_cast<int64_t>(others));
}

// While one thread calls MPI: no other thread's calls can come between its
// own, so nothing is written and its counts are the rank's. The seq_cst
// pair (order_solo_busy here, order_shared in share_thread_order) makes
// either this thread see the hand-over, or the hand-over wait for this.
bool note_solo(Recorder& r, ThreadStream& s, const OrderKeys& keys) {
  if (r.order_shared.load(std::memory_order_acquire)) return false;
  r.order_solo_busy.store(true, std::memory_order_seq_cst);
  const bool solo = !r.order_shared.load(std::memory_order_seq_cst);
  if (solo) {
    if (keys.send) ++s.order_seen[*keys.send];
    if (keys.recv) ++s.order_seen[*keys.recv];
  }
  r.order_solo_busy.store(false, std::memory_order_release);
  return solo;
}

}  // namespace

void note_thread_order(Recorder& r, ThreadStream& s, Event& ev) {
  const OrderKeys keys = order_keys(ev);
  if (!keys.send && !keys.recv) return;
  if (note_solo(r, s, keys)) return;
  note(r, s, ev, keys.send, others_field());
  note(r, s, ev, keys.recv, keys.recv_field());
}

void share_thread_order(Recorder& r, ThreadStream& first) {
  // Held until the counts are in: the first thread, once it sees
  // order_shared, counts under order_mu and must find them there.
  std::lock_guard lock(r.order_mu);
  r.order_shared.store(true, std::memory_order_seq_cst);
  while (r.order_solo_busy.load(std::memory_order_seq_cst)) std::this_thread::yield();
  r.order_counts = first.order_seen;
}

}  // namespace tracefold::record
