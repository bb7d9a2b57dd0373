// What joins per-process patterns into one global pattern besides matched
// messages (src/analysis/patterns/assemble_classes.cpp, find.cpp): the
// same collective call of every member of a communicator, and, within one
// rank and context, repeats that make the same message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.hpp"
#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

using testing::fold_ranks;
using testing::make_event;

constexpr int64_t kHalves = 5;  // the even ranks' communicator and the odd ranks'

CommTable comms(int32_t ranks) {
  CommTable c;
  c.define_world(ranks);
  std::vector<int32_t> even, odd;
  for (int32_t r = 0; r < ranks; ++r) (r % 2 ? odd : even).push_back(r);
  c.define(kHalves, CommGroup{MemberList(even)});
  c.define(kHalves, CommGroup{MemberList(odd)});
  return c;
}

// Sites 1-2: collectives of an FFT-like step (site 1 an Alltoall, 2 an
// Allreduce) on `comm`; 3: one last Allreduce on the world; 4-5: a
// multigrid-like halo with the right neighbour (tag = level); 6: a coarse
// solve between the way down and the way up; 7: the Sendrecvs of a solver.
std::string context(SiteId site) {
  return site <= 2   ? "transform"
         : site == 3 ? "main"
         : site <= 5 ? "give"
         : site == 6 ? "coarse"
                     : "solve";
}

Result run(const std::vector<std::vector<Event>>& ranks) {
  const Trace t = fold_ranks(ranks, comms(static_cast<int32_t>(ranks.size())));
  return find_process_patterns(t, Options{}, context);
}

std::vector<std::vector<Event>> collectives(int32_t n, int64_t comm) {
  std::vector<std::vector<Event>> ranks(static_cast<std::size_t>(n));
  for (auto& ev : ranks) {
    for (int step = 0; step < 3; ++step) {
      ev.push_back(make_event("MPI_Alltoall", 1, {{"comm", comm}, {"count", 4}, {"dsize", 8}}));
      ev.push_back(make_event("MPI_Allreduce", 2, {{"comm", comm}, {"count", 1}, {"dsize", 8}}));
    }
    ev.push_back(make_event("MPI_Allreduce", 3, {{"count", 1}, {"dsize", 8}}));
  }
  return ranks;
}

// Each rank repeats its Alltoall and Allreduce: one per-process pattern
// per rank, which the calls (the same on every rank) join into one
// communication, named by its operations. The last Allreduce is made once:
// a single event, in no pattern.
TEST(PatternsJoins, CollectivesJoinTheRanksOfTheirCommunicator) {
  const Result r = run(collectives(4, CommTable::kWorld));
  ASSERT_EQ(r.global.size(), 1u);
  const GlobalPattern& g = r.global[0];
  EXPECT_EQ(g.patterns.size(), 4u);
  EXPECT_TRUE(g.edges.empty());
  EXPECT_EQ(g.collectives, (std::vector<std::string>{"allreduce", "alltoall"}));
  EXPECT_EQ(g.shape.kind, ShapeKind::kCollective);
  EXPECT_EQ(g.shape.title(), "collective");
  EXPECT_EQ(g.shape.param("operations"), "allreduce, alltoall");
  EXPECT_EQ(g.shape.param("ranks"), "4");
  EXPECT_EQ(g.loose_events, 0u);
  ASSERT_EQ(r.cover.singles.size(), 1u);
  EXPECT_EQ(r.cover.singles[0].ranks, Ranklist::range(0, 4));
  EXPECT_EQ(r.cover.singles[0].context, "main");
  EXPECT_EQ(r.cover.in_one, 4u * 6);
}

// On the halves' communicator the even ranks' calls are not the odd
// ranks': two patterns, one per group.
TEST(PatternsJoins, CollectivesOfASubCommunicatorJoinItsGroupOnly) {
  const Result r = run(collectives(6, kHalves));
  ASSERT_EQ(r.global.size(), 2u);
  std::vector<std::vector<int32_t>> members;
  for (const GlobalPattern& g : r.global) {
    members.emplace_back();
    for (const auto& [rank, p] : g.patterns) members.back().push_back(rank);
    EXPECT_EQ(g.shape.title(), "collective");
    EXPECT_EQ(g.shape.param("ranks"), "3");
  }
  EXPECT_EQ(members, (std::vector<std::vector<int32_t>>{{0, 2, 4}, {1, 3, 5}}));
}

