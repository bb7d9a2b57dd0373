// Inter-process merge (seed 000, 5.2.4) and ranklists of communication groups
// (seed 000, 2.2).
#include "tracefold/merge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "stencil.hpp"
#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using testing::expands_to;
using testing::for_each_elastic;
using testing::make_event;
using testing::make_sites;
using testing::Stencil;
using testing::StencilKind;

// ------------------------------------------------------------ Figure 5.4/5.5

// Call sites of Figure 5.4: both ranks run the same program, so the loop's
// Isend/Irecv and the final Waitall are the same sites on both ranks; rank 0's
// Isend/Irecv after the loop are sites of their own.
constexpr SiteId kLoopIsend = 0, kLoopIrecv = 1, kTailIsend = 2, kTailIrecv = 3, kWaitall = 4;

Event p2p(const char* op, SiteId site, int64_t peer) {
  return make_event(op, site,
                    {{"peer", peer}, {"tag", 0}, {"count", 8}, {"dsize", 8}, {"comm", 0}});
}

Event waitall(int64_t requests) {
  Event e = make_event("MPI_Waitall", kWaitall, {{"req", requests}});
  std::vector<int64_t> links;
  for (int64_t i = requests; i >= 1; --i) links.push_back(i);
  e.set_list(FieldTable::links(), links);
  return e;
}

std::vector<Event> figure54_events(int32_t rank) {
  std::vector<Event> out;
  if (rank == 0) {
    for (int i = 0; i < 5; ++i) {
      out.push_back(p2p("MPI_Isend", kLoopIsend, 1));
      out.push_back(p2p("MPI_Irecv", kLoopIrecv, 1));
    }
    out.push_back(p2p("MPI_Isend", kTailIsend, 1));
    out.push_back(p2p("MPI_Irecv", kTailIrecv, 1));
    out.push_back(waitall(12));
  } else {
    for (int i = 0; i < 6; ++i) {
      out.push_back(p2p("MPI_Isend", kLoopIsend, 0));
      out.push_back(p2p("MPI_Irecv", kLoopIrecv, 0));
      out.push_back(waitall(2));
    }
  }
  return out;
}

// Folds one rank of Figure 5.4. `site_order` permutes the site table the rank
// uses (site id s of the program becomes site_order[s] in this rank's table),
// as two processes may well intern their call sites in different orders.
Trace figure54_rank(int32_t rank, std::vector<SiteId> site_order = {0, 1, 2, 3, 4}) {
  const SiteTable program = make_sites(5);
  SiteTable local;
  std::vector<SiteId> inverse(5);
  for (SiteId i = 0; i < 5; ++i) inverse[site_order[i]] = i;
  for (SiteId i = 0; i < 5; ++i) local.intern(program.at(inverse[i]));
  CommTable comms;
  comms.define_world(2);
  Folder f(rank);
  for (Event e : figure54_events(rank)) {
    e.site = site_order[e.site];
    encode_relative(e, rank, comms);
    f.append(e);
  }
  return f.finish(2, local, comms);
}

std::vector<int64_t> values_for(const Elastic& el, int32_t rank) {
  const ValueSeq* v = el.for_rank(rank);
  return v ? v->to_vector() : std::vector<int64_t>{999999};
}

