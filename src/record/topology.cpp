// Process topologies: what MPI_Cart_create, MPI_Graph_create and
// MPI_Dist_graph_create_adjacent were given (and the neighbours
// MPI_Dist_graph_create made), so replay and benchmark
// generation build the same topology and its neighbourhood collectives have
// the same partners, and extrapolation can cross-check a detected grid.

#include <algorithm>
#include <vector>

#include "recorder.hpp"

namespace tracefold::record {

namespace {
FieldId list_field(const char* n) {
  return FieldTable::intern(n, FieldKind::kList);
}
}  // namespace

const FieldId kDims = list_field("dims"), kPeriods = list_field("periods"),
              kGindex = list_field("gindex"), kGedges = list_field("gedges"),
              kGsrcs = list_field("gsrcs"), kGdsts = list_field("gdsts");

void Call::flag_list(FieldId f, int n, const int* values) {
  if (!active_ || n < 0 || (n > 0 && !values)) return;
  std::vector<int64_t> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = values[i] != 0 ? 1 : 0;
  set_list(f, std::move(v));
}

void Call::relative_list(FieldId f, MPI_Comm comm, int n, const int* ranks) {
  if (!active_ || n < 0 || (n > 0 && !ranks) || comm == MPI_COMM_NULL) return;
  int me = 0, size = 1;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &size);
  std::vector<int64_t> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    // A rank outside the communicator is the application's error, which
    // MPI reports; keep what was passed rather than wrap it.
    const int r = ranks[i];
    v[static_cast<std::size_t>(i)] = r >= 0 && r < size ? (r - me + size) % size : r;
  }
  set_list(f, std::move(v));
}

void Call::dist_graph_neighbours(MPI_Comm comm, MPI_Comm graph) {
  if (!active_ || graph == MPI_COMM_NULL) return;
  int in = 0, out = 0, weighted = 0;
  if (PMPI_Dist_graph_neighbors_count(graph, &in, &out, &weighted) != MPI_SUCCESS) return;
  // Weights are not kept (as for the adjacent form); MPI still wants room
  // for them when the graph has some.
  std::vector<int> srcs(static_cast<std::size_t>(std::max(in, 1))),
      dsts(static_cast<std::size_t>(std::max(out, 1))),
      sw(static_cast<std::size_t>(std::max(in, 1))), dw(static_cast<std::size_t>(std::max(out, 1)));
  if (PMPI_Dist_graph_neighbors(graph, in, srcs.data(), weighted ? sw.data() : MPI_UNWEIGHTED, out,
                                dsts.data(), weighted ? dw.data() : MPI_UNWEIGHTED) != MPI_SUCCESS)
    return;
  // The neighbours are ranks of `graph`, which are those of `comm` unless
  // MPI reordered them (Open MPI and MPICH do not for distributed graphs).
  relative_list(kGsrcs, comm, in, srcs.data());
  relative_list(kGdsts, comm, out, dsts.data());
}

void Call::neighbour_counts(FieldId f, const int* counts, bool sources) {
  if (!active_ || !counts || comm_ == MPI_COMM_NULL) return;
  int kind = MPI_UNDEFINED, in = 0, out = 0;
  PMPI_Topo_test(comm_, &kind);
  if (kind == MPI_CART) {
    PMPI_Cartdim_get(comm_, &in);
    in = out = 2 * in;
  } else if (kind == MPI_GRAPH) {
    int me = 0;
    PMPI_Comm_rank(comm_, &me);
    PMPI_Graph_neighbors_count(comm_, me, &in);
    out = in;
  } else if (kind == MPI_DIST_GRAPH) {
    int weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm_, &in, &out, &weighted);
  } else {
    return;  // no topology: MPI refuses the call
  }
  const int n = sources ? in : out;
  set_list(f, std::vector<int64_t>(counts, counts + n));
}

}  // namespace tracefold::record