// A V-cycle on a ring of ranks: give() sends to the right neighbour and
// receives from the left on levels 0, 1 on the way down, the coarse solve
// reduces, then give() runs levels 1, 0 on the way up. The way down and
// the way up are two repeats of give(), split by the coarse solve, that
// share the messages of levels 0 and 1: one communication, one pattern.
TEST(PatternsJoins, RepeatsOfOneContextSharingAMessageAreOne) {
  constexpr int32_t n = 5;  // on 4 ranks, 6 sends a cycle would make a ring collective
  std::vector<std::vector<Event>> ranks(n);
  for (int32_t r = 0; r < n; ++r) {
    auto& ev = ranks[static_cast<std::size_t>(r)];
    auto give = [&](int level) {
      ev.push_back(make_event("MPI_Irecv", 4, {{"peer", (r + n - 1) % n}, {"tag", level}}));
      ev.push_back(make_event("MPI_Isend", 5, {{"peer", (r + 1) % n}, {"tag", level}}));
    };
    for (int cycle = 0; cycle < 3; ++cycle) {
      for (int level : {0, 1, 2}) give(level);
      ev.push_back(make_event("MPI_Allreduce", 6, {{"count", 1}, {"dsize", 8}}));
      for (int level : {2, 1, 0}) give(level);
      ev.push_back(make_event("MPI_Allreduce", 3, {{"count", 1}, {"dsize", 8}}));  // a norm
    }
  }
  const Result r = run(ranks);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_GE(r.groups[0].patterns.size(), 2u);
  ASSERT_EQ(r.global.size(), 1u) << r.global[1].shape.title();
  EXPECT_EQ(r.global[0].edges.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(r.global[0].messages, 3u * 6 * n);
  EXPECT_EQ(r.global[0].shape.title(), "ring");
}

// A master (rank 0) hands a worker (rank 1) tasks of tag 1, 1, 2 and a
// stop (tag 0), and takes the results with a wildcard receive; the worker
// answers tag 11 or 12. The master repeats "send tag 1, receive" twice, the
// worker "receive, send 11, receive": the third task's exchange lies in
// no repeat of either rank. Its events make messages of the ranks'
// patterns (the master's receive from rank 1, the worker's receive from
// rank 0), so they are part of that communication, not single events.
TEST(PatternsJoins, SingleEventsMakingAPatternsMessageJoinIt) {
  std::vector<std::vector<Event>> ranks(2);
  const int64_t task_tags[] = {1, 1, 2, 0};
  for (int64_t t : task_tags) {
    ranks[0].push_back(make_event("MPI_Send", 3, {{"peer", 1}, {"tag", t}}));
    if (t != 0)
      ranks[0].push_back(
          make_event("MPI_Recv", 3, {{"peer", kAny}, {"src", 1}, {"tag", kAny}, {"mtag", 10 + t}}));
    ranks[1].push_back(make_event("MPI_Recv", 3, {{"peer", 0}, {"tag", kAny}, {"mtag", t}}));
    if (t != 0) ranks[1].push_back(make_event("MPI_Send", 3, {{"peer", 0}, {"tag", 10 + t}}));
  }
  const Result r = run(ranks);
  ASSERT_EQ(r.global.size(), 1u);
  EXPECT_EQ(r.global[0].messages, 7u);
  EXPECT_TRUE(r.cover.singles.empty());
  EXPECT_EQ(r.cover.in_one, r.cover.events);
  EXPECT_EQ(r.cover.events, 14u);
}

// A loop of Sendrecvs in one function on 4 ranks, tag by tag: `cg` pairs
// the ranks rank xor 1 (tags 0 and 60) and swaps ranks 1 and 2 (tag 50:
// the transpose of a 2x2 grid; 0 and 3 are their own partners); `halo`
// sends to the right (tag 1) and to the left (tag 2) along a line. Each
// is one repeat and one global pattern whose edges fit a 1-D halo.
std::vector<std::vector<Event>> sendrecvs(bool cg) {
  constexpr int32_t n = 4;
  std::vector<std::vector<Event>> ranks(n);
  for (int32_t r = 0; r < n; ++r) {
    auto& ev = ranks[static_cast<std::size_t>(r)];
    auto pair = [&](int32_t to, int32_t from, int64_t tag) {
      if (to < 0 || to >= n || from < 0 || from >= n) return;
      ev.push_back(make_event("MPI_Sendrecv", 7,
                              {{"peer", to},
                               {"tag", tag},
                               {"rpeer", from},
                               {"rtag", tag},
                               {"count", 8},
                               {"dsize", 8}}));
    };
    for (int it = 0; it < 3; ++it) {
      if (cg) {
        pair(r ^ 1, r ^ 1, 0);
        const int32_t t = r == 1 ? 2 : r == 2 ? 1 : r;
        pair(t, t, 50);
        pair(r ^ 1, r ^ 1, 60);
      } else {
        if (r + 1 < n) ev.push_back(make_event("MPI_Send", 7, {{"peer", r + 1}, {"tag", 1}}));
        if (r > 0) ev.push_back(make_event("MPI_Recv", 7, {{"peer", r - 1}, {"tag", 1}}));
        if (r > 0) ev.push_back(make_event("MPI_Send", 7, {{"peer", r - 1}, {"tag", 2}}));
        if (r + 1 < n) ev.push_back(make_event("MPI_Recv", 7, {{"peer", r + 1}, {"tag", 2}}));
      }
    }
  }
  return ranks;
}

// The rows' exchanges and the transpose are parts of some directions of
// the halo, not whole ones: two patterns, each named alone.
TEST(PatternsPhases, PartsOfAHaloDirectionAreAPatternOfTheirOwn) {
  const Result r = run(sendrecvs(true));
  ASSERT_EQ(r.global.size(), 2u);
  EXPECT_EQ(r.global[0].shape.title(), "pairwise");
  EXPECT_EQ(r.global[0].shape.param("partner"), "rank xor 1");
  EXPECT_EQ(r.global[0].messages, 3u * 2 * 4);
  EXPECT_EQ(r.global[1].shape.title(), "transpose");
  EXPECT_EQ(r.global[1].shape.param("grid"), "2x2");
  EXPECT_EQ(r.global[1].messages, 3u * 4);
  EXPECT_EQ(r.global[0].patterns, r.global[1].patterns);
}

// A halo sent a direction at a time, a tag each, stays one halo: each tag
// holds every edge of its direction.
TEST(PatternsPhases, AHaloSentADirectionAtATimeStaysWhole) {
  const Result r = run(sendrecvs(false));
  ASSERT_EQ(r.global.size(), 1u);
  EXPECT_EQ(r.global[0].shape.title(), "1-D halo");
  EXPECT_EQ(r.global[0].edges.size(), 6u);
}

// Each iteration a ring exchange to the right in give() and one to the
// left in solve() (Sendrecvs, two tags), 3 times: two global patterns, and
// their order, once each an iteration, a third: the composition.
TEST(PatternsCompositions, PatternsRunInOneOrderEachIteration) {
  constexpr int32_t n = 4;
  std::vector<std::vector<Event>> ranks(n);
  for (int32_t r = 0; r < n; ++r) {
    auto& ev = ranks[static_cast<std::size_t>(r)];
    for (int it = 0; it < 3; ++it) {
      ev.push_back(make_event("MPI_Irecv", 4, {{"peer", (r + n - 1) % n}, {"tag", 1}}));
      ev.push_back(make_event("MPI_Isend", 5, {{"peer", (r + 1) % n}, {"tag", 1}}));
      for (int64_t tag : {2, 3})
        ev.push_back(make_event(
            "MPI_Sendrecv", 7,
            {{"peer", (r + n - 1) % n}, {"tag", tag}, {"rpeer", (r + 1) % n}, {"rtag", tag}}));
    }
  }
  const Result r = run(ranks);
  ASSERT_EQ(r.global.size(), 3u);
  EXPECT_EQ(r.global[0].shape.title(), "ring");
  EXPECT_EQ(r.global[1].shape.title(), "ring");
  EXPECT_EQ(r.global[1].shape.param("direction"), "-");
  const Shape& c = r.global[2].shape;
  EXPECT_EQ(c.kind, ShapeKind::kComposition);
  EXPECT_EQ(c.param("children"), "ring, ring");
  EXPECT_EQ(c.param("order"), "G1, G2");
  EXPECT_EQ(c.param("iterations"), "3");
  EXPECT_EQ(r.global[2].patterns.size(), 8u);
  EXPECT_EQ(r.global[2].edges.size(), 8u);
}

}  // namespace
}  // namespace tracefold::patterns
