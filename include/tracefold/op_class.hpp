// What each operation is: the one classification that replay, simulation,
// benchmark generation and wait-state analysis share, so that none of them
// keeps its own list of MPI names. It comes from src/core/ops.def (name,
// family, blocking mode, variant); the category and the collective shape
// follow from the family.
#pragma once

#include <cstdint>
#include <string_view>

#include "tracefold/event.hpp"

namespace tracefold {

/// What a call does, finely enough that a tool can act on it without
/// looking at the name (one family per MPI call shape; blocking and
/// nonblocking forms share a family).
enum class OpFamily : uint8_t {
  kMarker,  ///< compute, enter, exit: not MPI calls
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
  kComplete,  ///< Wait*, Test* (OpVariant tells which)
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
  kNeighborAllgather,
  kNeighborAllgatherv,
  kNeighborAlltoall,
  kNeighborAlltoallv,
  kNeighborAlltoallw,
  kCommDup,
  kCommSplit,
  kCommSplitType,
  kCommCreate,
  kCommCreateGroup,
  kCommFree,
  kGroup,  ///< MPI_Comm_group, MPI_Group_*: local, no communication
  kIntercommCreate,
  kIntercommMerge,
  kCartCreate,
  kCartSub,
  kCartQuery,
  kGraphCreate,
  kTypeCreate,
  kTypeCommit,
  kTypeFree,
  kTypeQuery,
  kWinCreate,
  kWinFree,
  kWinSync,  ///< fence, post/start/complete/wait, lock/unlock, flush, sync
  kRma,      ///< put, get, accumulate and their request forms
  kFile,     ///< open, close, set_view, seek, sync
  kFileRead,
  kFileWrite,
};

/// Coarse kind of a call, for tools that only need to know whether it
/// moves point-to-point data, synchronizes a group, or is bookkeeping.
enum class OpCategory : uint8_t {
  kMarker,
  kEnvironment,  ///< Init, Finalize, Abort, Pcontrol
  kSend,
  kRecv,
  kSendrecv,
  kProbe,       ///< Probe, Mprobe and their I-forms
  kPersistent,  ///< Send_init, Recv_init, Start, Startall
  kRequest,     ///< Request_free, Cancel
  kCompletion,
  kCollective,  ///< data-moving and synchronizing collectives, neighbourhood ones
  kCommManagement,
  kTopology,
  kDatatype,
  kOneSided,
  kIo,
};

/// How data flows in a collective (Scalasca's wait-state classes build on
/// this). Communicator-creating calls are N×N: every member learns every
/// other's arguments. MPI-IO collectives are not classified here (kNone).
enum class CollectiveShape : uint8_t {
  kNone,      ///< not a collective
  kOneToN,    ///< Bcast, Scatter, Scatterv
  kNToOne,    ///< Reduce, Gather, Gatherv
  kNToN,      ///< Allreduce, Allgather(v), Alltoall(v,w), Reduce_scatter(_block), comm creation
  kBarrier,   ///< Barrier, Ibarrier
  kScan,      ///< Scan, Exscan: rank i depends on ranks below it
  kNeighbor,  ///< neighbourhood collectives: each rank with its topology neighbours
};

/// Which member of its family a call is.
enum class OpVariant : uint8_t {
  kPlain,
  kBuffered,
  kSynchronous,
  kReady,  ///< send modes
  kWait,
  kWaitall,
  kWaitany,
  kWaitsome,
  kTest,
  kTestall,
  kTestany,
  kTestsome,    ///< completions
  kLegacy,      ///< names of no MPI-3 function (MPI-1 names removed in MPI-3, and
                ///< short forms of MPI_Type_create_*): the recorder never records them
  kCollective,  ///< MPI-IO calls that are collective over the file's communicator
};

/// Point-to-point traffic and the calls that manage its requests: what a
/// lossy filter may drop and what the wait-state analysis books as
/// point-to-point time.
constexpr bool is_point_to_point(OpCategory c) {
  switch (c) {
    case OpCategory::kSend:
    case OpCategory::kRecv:
    case OpCategory::kSendrecv:
    case OpCategory::kProbe:
    case OpCategory::kPersistent:
    case OpCategory::kRequest:
    case OpCategory::kCompletion:
      return true;
    default:
      return false;
  }
}

struct OpTraits {
  OpFamily family = OpFamily::kMarker;
  OpCategory category = OpCategory::kMarker;
  CollectiveShape shape = CollectiveShape::kNone;
  /// Returns at once: I-variants, persistent inits, Iprobe/Improbe. (Which
  /// calls create requests is OpTable::makes_request.)
  bool nonblocking = false;
  OpVariant variant = OpVariant::kPlain;

  bool collective() const { return shape != CollectiveShape::kNone; }
  /// Moves point-to-point data or handles its requests (send, receive,
  /// probe, persistent, request and completion calls).
  bool point_to_point() const { return is_point_to_point(category); }
};

/// The traits of an operation id. Throws std::out_of_range for an id
/// OpTable does not know.
const OpTraits& op_traits(OpId id);

/// Short lower-case names, for messages and tests (`send`, `1-to-N`, ...).
std::string_view to_string(OpCategory c);
std::string_view to_string(CollectiveShape s);

}  // namespace tracefold
