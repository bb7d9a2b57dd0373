// Neighbourhood collectives as the messages of their communicator's
// topology (src/analysis/patterns/neighbourhood.cpp): small topologies
// made by hand, as the recorder keeps their creation (docs/recording.md),
// and the edges each gives, asserted exactly.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "test_util.hpp"
#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

using testing::fold_ranks;
using testing::make_event;
using Edges = std::set<std::pair<int32_t, int32_t>>;

constexpr int64_t kTopo = 20, kSub = 21, kOther = 22;

Event with_lists(Event e, std::vector<std::pair<std::string, std::vector<int64_t>>> lists) {
  for (auto& [name, v] : lists) e.set_list(FieldTable::intern(name, FieldKind::kList), v);
  return e;
}

// Every rank creates the topology with `create` (its own event, so a
// distributed graph's lists may differ per rank), then calls
// MPI_Neighbor_alltoall on `comm` three times.
template <class Create>
std::vector<std::vector<Event>> program(int32_t ranks, Create create, int64_t comm = kTopo) {
  std::vector<std::vector<Event>> out(static_cast<std::size_t>(ranks));
  for (int32_t r = 0; r < ranks; ++r) {
    auto& ev = out[static_cast<std::size_t>(r)];
    for (Event& e : create(r)) ev.push_back(std::move(e));
    for (int i = 0; i < 3; ++i)
      ev.push_back(
          make_event("MPI_Neighbor_alltoall", 2, {{"comm", comm}, {"count", 1}, {"dsize", 4}}));
  }
  return out;
}

CommTable world_and(int32_t ranks, std::vector<std::vector<int32_t>> sub = {}) {
  CommTable c;
  c.define_world(ranks);
  std::vector<int32_t> all;
  for (int32_t r = 0; r < ranks; ++r) all.push_back(r);
  c.define(kTopo, CommGroup{MemberList(all)});
  c.define(kOther, CommGroup{MemberList(all)});
  for (auto& g : sub) c.define(kSub, CommGroup{MemberList(g)});
  return c;
}

struct Found {
  std::string topology;
  Edges edges;
};

std::vector<Found> run(const std::vector<std::vector<Event>>& ranks, const CommTable& comms) {
  const Result r = find_process_patterns(fold_ranks(ranks, comms), Options{},
                                         [](SiteId) { return std::string("main"); });
  std::vector<Found> out;
  for (const GlobalPattern& g : r.global)
    out.push_back({g.shape.param("topology"), Edges(g.edges.begin(), g.edges.end())});
  return out;
}

// The union of the edges of every pattern with a topology.
Edges all_edges(const std::vector<Found>& found) {
  Edges e;
  for (const Found& f : found) e.insert(f.edges.begin(), f.edges.end());
  return e;
}

std::vector<Event> cart(std::vector<int64_t> dims, std::vector<int64_t> periods) {
  return {with_lists(make_event("MPI_Cart_create", 1, {{"newcomm", kTopo}}),
                     {{"dims", dims}, {"periods", periods}})};
}

TEST(PatternsNeighbourhood, CartesianNotPeriodic) {
  // 2 x 3, rank = row * 3 + column: up and down are 3 apart, left and
  // right 1, none across the grid's edges.
  const auto found = run(program(6, [](int32_t) { return cart({2, 3}, {0, 0}); }), world_and(6));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].topology, "cartesian");
  EXPECT_EQ(found[0].edges, (Edges{{0, 1},
                                   {0, 3},
                                   {1, 0},
                                   {1, 2},
                                   {1, 4},
                                   {2, 1},
                                   {2, 5},
                                   {3, 0},
                                   {3, 4},
                                   {4, 1},
                                   {4, 3},
                                   {4, 5},
                                   {5, 2},
                                   {5, 4}}));
}

TEST(PatternsNeighbourhood, CartesianPeriodic) {
  const auto ring = run(program(3, [](int32_t) { return cart({3}, {1}); }), world_and(3));
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_EQ(ring[0].edges, (Edges{{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}}));
  const auto line = run(program(3, [](int32_t) { return cart({3}, {0}); }), world_and(3));
  ASSERT_EQ(line.size(), 1u);
  EXPECT_EQ(line[0].edges, (Edges{{0, 1}, {1, 0}, {1, 2}, {2, 1}}));
  // Periodic along 2 ranks: both neighbours are the other rank, and along
  // 1 the rank itself, which is no edge.
  const auto two = run(program(2, [](int32_t) { return cart({2, 1}, {1, 1}); }), world_and(2));
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].edges, (Edges{{0, 1}, {1, 0}}));
}

