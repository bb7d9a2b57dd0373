#include "tracefold/thread_order.hpp"

#include <array>
#include <exception>
#include <limits>
#include <stdexcept>

#include "tracefold/op_class.hpp"

namespace tracefold {
namespace {

// The fields a key is made of. order_keys reads them in one walk over the
// event's fields instead of one binary search each (it runs on every
// recorded call under MPI_THREAD_MULTIPLE).
enum Slot : uint8_t { kPeer, kSrc, kRpeer, kTag, kMtag, kRtag, kComm, kSlots, kNone = kSlots };

struct KeyFields {
  // Built-in fields by id, all but rtag today; rtag is registered like any
  // other field, so its id comes after every built-in one and the walk
  // stops at it. Should it become built-in, it goes in the table instead.
  std::array<uint8_t, FieldTable::kBuiltinFields> slot;
  FieldId rtag = std::numeric_limits<FieldId>::max();
  KeyFields() {
    slot.fill(kNone);
    const auto add = [&](FieldId id, Slot s) {
      if (id < FieldTable::kBuiltinFields)
        slot[id] = s;
      else if (s == kRtag)
        rtag = id;
      else
        throw std::logic_error("order_keys: " + FieldTable::name(id) + " is not built-in");
    };
    add(FieldTable::peer(), kPeer);
    add(FieldTable::src(), kSrc);
    add(FieldTable::intern("rpeer", FieldKind::kScalar), kRpeer);
    add(FieldTable::intern("tag", FieldKind::kScalar), kTag);
    add(FieldTable::intern("mtag", FieldKind::kScalar), kMtag);
    add(FieldTable::comm(), kComm);
    add(FieldTable::intern("rtag", FieldKind::kScalar), kRtag);
  }
};

// The peer (or tag) a receive matched: the argument, or for a wildcard what
// its status said; kAbsent when neither is known (an MPI_Irecv from
// MPI_ANY_SOURCE matches only at its completion).
int64_t matched(int64_t arg, int64_t status) {
  return arg == kAny ? status : arg;
}

std::optional<OrderKey> key(int64_t dir, int64_t comm, int64_t peer, int64_t tag) {
  if (is_sentinel(peer) || is_sentinel(tag)) return std::nullopt;
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
  static const KeyFields fields;
  OrderKeys k;
  OpCategory category;
  try {
    category = op_traits(ev.op).category;
  } catch (const std::exception&) {
    return k;
  }
  if (category != OpCategory::kSend && category != OpCategory::kRecv &&
      category != OpCategory::kSendrecv)
    return k;
  std::array<int64_t, kSlots> v;
  v.fill(kAbsent);
  for (const FieldValue& f : ev.fields) {
    if (f.field < FieldTable::kBuiltinFields) {
      if (const uint8_t s = fields.slot[f.field]; s != kNone) v[s] = f.scalar;
    } else if (f.field >= fields.rtag) {
      // Sorted by id: nothing after rtag is a key's.
      if (f.field == fields.rtag) v[kRtag] = f.scalar;
      break;
    }
  }
  switch (category) {
    case OpCategory::kSend:
      k.send = key(0, v[kComm], v[kPeer], v[kTag]);
      break;
    case OpCategory::kRecv:
      k.recv = key(1, v[kComm], matched(v[kPeer], v[kSrc]), matched(v[kTag], v[kMtag]));
      break;
    default:  // kSendrecv
      k.sendrecv = true;
      k.send = key(0, v[kComm], v[kPeer], v[kTag]);
      k.recv = key(1, v[kComm], matched(v[kRpeer], v[kSrc]), matched(v[kRtag], v[kMtag]));
      break;
  }
  return k;
}

}  // namespace tracefold
