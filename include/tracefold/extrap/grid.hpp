// The pieces of extrapolation other generators build on (the parametric
// benchmark generator fits the same per-cell values as `extrapolate`):
// reading a trace's ranks as cells of a row-major grid, and matching the
// nodes of traces recorded at different rank counts (seed 000, 3.2.1-3.2.3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/topology.hpp"
#include "tracefold/trace.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold::extrap {

/// Per rank, the relative endpoints (peer - rank mod P) of its
/// point-to-point calls on the world communicator (fields peer and rpeer):
/// what detect_topology reads. With `world_like`, calls on a communicator
/// of `trace` that holds every rank in world order (a non-reordering
/// MPI_Cart_create or MPI_Comm_dup of the world) count as well, since
/// their relative peers are the world's.
std::vector<std::vector<int64_t>> relative_endpoints(const Trace& trace, bool world_like = false);

/// Whether communicator `id` of `trace` is one group holding every rank of
/// the world in world order (the world itself included).
bool world_like_comm(const Trace& trace, int64_t id);

/// The grid of a recorded MPI_Cart_create (fields `dims`, `periods`).
struct RecordedCart {
  /// Sizes fastest first (MPI's dims reversed: the last Cartesian
  /// coordinate varies fastest in rank order), dimensions of 1 left out,
  /// and their periods.
  Topology topology;
  /// For each dimension of `topology`, its index in the call's dims array.
  std::vector<int> mpi_index;
  /// The call, for messages (`node 3 (MPI_Cart_create at ...)`).
  std::string node;
};

/// The grid of the MPI_Cart_create calls on the world of `trace` whose dims
/// hold every rank (nullopt when there is none). Throws ExtrapError naming
/// the node and field when such calls disagree or their values are not a
/// grid.
std::optional<RecordedCart> recorded_cart(const Trace& trace, const std::string& name);

/// For each input, the indexes of its nodes in aligned order: position k
/// is the same call in every input. Throws ExtrapError naming the first
/// node that has no counterpart.
std::vector<std::vector<std::size_t>> align_nodes(const std::vector<ExtrapInput>& inputs);

/// `MPI_Irecv at sweep (sweep.c:41)`, for messages: the call site as
/// `tracefold print` shows it (site_label, modules.hpp), or the raw
/// frames (`app+0x161f`) when the trace has no symbols for it.
std::string describe_node(const Trace& trace, const Node& node);

/// One input seen through its grid.
struct GridInput {
  const ExtrapInput* input = nullptr;
  Topology topo;
  /// Cell of every rank.
  std::vector<int> cell_of_rank;
  /// The lowest rank of every cell, or -1 for an empty cell.
  std::vector<int32_t> cell_rep;
  /// The highest rank of every cell, or -1.
  std::vector<int32_t> cell_last;
};

/// `input` on the grid `topo` (which must hold its rank count). The result
/// points to `input`, which must outlive it.
GridInput make_grid_input(const ExtrapInput& input, const Topology& topo);

/// The sequence every cell's ranks have in `e` (nullptr: the cell's ranks
/// have none, or the cell is empty). Throws ExtrapError naming `what` when
/// the ranks of one cell differ.
std::vector<const ValueSeq*> cell_sequences(const GridInput& g, const Elastic& e,
                                            const std::string& what);

}  // namespace tracefold::extrap
