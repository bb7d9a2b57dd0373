// What a finished trace keeps of its timing (settle_timings, trace.hpp):
// predecessors with alike times share one `pred=other` block, bin sums become
// count * rounded mean, and both forms (text version 5, compact version 5)
// hold the result exactly; the readers fall back to the `other` block.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sample_traces.hpp"
#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using testing::make_sites;

Histogram of(std::initializer_list<int64_t> values, int32_t rank = 0) {
  Histogram h;
  for (int64_t v : values) h.add(v, rank);
  return h;
}

Timing block(EventKey pred, Histogram compute, Histogram comm) {
  Timing t;
  t.pred = pred;
  t.compute = std::move(compute);
  t.comm = std::move(comm);
  return t;
}

// One node (an MPI_Recv at site 3) with the given blocks, sites 0..3.
Trace one_node(std::vector<Timing> blocks) {
  Trace t;
  t.world_size = 4;
  t.comms.define_world(4);
  t.sites = make_sites(4);
  Node n;
  n.key = EventKey{*OpTable::find("MPI_Barrier"), 3};
  n.ranks = Ranklist::range(0, 4);
  n.count = Elastic::of(ValueSeq::repeated(1, 1), 0);
  for (int32_t r = 1; r < 4; ++r) n.count.merge(Elastic::of(ValueSeq::repeated(1, 1), r));
  std::sort(blocks.begin(), blocks.end(),
            [](const Timing& x, const Timing& y) { return x.pred < y.pred; });
  n.timings = std::move(blocks);
  t.nodes.push_back(std::move(n));
  return t;
}

EventKey irecv(SiteId site) {
  return EventKey{*OpTable::find("MPI_Irecv"), site};
}

TEST(Histogram, RoundBinMeansKeepsEveryMeanToHalfAUnit) {
  Histogram h = of({100, 101, 101, 103, 1000, 1001});
  const Histogram before = h;
  h.round_bin_means();
  ASSERT_EQ(h.bins().size(), 2u);
  // 405 / 4 = 101.25 -> 101 * 4; the bin of two keeps its exact sum.
  EXPECT_EQ(h.bins()[0].sum, 404);
  EXPECT_EQ(h.bins()[1].sum, 2001);
  EXPECT_EQ(h.sum(), 2405);
  EXPECT_EQ(h.count(), before.count());
  EXPECT_EQ(h.min(), before.min());
  EXPECT_EQ(h.max(), before.max());
  for (std::size_t i = 0; i < h.bins().size(); ++i) {
    const double m0 = double(before.bins()[i].sum) / double(before.bins()[i].count);
    const double m1 = double(h.bins()[i].sum) / double(h.bins()[i].count);
    EXPECT_LE(std::abs(m0 - m1), 0.5);
  }
  // Rounded twice, nothing changes; what it gives reads back from text.
  Histogram again = h;
  again.round_bin_means();
  EXPECT_EQ(again, h);
  EXPECT_EQ(Histogram::parse(h.to_string()), h);
}

TEST(Histogram, TypicalIsTheFullerBinsMean) {
  EXPECT_EQ(Histogram{}.typical(), 0);
  // 9 samples near 200 and one outlier of 10 ms: the mean is ~1 ms, the
  // typical value 200.
  Histogram h = of({200, 200, 200, 200, 200, 200, 200, 200, 200, 10000000});
  EXPECT_DOUBLE_EQ(h.typical(), 200);
  EXPECT_GT(h.mean(), 1e6);
}

TEST(SettleTimings, AlikePredecessorsShareOneOtherBlock) {
  // Three predecessors with times within a factor of two, one entered from
  // outside the loop with a long computation before it.
  Trace t = one_node({
      block(irecv(0), of({300, 310, 320, 330}), of({1500, 1600, 1700})),
      block(irecv(1), of({250, 260, 270}, 1), of({2500, 2600, 2700, 2800}, 1)),
      block(irecv(2), of({200, 400, 250000}, 2), of({900, 1000, 1100}, 2)),
      block(kStartKey, of({5000000, 5100000}), of({1600, 1700})),
  });
  Histogram all_compute, all_comm;
  for (int i = 0; i < 3; ++i) {
    all_compute.merge(t.nodes[0].timings[static_cast<std::size_t>(i)].compute);
    all_comm.merge(t.nodes[0].timings[static_cast<std::size_t>(i)].comm);
  }
  settle_timings(t);
  const auto& ts = t.nodes[0].timings;
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].pred, kOtherKey);
  EXPECT_EQ(ts[1].pred, kStartKey);
  // The other block is the merge of the three, with rounded bin means.
  all_compute.round_bin_means();
  all_comm.round_bin_means();
  EXPECT_EQ(ts[0].compute, all_compute);
  EXPECT_EQ(ts[0].comm, all_comm);
  EXPECT_EQ(ts[1].compute.count(), 2u);
  // Settled again, nothing changes.
  Trace again = t;
  settle_timings(again);
  EXPECT_EQ(format_trace(again), format_trace(t));
}

TEST(SettleTimings, DifferentTimesKeepTheirPredecessor) {
  // The main block (most samples) is irecv(0); irecv(1) communicates 10x
  // longer, beyond kAlikeNs: it keeps its own block, and with one block
  // alike to the main one there is no `other`.
  Trace t = one_node({
      block(irecv(0), of({300, 310, 320, 330, 340}), of({1500, 1600, 1700, 1800})),
      block(irecv(1), of({300, 310}), of({15000, 16000})),
  });
  const Trace before = t;
  settle_timings(t);
  ASSERT_EQ(t.nodes[0].timings.size(), 2u);
  EXPECT_EQ(t.nodes[0].timings[0].pred, irecv(0));
  EXPECT_EQ(t.nodes[0].timings[1].pred, irecv(1));
  EXPECT_EQ(t.nodes[0].timings[1].comm, before.nodes[0].timings[1].comm);
  // A statistic only one of two otherwise alike blocks has keeps them apart.
  Trace s = one_node({
      block(irecv(0), of({300, 310}), of({1500, 1600})),
      block(irecv(1), of({300, 310}), of({1500, 1600})),
  });
  s.nodes[0].timings[1].stats.emplace_back("cycles", of({7, 8}));
  settle_timings(s);
  EXPECT_EQ(s.nodes[0].timings.size(), 2u);
}

