// Shapes of point-to-point exchanges fitted on the ranks they touch
// (issue 32): the all-to-all, every rank of a pattern sending to every
// other, and the incast, ranks sending to one; on the whole world or on the
// ranks of one sub-communicator, named with their parameters; one lost or
// extra edge leaves them named, partial, with that edge listed.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

using Edges = std::vector<std::pair<int32_t, int32_t>>;

// Every ordered pair of `ranks` but `skip`.
GlobalPattern all_pairs(const std::vector<int32_t>& ranks,
                        std::pair<int32_t, int32_t> skip = {-1, -1}) {
  GlobalPattern g;
  for (int32_t a : ranks)
    for (int32_t b : ranks)
      if (a != b && std::make_pair(a, b) != skip) {
        g.edges.emplace_back(a, b);
        g.channels.push_back({a, b, 0, 0, 1, 64, 0});
        ++g.messages;
      }
  return g;
}

std::vector<int32_t> range(int32_t from, int32_t to) {
  std::vector<int32_t> out;
  for (int32_t r = from; r < to; ++r) out.push_back(r);
  return out;
}

TEST(PatternsAlltoall, WholeWorld) {
  // 7 ranks: no grid makes every pair neighbours (a prime count is a line).
  const Shape s = classify(all_pairs(range(0, 7)), 7);
  EXPECT_EQ(s.kind, ShapeKind::kAlltoall);
  EXPECT_EQ(s.title(), "all-to-all");
  EXPECT_EQ(s.param("ranks"), "7");
  EXPECT_DOUBLE_EQ(s.quality, 1.0);
  EXPECT_EQ(s.matched, 42u);
}

TEST(PatternsAlltoall, OneEdgeMissing) {
  const Shape s = classify(all_pairs(range(0, 7), {3, 5}), 7);
  EXPECT_EQ(s.kind, ShapeKind::kAlltoall);
  EXPECT_EQ(s.title(), "all-to-all, partial (1 edge missing)");
  EXPECT_EQ(s.missing, (Edges{{3, 5}}));
  EXPECT_TRUE(s.extra.empty());
  EXPECT_EQ(s.matched, 41u);
}

TEST(PatternsAlltoall, SubCommunicator) {
  // One row of a 4 x 4 grid (world ranks 4-7) exchanging all-to-all: the
  // fit is on its 4 ranks, not the world's 16.
  const Shape s = classify(all_pairs(range(4, 8)), 16);
  EXPECT_EQ(s.kind, ShapeKind::kAlltoall);
  EXPECT_EQ(s.param("ranks"), "4");
  EXPECT_DOUBLE_EQ(s.quality, 1.0);
}

TEST(PatternsAlltoall, GridsThatConnectEveryPairStayHalos) {
  // On 2 x 3 ranks, periodic along the 3, a 9-point halo has every pair as
  // neighbours: the halo comes first in the order of preference, and
  // three ranks round are a periodic 1-D halo; two are a ring.
  EXPECT_EQ(classify(all_pairs(range(0, 6)), 6).name, "2-D halo");
  EXPECT_EQ(classify(all_pairs(range(0, 3)), 3).name, "1-D halo");
  EXPECT_EQ(classify(all_pairs(range(0, 2)), 2).name, "ring");
}

// `senders` each send to `target` (and `add`, if given).
GlobalPattern incast(const std::vector<int32_t>& senders, int32_t target,
                     std::pair<int32_t, int32_t> add = {-1, -1}) {
  GlobalPattern g;
  for (int32_t r : senders) g.edges.emplace_back(r, target);
  if (add.first >= 0) g.edges.push_back(add);
  std::sort(g.edges.begin(), g.edges.end());
  for (const auto& [a, b] : g.edges) g.channels.push_back({a, b, 0, 0, 1, 64, 0});
  g.messages = g.edges.size();
  return g;
}

TEST(PatternsIncast, OnPartOfTheWorld) {
  // Ranks 9-13 of 16 send to rank 8.
  Shape s = classify(incast(range(9, 14), 8), 16);
  EXPECT_EQ(s.kind, ShapeKind::kIncast);
  EXPECT_EQ(s.title(), "incast");
  EXPECT_EQ(s.param("target"), "8");
  EXPECT_EQ(s.param("senders"), "5");
  EXPECT_DOUBLE_EQ(s.quality, 1.0);
  // One more message, 9 -> 10: still the incast, that edge extra.
  s = classify(incast(range(9, 14), 8, {9, 10}), 16);
  EXPECT_EQ(s.title(), "incast, partial (1 edge extra)");
  EXPECT_EQ(s.extra, (Edges{{9, 10}}));
  EXPECT_EQ(s.param("target"), "8");
}

TEST(PatternsIncast, FromEveryRankIsALinearTree) {
  std::vector<int32_t> all = range(1, 6);
  const Shape s = classify(incast(all, 0), 6);
  EXPECT_EQ(s.name, "linear tree");
  EXPECT_EQ(s.param("direction"), "up (reduce, gather)");
}

}  // namespace
}  // namespace tracefold::patterns
