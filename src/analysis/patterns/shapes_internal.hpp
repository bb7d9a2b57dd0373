// Shared by the shape fitters (shapes.cpp, shapes_fits.cpp, shapes_grid.cpp,
// shapes_multilevel.cpp): edge sets, their comparison with a shape's
// expected edges, and the fits classify_edges tries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns::detail {

using Edge = std::pair<int32_t, int32_t>;
/// Sorted, each edge once.
using EdgeSet = std::vector<Edge>;

/// `s` with its match against `observed` filled in: matched, quality, and
/// the missing and extra edges where the shape may be named (quality at
/// least kMinQuality, or one edge off; else those lists stay empty).
/// `expected` need not be sorted.
Shape scored(Shape s, const EdgeSet& observed, EdgeSet expected);

/// Whether fit `a` beats `b`: a higher quality; equal qualities keep `b`
/// (the fitters run in order of preference).
bool better(const std::optional<Shape>& a, const std::optional<Shape>& b);

/// Whether `s` explains every edge and expects no other: no fit scores
/// more, and a later fit must score more to win, so the fits after it are
/// not tried (each builds and sorts up to hundreds of thousands of edges
/// at 16,384 ranks).
inline bool perfect(const std::optional<Shape>& s) {
  return s && s->quality >= 1.0;
}

/// Per rank below `p`, how many edges leave it.
std::vector<std::size_t> out_degrees(const EdgeSet& edges, int32_t p);

/// The shape of `g`'s edges among ranks below `p`: the best acceptable fit
/// in order of preference, else irregular or unclassified. `levels`: the
/// multilevel fit may name it (not while fitting one level of it).
Shape classify_edges(const GlobalPattern& g, int32_t p, bool levels);

/// The fits on plain edge sets (shapes_fits.cpp), each nullopt when it
/// does not apply: a ring or shift by the most common distance; that shift
/// as a pipeline (blocking receives before the sends on) or that ring as a
/// ring collective (2 (p - 1) messages a rank and occurrence); a butterfly;
/// binomial, binary or linear trees; master-worker; pairwise partners
/// (a transpose among them); all-to-all and incast on the ranks the edges
/// touch.
std::optional<Shape> fit_ring(const EdgeSet& edges, int32_t p);
std::optional<Shape> as_pipeline(const GlobalPattern& g, const Shape& shift);
std::optional<Shape> as_ring_collective(const GlobalPattern& g, const Shape& ring, int32_t p);
std::optional<Shape> fit_butterfly(const EdgeSet& edges, int32_t p);
std::optional<Shape> fit_tree(const EdgeSet& edges, int32_t p);
std::optional<Shape> fit_master_worker(const GlobalPattern& g, const EdgeSet& edges, int32_t p);
std::optional<Shape> fit_pairwise(const EdgeSet& edges, int32_t p);
std::optional<Shape> fit_alltoall(const EdgeSet& edges, int32_t p);
std::optional<Shape> fit_incast(const EdgeSet& edges, int32_t p);

/// The best halo exchange on a 1-, 2- or 3-D grid of `ranks` ranks (grids
/// from the extrapolation's topology detection and MPI_Dims_create's
/// layouts), and the grid's sizes (fastest first) for the wavefront fit.
std::optional<Shape> fit_halo(const GlobalPattern& g, const EdgeSet& edges, int32_t ranks,
                              std::vector<int64_t>& grid);

/// A wavefront on `grid` (2-D or 3-D, not periodic), read from the ranks'
/// hop orders; nullopt when the orders are not those of sweeps.
std::optional<Shape> fit_wavefront(const GlobalPattern& g, const EdgeSet& edges,
                                   const std::vector<int64_t>& grid);

/// One shape repeated over levels: the channels split by message size into
/// two or more levels, largest first, each of which alone is that shape
/// (the same neighbour set), on the same edges as the level before or on
/// fewer ranks (renumbered in order, so every other rank of a grid is the
/// coarser grid): a multigrid V-cycle. The fit is the levels' together.
/// nullopt when there is one level or they differ.
std::optional<Shape> fit_multilevel(const GlobalPattern& g, int32_t ranks);

}  // namespace tracefold::patterns::detail
