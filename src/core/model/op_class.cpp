#include "tracefold/op_class.hpp"

#include <stdexcept>
#include <vector>

namespace tracefold {

namespace {

constexpr OpCategory category_of(OpFamily f) {
  using F = OpFamily;
  switch (f) {
    case F::kMarker:
      return OpCategory::kMarker;
    case F::kInit:
    case F::kFinalize:
    case F::kAbort:
    case F::kPcontrol:
      return OpCategory::kEnvironment;
    case F::kSend:
      return OpCategory::kSend;
    case F::kRecv:
    case F::kMrecv:
      return OpCategory::kRecv;
    case F::kSendrecv:
      return OpCategory::kSendrecv;
    case F::kProbe:
    case F::kMprobe:
      return OpCategory::kProbe;
    case F::kSendInit:
    case F::kRecvInit:
    case F::kStart:
      return OpCategory::kPersistent;
    case F::kRequestFree:
    case F::kCancel:
      return OpCategory::kRequest;
    case F::kComplete:
      return OpCategory::kCompletion;
    case F::kCommDup:
    case F::kCommSplit:
    case F::kCommSplitType:
    case F::kCommCreate:
    case F::kCommCreateGroup:
    case F::kCommFree:
    case F::kGroup:
    case F::kIntercommCreate:
    case F::kIntercommMerge:
      return OpCategory::kCommManagement;
    case F::kCartCreate:
    case F::kCartSub:
    case F::kCartQuery:
    case F::kGraphCreate:
      return OpCategory::kTopology;
    case F::kTypeCreate:
    case F::kTypeCommit:
    case F::kTypeFree:
    case F::kTypeQuery:
      return OpCategory::kDatatype;
    case F::kWinCreate:
    case F::kWinFree:
    case F::kWinSync:
    case F::kRma:
      return OpCategory::kOneSided;
    case F::kFile:
    case F::kFileRead:
    case F::kFileWrite:
      return OpCategory::kIo;
    default:
      return OpCategory::kCollective;
  }
}

constexpr CollectiveShape shape_of(OpFamily f) {
  using F = OpFamily;
  switch (f) {
    case F::kBarrier:
      return CollectiveShape::kBarrier;
    case F::kBcast:
    case F::kScatter:
    case F::kScatterv:
      return CollectiveShape::kOneToN;
    case F::kReduce:
    case F::kGather:
    case F::kGatherv:
      return CollectiveShape::kNToOne;
    case F::kScan:
    case F::kExscan:
      return CollectiveShape::kScan;
    case F::kAllreduce:
    case F::kAllgather:
    case F::kAllgatherv:
    case F::kAlltoall:
    case F::kAlltoallv:
    case F::kAlltoallw:
    case F::kReduceScatter:
    case F::kReduceScatterBlock:
    // Communicator creation: every member learns the others' arguments.
    case F::kCommDup:
    case F::kCommSplit:
    case F::kCommSplitType:
    case F::kCommCreate:
    case F::kCommCreateGroup:
    case F::kIntercommCreate:
    case F::kIntercommMerge:
    case F::kCartCreate:
    case F::kCartSub:
    case F::kGraphCreate:
      return CollectiveShape::kNToN;
    case F::kNeighborAllgather:
    case F::kNeighborAllgatherv:
    case F::kNeighborAlltoall:
    case F::kNeighborAlltoallv:
    case F::kNeighborAlltoallw:
      return CollectiveShape::kNeighbor;
    default:
      return CollectiveShape::kNone;
  }
}

enum class Mode : bool { B = false, I = true };

constexpr OpTraits traits(OpFamily f, Mode m, OpVariant v) {
  return OpTraits{f, category_of(f), shape_of(f), m == Mode::I, v};
}

constexpr OpTraits kTraits[] = {
#define TF_OP(name, family, mode, variant, required) \
  traits(OpFamily::k##family, Mode::mode, OpVariant::k##variant),
#include "ops.def"
#undef TF_OP
};

}  // namespace

const OpTraits& op_traits(OpId id) {
  if (id >= std::size(kTraits))
    throw std::out_of_range("operation id " + std::to_string(id) + " is not known");
  return kTraits[id];
}

std::string_view to_string(OpCategory c) {
  static constexpr std::string_view kNames[] = {
      "marker",       "environment", "send",     "recv",       "sendrecv",
      "probe",        "persistent",  "request",  "completion", "collective",
      "communicator", "topology",    "datatype", "one-sided",  "io"};
  return kNames[static_cast<std::size_t>(c)];
}

std::string_view to_string(CollectiveShape s) {
  static constexpr std::string_view kNames[] = {"none",    "1-to-N", "N-to-1",  "NxN",
                                                "barrier", "scan",   "neighbor"};
  return kNames[static_cast<std::size_t>(s)];
}

}  // namespace tracefold
