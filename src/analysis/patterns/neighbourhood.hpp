// Neighbourhood collectives (MPI_Neighbor_alltoall and its kin) as the
// messages they are: a communicator's process topology, as the trace
// recorded its creation, says whom each rank's call sends to, so a halo
// routed by MPI is fitted as a halo (neighbourhood.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns::detail {

class Neighbourhoods {
 public:
  /// Notes event `ev` of walked rank `rank`: the topology a creation call
  /// (`MPI_Cart_create`, `MPI_Graph_create`,
  /// `MPI_Dist_graph_create_adjacent`) gave its new communicator, or a
  /// neighbourhood collective's bytes per destination.
  void note(const Event& ev, int32_t rank, const CommTable& comms);

  /// Gives each global pattern of `result` whose per-process patterns make
  /// neighbourhood collectives on communicators with a recorded topology
  /// the edges and channels of those calls: each member sends to its
  /// topology's destinations (MPI_PROC_NULL left out), as many messages as
  /// it made calls, on that communicator. `walked_as(r)`: the rank walked
  /// for world rank r (the first of its class). Returns per global pattern
  /// the communicators that gave it edges, in ascending order, with their
  /// kind of topology (`cartesian`, `graph`, `distributed graph`) for the
  /// shape's `topology` parameter.
  std::vector<std::vector<std::pair<int64_t, std::string>>> add_edges(
      Result& result, const CommTable& comms, std::size_t world,
      const std::function<int32_t(int32_t)>& walked_as) const;

  /// `g` as one pattern per communicator of `comms` when its messages are
  /// all neighbourhood collectives on two or more of them (a loop that
  /// makes its halo on a grid and its ring on a graph): each part has that
  /// communicator's channels and shares g's per-process patterns, so each
  /// topology's edges get a shape of their own. Otherwise `{g}`.
  static std::vector<GlobalPattern> by_topology(GlobalPattern g, const std::vector<int64_t>& comms);

 private:
  struct Topology {
    enum class Kind : uint8_t { kCartesian, kGraph, kDistGraph } kind = Kind::kCartesian;
    std::vector<int64_t> dims, periods;  // Cartesian
    std::vector<int64_t> index, edges;   // graph: the whole graph, every rank's
    // Distributed graph: per walked rank, its destinations as offsets from
    // its rank in the communicator (the recorder stores them so).
    std::map<int32_t, std::vector<int64_t>> destinations;
  };
  // Destinations of the rank at `me` of `size` in `t`, in MPI's neighbour
  // order (Cartesian: -1 then +1 per dimension; -1: MPI_PROC_NULL).
  static std::vector<int64_t> destinations(const Topology& t, int32_t walked, int64_t me,
                                           int64_t size);
  // MPI_Cart_sub of a grid noted before: the sub-grid of the dimensions kept.
  void note_cart_sub(int64_t parent, int64_t id, int32_t rank, const CommTable& comms);
  struct Use {
    std::size_t calls = 0;
    std::vector<uint64_t> bytes;  // per destination, over all calls
  };
  std::map<int64_t, Topology> topologies_;
  std::map<std::pair<int32_t, int64_t>, Use> uses_;  // (walked rank, comm)
};

}  // namespace tracefold::patterns::detail
