// The rank-wide order of point-to-point calls across threads under
// MPI_THREAD_SERIALIZED or MULTIPLE (docs/format.md "Message order across threads").
// MPI matches the messages of one (communicator, peer, tag) in the order
// their calls were posted, rank-wide, and each thread's stream has only its
// own calls. A call therefore notes how many calls of other threads of its
// rank on the same key came since the thread's own previous one. That is 0
// when threads keep to keys of their own, and then no field is written, so
// such traces are what they were.

#include "tracefold/thread_order.hpp"
#include "recorder_impl.hpp"

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

}  // namespace

void note_thread_order(Recorder& r, ThreadStream& s, Event& ev) {
  const OrderKeys keys = order_keys(ev);
  note(r, s, ev, keys.send, others_field());
  note(r, s, ev, keys.recv, keys.recv_field());
}

}  // namespace tracefold::record
