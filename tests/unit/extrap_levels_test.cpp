// The ranks a multigrid's coarse level keeps busy (src/extrap/levels.cpp):
// read from a synthetic 2-D V-cycle folded like a recorded one, and the
// stride laws fitted across rank counts.
#include <gtest/gtest.h>

#include <algorithm>

#include "../../src/extrap/internal.hpp"  // busy_levels, fit_stride
#include "test_util.hpp"
#include "trace_compare.hpp"
#include "tracefold/extrap/extrapolate.hpp"

using namespace tracefold;
using namespace tracefold::extrap;
using namespace tracefold::extrap::detail;

namespace {

// A periodic sx x sy grid (x fastest): every rank exchanges with its +-1
// neighbours, then the ranks at even coordinates (stride 2) with the ones
// 2 apart along each dimension that has more than one of them.
Trace vcycle(int32_t sx, int32_t sy) {
  std::vector<std::vector<Event>> ranks;
  const auto at = [&](int32_t x, int32_t y) { return ((y + sy) % sy) * sx + (x + sx) % sx; };
  for (int32_t r = 0; r < sx * sy; ++r) {
    const int32_t x = r % sx, y = r / sx;
    std::vector<Event> evs;
    auto send = [&](SiteId site, int32_t peer) {
      Event e;
      e.op = *OpTable::find("MPI_Send");
      e.site = site;
      e.set(FieldTable::peer(), peer);
      evs.push_back(e);
    };
    for (int cycle = 0; cycle < 2; ++cycle) {
      send(0, at(x + 1, y));
      send(1, at(x, y + 1));
      if (x % 2 == 0 && y % 2 == 0) {
        if (sx > 2) send(2, at(x + 2, y));
        if (sy > 2) send(3, at(x, y + 2));
      }
    }
    ranks.push_back(std::move(evs));
  }
  CommTable c;
  c.define_world(sx * sy);
  return tracefold::testing::fold_ranks(ranks, c, 4);
}

// A weak-scaling V-cycle of `levels` levels on a periodic sx x sy grid:
// level l sits on the ranks at coordinates multiples of 2^l, which send
// to the ones 2^l away along each dimension that has two or more of them,
// every level at the same four call sites, with messages of 64 >> l
// values; a fifth call ends each cycle. With `strong` (strong scaling, as
// app_mg3d's MODE 1), level l has strong[l].n points along each side and
// strong[l].deep along the third instead: stride S / n once they are fewer
// than the ranks, messages of the face's points on one rank. `edges`: a
// grid with edges instead of a periodic one, a partner beyond an edge
// MPI_PROC_NULL (kProcNull) or the call skipped (kSkip).
struct StrongLevel {
  int32_t n, deep;
};
enum Edges { kPeriodic, kProcNull, kSkip };
Trace nested(int32_t sx, int32_t sy, int levels, const std::vector<StrongLevel>& strong = {},
             Edges edges = kPeriodic) {
  std::vector<std::vector<Event>> ranks;
  const auto at = [&](int32_t x, int32_t y) -> int64_t {
    if (edges != kPeriodic && (x < 0 || x >= sx || y < 0 || y >= sy)) return kNull;
    return ((y % sy + sy) % sy) * sx + (x % sx + sx) % sx;
  };
  for (int32_t r = 0; r < sx * sy; ++r) {
    const int32_t x = r % sx, y = r / sx;
    std::vector<Event> evs;
    auto send = [&](SiteId site, int64_t peer, int64_t count) {
      if (edges == kSkip && peer == kNull) return;
      Event e;
      e.op = *OpTable::find("MPI_Send");
      e.site = site;
      e.set(FieldTable::peer(), peer);
      e.set(FieldTable::intern("count", FieldKind::kScalar), count);
      evs.push_back(e);
    };
    for (int cycle = 0; cycle < 2; ++cycle) {
      for (int l = 0; l < levels; ++l) {
        const bool weak = strong.empty();
        const int32_t n = weak ? 0 : strong[static_cast<std::size_t>(l)].n;
        const int32_t deep = weak ? 0 : strong[static_cast<std::size_t>(l)].deep;
        const int32_t s_x = weak ? 1 << l : std::max(1, sx / n);
        const int32_t s_y = weak ? 1 << l : std::max(1, sy / n);
        if (x % s_x != 0 || y % s_y != 0) break;
        if (sx / s_x > 1) {
          const int64_t c = weak ? 64 >> l : std::max(1, n / sy) * deep;
          send(0, at(x + s_x, y), c);
          send(1, at(x - s_x, y), c);
        }
        if (sy / s_y > 1) {
          const int64_t c = weak ? 64 >> l : std::max(1, n / sx) * deep;
          send(2, at(x, y + s_y), c);
          send(3, at(x, y - s_y), c);
        }
      }
      Event e;
      e.op = *OpTable::find("MPI_Barrier");
      e.site = 4;
      evs.push_back(e);
    }
    ranks.push_back(std::move(evs));
  }
  CommTable c;
  c.define_world(sx * sy);
  return tracefold::testing::fold_ranks(ranks, c, 5);
}

}  // namespace

