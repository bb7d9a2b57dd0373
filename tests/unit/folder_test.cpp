#include "tracefold/folder.hpp"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "random_program.hpp"
#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using testing::make_event;
using testing::make_sites;

std::vector<Event> expand_single(const Folder& f, std::size_t nsites) {
  CommTable comms;
  comms.define_world(1);
  return expand_rank(f.finish(1, make_sites(nsites), comms), 0);
}

// Seed 000, Figure 5.1: iteration-specific events fold into one 2-iteration
// loop E1(4,2) E2(1,1 0) E3(1,0 1) E4.
// The two iterations share 2 of their 3 calls (similarity 2/3), below the
// default threshold of 0.8, so the example asks for approximate matching at
// the paper's looser setting.
TEST(Folder, Figure51IterationSpecificEvents) {
  FoldOptions loose;
  loose.min_similarity = 0.6;
  Folder f(0, loose);
  std::vector<Event> in;
  for (int i = 0; i < 2; ++i) {
    in.push_back(make_event("MPI_Barrier", 0));
    if (i == 0) in.push_back(make_event("MPI_Isend", 1, {{"peer", 0}}));
    if (i == 1) in.push_back(make_event("MPI_Irecv", 2, {{"peer", 0}}));
    in.push_back(make_event("MPI_Barrier", 3));
  }
  for (auto& e : in) f.append(e);
  CommTable comms;
  comms.define_world(1);
  Trace t = f.finish(1, make_sites(4), comms);
  ASSERT_EQ(t.nodes.size(), 4u);
  ASSERT_EQ(t.nodes[0].loops.size(), 1u);
  EXPECT_EQ(t.nodes[0].loops[0].members.to_string(), "4 @ <0 0>");
  EXPECT_EQ(t.nodes[0].loops[0].iters.to_string(), "2 @ <0 0>");
  EXPECT_EQ(t.nodes[1].count.to_string(), "1 0 @ <0 0>");
  EXPECT_EQ(t.nodes[2].count.to_string(), "0 1 @ <0 0>");
  EXPECT_EQ(t.nodes[3].count.to_string(), "1*2 @ <0 0>");
  auto out = expand_rank(t, 0);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_TRUE(out[i].same_call(in[i])) << i;
}

// Seed 000, Figure 5.2: an outer loop whose inner trip count varies must fold
// to a trace whose size does not grow with the number of outer iterations.
std::size_t figure52_size(int steps, std::string* structure = nullptr) {
  Folder f(0);
  for (int i = 0; i < steps; ++i) {
    f.append(make_event("MPI_Allreduce", 0, {{"count", 1}}));
    const int n = 1 + i % 3;
    for (int j = 0; j < n; ++j) {
      f.append(make_event("MPI_Isend", 1, {{"peer", 0}}));
      f.append(make_event("MPI_Irecv", 2, {{"peer", 0}}));
      f.append(make_event("MPI_Waitall", 3));
    }
  }
  if (structure) *structure = f.structure();
  CommTable comms;
  comms.define_world(1);
  return format_trace(f.finish(1, make_sites(4), comms)).size();
}

TEST(Folder, Figure52TrailingIterationsFoldToConstantSize) {
  std::string s100, s1000;
  const std::size_t a = figure52_size(100, &s100);
  const std::size_t b = figure52_size(1000, &s1000);
  EXPECT_EQ(s100.substr(0, 1), "[") << s100;
  EXPECT_LE(b, a + a / 20) << s100 << "\n" << s1000;
}

TEST(Folder, ExpandsExactlyForFigure52) {
  Folder f(0);
  std::vector<Event> in;
  for (int i = 0; i < 50; ++i) {
    in.push_back(make_event("MPI_Allreduce", 0, {{"count", i % 4}}));
    const int n = 1 + (i * 7) % 5;
    for (int j = 0; j < n; ++j) {
      in.push_back(make_event("MPI_Isend", 1, {{"peer", 0}, {"tag", j}}));
      in.push_back(make_event("MPI_Irecv", 2, {{"peer", 0}}));
      in.push_back(make_event("MPI_Waitall", 3));
    }
  }
  for (auto& e : in) f.append(e);
  auto out = expand_single(f, 4);
  ASSERT_EQ(out.size(), in.size()) << f.structure();
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(out[i].same_call(in[i])) << i;
}

