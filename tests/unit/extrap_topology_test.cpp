// Topology identification on synthetic adjacency data: the +-1 neighbours
// of every rank on row-major grids, periodic or not.
#include <gtest/gtest.h>

#include "../../src/extrap/internal.hpp"  // plausible_grid
#include "tracefold/extrap/topology.hpp"

using namespace tracefold::extrap;

namespace {

// Relative endpoints of a nearest-neighbour stencil on `sizes` (fastest
// first); a dimension that is not periodic has no neighbour past its edge.
std::vector<std::vector<int64_t>> stencil(const std::vector<int64_t>& sizes,
                                          const std::vector<bool>& periodic) {
  int64_t p = 1;
  for (auto s : sizes) p *= s;
  std::vector<std::vector<int64_t>> out(static_cast<std::size_t>(p));
  for (int64_t r = 0; r < p; ++r) {
    int64_t stride = 1, rest = r;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const int64_t s = sizes[i], x = rest % s;
      rest /= s;
      for (int dir : {-1, 1}) {
        int64_t nx = x + dir;
        if (nx < 0 || nx >= s) {
          if (!periodic[i]) continue;
          nx = (nx + s) % s;
        }
        const int64_t q = r + (nx - x) * stride;
        out[static_cast<std::size_t>(r)].push_back(((q - r) % p + p) % p);
      }
      stride *= s;
    }
  }
  return out;
}

void expect_detects(const std::vector<int64_t>& sizes, const std::vector<bool>& periodic) {
  SCOPED_TRACE((Topology{sizes, periodic}.to_string()));
  const TopologyDetection d = detect_topology(stencil(sizes, periodic));
  EXPECT_EQ(d.topology.sizes, sizes);
  EXPECT_TRUE(d.alternatives.empty());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    // A wrap over a size of 2 looks like a plain neighbour.
    if (sizes[i] > 2) {
      EXPECT_EQ(d.topology.periodic[i], periodic[i]) << "dimension " << i;
    }
  }
  // The critical nodes are the grid's corners.
  std::vector<int64_t> corners;
  const int dims = static_cast<int>(sizes.size());
  for (int c = 0; c < (1 << dims); ++c) {
    int64_t rank = 0, stride = 1;
    for (int i = 0; i < dims; ++i) {
      if (c & (1 << i)) rank += (sizes[static_cast<std::size_t>(i)] - 1) * stride;
      stride *= sizes[static_cast<std::size_t>(i)];
    }
    corners.push_back(rank);
  }
  std::sort(corners.begin(), corners.end());
  EXPECT_EQ(d.critical, corners);
}

}  // namespace

TEST(ExtrapTopology, OneDimensional) {
  // A ring: every rank has the same pattern, the simplest grid explains it.
  TopologyDetection d = detect_topology(stencil({8}, {true}));
  EXPECT_EQ(d.topology.sizes, (std::vector<int64_t>{8}));
  EXPECT_EQ(d.groups, 1);
  EXPECT_EQ(d.critical, (std::vector<int64_t>{0, 7}));
  // A chain: first, inner and last rank differ.
  d = detect_topology(stencil({7}, {false}));
  EXPECT_EQ(d.topology.sizes, (std::vector<int64_t>{7}));
  EXPECT_EQ(d.groups, 3);
  EXPECT_EQ(d.group_of, (std::vector<int32_t>{0, 1, 1, 1, 1, 1, 2}));
  EXPECT_FALSE(d.topology.periodic[0]);
}

TEST(ExtrapTopology, TwoDimensionalUnevenSizes) {
  expect_detects({6, 4}, {false, false});  // 4x6 in MPI order
  expect_detects({6, 4}, {true, true});
  expect_detects({4, 6}, {true, false});
  expect_detects({3, 3}, {false, false});
  expect_detects({5, 2}, {true, true});
  // Groups of a non-periodic 4x6 grid: corners, edges and interior, nine in all.
  const TopologyDetection d = detect_topology(stencil({6, 4}, {false, false}));
  EXPECT_EQ(d.groups, 9);
  // Row-major scan: row 0 is A B B B B C, rows 1-2 D E E E E F, row 3 G H H H H I.
  EXPECT_EQ(d.group_of[0], 0);
  EXPECT_EQ(d.group_of[1], 1);
  EXPECT_EQ(d.group_of[4], 1);
  EXPECT_EQ(d.group_of[5], 2);
  EXPECT_EQ(d.group_of[6], 3);
  EXPECT_EQ(d.group_of[13], 4);
  EXPECT_EQ(d.group_of[23], 8);
}

TEST(ExtrapTopology, ThreeDimensionalUnevenSizes) {
  expect_detects({7, 5, 3}, {false, false, false});  // 3x5x7 in MPI order
  expect_detects({7, 5, 3}, {true, true, true});
  expect_detects({3, 5, 7}, {false, true, false});
  expect_detects({4, 4, 4}, {true, true, true});
}

TEST(ExtrapTopology, CellsAndRanklists) {
  const Topology t{{6, 4}, {false, false}};
  EXPECT_EQ(cell_count(t), 9);
  EXPECT_EQ(cell_of(t, 0), 0);
  EXPECT_EQ(cell_of(t, 7), 1 + 3 * 1);
  EXPECT_EQ(cell_of(t, 23), 2 + 3 * 2);
  EXPECT_EQ(cell_ranks(t, 4).to_string(), "<2 7 2 6 4 1>");  // the 2x4 interior
  EXPECT_EQ(cell_ranks(t, 2).to_string(), "<0 5>");
  EXPECT_EQ(cell_name(t, 5), "x:last y:mid");
  // A size of 2 has no in-between class.
  EXPECT_TRUE(cell_ranks(Topology{{2, 3}, {}}, 1).empty());
}

