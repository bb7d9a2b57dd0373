#include "tracefold/thread_order.hpp"

#include <exception>

#include "tracefold/op_class.hpp"

namespace tracefold {
namespace {

// The peer (or tag) a receive matched: the argument, or for a wildcard what
// its status said; kAbsent when neither is known (an MPI_Irecv from
// MPI_ANY_SOURCE matches only at its completion).
int64_t matched(const Event& ev, FieldId arg, FieldId status) {
  const int64_t v = ev.get(arg);
  return v == kAny ? ev.get(status) : v;
}

std::optional<OrderKey> key(const Event& ev, int64_t dir, int64_t peer, int64_t tag) {
  if (is_sentinel(peer) || is_sentinel(tag)) return std::nullopt;
  const int64_t comm = ev.get(FieldTable::comm());
  return OrderKey{dir, comm == kAbsent ? int64_t{-1} : comm, peer, tag};
}

}  // namespace

FieldId others_field() {
  static const FieldId id = FieldTable::intern("others", FieldKind::kScalar);
  return id;
}

FieldId rothers_field() {
  static const FieldId id = FieldTable::intern("rothers", FieldKind::kScalar);
  return id;
}

FieldId OrderKeys::recv_field() const {
  return sendrecv ? rothers_field() : others_field();
}

OrderKeys order_keys(const Event& ev) {
  static const FieldId peer = FieldTable::peer(), src = FieldTable::src(),
                       tag = FieldTable::intern("tag", FieldKind::kScalar),
                       mtag = FieldTable::intern("mtag", FieldKind::kScalar),
                       rpeer = FieldTable::intern("rpeer", FieldKind::kScalar),
                       rtag = FieldTable::intern("rtag", FieldKind::kScalar);
  OrderKeys k;
  OpCategory category;
  try {
    category = op_traits(ev.op).category;
  } catch (const std::exception&) {
    return k;
  }
  switch (category) {
    case OpCategory::kSend:
      k.send = key(ev, 0, ev.get(peer), ev.get(tag));
      break;
    case OpCategory::kRecv:
      k.recv = key(ev, 1, matched(ev, peer, src), matched(ev, tag, mtag));
      break;
    case OpCategory::kSendrecv:
      k.sendrecv = true;
      k.send = key(ev, 0, ev.get(peer), ev.get(tag));
      k.recv = key(ev, 1, matched(ev, rpeer, src), matched(ev, rtag, mtag));
      break;
    default:
      break;
  }
  return k;
}

}  // namespace tracefold