TEST(PatternsNeighbourhood, Graph) {
  // Directed on purpose: 0 -> 1, 2; 1 -> 2; 2 -> 0 (index and edges as
  // MPI_Graph_create takes them, the whole graph on every rank).
  const auto found = run(program(3,
                                 [](int32_t) {
                                   return std::vector<Event>{with_lists(
                                       make_event("MPI_Graph_create", 1, {{"newcomm", kTopo}}),
                                       {{"gindex", {2, 3, 4}}, {"gedges", {1, 2, 2, 0}}})};
                                 }),
                         world_and(3));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].topology, "graph");
  EXPECT_EQ(found[0].edges, (Edges{{0, 1}, {0, 2}, {1, 2}, {2, 0}}));
}

std::vector<Event> dist(std::vector<int64_t> offsets, int64_t newcomm = kTopo) {
  // As the recorder keeps MPI_Dist_graph_create_adjacent: destinations as
  // offsets from the caller's rank.
  return {with_lists(make_event("MPI_Dist_graph_create_adjacent", 1, {{"newcomm", newcomm}}),
                     {{"gsrcs", offsets}, {"gdsts", offsets}})};
}

TEST(PatternsNeighbourhood, DistributedGraph) {
  // Each rank sends 1 and 2 on, round 4 ranks.
  const auto found = run(program(4, [](int32_t) { return dist({1, 2}); }), world_and(4));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].topology, "distributed graph");
  EXPECT_EQ(found[0].edges,
            (Edges{{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}, {2, 0}, {3, 0}, {3, 1}}));
  // Ranks whose lists differ (rank 0 sends to 2 only, the others 1 on).
  const auto uneven =
      run(program(3, [](int32_t r) { return r == 0 ? dist({2}) : dist({1}); }), world_and(3));
  EXPECT_EQ(all_edges(uneven), (Edges{{0, 2}, {1, 2}, {2, 0}}));
}

TEST(PatternsNeighbourhood, CartesianSubGrid) {
  // MPI_Cart_sub of a 2 x 3 grid periodic along its rows, keeping the
  // rows: two rings of 3, {0, 1, 2} and {3, 4, 5}. The recorder keeps no
  // remain_dims; the sub-grid's groups say which dimension is kept.
  const auto found =
      run(program(
              6,
              [](int32_t) {
                std::vector<Event> e = cart({2, 3}, {0, 1});
                e.push_back(make_event("MPI_Cart_sub", 3, {{"comm", kTopo}, {"newcomm", kSub}}));
                return e;
              },
              kSub),
          world_and(6, {{0, 1, 2}, {3, 4, 5}}));
  ASSERT_FALSE(found.empty());
  for (const Found& f : found) EXPECT_EQ(f.topology, "cartesian");
  EXPECT_EQ(all_edges(found), (Edges{{0, 1},
                                     {0, 2},
                                     {1, 0},
                                     {1, 2},
                                     {2, 0},
                                     {2, 1},
                                     {3, 4},
                                     {3, 5},
                                     {4, 3},
                                     {4, 5},
                                     {5, 3},
                                     {5, 4}}));
}

TEST(PatternsNeighbourhood, TwoCommunicatorsInOnePatternAreSplit) {
  // One loop: MPI_Neighbor_alltoall on a ring of 4 (Cartesian, periodic),
  // then MPI_Neighbor_allgather on a distributed graph 2 on.
  std::vector<std::vector<Event>> ranks(4);
  for (int32_t r = 0; r < 4; ++r) {
    auto& ev = ranks[static_cast<std::size_t>(r)];
    ev = cart({4}, {1});
    for (Event& e : dist({2}, kOther)) ev.push_back(std::move(e));
    for (int i = 0; i < 3; ++i) {
      ev.push_back(
          make_event("MPI_Neighbor_alltoall", 2, {{"comm", kTopo}, {"count", 1}, {"dsize", 4}}));
      ev.push_back(
          make_event("MPI_Neighbor_allgather", 3, {{"comm", kOther}, {"count", 1}, {"dsize", 4}}));
    }
  }
  const auto found = run(ranks, world_and(4));
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].topology, "cartesian");
  EXPECT_EQ(found[0].edges,
            (Edges{{0, 1}, {0, 3}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 0}, {3, 2}}));
  EXPECT_EQ(found[1].topology, "distributed graph");
  EXPECT_EQ(found[1].edges, (Edges{{0, 2}, {1, 3}, {2, 0}, {3, 1}}));
}

}  // namespace
}  // namespace tracefold::patterns
