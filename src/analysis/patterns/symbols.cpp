// Symbols (patterns.hpp "Alphabet"): an event's operation family,
// communicator, peer and tag, and their names in the listing.
#include <optional>
#include <string>

#include "tracefold/patterns.hpp"
#include "walk_internal.hpp"

namespace tracefold::patterns {

namespace detail {

// The family's name: blocking and nonblocking members share it (an
// MPI_Isend is a send posted), as they share a symbol.
std::string family_name(OpFamily f) {
  switch (f) {
    case OpFamily::kSend:
      return "send";
    case OpFamily::kRecv:
      return "recv";
    case OpFamily::kSendrecv:
      return "sendrecv";
    case OpFamily::kMrecv:
      return "mrecv";
    case OpFamily::kStart:
      return "start";
    case OpFamily::kBarrier:
      return "barrier";
    case OpFamily::kBcast:
      return "bcast";
    case OpFamily::kReduce:
      return "reduce";
    case OpFamily::kAllreduce:
      return "allreduce";
    case OpFamily::kScan:
      return "scan";
    case OpFamily::kExscan:
      return "exscan";
    case OpFamily::kGather:
      return "gather";
    case OpFamily::kGatherv:
      return "gatherv";
    case OpFamily::kScatter:
      return "scatter";
    case OpFamily::kScatterv:
      return "scatterv";
    case OpFamily::kAllgather:
      return "allgather";
    case OpFamily::kAllgatherv:
      return "allgatherv";
    case OpFamily::kAlltoall:
      return "alltoall";
    case OpFamily::kAlltoallv:
      return "alltoallv";
    case OpFamily::kAlltoallw:
      return "alltoallw";
    case OpFamily::kReduceScatter:
      return "reduce_scatter";
    case OpFamily::kReduceScatterBlock:
      return "reduce_scatter_block";
    case OpFamily::kNeighborAllgather:
      return "neighbor_allgather";
    case OpFamily::kNeighborAllgatherv:
      return "neighbor_allgatherv";
    case OpFamily::kNeighborAlltoall:
      return "neighbor_alltoall";
    case OpFamily::kNeighborAlltoallv:
      return "neighbor_alltoallv";
    case OpFamily::kNeighborAlltoallw:
      return "neighbor_alltoallw";
    // Communicator set-up is collective too, and makes symbols of its own.
    case OpFamily::kCommDup:
      return "comm_dup";
    case OpFamily::kCommSplit:
      return "comm_split";
    case OpFamily::kCommSplitType:
      return "comm_split_type";
    case OpFamily::kCommCreate:
      return "comm_create";
    case OpFamily::kCommCreateGroup:
      return "comm_create_group";
    case OpFamily::kCommFree:
      return "comm_free";
    case OpFamily::kIntercommCreate:
      return "intercomm_create";
    case OpFamily::kIntercommMerge:
      return "intercomm_merge";
    case OpFamily::kCartCreate:
      return "cart_create";
    case OpFamily::kCartSub:
      return "cart_sub";
    case OpFamily::kGraphCreate:
      return "graph_create";
    default:
      return "op" + std::to_string(static_cast<int>(f));
  }
}

}  // namespace detail

namespace {

std::string value_text(int64_t v) {
  return format_value(v);
}

}  // namespace

namespace detail {

// `k` with its peer as the distance from `rank` in the communicator, the
// short way round (-1 rather than size - 1).
SymbolKey relative(SymbolKey k, int32_t rank, const CommTable& comms) {
  if (is_sentinel(k.peer) || k.peer == kAbsent) return k;
  const std::optional<detail::Place> at = detail::place_in(comms, k.comm, rank);
  if (!at) return k;
  int64_t d = detail::offset_of(*at, k.peer);
  if (d > at->size / 2) d -= at->size;
  k.peer = d;
  return k;
}

// What a shape needs beyond the symbol: the bytes sent, whether a
// receive blocks and was a wildcard, and a wildcard tag's matched tag
// (so a master's MPI_ANY_TAG returns still match their sends).
void fill_details(const Event& ev, Message& m) {
  static const FieldId count_f = *FieldTable::find("count");
  static const FieldId dsize_f = *FieldTable::find("dsize");
  static const FieldId mtag_f = *FieldTable::find("mtag");
  const OpTraits& t = op_traits(ev.op);
  const int64_t count = ev.get(count_f), dsize = ev.get(dsize_f);
  if (!is_sentinel(count) && !is_sentinel(dsize) && count > 0 && dsize > 0)
    m.bytes = static_cast<uint64_t>(count * dsize);
  m.blocking = !t.nonblocking;
  m.wildcard = ev.get(FieldTable::peer()) == kAny && ev.get(FieldTable::src()) != kAbsent;
  if (m.tag == kAny) {
    const int64_t mtag = ev.get(mtag_f);
    if (mtag != kAbsent && !is_sentinel(mtag)) m.tag = mtag;
  }
}

}  // namespace detail

Symbol Alphabet::intern(const SymbolKey& key) {
  auto [it, fresh] = index_.try_emplace(key, static_cast<Symbol>(keys_.size()));
  if (fresh) keys_.push_back(key);
  return it->second;
}

std::string Alphabet::describe(Symbol s, PeerMode mode) const {
  const SymbolKey& k = at(s);
  std::string out = detail::family_name(k.family) + "(";
  if (k.peer != kAbsent) {
    if (mode == PeerMode::kRelative && !is_sentinel(k.peer))
      out += (k.peer >= 0 ? "+" : "") + std::to_string(k.peer);
    else
      out += value_text(k.peer);
    out += ", ";
  }
  out += "comm " + std::to_string(k.comm);
  if (k.tag != kAbsent) out += ", tag " + value_text(k.tag);
  return out + ")";
}

std::optional<SymbolKey> symbol_of(const Event& ev, int32_t rank, const CommTable& comms,
                                   PeerMode mode) {
  const OpTraits& t = op_traits(ev.op);
  SymbolKey k;
  k.family = t.family;
  static const FieldId comm_f = FieldTable::comm();
  static const FieldId tag_f = *FieldTable::find("tag");
  const int64_t comm = ev.get(comm_f);
  k.comm = comm == kAbsent ? CommTable::kWorld : comm;
  if (t.collective()) return k;
  switch (t.family) {
    case OpFamily::kSend:
    case OpFamily::kRecv:
    case OpFamily::kSendrecv:
    case OpFamily::kMrecv:
      break;
    default:
      return std::nullopt;  // completions, probes, persistent set-up, bookkeeping
  }
  int64_t peer = ev.get(FieldTable::peer());
  if (peer == kAny) {
    // A wildcard receive: the source it matched, when recorded.
    const int64_t src = ev.get(FieldTable::src());
    if (src != kAbsent) peer = src;
  }
  k.peer = peer;
  k.tag = ev.get(tag_f);
  return mode == PeerMode::kRelative ? detail::relative(k, rank, comms) : k;
}

}  // namespace tracefold::patterns