TEST(Merge, Figure55LoopAgnosticMerge) {
  Trace merged = merge_traces(figure54_rank(0), figure54_rank(1));
  const SiteTable program = make_sites(5);
  struct Expect {
    const char* op;
    SiteId site;
    const char* ranks;
  };
  const std::vector<Expect> expect = {{"MPI_Isend", kLoopIsend, "<1 0 2 1>"},
                                      {"MPI_Irecv", kLoopIrecv, "<1 0 2 1>"},
                                      {"MPI_Isend", kTailIsend, "<0 0>"},
                                      {"MPI_Irecv", kTailIrecv, "<0 0>"},
                                      {"MPI_Waitall", kWaitall, "<1 0 2 1>"}};
  ASSERT_EQ(merged.nodes.size(), expect.size()) << format_trace(merged);
  for (std::size_t i = 0; i < expect.size(); ++i) {
    const Node& n = merged.nodes[i];
    EXPECT_EQ(OpTable::name(n.key.op), expect[i].op) << "node " << i;
    EXPECT_EQ(merged.sites.at(n.key.site), program.at(expect[i].site)) << "node " << i;
    EXPECT_EQ(n.ranks.to_string(), expect[i].ranks) << "node " << i;
  }
  // The loop is headed by the shared Isend, with per-rank (members, iterations).
  const Node& head = merged.nodes[0];
  ASSERT_EQ(head.loops.size(), 1u) << format_trace(merged);
  EXPECT_EQ(values_for(head.loops[0].members, 0), std::vector<int64_t>{2});
  EXPECT_EQ(values_for(head.loops[0].iters, 0), std::vector<int64_t>{5});
  EXPECT_EQ(values_for(head.loops[0].members, 1), std::vector<int64_t>{3});
  EXPECT_EQ(values_for(head.loops[0].iters, 1), std::vector<int64_t>{6});
  EXPECT_EQ(head.loops[0].members.entries().size(), 2u);
  for (std::size_t i = 1; i < merged.nodes.size(); ++i)
    EXPECT_TRUE(merged.nodes[i].loops.empty()) << "node " << i << "\n" << format_trace(merged);
  // Peers relative to the caller: both ranks talk to "the next rank" (+1 mod
  // 2), once per execution (5 times on rank 0, 6 times on rank 1).
  const Elastic* peer = head.field(FieldTable::peer());
  ASSERT_NE(peer, nullptr);
  EXPECT_EQ(values_for(*peer, 0), std::vector<int64_t>(5, 1)) << peer->to_string();
  EXPECT_EQ(values_for(*peer, 1), std::vector<int64_t>(6, 1)) << peer->to_string();
  // The Waitall differs in its links (12 requests vs 2), so it keeps two entries.
  const Elastic* links = merged.nodes[4].field(FieldTable::links());
  ASSERT_NE(links, nullptr);
  EXPECT_EQ(links->entries().size(), 2u) << links->to_string();

  for (int32_t r = 0; r < 2; ++r) EXPECT_TRUE(expands_to(merged, r, figure54_events(r), program));
}

TEST(Merge, Figure55EitherOrderExpandsExactly) {
  const SiteTable program = make_sites(5);
  Trace ba = merge_traces(figure54_rank(1), figure54_rank(0));
  ASSERT_EQ(ba.nodes.size(), 5u) << format_trace(ba);
  for (int32_t r = 0; r < 2; ++r) EXPECT_TRUE(expands_to(ba, r, figure54_events(r), program));
  // The same five nodes, whatever the order of the operands.
  Trace ab = merge_traces(figure54_rank(0), figure54_rank(1));
  canonicalize_sites(ab);
  canonicalize_sites(ba);
  EXPECT_EQ(ab.sites.all(), ba.sites.all());
}

TEST(Merge, DifferentSiteTablesMatchBySignature) {
  // Rank 1 interned its sites in the opposite order: the merge must still
  // match on frames, and canonicalize_sites must make the bytes identical.
  const SiteTable program = make_sites(5);
  Trace plain = merge_traces(figure54_rank(0), figure54_rank(1));
  Trace permuted = merge_traces(figure54_rank(0), figure54_rank(1, {4, 3, 2, 1, 0}));
  ASSERT_EQ(permuted.nodes.size(), 5u) << format_trace(permuted);
  for (int32_t r = 0; r < 2; ++r) EXPECT_TRUE(expands_to(permuted, r, figure54_events(r), program));
  canonicalize_sites(plain);
  canonicalize_sites(permuted);
  EXPECT_EQ(format_trace(plain), format_trace(permuted));
}

