// Occurrences of per-process patterns counted as iterations of the folded
// trace's loops (src/analysis/patterns/loops.cpp, RankIterator::loop()):
// nested loops, and an inner loop whose trip count varies from entry to
// entry (a value sequence in the folded trace).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

using testing::fold_ranks;
using testing::make_event;
using Trips = std::vector<std::pair<int64_t, std::size_t>>;

CommTable pair_comms() {
  CommTable c;
  c.define_world(2);
  return c;
}

// Two ranks; `inner[k]` exchanges (send, receive with the other rank) in
// step k, then an Allreduce ends the step.
std::vector<std::vector<Event>> steps(const std::vector<int>& inner) {
  std::vector<std::vector<Event>> ranks(2);
  for (int32_t r = 0; r < 2; ++r)
    for (int n : inner) {
      for (int i = 0; i < n; ++i) {
        ranks[r].push_back(make_event("MPI_Send", 1, {{"peer", 1 - r}, {"tag", 7}, {"count", 4}}));
        ranks[r].push_back(make_event("MPI_Recv", 2, {{"peer", 1 - r}, {"tag", 7}, {"count", 4}}));
      }
      ranks[r].push_back(make_event("MPI_Allreduce", 3, {{"count", 1}}));
    }
  return ranks;
}

// The loops rank 0's events lie in, as the patterns walk notes them.
LoopPlaces places_of(const Trace& t) {
  LoopPlaces places;
  RankIterator it(t, 0);
  Event ev;
  while (it.next(ev)) places.note(it);
  return places;
}

TEST(PatternsLoops, IteratorReportsNestedLoopsAndTheirTrips) {
  // Steps of 2, 3 and 4 exchanges: the inner loop's trip count varies.
  const Trace t = fold_ranks(steps({2, 3, 4}), pair_comms());
  const LoopPlaces p = places_of(t);
  ASSERT_EQ(p.events.size(), 2u * (2 + 3 + 4) + 3);
  // Event 0 (the first send) is in iteration 0 of the first inner entry,
  // itself in iteration 0 of the step loop.
  const LoopPlaces::Place first = p.events[0];
  ASSERT_NE(first.entry, LoopPlaces::kNone);
  EXPECT_EQ(first.iteration, 0u);
  const LoopPlaces::Entry& inner = p.entries[first.entry];
  EXPECT_EQ(inner.trips, 2);
  ASSERT_NE(inner.parent, LoopPlaces::kNone);
  EXPECT_EQ(inner.parent_iteration, 0);
  EXPECT_EQ(p.entries[inner.parent].trips, 3);
  // The last receive of the third step: iteration 3 of an inner entry of 4
  // trips, in iteration 2 of the same step loop.
  const LoopPlaces::Place last = p.events[p.events.size() - 2];
  ASSERT_NE(last.entry, LoopPlaces::kNone);
  EXPECT_EQ(last.iteration, 3u);
  EXPECT_EQ(p.entries[last.entry].trips, 4);
  EXPECT_EQ(p.entries[last.entry].parent, inner.parent);
  EXPECT_EQ(p.entries[last.entry].parent_iteration, 2);
  EXPECT_EQ(p.entries[last.entry].head, inner.head);
  EXPECT_EQ(p.entries[last.entry].level, inner.level);
}

// Loops built by hand: entry 0 is an outer loop of 3 trips; entries 1-3
// an inner loop in its iterations 0-2 with 2, 3 and 4 trips. Each inner
// iteration is two events, each outer one ends with one event of its own.
LoopPlaces hand_made(const std::vector<int>& trips = {2, 3, 4}) {
  LoopPlaces p;
  p.entries.push_back({10, 0, static_cast<int64_t>(trips.size()), LoopPlaces::kNone, 0});
  for (int k = 0; k < static_cast<int>(trips.size()); ++k) {
    p.entries.push_back({11, 0, trips[k], 0, k});
    for (int i = 0; i < trips[k]; ++i)
      for (int e = 0; e < 2; ++e)
        p.events.push_back({static_cast<uint32_t>(k + 1), static_cast<uint32_t>(i)});
    p.events.push_back({0, static_cast<uint32_t>(k)});
  }
  return p;
}