// Two idle levels (strides 2 and 4), each with two busy ranks or more
// along both sides from 8x8 on: 64, 128 and 256 ranks to 512 (16 columns
// of 32 rows), rank by rank the program at 512 ranks.
TEST(ExtrapLevels, NestedIdleLevelsExtrapolateRankByRank) {
  std::vector<ExtrapInput> in;
  for (auto [sx, sy] : {std::pair{8, 8}, {8, 16}, {16, 16}})
    in.push_back({"v" + std::to_string(sx * sy) + ".tf", nested(sx, sy, 3)});
  ExtrapOptions o;
  o.ranks = 512;
  o.try_plugins = false;
  const ExtrapResult res = extrapolate(in, o);
  EXPECT_EQ(res.target.sizes, (std::vector<int64_t>{16, 32}));
  tracefold::testing::expect_same_ranks(res.trace, nested(16, 32, 3));
  // The idle levels are the program's 2nd coarsest (stride 2) and its
  // coarsest (stride 4), and --explain names them so.
  std::string laws;
  for (const auto& line : res.explanation)
    if (line.find("busy ranks at coordinates") != std::string::npos) laws += line + "\n";
  EXPECT_EQ(laws,
            "the 2nd coarsest level (the finest idle one): busy ranks at coordinates multiples "
            "of x every 2 (fixed stride) -> 2, y every 2 (fixed stride) -> 2\n"
            "the coarsest level: busy ranks at coordinates multiples of x every 4 (fixed "
            "stride) -> 4, y every 4 (fixed stride) -> 4\n");
}

// The coarsest level (stride 4) has one busy rank along x at 32 ranks
// (8 rows of 4; at 16 it is not seen at all, exchanging nothing): the model
// says which input and why, after the stencil path's refusal.
TEST(ExtrapLevels, ALoneBusyRankInAnInputIsRefusedByName) {
  std::vector<ExtrapInput> in;
  for (auto [sx, sy] : {std::pair{4, 4}, {4, 8}, {8, 8}})
    in.push_back({"v" + std::to_string(sx * sy) + ".tf", nested(sx, sy, 3)});
  ExtrapOptions o;
  o.ranks = 128;
  o.try_plugins = false;
  try {
    extrapolate(in, o);
    FAIL() << "extrapolated";
  } catch (const ExtrapError& e) {
    EXPECT_NE(std::string(e.what()).find("the per-level model does not explain it either: v32.tf: "
                                         "a coarse level has one busy rank along x (8x4)"),
              std::string::npos)
        << e.what();
    // The stride along x is 4 or more, so 8 along x is the least that
    // could show two busy ranks.
    EXPECT_NE(std::string(e.what()).find(
                  "(at least 8 along x; the smallest count with such a grid is 64 ranks (8x8))"),
              std::string::npos)
        << e.what();
  }
}

// app_mg3d 2 0 1 16 4 2: a fixed 16^3 grid, 4 levels.
const std::vector<StrongLevel> kMg16 = {{16, 16}, {8, 8}, {4, 4}, {2, 2}};

// Why strong scaling with idle levels is not extrapolated beyond the
// inputs: level 1 of kMg16 (8 points a side, 8 deep) and one of 16 points
// a side, 4 deep, make the same calls with the same partners and sizes on
// every rank at 16, 32 and 64 ranks, and part at 128, where kMg16's level
// 1 idles every other row.
TEST(ExtrapLevels, StrongScalingTracesDoNotShowWhereALevelRunsOutOfPoints) {
  std::vector<StrongLevel> other = kMg16;
  other[1] = {16, 4};
  for (auto [sx, sy] : {std::pair{4, 4}, {4, 8}, {8, 8}})
    tracefold::testing::expect_same_ranks(nested(sx, sy, 4, kMg16), nested(sx, sy, 4, other));
  const Trace a = nested(8, 16, 4, kMg16), b = nested(8, 16, 4, other);
  EXPECT_NE(expand_rank(a, 8).size(), expand_rank(b, 8).size());  // row 1 idles in a only
  const auto a0 = expand_rank(a, 0), b0 = expand_rank(b, 0);
  ASSERT_EQ(a0.size(), b0.size());
  EXPECT_NE(a0[4].fields, b0[4].fields);  // level 1's first send: 8 vs 4 values
}