TEST(Merge, RefusesOverlappingRanksAndDifferentWorlds) {
  Trace r0 = figure54_rank(0);
  EXPECT_THROW(merge_traces(r0, r0), std::invalid_argument);
  Trace both = merge_traces(r0, figure54_rank(1));
  EXPECT_THROW(merge_traces(both, figure54_rank(1)), std::invalid_argument);
  EXPECT_THROW(merge_traces(figure54_rank(0), both), std::invalid_argument);

  Stencil small{.side = 2, .steps = 3};
  Stencil big{.side = 3, .steps = 3};
  EXPECT_THROW(merge_traces(small.fold_rank(0), big.fold_rank(1)), std::invalid_argument);
  EXPECT_THROW(reduce_traces({small.fold_rank(0), big.fold_rank(1)}), std::invalid_argument);
}

TEST(Merge, CanonicalizeSitesRenumbersByFirstUseAndDropsUnused) {
  // Sites 0..5 declared; the node list uses 4, 1, 4, 3 (0, 2 and 5 unused).
  SiteTable sites = make_sites(6);
  CommTable comms;
  comms.define_world(1);
  Folder f(0);
  std::vector<Event> in;
  for (int i = 0; i < 3; ++i) {
    in.push_back(make_event("MPI_Barrier", 4));
    in.push_back(make_event("MPI_Send", 1, {{"peer", 0}, {"count", i}}));
  }
  in.push_back(make_event("MPI_Barrier", 3));
  for (Event e : in) {
    e.compute_ns = 10;
    e.comm_ns = 20;
    encode_relative(e, 0, comms);
    f.append(e);
  }
  Trace t = f.finish(1, sites, comms);
  canonicalize_sites(t);
  ASSERT_EQ(t.sites.size(), 3u) << format_trace(t);
  EXPECT_EQ(t.sites.at(0), sites.at(4));
  EXPECT_EQ(t.sites.at(1), sites.at(1));
  EXPECT_EQ(t.sites.at(2), sites.at(3));
  for (const Node& n : t.nodes) {
    EXPECT_LT(n.key.site, t.sites.size());
    for (const Timing& tm : n.timings) {
      if (tm.pred == kStartKey) continue;
      EXPECT_LT(tm.pred.site, t.sites.size());
    }
    EXPECT_TRUE(std::is_sorted(n.timings.begin(), n.timings.end(),
                               [](const Timing& a, const Timing& b) { return a.pred < b.pred; }));
  }
  EXPECT_TRUE(expands_to(t, 0, in, sites));
  // Idempotent, and the result survives a round trip through the text form.
  const std::string once = format_trace(t);
  canonicalize_sites(t);
  EXPECT_EQ(format_trace(t), once);
  EXPECT_EQ(format_trace(parse_trace(once)), once);
}

// ------------------------------------------------------------- stencil groups

std::set<std::string> all_entry_ranklists(const Trace& t) {
  std::set<std::string> out;
  for_each_elastic(t, [&](std::size_t, const std::string&, const Elastic& el) {
    for (const auto& e : el.entries()) out.insert(e.ranks.to_string());
  });
  return out;
}

TEST(Merge, OpenStencilEveryRankExpandsExactly) {
  for (int32_t side : {1, 2, 3, 5}) {
    Stencil s{.side = side, .steps = 7};
    Trace t = reduce_traces(s.fold_all());
    EXPECT_EQ(t.world_size, s.size());
    EXPECT_EQ(t.ranks().size(), static_cast<std::size_t>(s.size()));
    for (int32_t r = 0; r < s.size(); ++r)
      EXPECT_TRUE(expands_to(t, r, s.events(r), Stencil::sites())) << "side " << side;
  }
}

