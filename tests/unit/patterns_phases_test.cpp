// Phases of one global pattern told apart by how their messages are
// received (split_phases): lu's sweeps (blocking receives) and halo
// (posted receives) run over the same edges, so neither the edge set nor
// the tags' edge sets separate them.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

// Ranks 0 and 1 exchange once with tag 1 and once with tag 2, each way;
// tag 2's receives are blocking when `both_blocking`, else posted.
GlobalPattern two_phases(bool both_blocking) {
  GlobalPattern g;
  g.patterns = {{0, 0}, {1, 0}};
  for (int64_t tag : {1, 2})
    for (int32_t from : {0, 1}) {
      g.channels.push_back({from, 1 - from, 0, tag, 1, 16, 0});
      ++g.messages;
    }
  std::sort(g.channels.begin(), g.channels.end());
  g.edges = {{0, 1}, {1, 0}};
  g.order.push_back(GlobalPattern::Order::of(0, {{1, true, false, 1},
                                                 {1, false, true, 1},
                                                 {1, true, false, 2},
                                                 {1, false, both_blocking, 2}}));
  g.order.push_back(GlobalPattern::Order::of(1, {{0, false, true, 1},
                                                 {0, true, false, 1},
                                                 {0, false, both_blocking, 2},
                                                 {0, true, false, 2}}));
  g.shape = classify(g, 2);
  return g;
}

TEST(PatternsReceiveModes, BlockingAndPostedReceivesOnTheSameEdgesAreTwoPhases) {
  const std::vector<GlobalPattern> parts = split_phases(two_phases(false), 2);
  ASSERT_EQ(parts.size(), 2u);
  for (std::size_t p = 0; p < 2; ++p) {
    const int64_t tag = static_cast<int64_t>(p) + 1;
    EXPECT_EQ(parts[p].edges, (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 0}}));
    EXPECT_EQ(parts[p].messages, 2u);
    for (const Channel& c : parts[p].channels) EXPECT_EQ(c.tag, tag);
    ASSERT_EQ(parts[p].order.size(), 2u);
    for (const GlobalPattern::Order& o : parts[p].order) {
      EXPECT_EQ(o.size(), 2u);
      for (const Hop& h : o.hops()) EXPECT_EQ(h.tag, tag);
    }
    EXPECT_NE(parts[p].shape.kind, ShapeKind::kUnclassified);
  }
}

TEST(PatternsReceiveModes, OneReceiveModeStaysWhole) {
  const std::vector<GlobalPattern> parts = split_phases(two_phases(true), 2);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].messages, 4u);
}

}  // namespace
}  // namespace tracefold::patterns