TEST(SettleTimings, OutcomeDoesNotDependOnWhereTheBlocksCameFrom) {
  // The same blocks given to merge in two orders settle to the same trace.
  std::vector<Timing> blocks;
  std::mt19937 rng(3);
  for (SiteId s = 0; s < 3; ++s) {
    Histogram c, m;
    for (int i = 0; i < 20; ++i) {
      c.add(200 + static_cast<int64_t>(rng() % 200), static_cast<int32_t>(s));
      m.add(1000 + static_cast<int64_t>(rng() % 3000), static_cast<int32_t>(s));
    }
    blocks.push_back(block(irecv(s), c, m));
  }
  Trace a = one_node(blocks);
  std::reverse(blocks.begin(), blocks.end());
  Trace b = one_node(blocks);
  settle_timings(a);
  settle_timings(b);
  EXPECT_EQ(format_trace(a), format_trace(b));
  ASSERT_EQ(a.nodes[0].timings.size(), 1u);
  EXPECT_EQ(a.nodes[0].timings[0].pred, kOtherKey);
}

TEST(SettleTimings, OtherIsWrittenAsVersion5AndReadBackExactly) {
  Trace t = one_node({
      block(irecv(0), of({300, 310, 320, 337}), of({1500, 1600, 1701})),
      block(irecv(1), of({250, 260, 271}), of({2500, 2600, 2700, 2803})),
      block(kStartKey, of({5000000, 5100000}), of({1600, 1700})),
  });
  EXPECT_EQ(format_trace(t).rfind("tracefold-trace 2\n", 0), 0u);
  settle_timings(t);
  const std::string text = format_trace(t);
  EXPECT_EQ(text.rfind("tracefold-trace 5\n", 0), 0u);
  EXPECT_NE(text.find("  time pred=other\n"), std::string::npos);
  EXPECT_EQ(format_trace(parse_trace(text, "t")), text);
  const std::string compact = encode_compact(t);
  EXPECT_EQ(compact[4], Trace::kCompactVersionSingleThread);  // 5 and later code `other`
  EXPECT_EQ(format_trace(decode_compact(compact, "t.tf")), text);
  // Version 2 has no `other`.
  std::string v2 = text;
  v2.replace(0, 17, "tracefold-trace 2");
  try {
    parse_trace(v2, "v2.trace");
    ADD_FAILURE() << "pred=other read in a version-2 file";
  } catch (const std::exception& ex) {
    EXPECT_NE(std::string(ex.what()).find("pred=other needs format version 5"), std::string::npos)
        << ex.what();
  }
  // Text version 3 and 4 never existed.
  std::string v3 = text;
  v3.replace(0, 17, "tracefold-trace 3");
  EXPECT_THROW(parse_trace(v3, "v3.trace"), std::exception);
}

TEST(SettleTimings, ReadersFallBackToTheOtherBlock) {
  Trace t = one_node({
      block(irecv(0), of({300, 310, 320}), of({1500, 1600, 1700})),
      block(irecv(1), of({250, 260, 270}), of({2500, 2600, 2700})),
      block(kStartKey, of({5000000, 5100000}), of({1600, 1700})),
  });
  settle_timings(t);
  const Node& n = t.nodes[0];
  ASSERT_NE(n.timing_after(irecv(1)), nullptr);
  EXPECT_EQ(n.timing_after(irecv(1))->pred, kOtherKey);
  EXPECT_EQ(n.timing_after(irecv(2))->pred, kOtherKey);
  EXPECT_EQ(n.timing_after(kStartKey)->pred, kStartKey);
  Trace none = one_node({block(irecv(0), of({1}), of({2}))});
  EXPECT_EQ(none.nodes[0].timing_after(irecv(1)), nullptr);
}

TEST(SettleTimings, ReductionSettlesAndKeepsParameters) {
  // A folded stencil, reduced with and without settling: the same events,
  // rounded means, and no more blocks than before.
  testing::Stencil s{.side = 4, .steps = 9};
  MergeOptions keep;
  keep.settle_timing = false;
  const Trace exact = reduce_traces(s.fold_all(), 2, keep);
  const Trace settled = reduce_traces(s.fold_all());
  std::size_t exact_blocks = 0, settled_blocks = 0;
  for (const Node& n : exact.nodes) exact_blocks += n.timings.size();
  for (const Node& n : settled.nodes) settled_blocks += n.timings.size();
  EXPECT_GT(exact_blocks, 0u);
  EXPECT_LE(settled_blocks, exact_blocks);
  ASSERT_EQ(exact.nodes.size(), settled.nodes.size());
  for (int32_t r = 0; r < exact.world_size; ++r) {
    std::vector<Event> a = expand_rank(exact, r), b = expand_rank(settled, r);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].same_call(b[i])) << r << " " << i;
  }
  for (const Node& n : settled.nodes)
    for (const Timing& tm : n.timings)
      for (const Histogram* h : {&tm.compute, &tm.comm})
        for (const auto& b : h->bins())
          if (b.count >= 3) {
            EXPECT_EQ(b.sum % static_cast<int64_t>(b.count), 0);
          }
}

}  // namespace
}  // namespace tracefold
