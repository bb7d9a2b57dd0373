// Operation classes of the replay engine (internal).
#pragma once

#include <string>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold::replay_detail {

enum class Kind : uint8_t {
  kUnsupported,
  kMarker,
  kInit,
  kFinalize,
  kAbort,
  kPcontrol,
  kSend,
  kRecv,
  kSendrecv,
  kProbe,
  kMprobe,
  kMrecv,
  kSendInit,
  kRecvInit,
  kStart,
  kRequestFree,
  kCancel,
  kComplete,
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kScan,
  kExscan,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kReduceScatter,
  kReduceScatterBlock,
  kCommDup,
  kCommSplit,
  kCommSplitType,
  kCommCreate,
  kCommCreateGroup,
  kCommFree,
  kCartCreate,
  kCartSub,
  kIntercommCreate,
  kIntercommMerge,
  kCartQuery,
  kTypeCreate,
  kTypeCommit,
  kTypeFree,
  kTypeQuery,
};

/// Which member of its family an operation is, so the hot path switches on
/// a number instead of comparing names.
enum class Variant : uint8_t {
  kPlain,
  kBuffered,
  kSynchronous,
  kReady,  // send modes
  kWait,
  kWaitall,
  kWaitany,
  kWaitsome,
  kTest,
  kTestall,
  kTestany,
  kTestsome,  // completions
};

struct OpInfo {
  Kind kind = Kind::kUnsupported;
  bool nonblocking = false;  ///< makes a request (I-variants, persistent inits)
  std::string name;
  Variant variant = Variant::kPlain;
};

/// Indexed by OpId.
std::vector<OpInfo> op_table();

}  // namespace tracefold::replay_detail
