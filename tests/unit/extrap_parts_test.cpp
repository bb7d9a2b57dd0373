// Parts of the grid (cells) that the inputs show at one size only: a 2x2
// grid has no middle column, so with inputs at 2x2, 2x3 and 3x3 ranks the
// middle columns are seen in the 3x3 input alone. Their numbers must take
// the law the other parts show (when it also gives the one value seen) or
// be refused; never a constant fitted to one point. Synthetic traces,
// folded and merged like recorded ones.
#include <gtest/gtest.h>

#include "halo_traces.hpp"
#include "trace_compare.hpp"
#include "tracefold/extrap/extrapolate.hpp"

using namespace tracefold;
using namespace tracefold::extrap;

namespace {

using tracefold::testing::expect_same_ranks;
using tracefold::testing::halo_inputs;

ExtrapOptions to(int64_t ranks) {
  ExtrapOptions o;
  o.ranks = ranks;
  o.try_plugins = false;
  return o;
}

std::string error_of(const std::vector<ExtrapInput>& in, int64_t ranks) {
  try {
    extrapolate(in, to(ranks));
  } catch (const ExtrapError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

// 2x2, 2x3 (MPI_Dims_create's 3x2) and 3x3 -> 3x4: the middle columns
// (3x3 only) send gy/sy = 90 values west and east at 3x4, not 3x3's 120;
// and the first column's middle rows, seen at 2x3 and 3x3 (sy = 3 both),
// too. Both take the law 360/S2 of the corners.
TEST(ExtrapParts, APartSeenOnceTakesTheLawOfTheOtherParts) {
  const auto in = halo_inputs({{2, 2}, {2, 3}, {3, 3}}, true);
  const ExtrapResult res = extrapolate(in, to(12));
  ASSERT_EQ(res.target.sizes, (std::vector<int64_t>{3, 4}));
  tracefold::testing::Halo want;
  want.sx = 3;
  want.sy = 4;
  expect_same_ranks(res.trace, want.trace());
  bool borrowed = false;
  for (const auto& l : res.explanation)
    borrowed = borrowed || l.find("360/S2 (from x:") != std::string::npos;
  EXPECT_TRUE(borrowed);
}

// Laws of other parts that do not give the part's own value are not
// taken: with gx = gy the counts are 720/S1 and 720/S2; at 3x3 the
// middle column's west count (240) is 720/S2 and also 720/S1, and the
// borrowed law is the one at its own position (720/S2 -> 180 at 3x4).
TEST(ExtrapParts, OnlyTheLawAtTheSamePositionIsTaken) {
  const auto in = halo_inputs({{2, 2}, {2, 3}, {3, 3}}, true, 720, 720);
  const ExtrapResult res = extrapolate(in, to(12));
  tracefold::testing::Halo want;
  want.sx = 3;
  want.sy = 4;
  want.gx = want.gy = 720;
  expect_same_ranks(res.trace, want.trace());
}

// Without wrap-around the middle column's edge ranks have three partners
// where every part seen in two inputs has two or four: no position
// matches, the peers change with the grid elsewhere, and one input cannot
// say how the middle column's do. Refused, naming the part and the value.
TEST(ExtrapParts, APartSeenOnceWithoutAMatchingPartIsRefused) {
  const auto in = halo_inputs({{2, 2}, {2, 3}, {3, 3}}, false);
  const std::string e = error_of(in, 12);
  EXPECT_NE(e.find("seen in one input only"), std::string::npos) << e;
  EXPECT_NE(e.find("in h9.tf (3x3)"), std::string::npos) << e;
  EXPECT_NE(e.find("x:mid"), std::string::npos) << e;
}

// With every part seen at two sizes (3x3, 3x4, 4x4) nothing is borrowed.
TEST(ExtrapParts, PartsSeenTwiceKeepTheirOwnLaws) {
  const auto in = halo_inputs({{3, 3}, {3, 4}, {4, 4}}, false);
  const ExtrapResult res = extrapolate(in, to(20));
  tracefold::testing::Halo want;
  want.sx = 4;
  want.sy = 5;
  want.periodic = false;
  expect_same_ranks(res.trace, want.trace());
  for (const auto& l : res.explanation) EXPECT_EQ(l.find("(from "), std::string::npos) << l;
}