// The non-periodic 26-neighbour exchange (tests/apps/halo26.c) on an n^3
// grid: every rank receives from the neighbours it has, in one fixed order
// of the 26 directions, each direction its own call site, then waits. Each
// rank's calls are a subsequence of one program order, so the merge can give
// every call site exactly one node; an order guessed wrong in an early merge
// (two directions that no rank of either side had both of) used to cost
// later merges a match: 27 ranks got 54 nodes for 27 sites (radix 2; 47
// at radix 4, 29 for 8 ranks at radix 4).
std::vector<Event> halo26_events(int32_t rank, int n, int steps) {
  const int c[3] = {rank / (n * n), rank / n % n, rank % n};
  std::vector<Event> out;
  for (int s = 0; s < steps; ++s) {
    int requests = 0;
    SiteId site = 0;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          if (dx == 0 && dy == 0 && dz == 0) continue;
          const int x = c[0] + dx, y = c[1] + dy, z = c[2] + dz;
          const SiteId here = site++;
          if (x < 0 || y < 0 || z < 0 || x >= n || y >= n || z >= n) continue;
          out.push_back(make_event("MPI_Irecv", here,
                                   {{"peer", (x * n + y) * n + z}, {"tag", here}, {"count", 8}}));
          ++requests;
        }
    out.push_back(make_event("MPI_Waitall", 26, {{"req", requests}}));
  }
  return out;
}

TEST(Merge, SubsequencesOfOneProgramOrderGiveOneNodePerCallSite) {
  const SiteTable sites = make_sites(27);
  for (int n : {2, 3, 4}) {
    const int32_t size = n * n * n;
    CommTable comms;
    comms.define_world(size);
    std::vector<Trace> traces;
    for (int32_t r = 0; r < size; ++r) {
      Folder f(r);
      for (Event e : halo26_events(r, n, 3)) {
        encode_relative(e, r, comms);
        f.append(e);
      }
      traces.push_back(f.finish(size, sites, comms));
    }
    for (int radix : {2, 4}) {
      const Trace t = reduce_traces(traces, radix);
      EXPECT_EQ(t.nodes.size(), 27u) << n << "^3 ranks, radix " << radix;
      for (int32_t r = 0; r < size; ++r)
        EXPECT_TRUE(expands_to(t, r, halo26_events(r, n, 3), sites)) << n << "^3, radix " << radix;
    }
  }
}

// Seed 000, Figure 2.2: on a 5x5 row-major grid the interior ranks
// {6,7,8,11,12,13,16,17,18} form one communication group, <2 6 3 5 3 1>.
TEST(Merge, Figure22InteriorGroupRanklist) {
  Stencil s{.side = 5, .steps = 20};
  Trace t = reduce_traces(s.fold_all());
  const std::string interior = "<2 6 3 5 3 1>";
  EXPECT_EQ(Ranklist::parse(interior).to_vector(),
            (std::vector<int32_t>{6, 7, 8, 11, 12, 13, 16, 17, 18}));

  // The Waitall completes 2 requests per neighbour: its links tell the corner
  // (2 neighbours), edge (3) and interior (4) groups apart.
  const Node* wait = nullptr;
  for (const Node& n : t.nodes)
    if (OpTable::name(n.key.op) == "MPI_Waitall") wait = &n;
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->ranks.to_string(), "<1 0 25 1>");
  const Elastic* links = wait->field(FieldTable::links());
  ASSERT_NE(links, nullptr);
  std::map<std::string, std::string> by_ranks;
  for (const auto& e : links->entries()) by_ranks[e.ranks.to_string()] = e.values.to_string();
  ASSERT_EQ(by_ranks.size(), 3u) << links->to_string();
  ASSERT_TRUE(by_ranks.count(interior)) << links->to_string();
  const std::string corners = Ranklist::from_ranks({0, 4, 20, 24}).to_string();
  const std::string edges =
      Ranklist::from_ranks({1, 2, 3, 5, 10, 15, 9, 14, 19, 21, 22, 23}).to_string();
  EXPECT_TRUE(by_ranks.count(corners)) << corners << " in " << links->to_string();
  EXPECT_TRUE(by_ranks.count(edges)) << edges << " in " << links->to_string();
  for (const auto& e : links->entries()) {
    const auto v = e.values.to_vector();
    ASSERT_FALSE(v.empty());
    // One list per step: length prefix then elements.
    if (e.ranks.to_string() == interior) {
      EXPECT_EQ(v[0], 8) << e.values.to_string();
    }
  }
  // And it is visible as such in the file.
  EXPECT_NE(format_trace(t).find("@ " + interior), std::string::npos);

  // Nine groups: every entry's ranklist is a union of whole groups, and no
  // value needs more than 9 entries.
  std::vector<int> group(25);
  for (int32_t r = 0; r < 25; ++r) {
    const int row = r / 5, col = r % 5;
    group[r] = 3 * (row == 0 ? 0 : row == 4 ? 2 : 1) + (col == 0 ? 0 : col == 4 ? 2 : 1);
  }
  for_each_elastic(t, [&](std::size_t i, const std::string& what, const Elastic& el) {
    EXPECT_LE(el.entries().size(), 9u) << "node " << i << " " << what;
    for (const auto& e : el.entries()) {
      std::set<int> gs;
      e.ranks.for_each([&](int32_t r) { gs.insert(group[r]); });
      for (int g : gs) {
        for (int32_t r = 0; r < 25; ++r) {
          if (group[r] == g && el.for_rank(r) != nullptr) {
            EXPECT_TRUE(e.ranks.contains(r))
                << "node " << i << " " << what << ": group " << g << " split at rank " << r;
          }
        }
      }
    }
  });
  for (int32_t r = 0; r < s.size(); ++r)
    EXPECT_TRUE(expands_to(t, r, s.events(r), Stencil::sites()));
}

