// MemberList: communicator members as arithmetic runs, an explicit list for
// irregular groups, sequence equality and order whatever the representation.
#include "tracefold/members.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold {
namespace {

std::vector<int32_t> walk(const MemberList& m) {
  return {m.begin(), m.end()};
}

TEST(MemberList, RegularGroupsAreOneRun) {
  const MemberList world = MemberList::run(0, 1, 10);
  EXPECT_EQ(world.size(), 10u);
  ASSERT_EQ(world.runs().size(), 1u);
  EXPECT_EQ(world.runs()[0], (MemberList::Run{0, 1, 10, 0}));
  // A column of a grid, appended rank by rank, is one run too.
  MemberList column;
  for (int32_t r = 0; r < 5; ++r) column.push_back(3 + 7 * r);
  ASSERT_EQ(column.runs().size(), 1u);
  EXPECT_EQ(column.runs()[0], (MemberList::Run{3, 7, 5, 0}));
  EXPECT_EQ(walk(column), (std::vector<int32_t>{3, 10, 17, 24, 31}));
  EXPECT_EQ(column[3], 24);
  EXPECT_EQ(column.front(), 3);
  EXPECT_EQ(column.back(), 31);
  EXPECT_THROW(column.at(5), std::out_of_range);
}

TEST(MemberList, AppendingARunEqualsPushingItsRanks) {
  // Runs joining, breaking and restarting: bulk appends and rank-by-rank
  // pushes give the same runs.
  const std::vector<std::vector<int32_t>> runs{{0, 1, 4},   {4, 1, 3}, {9, 2, 3}, {14, 2, 1},
                                               {20, -1, 3}, {5, 0, 1}, {6, 0, 1}, {30, 5, 2}};
  MemberList bulk, one;
  std::vector<int32_t> expect;
  for (const auto& r : runs) {
    bulk.append(r[0], r[1], r[2]);
    for (int32_t k = 0; k < r[2]; ++k) {
      one.push_back(r[0] + r[1] * k);
      expect.push_back(r[0] + r[1] * k);
    }
  }
  EXPECT_EQ(bulk.runs(), one.runs());
  EXPECT_EQ(walk(bulk), expect);
  EXPECT_EQ(bulk.to_vector(), expect);
  for (std::size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(bulk[i], expect[i]) << i;
  // 0..6 is one run (two appends joined); 9 11 13 then 14 20 (a two-rank
  // run takes the step its second rank gives), 19 18, 5 6, 30 35.
  ASSERT_EQ(bulk.runs().size(), 6u);
  EXPECT_EQ(bulk.runs()[0], (MemberList::Run{0, 1, 7, 0}));
  EXPECT_EQ(bulk.runs()[1], (MemberList::Run{9, 2, 3, 7}));
  EXPECT_EQ(bulk.runs()[2], (MemberList::Run{14, 6, 2, 10}));
  EXPECT_EQ(bulk.runs()[5], (MemberList::Run{30, 5, 2, 16}));
}

TEST(MemberList, IrregularGroupsFallBackToAList) {
  // Squares: no two steps alike, so runs would cost more than the ranks.
  MemberList m;
  std::vector<int32_t> expect;
  for (int32_t i = 0; i < 100; ++i) {
    m.push_back(i * i);
    expect.push_back(i * i);
  }
  EXPECT_TRUE(m.is_explicit());
  EXPECT_TRUE(m.runs().empty());
  EXPECT_EQ(walk(m), expect);
  EXPECT_EQ(m[57], 57 * 57);
  m.append(20000, 1, 3);
  EXPECT_EQ(m.size(), 103u);
  EXPECT_EQ(m.back(), 20002);
  EXPECT_TRUE(m.ascending());
  // A few irregular ranks stay runs.
  const MemberList few{6, 2, 4, 0};
  EXPECT_FALSE(few.is_explicit());
  EXPECT_EQ(walk(few), (std::vector<int32_t>{6, 2, 4, 0}));
  EXPECT_FALSE(few.ascending());
}

TEST(MemberList, EqualityAndOrderAreOnTheRanks) {
  std::vector<int32_t> ranks;
  for (int32_t i = 0; i < 60; ++i) ranks.push_back(i * i);
  const MemberList as_list(ranks);
  ASSERT_TRUE(as_list.is_explicit());
  // The same ranks as runs: pushed in two halves, each kept as runs while
  // it is short, then compared with the explicit list rank by rank.
  MemberList as_runs;
  for (int32_t i = 0; i < 8; ++i) as_runs.push_back(i * i);
  EXPECT_FALSE(as_runs.is_explicit());
  EXPECT_NE(as_runs, as_list);
  EXPECT_LT(as_runs, as_list);  // a proper prefix orders first
  EXPECT_EQ(MemberList(std::vector<int32_t>(ranks.begin(), ranks.begin() + 8)), as_runs);
  EXPECT_EQ(MemberList::run(0, 1, 5), (MemberList{0, 1, 2, 3, 4}));
  EXPECT_NE(MemberList::run(0, 1, 5), (MemberList{0, 1, 2, 3, 5}));
  EXPECT_LT(MemberList::run(0, 1, 5), (MemberList{0, 1, 2, 3, 5}));
  EXPECT_GT(MemberList::run(1, 1, 2), MemberList::run(0, 1, 5));
  EXPECT_EQ(MemberList::run(4, 1, 1), (MemberList{4}));
  EXPECT_EQ(MemberList{}, MemberList::run(3, 1, 0));
  EXPECT_TRUE(MemberList{}.empty());
}

TEST(MemberList, RanklistsBothWays) {
  const Ranklist r = Ranklist::parse("<1 0 4 1> <1 10 3 5> <0 40>");
  const MemberList m = MemberList::from_ranklist(r);
  EXPECT_EQ(m.to_vector(), r.to_vector());
  EXPECT_TRUE(m.ascending());
  EXPECT_EQ(m.to_ranklist(), r);
  EXPECT_EQ(m.runs().size(), 3u);  // 0..3; 10 15 20; 40
  const MemberList descending{5, 4, 3};
  EXPECT_EQ(descending.to_ranklist(), Ranklist::range(3, 3));
}

// A world of a million ranks holds one run, a column group of it one run
// too; a CommTable of them stays small, and the written trace lines match.
TEST(MemberList, MillionRankGroupsStaySmall) {
  constexpr int32_t kWorld = 1 << 20;
  const MemberList world = MemberList::run(0, 1, kWorld);
  EXPECT_EQ(world.size(), static_cast<std::size_t>(kWorld));
  EXPECT_LE(world.memory_bytes(), 64u);
  EXPECT_EQ(world[777777], 777777);
  EXPECT_EQ(world.to_ranklist(), Ranklist::range(0, kWorld));
  MemberList column;
  for (int32_t r = 0; r < 1024; ++r) column.push_back(5 + 1024 * r);
  EXPECT_LE(column.memory_bytes(), 64u);
  CommTable t;
  t.define_world(kWorld);
  const CommGroup* g = t.group_of(CommTable::kWorld, 123456);
  ASSERT_NE(g, nullptr);
  EXPECT_LE(g->members.memory_bytes(), 64u);
  EXPECT_EQ(g->members.size(), static_cast<std::size_t>(kWorld));
  EXPECT_EQ(t.rank_in(CommTable::kWorld, 123456), 123456);
}

}  // namespace
}  // namespace tracefold