// A time step of 200 calls from 200 call sites (a 3-D exchange written out
// once per direction) is longer than any window: the step loop must still
// fold, into one loop whose body holds each call once, with the same
// result on the fast and the general path, and expand exactly.
std::vector<Event> long_body_program(int steps, int sites) {
  std::vector<Event> in;
  for (int i = 0; i < steps; ++i)
    for (int c = 0; c < sites; ++c)
      in.push_back(make_event(c % 3 == 0 ? "MPI_Irecv" : "MPI_Isend", static_cast<SiteId>(c),
                              {{"peer", c % 7}, {"tag", c}}));
  return in;
}

TEST(Folder, LoopBodyLongerThanWindowFolds) {
  const auto in = long_body_program(30, 200);
  for (const std::size_t window : {std::size_t{2}, std::size_t{64}}) {
    for (const bool fast : {true, false}) {
      FoldOptions o;
      o.window = window;
      o.fast_path = fast;
      Folder f(0, o);
      for (const auto& e : in) f.append(e);
      EXPECT_EQ(f.top_level_size(), 1u) << "window " << window << " fast " << fast;
      CommTable comms;
      comms.define_world(16);
      const Trace t = f.finish(16, make_sites(200), comms);
      EXPECT_EQ(t.nodes.size(), 200u);
      ASSERT_EQ(t.nodes[0].loops.size(), 1u);
      EXPECT_EQ(t.nodes[0].loops[0].iters.to_string(), "30 @ <0 0>");
      const auto out = expand_rank(t, 0);
      ASSERT_EQ(out.size(), in.size());
      for (std::size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(out[i].same_call(in[i])) << i;
    }
  }
}

// A recursive V-cycle: every level has its own call sites (its own call
// path), each halo exchange has one call site per direction, and a cycle
// is ~220 calls, more top-level items than the window holds. The
// trace must not grow with the number of cycles, and the fast path must
// fold exactly as the general path does.
std::vector<Event> vcycle_program(int cycles) {
  std::vector<Event> in;
  const int levels = 4;
  auto halo = [&](SiteId base, int n) {
    for (SiteId axis = 0; axis < 2; ++axis)
      for (SiteId dir = 0; dir < 2; ++dir) {
        const SiteId at = base + 6 * axis + 3 * dir;
        const int64_t peer = 1 + axis;
        in.push_back(make_event("MPI_Irecv", at, {{"peer", peer}, {"count", n}}));
        in.push_back(make_event("MPI_Isend", at + 1, {{"peer", 3 - peer}, {"count", n}}));
        in.push_back(make_event("MPI_Waitall", at + 2));
      }
  };
  for (int c = 0; c < cycles; ++c) {
    for (int l = 0; l < levels - 1; ++l) {
      for (int s = 0; s < 2; ++s) halo(static_cast<SiteId>(100 * l + 12 * s), 32 >> l);
      halo(static_cast<SiteId>(100 * l + 24), 32 >> l);
    }
    for (int k = 0; k < 3; ++k) in.push_back(make_event("MPI_Allreduce", 900, {{"count", 1}}));
    for (int l = levels - 2; l >= 0; --l) {
      halo(static_cast<SiteId>(100 * l + 36), 16 >> l);
      for (int s = 0; s < 2; ++s) halo(static_cast<SiteId>(100 * l + 48 + 12 * s), 32 >> l);
    }
    in.push_back(make_event("MPI_Allreduce", 901, {{"count", 1}}));
  }
  return in;
}

// A folder that takes the general path for every event (for comparisons).
Folder general_folder() {
  FoldOptions general;
  general.fast_path = false;
  return Folder(0, general);
}

void fold_both(const std::vector<Event>& in, Folder& f, Folder& g) {
  for (const auto& e : in) {
    f.append(e);
    g.append(e);
  }
}

TEST(Folder, VCycleFoldsIntoItsOuterLoop) {
  std::string s10, s100, slow;
  std::size_t b10 = 0, b100 = 0;
  for (const int cycles : {10, 100}) {
    const auto in = vcycle_program(cycles);
    Folder f(0), g = general_folder();
    fold_both(in, f, g);
    EXPECT_EQ(f.top_level_size(), 1u) << f.structure();
    EXPECT_EQ(f.structure(), g.structure());
    CommTable comms;
    comms.define_world(16);
    const Trace t = f.finish(16, make_sites(902), comms);
    EXPECT_EQ(format_trace(t), format_trace(g.finish(16, make_sites(902), comms)));
    const auto out = expand_rank(t, 0);
    ASSERT_EQ(out.size(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(out[i].same_call(in[i])) << i;
    (cycles == 10 ? b10 : b100) = format_trace(t).size();
  }
  EXPECT_LE(b100, b10 + b10 / 20);
}

// stencil3d's time step on two ranks, `[[[Irecv]*6 [Isend]*6 Waitall]*5
// Allreduce]*steps`, Waitall with its request links (a list field).
std::vector<Event> stencil3d_program(int steps) {
  std::vector<Event> out;
  out.push_back(make_event("MPI_Init", 0));
  for (int s = 0; s < steps; ++s) {
    for (int f = 0; f < 6; ++f)
      out.push_back(make_event("MPI_Irecv", 1, {{"peer", f < 2}, {"tag", f ^ 1}, {"count", 64}}));
    for (int f = 0; f < 6; ++f)
      out.push_back(make_event("MPI_Isend", 2, {{"peer", f < 2}, {"tag", f}, {"count", 64}}));
    Event& w = out.emplace_back(make_event("MPI_Waitall", 3));
    w.set_list(FieldTable::links(), {12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
    w.compute_ns = s % 3;
    if (s % 5 == 4) out.push_back(make_event("MPI_Allreduce", 4, {{"count", 1}}));
  }
  out.push_back(make_event("MPI_Finalize", 5));
  return out;
}

// Once the time-step loop exists, the replay path learns it from one
// iteration folded by the general path (its loop's last trip counts read the
// same after it as before) and takes every later step. The iteration that
// formed the loop spoils its session (it changes items before it); that must
// not hold learning up by a further iteration. All else (events before the
// loop formed, one session) goes the general way.
// The general path merges an event's timing sample into its item at every
// level a fold passes it through, and reuses the emptied records of items
// merged away: every sample must still land exactly once in the histograms
// of its call and predecessor.
TEST(Folder, GeneralPathKeepsEveryTimingSampleOnce) {
  FoldOptions o;
  o.fast_path = false;
  o.elastic_iterations = false;
  Folder f(0, o);
  using Key = std::pair<uint64_t, uint64_t>;  // call, predecessor
  std::map<Key, std::pair<Histogram, Histogram>> want;
  uint64_t pred = kStartKey.packed();
  testing::Rng rng(29);
  auto add = [&](Event e) {
    e.compute_ns = static_cast<int64_t>(rng.below(5000));
    e.comm_ns = static_cast<int64_t>(rng.below(300));
    auto& w = want[{e.key().packed(), pred}];
    w.first.add(e.compute_ns, 0);
    w.second.add(e.comm_ns, 0);
    pred = e.key().packed();
    f.append(e);
  };
  for (int it = 0; it < 80; ++it) {
    add(make_event("MPI_Barrier", 0));
    for (uint64_t k = 1 + rng.below(4); k-- > 0;) add(make_event("MPI_Iprobe", 1));
    add(make_event("MPI_Recv", 2, {{"peer", static_cast<int64_t>(rng.below(3))}}));
    for (uint64_t k = rng.below(3); k-- > 0;) add(make_event("MPI_Test", 3));
    add(make_event("MPI_Allreduce", 4));
  }
  CommTable comms;
  comms.define_world(1);
  const Trace t = f.finish(1, make_sites(5), comms);
  std::map<Key, std::pair<Histogram, Histogram>> got;
  for (const Node& n : t.nodes) {
    for (const Timing& tm : n.timings) {
      auto& g = got[{n.key.packed(), tm.pred.packed()}];
      g.first.merge(tm.compute);
      g.second.merge(tm.comm);
    }
  }
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [key, w] : want) {
    EXPECT_EQ(got[key].first, w.first)
        << got[key].first.to_string() << " vs " << w.first.to_string();
    EXPECT_EQ(got[key].second, w.second);
  }
}

// The general path merges an iteration whose items pair one to one with
// the loop's (and the second stretch of a new loop with the first) where
// they stand: the values of every iteration must still come back in order.
TEST(Folder, GeneralPathMergesPairedIterationsInPlace) {
  FoldOptions o;
  o.fast_path = false;
  o.elastic_iterations = false;
  Folder f(0, o);
  std::vector<Event> in;
  in.push_back(make_event("MPI_Init", 0));
  for (int64_t it = 0; it < 60; ++it) {
    for (int64_t j = 0; j < 3; ++j)
      in.push_back(make_event("MPI_Isend", 1, {{"tag", (it + j) % 5}, {"count", it * j}}));
    in.push_back(make_event("MPI_Waitall", 2));
    in.push_back(make_event("MPI_Allreduce", 3, {{"count", it % 3}}));
  }
  in.push_back(make_event("MPI_Finalize", 4));
  for (const Event& e : in) f.append(e);
  EXPECT_EQ(f.path_counts().general, in.size());
  EXPECT_EQ(f.top_level_size(), 3u) << f.structure();
  const auto out = expand_single(f, 5);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(out[i].same_call(in[i])) << i;
}

TEST(Folder, ReplayLearnsTheTimeStepFromOneIteration) {
  const auto in = stencil3d_program(300);
  Folder f(0), g = general_folder();
  fold_both(in, f, g);
  const FoldPathCounts c = f.path_counts();
  EXPECT_EQ(c.general + c.fast + c.replay + c.repeats, f.events());
  // The loop forms with the second Allreduce (event 1 + 10 * 13 + 2 = 133);
  // one iteration of 66 events follows on the general path, and Finalize.
  const uint64_t at_most_general = 133 + 66 + 1;
  EXPECT_LE(c.general, at_most_general);
  EXPECT_GE(c.replay, in.size() - at_most_general);
  EXPECT_EQ(g.path_counts().general, g.events());
  EXPECT_EQ(f.structure(), g.structure());
  CommTable comms;
  comms.define_world(2);
  EXPECT_EQ(format_trace(f.finish(2, make_sites(6), comms)),
            format_trace(g.finish(2, make_sites(6), comms)));
}

}  // namespace
}  // namespace tracefold

namespace tracefold {
namespace {

// --histogram-threshold counts runs as the text form shows them: values
// that never repeat are stored as one literal span, but each is a run of
// its own, so a sequence of 40 distinct counts goes over a threshold of 8
// while 40 repetitions of one (1 run) and 4 values repeated 10 times each
// (4 runs) stay exact.
TEST(Folder, HistogramThresholdCountsEachValueOfALiteral) {
  FoldOptions lossy;
  lossy.histogram_threshold = 8;
  Folder f(0, lossy);
  for (int i = 0; i < 40; ++i)
    f.append(testing::make_event("MPI_Send", 0, {{"count", 7 * i % 41}}));
  for (int i = 0; i < 40; ++i) f.append(testing::make_event("MPI_Recv", 1, {{"count", 5}}));
  for (int i = 0; i < 40; ++i) f.append(testing::make_event("MPI_Bcast", 2, {{"count", i / 10}}));
  CommTable comms;
  comms.define_world(1);
  const Trace t = f.finish(1, testing::make_sites(3), comms);
  ASSERT_EQ(t.nodes.size(), 3u);
  const FieldId count = *FieldTable::find("count");
  const auto values = [&](std::size_t i) {
    return t.nodes[i].field(count)->entries().at(0).values;
  };
  EXPECT_TRUE(values(0).is_histogram());
  EXPECT_EQ(values(0).size(), 40u);
  EXPECT_FALSE(values(1).is_histogram());
  EXPECT_FALSE(values(2).is_histogram());
  EXPECT_EQ(t.lossy, "histogram threshold=8");
}

// A repeated pattern counts by its values: an irregular code's partners,
// drawn among all ranks, repeat every iteration, and kept exact they make
// the trace grow with the ranks. 20 partners repeated 10 times go over a
// threshold of 8, as do 40 distinct tags (tag is one of the default
// fields); 4 partners repeated 50 times stay exact.
TEST(Folder, HistogramThresholdCountsTheValuesOfARepeatedPattern) {
  FoldOptions lossy;
  lossy.histogram_threshold = 8;
  Folder f(0, lossy);
  for (int i = 0; i < 200; ++i)
    f.append(testing::make_event("MPI_Send", 0, {{"peer", 1 + 3 * (i % 20) % 41}}));
  for (int i = 0; i < 200; ++i) f.append(testing::make_event("MPI_Recv", 1, {{"src", 1 + i % 4}}));
  for (int i = 0; i < 40; ++i) f.append(testing::make_event("MPI_Bcast", 2, {{"tag", 7 * i % 41}}));
  CommTable comms;
  comms.define_world(64);
  const Trace t = f.finish(64, testing::make_sites(3), comms);
  ASSERT_EQ(t.nodes.size(), 3u);
  const auto values = [&](std::size_t i, const char* field) {
    return t.nodes[i].field(*FieldTable::find(field))->entries().at(0).values;
  };
  EXPECT_TRUE(values(0, "peer").is_histogram());
  EXPECT_EQ(values(0, "peer").size(), 200u);
  EXPECT_FALSE(values(1, "src").is_histogram());
  EXPECT_TRUE(values(2, "tag").is_histogram());
  EXPECT_EQ(values(2, "tag").size(), 40u);
}

}  // namespace
}  // namespace tracefold