TEST(Merge, PeriodicStencilWithRowAndColumnCommsIsOneGroup) {
  Stencil s{.side = 4, .steps = 12, .kind = StencilKind::kPeriodicComms};
  Trace t = reduce_traces(s.fold_all());
  EXPECT_EQ(t.nodes.size(), 10u) << format_trace(t);
  const std::string everyone = "<1 0 16 1>";
  for (const Node& n : t.nodes) EXPECT_EQ(n.ranks.to_string(), everyone);
  for_each_elastic(t, [&](std::size_t i, const std::string& what, const Elastic& el) {
    ASSERT_EQ(el.entries().size(), 1u) << "node " << i << " " << what << ": " << el.to_string();
    EXPECT_EQ(el.entries()[0].ranks.to_string(), everyone) << "node " << i << " " << what;
  });
  // Row and column communicators: 4 groups each, plus the world.
  ASSERT_TRUE(t.comms.all().count(Stencil::kRowComm));
  EXPECT_EQ(t.comms.all().at(Stencil::kRowComm).size(), 4u);
  EXPECT_EQ(t.comms.all().at(Stencil::kColComm).size(), 4u);
  for (int32_t r = 0; r < s.size(); ++r)
    EXPECT_TRUE(expands_to(t, r, s.events(r), Stencil::sites()));
}

TEST(Merge, PeriodicStencilOnWorldSplitsOnlyAtTheWrapAround) {
  // With world-rank peers, (peer - me) mod P is uniform for north/south but the
  // east (west) neighbour of the last (first) column wraps back along the row.
  Stencil s{.side = 4, .steps = 12, .kind = StencilKind::kPeriodicWorld};
  Trace t = reduce_traces(s.fold_all());
  EXPECT_EQ(t.nodes.size(), 10u) << format_trace(t);
  for_each_elastic(t, [&](std::size_t i, const std::string& what, const Elastic& el) {
    EXPECT_LE(el.entries().size(), 2u) << "node " << i << " " << what << ": " << el.to_string();
  });
  EXPECT_LE(all_entry_ranklists(t).size(), 5u);
  for (int32_t r = 0; r < s.size(); ++r)
    EXPECT_TRUE(expands_to(t, r, s.events(r), Stencil::sites()));
}

TEST(Merge, ReduceRadixDoesNotChangeExpansion) {
  Stencil s{.side = 3, .steps = 9};
  Trace two = reduce_traces(s.fold_all(), 2);
  Trace three = reduce_traces(s.fold_all(), 3);
  Trace five = reduce_traces(s.fold_all(), 5);
  for (const Trace* t : {&two, &three, &five}) {
    for (int32_t r = 0; r < s.size(); ++r)
      EXPECT_TRUE(expands_to(*t, r, s.events(r), Stencil::sites()));
  }
  EXPECT_EQ(two.nodes.size(), three.nodes.size());
  EXPECT_EQ(two.nodes.size(), five.nodes.size());
}