// Strong scaling (16 points a side, 4 levels: 16, 8, 4, 2): each doubling
// of a side idles one more level along it, 1 level at 4x4, 2 at 8 rows of
// 4 and at 8x8, 3 at 16 rows of 8. The level that idles at 128 ranks
// (level 1 along y) is busy on every rank of every input, so its stride
// there is in no input: refused, naming the level and what would work.
TEST(ExtrapLevels, StrongScalingRefusesTheLevelThatIdlesBeyondTheInputs) {
  std::vector<ExtrapInput> in;
  for (auto [sx, sy] : {std::pair{4, 4}, {4, 8}, {8, 8}})
    in.push_back({"s" + std::to_string(sx * sy) + ".tf", nested(sx, sy, 4, kMg16)});
  // The program's own levels, as the refusal reads them.
  const auto at64 = busy_levels(in[2].trace, Topology{{8, 8}, {}});
  ASSERT_TRUE(at64.has_value());
  ASSERT_EQ(at64->size(), 2u);
  EXPECT_EQ((*at64)[0].stride, (std::vector<int64_t>{2, 2}));
  ExtrapOptions o;
  o.ranks = 128;
  o.try_plugins = false;
  auto refusal = [&](const std::vector<ExtrapInput>& x) {
    try {
      extrapolate(x, o);
    } catch (const ExtrapError& e) {
      return std::string(e.what());
    }
    return std::string("extrapolated");
  };
  const std::string all = refusal(in);
  EXPECT_NE(all.find("s16.tf (4x4) has 1 coarse level(s) with idle ranks, s64.tf (8x8) has 2: its "
                     "finest such level keeps every 2nd of the 8 ranks along x and every 2nd of "
                     "the 8 ranks along y busy, a level on which every rank of s16.tf works"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("no trace of these counts says which of its ranks idle at a larger one"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("or record the target count itself"), std::string::npos) << all;
  // 32 and 64 ranks have y's 8 rows both: the level's stride along y is
  // decided only by 16 rows, the target itself.
  const std::string two = refusal({in[1], in[2]});
  EXPECT_NE(two.find("(the smallest count with more ranks along y than every input is 128 ranks "
                     "(16x8)); no count below the target decides it: record the target count "
                     "itself, or record with enough points"),
            std::string::npos)
      << two;
}

TEST(ExtrapLevels, BusyRanksOfACoarseLevelAreAStridedSet) {
  const auto levels = busy_levels(vcycle(4, 8), Topology{{4, 8}, {}});
  ASSERT_TRUE(levels.has_value());
  ASSERT_EQ(levels->size(), 1u);
  EXPECT_EQ((*levels)[0].stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((*levels)[0].lone, (std::vector<bool>{false, false}));
  EXPECT_EQ((*levels)[0].ranks, 8);
  EXPECT_EQ((*levels)[0].calls, 4u);  // 2 sites x 2 cycles
}

TEST(ExtrapLevels, ALoneBusyCoordinateIsMarked) {
  // 2 columns: one busy column, which exchanges only along y.
  const auto levels = busy_levels(vcycle(2, 4), Topology{{2, 4}, {}});
  ASSERT_TRUE(levels.has_value());
  EXPECT_EQ((*levels)[0].stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((*levels)[0].lone, (std::vector<bool>{true, false}));
}

TEST(ExtrapLevels, RanksThatAreNoStridedSetAreNoLevel) {
  // Busy ranks 0 and 3 of 4 in a row: no stride picks them.
  EXPECT_FALSE(stride_of(Topology{{4}, {}}, {true, false, false, true}).has_value());
  EXPECT_EQ(stride_of(Topology{{4}, {}}, {true, false, true, false}),
            (std::optional<std::vector<int64_t>>{{2}}));
  // A grid whose ranks all make the same calls has no level.
  const auto none = busy_levels(vcycle(1, 1), Topology{{1}, {}});
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST(ExtrapLevels, StrideLaws) {
  // Weak scaling: every 2nd rank whatever the side; a side of 2 shows a
  // lone busy rank, which a fixed stride of 2 explains too.
  StrideFit f = fit_stride({{2, 2, true}, {4, 2, false}, {8, 2, false}}, 16);
  EXPECT_EQ(f.stride, std::optional<int64_t>{2});
  EXPECT_EQ(f.law, "every 2 (fixed stride)");
  // Strong scaling: 2 busy ranks whatever the side.
  f = fit_stride({{4, 2, false}, {8, 4, false}}, 32);
  EXPECT_EQ(f.stride, std::optional<int64_t>{16});
  EXPECT_EQ(f.law, "S/2 (2 busy, fixed)");
  // Every input of one side: the laws part at another side.
  f = fit_stride({{4, 2, false}, {4, 2, false}}, 8);
  EXPECT_FALSE(f.stride.has_value());
  EXPECT_NE(f.law.find("give an input with another side"), std::string::npos);
  // ... but agree at that side.
  EXPECT_EQ(fit_stride({{4, 2, false}, {4, 2, false}}, 4).stride, std::optional<int64_t>{2});
  // Only lone busy ranks: known up to the largest side seen.
  EXPECT_EQ(fit_stride({{2, 2, true}, {2, 2, true}}, 2).stride, std::optional<int64_t>{2});
  f = fit_stride({{2, 2, true}, {2, 2, true}}, 4);
  EXPECT_FALSE(f.stride.has_value());
  EXPECT_NE(f.law.find("more than 2 ranks along it"), std::string::npos);
  // Neither law: 2 of 4, then 4 of 16.
  EXPECT_FALSE(fit_stride({{4, 2, false}, {16, 4, false}}, 32).stride.has_value());
}

// The count a refusal names: MPI_Dims_create's grid with the sides asked
// for, among powers of two when the inputs were.
TEST(ExtrapLevels, SmallestGridWithTheSidesAskedFor) {
  EXPECT_EQ(smallest_grid_with({4, 4, 4}, true), "64 ranks (4x4x4)");
  // 32 is 2 along x (4x4x2); 48 is 3 (4x4x3).
  EXPECT_EQ(smallest_grid_with({4, 1, 1}, true), "64 ranks (4x4x4)");
  EXPECT_EQ(smallest_grid_with({3, 1, 1}, false), "27 ranks (3x3x3)");
  EXPECT_EQ(smallest_grid_with({3, 1, 1}, true), "64 ranks (4x4x4)");
  EXPECT_EQ(smallest_grid_with({4, 1}, true), "16 ranks (4x4)");
}

// Strong scaling with a coarsening factor of 4 (levels of 8 and 2 points
// a side): the 2-point level idles ranks at 4x4, 8 rows of 4 and 8x8, two
// busy ranks along each side, a fixed busy count; the 8-point level is
// busy on every rank of every input. Every input has the same one idle
// level, so no count mismatch refuses it, yet at 16 rows of 8 the 8-point
// level idles every other row: a level busy on every rank of every input
// need not stay so once a side outgrows the inputs', and the model would
// give those rows its calls.
TEST(ExtrapLevels, AFixedBusyCountBeyondTheInputsSidesIsRefused) {
  const std::vector<StrongLevel> by4 = {{8, 8}, {2, 2}};
  std::vector<ExtrapInput> in;
  for (auto [sx, sy] : {std::pair{4, 4}, {4, 8}, {8, 8}}) {
    in.push_back({"q" + std::to_string(sx * sy) + ".tf", nested(sx, sy, 2, by4)});
    const auto l = busy_levels(in.back().trace, Topology{{sx, sy}, {}});
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ(l->size(), 1u);
  }
  const auto real = busy_levels(nested(8, 16, 2, by4), Topology{{8, 16}, {}});
  ASSERT_TRUE(real.has_value());
  EXPECT_EQ(real->size(), 2u);  // the 8-point level idles rows at 128
  ExtrapOptions o;
  o.ranks = 128;
  o.try_plugins = false;
  try {
    const ExtrapResult res = extrapolate(in, o);
    // Rank 8 (x 0, y 1) idles on both levels in the program.
    FAIL() << "extrapolated: rank 8 makes " << expand_rank(res.trace, 8).size()
           << " calls, the program " << expand_rank(nested(8, 16, 2, by4), 8).size();
  } catch (const ExtrapError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the coarsest level (the only idle one), stride along y: S/2 (2 busy, fixed), "
                  "a fixed number of busy ranks, and the target's 16 ranks along y exceed every "
                  "input's (4, 8, 8)"),
              std::string::npos)
        << e.what();
    // 128 is the least count with 16 rows: nothing below the target shows them.
    EXPECT_NE(std::string(e.what()).find(
                  "Record the target count itself (no count below it has 16 ranks along y)"),
              std::string::npos)
        << e.what();
  }
}

// A grid with edges: partners beyond them are MPI_PROC_NULL on every
// level, so which busy rank along a side is the last depends on the
// level's stride. 16 (4x4), 32 and 64 ranks, one idle level, to 128 (the
// inputs of tests/mpi/extrap_mg_edges.sh), and two idle levels from 8x8,
// 16 rows of 8 and 16x16 to 32 rows of 16: rank by rank the program.
TEST(ExtrapLevels, AGridWithEdgesExtrapolatesRankByRank) {
  for (int levels : {2, 3}) {
    const int32_t a = levels == 2 ? 4 : 8;
    std::vector<ExtrapInput> in;
    for (auto [sx, sy] : {std::pair{a, a}, {a, 2 * a}, {2 * a, 2 * a}})
      in.push_back({"e" + std::to_string(sx * sy) + ".tf", nested(sx, sy, levels, {}, kProcNull)});
    ExtrapOptions o;
    o.ranks = 8 * a * a;
    o.try_plugins = false;
    const ExtrapResult res = extrapolate(in, o);
    EXPECT_EQ(res.target.sizes, (std::vector<int64_t>{2 * a, 4 * a}));
    tracefold::testing::expect_same_ranks(res.trace, nested(2 * a, 4 * a, levels, {}, kProcNull));
    EXPECT_NE(res.explanation.at(0).find("a grid with edges"), std::string::npos)
        << res.explanation.at(0);
  }
}

// At 4 ranks a side and a stride of 2, neither busy rank has both
// partners along a side: each call's offset comes from the one that has
// it, and every rank of the class is checked against it.
TEST(ExtrapLevels, AClassTakesEachPartnerFromTheRankThatHasIt) {
  const Trace t = nested(4, 4, 2, {}, kProcNull);
  const Topology topo{{4, 4}, {}};
  // Ranks 0, 2, 8, 10: busy on the coarse level.
  const auto slots = class_partners(t, topo, {0, 2, 8, 10}, true, "e16.tf", 1);
  std::vector<std::vector<int64_t>> offsets;
  for (const PeerSlot& s : slots) {
    EXPECT_EQ(s.sentinel, 0);
    offsets.push_back(s.offset);
  }
  // Node by node (sites 0-3, each with its level-0 then level-1 call).
  const std::vector<std::vector<int64_t>> want = {{1, 0}, {2, 0}, {-1, 0}, {-2, 0},
                                                  {0, 1}, {0, 2}, {0, -1}, {0, -2}};
  std::vector<std::vector<int64_t>> distinct;
  for (const auto& o : offsets)
    if (std::find(distinct.begin(), distinct.end(), o) == distinct.end()) distinct.push_back(o);
  std::sort(distinct.begin(), distinct.end());
  auto sorted = want;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(distinct, sorted);
  // Read as a grid with edges, a periodic trace's wrapped partners are at
  // other offsets on one rank than on another: named.
  try {
    class_partners(nested(4, 4, 2), topo, {0, 2, 8, 10}, true, "p16.tf", 1);
    FAIL() << "accepted";
  } catch (const ExtrapError& e) {
    EXPECT_EQ(std::string(e.what()),
              "p16.tf: ranks 0 and 2, busy on the same 1 coarse level(s) on the 4x4 grid, have "
              "their partners of call 2 at different offsets (x+2 y+0 and x-2 y+0): the class's "
              "partners follow no fixed step");
  }
  // A rank idle on the level makes fewer calls.
  EXPECT_THROW(class_partners(t, topo, {0, 1}, true, "e16.tf", 1), ExtrapError);
}

// Ranks at an edge that skip the call beyond it (instead of giving it
// MPI_PROC_NULL) make fewer calls than the others busy on the same levels,
// so the ranks making each count are no strided set and the model does not
// apply: the stencil path's refusal names two such ranks.
TEST(ExtrapLevels, CallsSkippedAtAnEdgeAreRefusedByName) {
  std::vector<ExtrapInput> in;
  for (auto [sx, sy] : {std::pair{4, 4}, {4, 8}, {8, 8}})
    in.push_back({"s" + std::to_string(sx * sy) + ".tf", nested(sx, sy, 2, {}, kSkip)});
  ExtrapOptions o;
  o.ranks = 128;
  o.try_plugins = false;
  try {
    extrapolate(in, o);
    FAIL() << "extrapolated";
  } catch (const ExtrapError& e) {
    EXPECT_NE(std::string(e.what()).find("s16.tf: no row-major grid of up to 3 dimensions "
                                         "explains the 12 communication patterns of the 16 "
                                         "ranks; on the 4x4 grid MPI_Dims_create makes, ranks 1 "
                                         "and 2 lie in the same part"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("per-level model"), std::string::npos) << e.what();
  }
}
