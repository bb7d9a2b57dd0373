// Parametric benchmarks from inputs that show a part of the grid at one
// size only (2x2, 2x3 and 3x3 ranks: the middle column at 3x3 alone). The
// model is evaluated at a larger grid, as the generated program computes
// it, and compared value by value with the trace of that grid: a number
// fitted as a constant from one size (120 values where 3x4 sends 90) must
// not get through; what the inputs cannot settle must stop generation.
#include <gtest/gtest.h>

#include "halo_traces.hpp"
#include "parametric.hpp"
#include "tracefold/bench.hpp"
#include "tracefold/extrap/grid.hpp"
#include "tracefold/extrap/topology.hpp"

using namespace tracefold;
using namespace tracefold::benchgen::param;
using tracefold::testing::Halo;
using tracefold::testing::halo_inputs;

namespace {

// Value k of `seq` on `rank` at `sizes`, as the program's value functions
// read it: each run's repeat count evaluated, the last run repeating.
std::optional<int64_t> value_at(const SymSeq& seq, const std::vector<int64_t>& sizes, int64_t rank,
                                uint64_t k) {
  for (std::size_t r = 0; r < seq.size(); ++r) {
    const SymRun& run = seq[r];
    const auto reps = evaluate(run.reps, sizes, rank);
    if (!reps) return std::nullopt;
    const uint64_t n = static_cast<uint64_t>(*reps) * run.pattern.size();
    if (k < n || r + 1 == seq.size())
      return evaluate(run.pattern[k % run.pattern.size()], sizes, rank);
    k -= n;
  }
  return std::nullopt;
}

// Every value the model gives every rank of `want` (counts, loop trips,
// fields) is the trace's own.
void expect_model_gives(const Model& m, const extrap::ExtrapInput& first, const Halo& halo) {
  const extrap::ExtrapInput want{"want.tf", halo.trace()};
  const auto order = extrap::align_nodes({first, want});
  ASSERT_EQ(order[1].size(), m.nodes.size());
  const extrap::Topology topo{{halo.sx, halo.sy}, {}};
  const int64_t p = want.trace.world_size;
  auto compare = [&](const CellSeqs& cs, const Elastic* e, bool peer, const std::string& what) {
    for (int32_t r = 0; r < p; ++r) {
      const ValueSeq* seq = e ? e->for_rank(r) : nullptr;
      const auto& model = cs[static_cast<std::size_t>(extrap::cell_of(topo, r))];
      ASSERT_EQ(seq != nullptr, model.has_value()) << what << " rank " << r;
      if (!seq) continue;
      const auto v = seq->to_vector();
      for (std::size_t k = 0; k < v.size(); ++k) {
        const int64_t w = peer && !is_sentinel(v[k]) ? ((r + v[k]) % p + p) % p : v[k];
        EXPECT_EQ(value_at(*model, topo.sizes, r, k), w) << what << " rank " << r << " value " << k;
      }
    }
  };
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    const Node& n = want.trace.nodes[order[1][i]];
    const std::string at = "node " + std::to_string(i);
    compare(m.nodes[i].count, &n.count, false, at + " count");
    ASSERT_EQ(m.nodes[i].iters.size(), n.loops.size());
    for (std::size_t l = 0; l < n.loops.size(); ++l)
      compare(m.nodes[i].iters[l], &n.loops[l].iters, false, at + " loop");
    for (const auto& [name, cs] : m.nodes[i].fields) {
      const auto f = FieldTable::find(name);
      ASSERT_TRUE(f);
      compare(cs, n.field(*f), FieldTable::role(*f) == FieldRole::kPeer, at + " field " + name);
    }
  }
}

std::string error_of(const std::vector<extrap::ExtrapInput>& in) {
  try {
    build_model(in);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

// The middle column (3x3 only) and the first and last columns' middle rows
// (3 rows in both 2x3 and 3x3) send 360/S2 values west and east, as the
// corners show: 90 at 3x4, not 120.
TEST(ParametricParts, APartSeenOnceTakesTheLawOfTheOtherParts) {
  const auto in = halo_inputs({{2, 2}, {2, 3}, {3, 3}}, true);
  const Model m = build_model(in);
  Halo want;
  want.sx = 3;
  want.sy = 4;
  expect_model_gives(m, in[0], want);
  want.sx = 4;
  want.sy = 5;
  expect_model_gives(m, in[0], want);
}

// With gx = gy every message of the 3x3 grid holds 240 values, so the
// middle part's sequence folds into one run where the corners' (360 and
// 240 at 2x3) has two: read value by value, each number takes the law at
// its own position (720/S1 north and south, 720/S2 west and east).
TEST(ParametricParts, APartThatFoldsCoarserIsReadValueByValue) {
  const auto in = halo_inputs({{2, 2}, {2, 3}, {3, 3}}, true, 720, 720);
  const Model m = build_model(in);
  Halo want;
  want.sx = 3;
  want.sy = 4;
  want.gx = want.gy = 720;
  expect_model_gives(m, in[0], want);
}

// Without wrap-around the middle ranks exchange with three or four
// partners where the parts seen twice have two or three: no other part
// has their sequences' shape, their peers' sequences change with the grid
// elsewhere, and one input cannot say how the middle part's do (so far as
// the number is no grid offset). Generation stops naming the node, the
// field, the part and the values, as extrapolation does.
TEST(ParametricParts, APartSeenOnceWithoutAMatchingPartIsRefused) {
  const std::string e = error_of(halo_inputs({{2, 2}, {2, 3}, {3, 3}}, false));
  EXPECT_NE(e.find("h4.tf: node #0 (MPI_Send at "), std::string::npos) << e;
  EXPECT_NE(e.find(", field "), std::string::npos) << e;
  EXPECT_NE(e.find("x:mid"), std::string::npos) << e;
  EXPECT_NE(e.find("seen in one input only"), std::string::npos) << e;
  EXPECT_NE(e.find("in h9.tf (3x3)"), std::string::npos) << e;
}

// Every part seen at two sizes of every dimension: the parts' own laws.
TEST(ParametricParts, PartsSeenTwiceKeepTheirOwnLaws) {
  const auto in = halo_inputs({{3, 3}, {3, 4}, {4, 4}}, false);
  const Model m = build_model(in);
  Halo want;
  want.sx = 4;
  want.sy = 5;
  want.periodic = false;
  expect_model_gives(m, in[0], want);
}