TEST(Merge, ReduceTraceOverInMemoryExchangeMatchesReduceTraces) {
  Stencil s{.side = 3, .steps = 6};
  for (int radix : {2, 3}) {
    const Trace expected = reduce_traces(s.fold_all(), radix);
    InMemoryExchange hub(s.size());
    std::vector<std::optional<Trace>> results(static_cast<std::size_t>(s.size()));
    std::vector<std::thread> threads;
    for (int32_t r = 0; r < s.size(); ++r)
      threads.emplace_back([&, r] {
        results[static_cast<std::size_t>(r)] = reduce_trace(s.fold_rank(r), hub.endpoint(r), radix);
      });
    for (auto& th : threads) th.join();
    ASSERT_TRUE(results[0].has_value());
    for (int32_t r = 1; r < s.size(); ++r)
      EXPECT_FALSE(results[static_cast<std::size_t>(r)].has_value());
    EXPECT_EQ(format_trace(*results[0]), format_trace(expected)) << "radix " << radix;
  }
}

// A merge that takes the other side's entries (a merge round's received
// trace) gives what copying them gives, on few entries and on enough of
// them to be matched by value hash; equal sequences still share an entry.
TEST(Merge, ElasticMergeByMoveGivesWhatACopyGives) {
  for (int ranks : {3, 40}) {
    Elastic a, b;
    for (int r = 0; r < ranks; ++r) {
      // Every third rank of b has the sequence of a rank of a; the rest
      // have their own.
      ValueSeq va, vb;
      for (int k = 0; k <= r % 7; ++k) {
        va.push_back(r * 10 + k);
        vb.push_back(1000 + r * 10 + k);
      }
      a.merge(Elastic::of(va, 2 * r));
      b.merge(Elastic::of(r % 3 == 1 ? va : vb, 2 * r + 1));
    }
    Elastic copied = a, moved = a, from = b;
    copied.merge(b);
    moved.merge(std::move(from));
    EXPECT_EQ(moved.to_string(), copied.to_string()) << ranks << " ranks a side";
    EXPECT_TRUE(from.empty());
    EXPECT_LT(copied.entries().size(), a.entries().size() + b.entries().size());
  }
}

TEST(Merge, ReductionRounds) {
  EXPECT_EQ(reduction_rounds(1, 2), 0);
  EXPECT_EQ(reduction_rounds(2, 2), 1);
  EXPECT_EQ(reduction_rounds(5, 2), 3);
  EXPECT_EQ(reduction_rounds(1024, 2), 10);
  EXPECT_EQ(reduction_rounds(1024, 4), 5);
  EXPECT_EQ(reduction_rounds(9, 3), 2);
  EXPECT_EQ(reduction_rounds(10, 3), 3);
  EXPECT_THROW(reduction_rounds(4, 1), std::invalid_argument);
}

}  // namespace
// Every reason a trace is lossy survives the merge once: a rank whose
// tracing turned off must not be hidden by another rank's label, and labels
// every rank shares (a histogram threshold) are not repeated.
TEST(Merge, LossyReasonsFromBothSidesEachOnce) {
  Trace a = figure54_rank(0), b = figure54_rank(1);
  a.lossy = "histogram threshold=16";
  b.lossy = "histogram threshold=16; rank 1 recorded nothing (out of memory)";
  EXPECT_EQ(merge_traces(a, b).lossy,
            "histogram threshold=16; rank 1 recorded nothing (out of memory)");
  a.lossy.clear();
  EXPECT_EQ(merge_traces(a, b).lossy, b.lossy);
  b.lossy.clear();
  EXPECT_EQ(merge_traces(a, b).lossy, "");
  // Bounded: a thousand ranks' reasons do not make a thousand-part label.
  a.lossy = std::string(500, 'a');
  b.lossy = "rank 1 recorded nothing (x)";
  EXPECT_EQ(merge_traces(a, b).lossy, a.lossy + "; ...");
}

}  // namespace tracefold