TEST(ExtrapTopology, ParseAndPrintInMpiOrder) {
  const Topology t = Topology::parse("3x5x7");
  EXPECT_EQ(t.sizes, (std::vector<int64_t>{7, 5, 3}));
  EXPECT_EQ(t.to_string(), "3x5x7");
  EXPECT_THROW(Topology::parse("3x"), std::invalid_argument);
  EXPECT_THROW(Topology::parse("2x2x2x2"), std::invalid_argument);
  EXPECT_THROW(Topology::parse("0x4"), std::invalid_argument);
}

TEST(ExtrapTopology, DimsCreateMatchesOpenMpi) {
  // Values printed by Open MPI 4.1's MPI_Dims_create (MPI order).
  EXPECT_EQ(dims_create(12, 2), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(dims_create(24, 2), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(dims_create(50, 2), (std::vector<int64_t>{5, 10}));
  EXPECT_EQ(dims_create(36, 2), (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(dims_create(7, 2), (std::vector<int64_t>{1, 7}));
  EXPECT_EQ(dims_create(64, 3), (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(dims_create(12, 3), (std::vector<int64_t>{2, 2, 3}));
}

TEST(ExtrapTopology, NoGridExplainsAPermutation) {
  // Rank r talks to r+1 for even r and r+3 for odd r, on 7 ranks: no grid
  // up to 3-D has cells of one pattern each (7 is prime, 1-D fails).
  std::vector<std::vector<int64_t>> e(7);
  for (int r = 0; r < 7; ++r) e[static_cast<std::size_t>(r)] = {r % 2 ? 3 : 1};
  EXPECT_THROW(detect_topology(e), std::runtime_error);
}

TEST(ExtrapTopology, FewestDimensionsUnlessOtherInputsHaveMore) {
  // A multipartition on 2x2 (x, y and diagonal partners) or a code on
  // 2x2x2 whose every rank has the same partners modulo P: one pattern,
  // which a ring of 4 (8) explains as well as the grid.
  const auto alike = [](int64_t p, std::vector<int64_t> partners) {
    return std::vector<std::vector<int64_t>>(static_cast<std::size_t>(p), partners);
  };
  EXPECT_EQ(detect_topology(alike(4, {1, 2, 3})).topology.sizes, (std::vector<int64_t>{4}));
  EXPECT_EQ(detect_topology(alike(4, {1, 2, 3}), 2).topology.sizes, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(detect_topology(alike(8, {1, 2, 4})).topology.sizes, (std::vector<int64_t>{8}));
  const TopologyDetection d = detect_topology(alike(8, {1, 2, 4}), 3);
  EXPECT_EQ(d.topology.sizes, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(d.critical.size(), 8u);
  // Every cell of a grid with sides of 2 or 3 holds one rank, so such a
  // grid explains any pattern: the other inputs decide. A count with no
  // such factorization stays an error (7 ranks in 2-D).
  std::vector<std::vector<int64_t>> seven(7, std::vector<int64_t>{1});
  EXPECT_EQ(detect_topology(seven).topology.sizes, (std::vector<int64_t>{7}));
  EXPECT_THROW(detect_topology(seven, 2), std::runtime_error);
}

TEST(ExtrapTopology, GridRulesIncludeLargestFastest) {
  const auto& rules = grid_rules();
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].sizes(16, 2), (std::vector<int64_t>{4, 4}));
  EXPECT_TRUE(rules[0].sizes(8, 2).empty());
  EXPECT_EQ(rules[1].sizes(8, 2), (std::vector<int64_t>{2, 4}));
  // NPB LU: 2^k ranks in 2^ceil(k/2) columns (fastest) of 2^floor(k/2) rows.
  for (int k = 2; k <= 12; ++k) {
    const int64_t cols = int64_t{1} << ((k + 1) / 2), rows = (int64_t{1} << k) / cols;
    EXPECT_EQ(rules[2].sizes(int64_t{1} << k, 2), (std::vector<int64_t>{cols, rows})) << k;
  }
  EXPECT_EQ(rules[2].sizes(16, 3), (std::vector<int64_t>{4, 2, 2}));
}

// The refusal's grid (no grid explains the peers): the one whose partner
// steps are fewest, so a 2-D program is shown on its 2-D grid, not on
// the 3-D grid whose smaller parts happen to mix fewer ranks.
TEST(ExtrapTopology, RefusalShowsTheProgramsOwnGrid) {
  using tracefold::extrap::detail::plausible_grid;
  EXPECT_EQ(plausible_grid(stencil({4, 4}, {true, true})).topo.sizes, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(plausible_grid(stencil({2, 2, 4}, {false, false, false})).topo.sizes,
            (std::vector<int64_t>{2, 2, 4}));
  EXPECT_EQ(plausible_grid(stencil({16}, {false})).topo.sizes, (std::vector<int64_t>{16}));
  const auto lu = plausible_grid(stencil({4, 2}, {false, false}));
  EXPECT_EQ(lu.topo.sizes, (std::vector<int64_t>{4, 2}));
  EXPECT_NE(lu.rule.find("largest fastest"), std::string::npos) << lu.rule;
}