TEST(PatternsLoops, VaryingTripCountsAreKeptPerEntry) {
  const LoopPlaces p = hand_made();
  // Events: 0-3 (entry 1), 4 (outer), 5-10 (entry 2), 11, 12-19 (entry 3), 20.
  ProcessPattern inner;
  inner.symbols = {1, 2};
  inner.positions = {0, 2, 5, 7, 9, 12, 14, 16, 18};
  const auto l = loop_of(inner, p);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->iterations, 9u);
  EXPECT_EQ(l->trips, (Trips{{2, 1}, {3, 1}, {4, 1}}));
  EXPECT_EQ(iterations([&] {
              ProcessPattern q = inner;
              q.loop = l;
              return q;
            }()),
            9u);
  // Two inner iterations a repeat, overlapping in the entry of 4 trips:
  // its iterations are counted once each.
  ProcessPattern twice;
  twice.symbols = {1, 2, 1, 2};
  twice.positions = {5, 12, 14, 16};
  const auto t = loop_of(twice, p);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->iterations, 2u + 4u);
  EXPECT_EQ(t->trips, (Trips{{3, 1}, {4, 1}}));
  EXPECT_EQ(trips_text(t->trips), "3, 4");
}

TEST(PatternsLoops, AStepSpanningTheInnerLoopCountsOuterIterations) {
  const LoopPlaces p = hand_made();
  // An occurrence from an inner iteration to the step's last event lies in
  // one iteration of the outer loop: the outer loop is its loop.
  ProcessPattern tail;
  tail.symbols = {1, 2, 3};
  tail.positions = {2, 18};
  const auto l = loop_of(tail, p);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->iterations, 2u);
  EXPECT_EQ(l->trips, (Trips{{3, 1}}));
  // One occurrence outside any loop: no loop for the pattern.
  LoopPlaces out = p;
  out.events.push_back({});
  out.events.push_back({});
  ProcessPattern loose;
  loose.symbols = {3, 9};
  loose.positions = {4, 20};
  EXPECT_FALSE(loop_of(loose, out));
}

TEST(PatternsLoops, AWholeInnerEntryIsOneIterationOfTheLoopAroundIt) {
  // Inner entries of 2 trips each, a repeat of both: each occurrence runs
  // the inner loop through, once per step of the outer one (a pipeline's
  // blocks of one step).
  const LoopPlaces p = hand_made({2, 2, 2, 2});
  ProcessPattern blocks;
  blocks.symbols = {1, 2, 1, 2};
  blocks.positions = {0, 5, 10, 15};
  const auto l = loop_of(blocks, p);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->iterations, 4u);
  EXPECT_EQ(l->trips, (Trips{{4, 1}}));
  // Half an entry stays in the inner loop.
  ProcessPattern half;
  half.symbols = {1, 2};
  half.positions = {0, 5, 10, 15};
  const auto h = loop_of(half, p);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->iterations, 4u);
  EXPECT_EQ(h->trips, (Trips{{2, 4}}));
}

TEST(PatternsLoops, PatternsOfAFoldedTraceReadTheirLoops) {
  const Trace t = fold_ranks(steps({2, 3, 4, 2, 3, 4}), pair_comms());
  Options o;
  const Result r = find_process_patterns(
      t, o, [](SiteId s) { return s == 3 ? std::string("reduce") : std::string("exchange"); });
  ASSERT_EQ(r.groups.size(), 1u);
  std::size_t with_loop = 0;
  for (const auto& e : r.groups[0].patterns) {
    if (!e.pattern.loop) continue;
    ++with_loop;
    // Every pattern here is exchanges of the inner loop: its iterations
    // are the exchanges its occurrences cover, two events each.
    EXPECT_EQ(e.context, "exchange");
  }
  EXPECT_GT(with_loop, 0u);
  EXPECT_EQ(trips_text({{10, 1}}), "10");
  EXPECT_EQ(trips_text({{10, 3}, {2, 1}}), "10 x3, 2");
}

}  // namespace
}  // namespace tracefold::patterns
