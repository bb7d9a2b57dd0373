// Operation classes of the replay engine (internal).
#pragma once

#include <string>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold::replay_detail {

enum class Kind : uint8_t {
  kUnsupported, kMarker, kInit, kFinalize, kAbort, kPcontrol,
  kSend, kRecv, kSendrecv, kProbe, kMprobe, kMrecv, kSendInit, kRecvInit, kStart,
  kRequestFree, kCancel, kComplete,
  kBarrier, kBcast, kReduce, kAllreduce, kScan, kExscan, kGather, kGatherv, kScatter,
  kScatterv, kAllgather, kAllgatherv, kAlltoall, kAlltoallv, kAlltoallw, kReduceScatter,
  kReduceScatterBlock,
  kCommDup, kCommSplit, kCommSplitType, kCommCreate, kCommCreateGroup, kCommFree,
  kCartCreate, kCartSub, kCartQuery,
  kTypeCreate, kTypeCommit, kTypeFree,
};

struct OpInfo {
  Kind kind = Kind::kUnsupported;
  bool nonblocking = false;  ///< makes a request (I-variants, persistent inits)
  std::string name;
};

/// Indexed by OpId.
std::vector<OpInfo> op_table();

}  // namespace tracefold::replay_detail
