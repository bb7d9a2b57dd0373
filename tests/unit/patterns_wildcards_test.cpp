// Wildcard receives that follow one another from one call site take their
// messages in the order they arrive, which is the run's timing: two runs of
// one program must give the same patterns whatever that order was. A
// posted wildcard receive's source is read off its completion.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.hpp"
#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

using testing::fold_ranks;
using testing::make_event;

// An lu-like pair of sweeps on three ranks: rank 0 sends to ranks 1 and 2
// (tag k), which answer (tag 100 + k); rank 0 receives both answers with
// MPI_ANY_SOURCE from one loop (one call site). `swapped(step, k)`: rank
// 2's answer arrived first.
template <class Swapped>
Trace sweeps(Swapped swapped) {
  std::vector<std::vector<Event>> ranks(3);
  for (int step = 0; step < 6; ++step) {
    for (int k = 0; k < 5; ++k)
      for (int32_t r : {1, 2}) {
        ranks[0].push_back(
            make_event("MPI_Send", 1, {{"peer", r}, {"tag", k}, {"count", 4}, {"dsize", 8}}));
        ranks[static_cast<std::size_t>(r)].push_back(
            make_event("MPI_Recv", 3, {{"peer", 0}, {"tag", k}, {"count", 4}, {"dsize", 8}}));
      }
    for (int k = 0; k < 5; ++k) {
      for (int32_t r : {1, 2})
        ranks[static_cast<std::size_t>(r)].push_back(
            make_event("MPI_Send", 4, {{"peer", 0}, {"tag", 100 + k}, {"count", 4}, {"dsize", 8}}));
      const bool s = swapped(step, k);
      for (int32_t src : {s ? 2 : 1, s ? 1 : 2})
        ranks[0].push_back(make_event(
            "MPI_Recv", 2,
            {{"peer", kAny}, {"src", src}, {"tag", 100 + k}, {"count", 4}, {"dsize", 8}}));
    }
  }
  CommTable comms;
  comms.define_world(3);
  return fold_ranks(ranks, comms);
}

Result run(const Trace& t) {
  Options o;
  return find_process_patterns(t, o, [](SiteId) { return std::string("main"); });
}

TEST(PatternsWildcards, ArrivalOrderOfWildcardReceivesDoesNotChangeThePatterns) {
  const Result in_order = run(sweeps([](int, int) { return false; }));
  const Result mixed =
      run(sweeps([](int step, int k) { return step % 2 == 1 || (step == 2 && k > 2); }));
  ASSERT_FALSE(in_order.global.empty());
  ASSERT_EQ(mixed.global.size(), in_order.global.size());
  for (std::size_t g = 0; g < in_order.global.size(); ++g) {
    const GlobalPattern &a = in_order.global[g], &b = mixed.global[g];
    EXPECT_EQ(a.loose_events, 0u) << g;
    EXPECT_EQ(b.patterns, a.patterns) << g;
    EXPECT_EQ(b.edges, a.edges) << g;
    EXPECT_EQ(b.messages, a.messages) << g;
    EXPECT_EQ(b.loose_events, a.loose_events) << g;
    EXPECT_EQ(b.shape.title(), a.shape.title()) << g;
  }
  EXPECT_EQ(mixed.cover.in_one, in_order.cover.in_one);
}

// An lu-like halo on a 2x2 grid: each rank posts one MPI_ANY_SOURCE
// MPI_Irecv per neighbour (tag 300), MPI_Isends to them, then completes
// the receives one by one with MPI_Wait, which alone records the matched
// source (`src`); on odd steps the second neighbour's message came first.
Trace posted_halo() {
  const std::vector<std::vector<int64_t>> nbs = {{1, 2}, {0, 3}, {0, 3}, {1, 2}};
  std::vector<std::vector<Event>> ranks(4);
  for (int step = 0; step < 4; ++step)
    for (std::size_t r = 0; r < 4; ++r) {
      std::vector<Event>& evs = ranks[r];
      for (std::size_t i = 0; i < 2; ++i)
        evs.push_back(
            make_event("MPI_Irecv", 1, {{"peer", kAny}, {"tag", 300}, {"count", 2}, {"dsize", 8}}));
      for (int64_t n : nbs[r])
        evs.push_back(
            make_event("MPI_Isend", 2, {{"peer", n}, {"tag", 300}, {"count", 2}, {"dsize", 8}}));
      // Requests so far this step: receive 0, receive 1, send 0, send 1.
      for (std::size_t i = 0; i < 2; ++i) {
        Event wait = make_event("MPI_Wait", 3, {{"src", nbs[r][(i + step) % 2]}});
        wait.set_list(FieldTable::links(), {static_cast<int64_t>(4 - i)});
        evs.push_back(wait);
      }
      Event all = make_event("MPI_Waitall", 4, {{"count", 2}});
      all.set_list(FieldTable::links(), {2, 1});
      evs.push_back(all);
    }
  CommTable comms;
  comms.define_world(4);
  return fold_ranks(ranks, comms);
}

TEST(PatternsWildcards, PostedWildcardReceivesTakeTheSourceTheirCompletionRecorded) {
  const Result r = run(posted_halo());
  // Every receive's source is known, from its MPI_Wait: each of the 8
  // directed grid edges carries one message a step, and no receive is left
  // unmatched.
  const std::vector<std::pair<int32_t, int32_t>> grid = {{0, 1}, {0, 2}, {1, 0}, {1, 3},
                                                         {2, 0}, {2, 3}, {3, 1}, {3, 2}};
  ASSERT_EQ(r.global.size(), 1u);
  EXPECT_EQ(r.global[0].edges, grid);
  EXPECT_EQ(r.global[0].messages, 8u * 4u);
  EXPECT_EQ(r.global[0].loose_events, 0u);
  for (const Channel& c : r.global[0].spelled_channels()) EXPECT_EQ(c.wildcard, 4u);
  for (Symbol s = 0; s < r.alphabet.size(); ++s) EXPECT_NE(r.alphabet.at(s).peer, kAny);
}

}  // namespace
}  // namespace tracefold::patterns
