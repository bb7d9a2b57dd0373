// CommTable with many groups per id: the row and column communicators of a
// 1,024 x 1,024 grid (an extrapolated trace of a million ranks), defined in
// order, merged from interleaved halves, rules (rows, columns) broken; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold {
namespace {

constexpr int32_t kSide = 1024;

// Row r: ranks r*kSide .. r*kSide + kSide-1; column c: c, c+kSide, ...
std::vector<CommGroup> rows() {
  std::vector<CommGroup> g(kSide);
  for (int32_t r = 0; r < kSide; ++r)
    for (int32_t c = 0; c < kSide; ++c) g[r].members.push_back(r * kSide + c);
  return g;
}
std::vector<CommGroup> columns() {
  std::vector<CommGroup> g(kSide);
  for (int32_t c = 0; c < kSide; ++c)
    for (int32_t r = 0; r < kSide; ++r) g[c].members.push_back(r * kSide + c);
  return g;
}

void expect_grid(const CommTable& t) {
  for (int32_t rank : {0, 1, kSide - 1, kSide, 5 * kSide + 7, kSide * kSide - 1, 777777}) {
    const int32_t r = rank / kSide, c = rank % kSide;
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_NE(t.group_of(1, rank), nullptr);
    EXPECT_EQ(t.group_of(1, rank)->members.front(), r * kSide);
    EXPECT_EQ(t.rank_in(1, rank), c);
    ASSERT_NE(t.group_of(2, rank), nullptr);
    EXPECT_EQ(t.group_of(2, rank)->members.front(), c);
    EXPECT_EQ(t.rank_in(2, rank), r);
  }
  EXPECT_EQ(t.group_of(1, kSide * kSide), nullptr);
  EXPECT_EQ(t.rank_in(2, kSide * kSide), -1);
  EXPECT_EQ(t.all().at(1).size(), static_cast<std::size_t>(kSide));
  EXPECT_EQ(t.all().at(2).size(), static_cast<std::size_t>(kSide));
  // Kept sorted by members, whatever the order of definition.
  for (const auto& [id, gs] : t.all())
    EXPECT_TRUE(std::is_sorted(
        gs.begin(), gs.end(),
        [](const CommGroup& a, const CommGroup& b) { return a.members < b.members; }))
        << "id " << id;
}

// A million ranks in 2,048 groups: group by group this took minutes while
// every define re-indexed the whole id.
TEST(CommTableMany, GroupByGroupInOrder) {
  CommTable t;
  t.define_world(kSide * kSide);
  for (auto& g : rows()) t.define(1, std::move(g));
  for (auto& g : columns()) t.define(2, std::move(g));
  expect_grid(t);
  EXPECT_EQ(t.rank_in(CommTable::kWorld, kSide * kSide - 1), kSide * kSide - 1);
}

// The recorder merges tables whose groups interleave (even rows from one
// subtree, odd rows from the other): one sort and index per id.
TEST(CommTableMany, InterleavedMergeGivesTheSameTable) {
  CommTable ordered;
  for (auto& g : rows()) ordered.define(1, std::move(g));
  for (auto& g : columns()) ordered.define(2, std::move(g));

  CommTable even, odd;
  auto rs = rows(), cs = columns();
  for (int32_t i = 0; i < kSide; ++i) {
    (i % 2 ? odd : even).define(1, rs[i]);
    (i % 3 ? odd : even).define(2, cs[i]);
  }
  CommTable merged = odd;
  merged.merge(even);
  expect_grid(merged);
  EXPECT_EQ(merged, ordered);
  merged.merge(even);  // again: no change
  EXPECT_EQ(merged, ordered);

  // Out of order one by one (a few groups: each costs a re-index).
  CommTable few;
  std::vector<CommGroup> g{CommGroup{{9, 8}}, CommGroup{{0, 3}}, CommGroup{{5, 1}}};
  for (const auto& x : g) few.define(4, x);
  EXPECT_EQ(few.rank_in(4, 8), 1);
  EXPECT_EQ(few.rank_in(4, 3), 1);
  EXPECT_EQ(few.rank_in(4, 1), 1);
  EXPECT_EQ(few.rank_in(4, 2), -1);
  EXPECT_EQ(few.all().at(4).front().members, (std::vector<int32_t>{0, 3}));
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(CommTableMany, RankInTwoGroupsIsAnErrorAndChangesNothing) {
  CommTable t;
  for (auto& g : rows()) t.define(1, std::move(g));
  const CommTable before = t;
  const std::string twice =
      "communicator 1: rank " + std::to_string(5 * kSide + 3) + " is already in another group";
  // Rank 5*kSide + 3 is in row 5 already.
  CommGroup bad{{kSide * kSide, 5 * kSide + 3}};
  EXPECT_EQ(error_of([&] { t.define(1, bad); }), twice);
  EXPECT_EQ(t, before);
  // The same members in another order are another group.
  EXPECT_NE(error_of([&] { t.define(1, CommGroup{{1, 0}}); }), "no error");
  EXPECT_EQ(t, before);
  // A rank twice in one group.
  EXPECT_EQ(error_of([&] {
              t.define(7, CommGroup{{4, 2, 4}});
            }),
            "communicator 7: rank 4 appears twice in one group");
  EXPECT_EQ(t.all().count(7), 0u);
  EXPECT_EQ(t.group_of(7, 4), nullptr);
  // Merging a table whose group overlaps fails the same way.
  CommTable other;
  other.define(1, CommGroup{{kSide * kSide + 1}});
  other.define(1, bad);
  EXPECT_EQ(error_of([&] { t.merge(other); }), twice);
  EXPECT_EQ(t, before);
  EXPECT_EQ(t.group_of(1, kSide * kSide + 1), nullptr);
}

// Rows and columns are kept as a rule, not per rank; a group that breaks
// the rule turns it into per-rank entries and lookups stay right.
TEST(CommTableMany, RuleBrokenBySpelledOutGroup) {
  CommTable t;
  t.define_world(12);
  t.define(CommTable::kWorld, CommGroup{{12, 13}});  // beyond the first world
  EXPECT_EQ(t.rank_in(CommTable::kWorld, 11), 11);
  EXPECT_EQ(t.rank_in(CommTable::kWorld, 13), 1);
  EXPECT_EQ(t.rank_in(CommTable::kWorld, 14), -1);

  // Columns 0 and 1 of a 4-wide grid of 3 rows, then a group off the rule.
  t.define(2, CommGroup{{0, 4, 8}});
  t.define(2, CommGroup{{1, 5, 9}});
  EXPECT_EQ(t.rank_in(2, 9), 2);
  EXPECT_EQ(t.rank_in(2, 2), -1) << "column 2 is not defined";
  EXPECT_EQ(t.rank_in(2, 12), -1);
  t.define(2, CommGroup{{3, 2}});
  EXPECT_EQ(t.rank_in(2, 2), 1);
  EXPECT_EQ(t.rank_in(2, 3), 0);
  EXPECT_EQ(t.rank_in(2, 8), 2);
  EXPECT_EQ(t.rank_in(2, 6), -1);
  EXPECT_EQ(t.all().at(2).size(), 3u);

  // Rows of 3, then one of 2: the rule ends, the earlier rows stay.
  t.define(3, CommGroup{{0, 1, 2}});
  t.define(3, CommGroup{{3, 4, 5}});
  EXPECT_EQ(t.rank_in(3, 6), -1);
  t.define(3, CommGroup{{6, 7}});
  t.define(3, CommGroup{{8, 9, 10}});
  EXPECT_EQ(t.rank_in(3, 4), 1);
  EXPECT_EQ(t.rank_in(3, 7), 1);
  EXPECT_EQ(t.rank_in(3, 10), 2);
  EXPECT_EQ(t.rank_in(3, 11), -1);
  EXPECT_THROW(t.define(3, CommGroup{{11, 9}}), std::invalid_argument);
}

}  // namespace
}  // namespace tracefold
