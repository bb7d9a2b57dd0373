// Which operations replay performs, on core's classification (op_class.hpp).
#include "replay_internal.hpp"

namespace tracefold::replay_detail {

namespace {
// Everything else in a trace (groups, one-sided, MPI-IO, MPI_Comm_idup,
// the legacy type constructors) is refused before MPI starts.
bool replay_performs(const OpTraits& t) {
  switch (t.family) {
    case OpFamily::kGroup:
    case OpFamily::kWinCreate:
    case OpFamily::kWinFree:
    case OpFamily::kWinSync:
    case OpFamily::kRma:
    case OpFamily::kFile:
    case OpFamily::kFileRead:
    case OpFamily::kFileWrite:
      return false;
    case OpFamily::kCommDup:
      return !t.nonblocking;
    case OpFamily::kTypeCreate:
      return t.variant != OpVariant::kLegacy;
    default:
      return true;
  }
}
}  // namespace

std::vector<OpInfo> op_table() {
  std::vector<OpInfo> table(OpTable::size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto id = static_cast<OpId>(i);
    const OpTraits& t = op_traits(id);
    table[i] = OpInfo{replay_performs(t), t.family, t.nonblocking, OpTable::name(id), t.variant};
  }
  return table;
}

}  // namespace tracefold::replay_detail
