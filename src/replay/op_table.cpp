// The operations replay performs, by kind (replay_internal.hpp).
#include "replay_internal.hpp"

namespace tracefold {

// ------------------------------------------------------------ operation table

namespace replay_detail {

namespace {
struct OpName {
  const char* name;
  Kind kind;
  bool nonblocking;
  Variant variant = Variant::kPlain;
};
// Operations replay performs. Everything else in a trace (one-sided, MPI-IO,
// intercommunicators, graph topologies) is refused before MPI starts.
constexpr OpName kOps[] = {
    {"compute", Kind::kMarker, false},
    {"enter", Kind::kMarker, false},
    {"exit", Kind::kMarker, false},
    {"MPI_Init", Kind::kInit, false},
    {"MPI_Init_thread", Kind::kInit, false},
    {"MPI_Finalize", Kind::kFinalize, false},
    {"MPI_Abort", Kind::kAbort, false},
    {"MPI_Pcontrol", Kind::kPcontrol, false},
    {"MPI_Send", Kind::kSend, false},
    {"MPI_Bsend", Kind::kSend, false, Variant::kBuffered},
    {"MPI_Ssend", Kind::kSend, false, Variant::kSynchronous},
    {"MPI_Rsend", Kind::kSend, false, Variant::kReady},
    {"MPI_Recv", Kind::kRecv, false},
    {"MPI_Sendrecv", Kind::kSendrecv, false},
    {"MPI_Sendrecv_replace", Kind::kSendrecv, false},
    {"MPI_Probe", Kind::kProbe, false},
    {"MPI_Iprobe", Kind::kProbe, true},
    {"MPI_Mprobe", Kind::kMprobe, false},
    {"MPI_Improbe", Kind::kMprobe, true},
    {"MPI_Mrecv", Kind::kMrecv, false},
    {"MPI_Imrecv", Kind::kMrecv, true},
    {"MPI_Isend", Kind::kSend, true},
    {"MPI_Ibsend", Kind::kSend, true, Variant::kBuffered},
    {"MPI_Issend", Kind::kSend, true, Variant::kSynchronous},
    {"MPI_Irsend", Kind::kSend, true, Variant::kReady},
    {"MPI_Irecv", Kind::kRecv, true},
    {"MPI_Send_init", Kind::kSendInit, true},
    {"MPI_Bsend_init", Kind::kSendInit, true, Variant::kBuffered},
    {"MPI_Ssend_init", Kind::kSendInit, true, Variant::kSynchronous},
    {"MPI_Rsend_init", Kind::kSendInit, true, Variant::kReady},
    {"MPI_Recv_init", Kind::kRecvInit, true},
    {"MPI_Start", Kind::kStart, false},
    {"MPI_Startall", Kind::kStart, false},
    {"MPI_Request_free", Kind::kRequestFree, false},
    {"MPI_Cancel", Kind::kCancel, false},
    {"MPI_Wait", Kind::kComplete, false, Variant::kWait},
    {"MPI_Waitall", Kind::kComplete, false, Variant::kWaitall},
    {"MPI_Waitany", Kind::kComplete, false, Variant::kWaitany},
    {"MPI_Waitsome", Kind::kComplete, false, Variant::kWaitsome},
    {"MPI_Test", Kind::kComplete, false, Variant::kTest},
    {"MPI_Testall", Kind::kComplete, false, Variant::kTestall},
    {"MPI_Testany", Kind::kComplete, false, Variant::kTestany},
    {"MPI_Testsome", Kind::kComplete, false, Variant::kTestsome},
    {"MPI_Barrier", Kind::kBarrier, false},
    {"MPI_Ibarrier", Kind::kBarrier, true},
    {"MPI_Bcast", Kind::kBcast, false},
    {"MPI_Ibcast", Kind::kBcast, true},
    {"MPI_Reduce", Kind::kReduce, false},
    {"MPI_Ireduce", Kind::kReduce, true},
    {"MPI_Allreduce", Kind::kAllreduce, false},
    {"MPI_Iallreduce", Kind::kAllreduce, true},
    {"MPI_Scan", Kind::kScan, false},
    {"MPI_Iscan", Kind::kScan, true},
    {"MPI_Exscan", Kind::kExscan, false},
    {"MPI_Iexscan", Kind::kExscan, true},
    {"MPI_Gather", Kind::kGather, false},
    {"MPI_Igather", Kind::kGather, true},
    {"MPI_Gatherv", Kind::kGatherv, false},
    {"MPI_Igatherv", Kind::kGatherv, true},
    {"MPI_Scatter", Kind::kScatter, false},
    {"MPI_Iscatter", Kind::kScatter, true},
    {"MPI_Scatterv", Kind::kScatterv, false},
    {"MPI_Iscatterv", Kind::kScatterv, true},
    {"MPI_Allgather", Kind::kAllgather, false},
    {"MPI_Iallgather", Kind::kAllgather, true},
    {"MPI_Allgatherv", Kind::kAllgatherv, false},
    {"MPI_Iallgatherv", Kind::kAllgatherv, true},
    {"MPI_Alltoall", Kind::kAlltoall, false},
    {"MPI_Ialltoall", Kind::kAlltoall, true},
    {"MPI_Alltoallv", Kind::kAlltoallv, false},
    {"MPI_Ialltoallv", Kind::kAlltoallv, true},
    {"MPI_Alltoallw", Kind::kAlltoallw, false},
    {"MPI_Ialltoallw", Kind::kAlltoallw, true},
    {"MPI_Reduce_scatter", Kind::kReduceScatter, false},
    {"MPI_Ireduce_scatter", Kind::kReduceScatter, true},
    {"MPI_Reduce_scatter_block", Kind::kReduceScatterBlock, false},
    {"MPI_Ireduce_scatter_block", Kind::kReduceScatterBlock, true},
    {"MPI_Comm_dup", Kind::kCommDup, false},
    {"MPI_Comm_dup_with_info", Kind::kCommDup, false},
    {"MPI_Comm_split", Kind::kCommSplit, false},
    {"MPI_Comm_split_type", Kind::kCommSplitType, false},
    {"MPI_Comm_create", Kind::kCommCreate, false},
    {"MPI_Comm_create_group", Kind::kCommCreateGroup, false},
    {"MPI_Comm_free", Kind::kCommFree, false},
    {"MPI_Cart_create", Kind::kCartCreate, false},
    {"MPI_Cart_sub", Kind::kCartSub, false},
    {"MPI_Intercomm_create", Kind::kIntercommCreate, false},
    {"MPI_Intercomm_merge", Kind::kIntercommMerge, false},
    {"MPI_Cart_shift", Kind::kCartQuery, false},
    {"MPI_Cart_coords", Kind::kCartQuery, false},
    {"MPI_Cart_rank", Kind::kCartQuery, false},
    {"MPI_Type_contiguous", Kind::kTypeCreate, false},
    {"MPI_Type_vector", Kind::kTypeCreate, false},
    {"MPI_Type_create_hvector", Kind::kTypeCreate, false},
    {"MPI_Type_indexed", Kind::kTypeCreate, false},
    {"MPI_Type_create_hindexed", Kind::kTypeCreate, false},
    {"MPI_Type_create_indexed_block", Kind::kTypeCreate, false},
    {"MPI_Type_create_hindexed_block", Kind::kTypeCreate, false},
    {"MPI_Type_create_struct", Kind::kTypeCreate, false},
    {"MPI_Type_create_subarray", Kind::kTypeCreate, false},
    {"MPI_Type_create_darray", Kind::kTypeCreate, false},
    {"MPI_Type_create_resized", Kind::kTypeCreate, false},
    {"MPI_Type_dup", Kind::kTypeCreate, false},
    {"MPI_Type_create_f90_real", Kind::kTypeCreate, false},
    {"MPI_Type_create_f90_complex", Kind::kTypeCreate, false},
    {"MPI_Type_create_f90_integer", Kind::kTypeCreate, false},
    {"MPI_Type_commit", Kind::kTypeCommit, false},
    {"MPI_Type_free", Kind::kTypeFree, false},
    {"MPI_Type_get_envelope", Kind::kTypeQuery, false},
    {"MPI_Type_get_contents", Kind::kTypeQuery, false},
    {"MPI_Type_get_extent", Kind::kTypeQuery, false},
    {"MPI_Type_get_extent_x", Kind::kTypeQuery, false},
    {"MPI_Type_get_true_extent", Kind::kTypeQuery, false},
    {"MPI_Type_get_true_extent_x", Kind::kTypeQuery, false},
    {"MPI_Type_size", Kind::kTypeQuery, false},
    {"MPI_Type_size_x", Kind::kTypeQuery, false},
};
}  // namespace

std::vector<OpInfo> op_table() {
  std::vector<OpInfo> table(OpTable::size());
  for (const OpName& o : kOps) {
    auto id = OpTable::find(o.name);
    if (!id) continue;
    table[*id] = OpInfo{o.kind, o.nonblocking, o.name, o.variant};
  }
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].kind == Kind::kUnsupported) table[i].name = OpTable::name(static_cast<OpId>(i));
  return table;
}

}  // namespace replay_detail

}  // namespace tracefold
