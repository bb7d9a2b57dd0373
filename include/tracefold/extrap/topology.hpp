// Topology identification for extrapolation (seed 000, 3.2.1).
//
// Ranks are assumed to be numbered row-major on a 1-, 2- or 3-D grid, the
// fastest dimension first: rank = x1 + S1*(x2 + S2*x3). Each rank's
// communication endpoints, relative to itself (the trace's encoding), form
// its adjacency pattern; ranks with equal patterns form a group. In a mesh
// or torus a rank's group depends only on where it sits relative to the
// edges of the grid: in each dimension at the first coordinate, at the
// last, or in between. Those boundary classes split the grid into up to
// 3^d boxes (cells): corners, edges, faces, interior.
//
// Detection tries every factorization of the rank count into d = 1, 2, 3
// sizes (each at least 2) and keeps those under which every cell holds a
// single group; the fewest dimensions win, then the most balanced sizes.
// This finds the same sizes as the seed's row-major scan for critical nodes
// but is a check rather than a scan, so uneven sizes (4x6, 3x5x7) and tori
// whose wrap-around hides a boundary need no special case.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tracefold/ranklist.hpp"

namespace tracefold::extrap {

/// Most dimensions detection considers.
inline constexpr int kMaxDims = 3;

struct Topology {
  /// Dimension sizes, fastest-varying first (S1, S2, S3).
  std::vector<int64_t> sizes;
  /// Per dimension: some rank on the first coordinate talks to one on the
  /// last (a wrap-around), as far as the adjacency shows it.
  std::vector<bool> periodic;

  int dims() const { return static_cast<int>(sizes.size()); }
  /// Product of the sizes.
  int64_t ranks() const;
  /// A rank's coordinates, fastest-varying first (row-major rank order).
  std::vector<int64_t> coords(int64_t rank) const;
  /// MPI order, slowest dimension first, as MPI_Dims_create and
  /// MPI_Cart_create take them: sizes {6, 4} print `4x6`.
  std::string to_string() const;
  /// Parses `AxB[xC]` (MPI order, slowest first) into sizes fastest first.
  /// Throws std::invalid_argument naming the text.
  static Topology parse(const std::string& text);
};

/// Boundary class of one coordinate: 0 first, 1 in between, 2 last.
int boundary_class(int64_t coord, int64_t size);
/// Number of cells of a topology: 3^dims.
int cell_count(const Topology& topo);
/// Cell index (sum of class_i * 3^(i-1)) of a rank.
int cell_of(const Topology& topo, int64_t rank);
/// The ranks of one cell (empty when a size is too small to have it, e.g.
/// no in-between class when a size is 2).
Ranklist cell_ranks(const Topology& topo, int cell);
/// `x:first y:mid`, for messages.
std::string cell_name(const Topology& topo, int cell);

struct TopologyDetection {
  Topology topology;
  /// Group of each rank: ranks with equal adjacency patterns share a group;
  /// groups are numbered in order of their lowest rank.
  std::vector<int32_t> group_of;
  int32_t groups = 0;
  /// The grid's corner ranks (2^d of them, ascending): the critical nodes.
  std::vector<int64_t> critical;
  /// Other factorizations that explained the groups as well (empty when
  /// the answer was unique), as to_string() texts.
  std::vector<std::string> alternatives;
};

/// Detects the topology of `endpoints[r]`: the relative endpoints (peer -
/// r mod P) rank r communicates with, in any order, duplicates allowed.
/// P = endpoints.size() >= 1. Throws std::runtime_error when no grid of up
/// to kMaxDims dimensions explains the groups. Grids of fewer than
/// `min_dims` dimensions are not tried: a 2x2 grid on which every rank has
/// the same partners modulo P (a periodic or multipartition code) is also
/// explained by the 1-D grid of 4, and only other inputs can say it is 2-D.
TopologyDetection detect_topology(const std::vector<std::vector<int64_t>>& endpoints,
                                  int min_dims = 1);

/// The grid's corner ranks, ascending, without repeats: the critical nodes.
std::vector<int64_t> corner_ranks(const Topology& topo);

/// Whether every cell of `topo` (which must hold the detection's ranks)
/// holds a single endpoint group of `det`: the test detection applies to
/// each factorization, here for a grid given from elsewhere (a recorded
/// MPI_Cart_create).
bool grid_explains(const TopologyDetection& det, const Topology& topo);

/// Sizes MPI_Dims_create(n, dims) would choose, fastest first (MPI's
/// balanced factorization: non-increasing in MPI order).
std::vector<int64_t> dims_create(int64_t n, int dims);

/// A rule that gives a grid's sizes (fastest first) for a rank count, as
/// programs lay out their processes; the target grid follows the rule every
/// input's grid follows (choose_target in extrapolate.cpp).
struct GridRule {
  std::string name;
  /// The sizes for `n` ranks in `dims` dimensions; empty when the rule has
  /// no grid for n (equal sides for a count that is no square).
  std::function<std::vector<int64_t>(int64_t n, int dims)> sizes;
};

/// The rules known, most specific first: equal sides; MPI_Dims_create's
/// sizes, smallest fastest; the same sizes largest fastest (NPB LU's and
/// SP's layout of 2^k ranks: 2^ceil(k/2) columns of 2^floor(k/2) rows).
const std::vector<GridRule>& grid_rules();

}  // namespace tracefold::extrap
