// The dictionary that compact bodies of version 6 are compressed against.
// Small traces are mostly names (operations, fields, modules), which zstd
// cannot shorten in a few hundred bytes on its own; with them in a
// dictionary a name that was written out costs a short reference.
//
// FROZEN: the bytes must stay exactly as they are for as long as version 6
// is read. A new name or a better order is a new format version. Names are
// stored as the body stores strings (a length byte, then the name), least
// used first, as zstd reaches the dictionary's end with the shortest
// offsets. Taken from ops.def and the built-in fields of 2026-11-25 and
// the libraries seen in the test programs' call sites.
#include <zstd.h>

#include <stdexcept>
#include <string>

#include "trace_compact_codec.hpp"

namespace tracefold::compact {

namespace {

constexpr std::string_view kNames[] = {
    "MPI_Abort",
    "MPI_Bsend",
    "MPI_Rsend",
    "MPI_Probe",
    "MPI_Mprobe",
    "MPI_Imrecv",
    "MPI_Ibsend",
    "MPI_Issend",
    "MPI_Irsend",
    "MPI_Bsend_init",
    "MPI_Ssend_init",
    "MPI_Rsend_init",
    "MPI_Scatterv",
    "MPI_Reduce_scatter_block",
    "MPI_Exscan",
    "MPI_Ireduce",
    "MPI_Igather",
    "MPI_Igatherv",
    "MPI_Iscatter",
    "MPI_Iscatterv",
    "MPI_Iallgather",
    "MPI_Iallgatherv",
    "MPI_Ialltoall",
    "MPI_Ialltoallv",
    "MPI_Ialltoallw",
    "MPI_Ireduce_scatter",
    "MPI_Ireduce_scatter_block",
    "MPI_Iscan",
    "MPI_Iexscan",
    "MPI_Neighbor_alltoallw",
    "MPI_Ineighbor_allgatherv",
    "MPI_Ineighbor_alltoallv",
    "MPI_Comm_idup",
    "MPI_Comm_dup_with_info",
    "MPI_Comm_split_type",
    "MPI_Comm_create",
    "MPI_Comm_create_group",
    "MPI_Comm_group",
    "MPI_Group_incl",
    "MPI_Group_excl",
    "MPI_Group_range_incl",
    "MPI_Group_range_excl",
    "MPI_Group_union",
    "MPI_Group_intersection",
    "MPI_Group_difference",
    "MPI_Group_free",
    "MPI_Cart_rank",
    "MPI_Type_hvector",
    "MPI_Type_hindexed",
    "MPI_Type_indexed_block",
    "MPI_Type_hindexed_block",
    "MPI_Type_create_f90_complex",
    "MPI_Type_create_f90_integer",
    "MPI_Type_get_extent_x",
    "MPI_Type_get_true_extent",
    "MPI_Type_get_true_extent_x",
    "MPI_Type_size_x",
    "MPI_Win_create",
    "MPI_Win_allocate",
    "MPI_Win_allocate_shared",
    "MPI_Win_create_dynamic",
    "MPI_Win_free",
    "MPI_Win_fence",
    "MPI_Win_start",
    "MPI_Win_complete",
    "MPI_Win_post",
    "MPI_Win_wait",
    "MPI_Win_lock",
    "MPI_Win_unlock",
    "MPI_Win_lock_all",
    "MPI_Win_unlock_all",
    "MPI_Win_flush",
    "MPI_Win_flush_all",
    "MPI_Win_flush_local",
    "MPI_Win_sync",
    "MPI_Put",
    "MPI_Get",
    "MPI_Accumulate",
    "MPI_Get_accumulate",
    "MPI_Fetch_and_op",
    "MPI_Compare_and_swap",
    "MPI_Rput",
    "MPI_Rget",
    "MPI_Raccumulate",
    "MPI_Rget_accumulate",
    "MPI_File_open",
    "MPI_File_close",
    "MPI_File_set_view",
    "MPI_File_read",
    "MPI_File_read_all",
    "MPI_File_read_at",
    "MPI_File_read_at_all",
    "MPI_File_write",
    "MPI_File_write_all",
    "MPI_File_write_at",
    "MPI_File_write_at_all",
    "MPI_File_iread",
    "MPI_File_iwrite",
    "MPI_File_iread_at",
    "MPI_File_iwrite_at",
    "MPI_File_seek",
    "MPI_File_sync",
    "MPI_Improbe",
    "MPI_Mrecv",
    "MPI_Send_init",
    "MPI_Startall",
    "MPI_Cancel",
    "MPI_Gatherv",
    "MPI_Scatter",
    "MPI_Allgatherv",
    "MPI_Alltoallw",
    "MPI_Reduce_scatter",
    "MPI_Iallreduce",
    "MPI_Neighbor_allgatherv",
    "MPI_Neighbor_alltoallv",
    "MPI_Ineighbor_allgather",
    "MPI_Ineighbor_alltoall",
    "MPI_Ineighbor_alltoallw",
    "MPI_Intercomm_create",
    "MPI_Intercomm_merge",
    "MPI_Cart_sub",
    "MPI_Cart_coords",
    "MPI_Graph_create",
    "MPI_Type_indexed",
    "MPI_Type_create_subarray",
    "MPI_Type_create_darray",
    "MPI_Type_create_hvector",
    "MPI_Type_create_indexed_block",
    "MPI_Type_create_hindexed_block",
    "MPI_Type_create_f90_real",
    "MPI_Init_thread",
    "MPI_Pcontrol",
    "MPI_Ssend",
    "MPI_Sendrecv_replace",
    "MPI_Recv_init",
    "MPI_Request_free",
    "MPI_Testany",
    "MPI_Gather",
    "MPI_Alltoallv",
    "MPI_Scan",
    "MPI_Ibarrier",
    "MPI_Ibcast",
    "MPI_Neighbor_alltoall",
    "MPI_Dist_graph_create",
    "MPI_Dist_graph_create_adjacent",
    "MPI_Type_contiguous",
    "MPI_Type_create_struct",
    "MPI_Type_create_resized",
    "MPI_Type_dup",
    "MPI_Type_create_hindexed",
    "MPI_Type_get_envelope",
    "MPI_Type_get_contents",
    "MPI_Type_get_extent",
    "MPI_Type_size",
    "MPI_Start",
    "MPI_Waitany",
    "MPI_Testsome",
    "MPI_Allgather",
    "MPI_Neighbor_allgather",
    "MPI_Cart_create",
    "MPI_Cart_shift",
    "MPI_Type_vector",
    "MPI_Iprobe",
    "MPI_Waitsome",
    "MPI_Testall",
    "MPI_Comm_dup",
    "MPI_Comm_split",
    "MPI_Type_commit",
    "MPI_Type_free",
    "MPI_Alltoall",
    "MPI_Bcast",
    "MPI_Comm_free",
    "MPI_Reduce",
    "MPI_Recv",
    "MPI_Test",
    "MPI_Barrier",
    "MPI_Sendrecv",
    "MPI_Isend",
    "MPI_Waitall",
    "MPI_Irecv",
    "MPI_Send",
    "MPI_Wait",
    "MPI_Allreduce",
    "MPI_Init",
    "MPI_Finalize",
    "displs",
    "rdispls",
    "req",
    "rcounts",
    "mtags",
    "color",
    "key",
    "srcs",
    "counts",
    "mtag",
    "flag",
    "newcomm",
    "rpeer",
    "src",
    "root",
    "rdtype",
    "rdsize",
    "rcount",
    "links",
    "redop",
    "peer",
    "tag",
    "dsize",
    "comm",
    "count",
    "dtype",
    "libgfortran.so.5",
    "/usr/lib/x86_64-linux-gnu/libgfortran.so.5",
    "libmpi_mpifh.so.40",
    "/usr/lib/x86_64-linux-gnu/libmpi_mpifh.so.40",
    "libmpi.so.40",
    "/usr/lib/x86_64-linux-gnu/libmpi.so.40",
    "libstdc++.so.6",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
};

}  // namespace

std::string_view dictionary() {
  static const std::string bytes = [] {
    std::string b;
    for (std::string_view n : kNames) {
      b += static_cast<char>(n.size());
      b += n;
    }
    return b;
  }();
  return bytes;
}

std::string compress_body(std::string_view body, int level) {
  struct Ctx {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ~Ctx() { ZSTD_freeCCtx(c); }
  } ctx;
  const std::string_view dict = dictionary();
  std::string out(ZSTD_compressBound(body.size()), '\0');
  std::size_t n = ZSTD_CCtx_setParameter(ctx.c, ZSTD_c_compressionLevel, level);
  if (!ZSTD_isError(n)) n = ZSTD_CCtx_refPrefix(ctx.c, dict.data(), dict.size());
  if (!ZSTD_isError(n)) n = ZSTD_compress2(ctx.c, out.data(), out.size(), body.data(), body.size());
  if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

}  // namespace tracefold::compact
