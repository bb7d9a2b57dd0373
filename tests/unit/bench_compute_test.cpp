// The compute time a generated benchmark spins for: the default trimmed
// mean leaves out an upper bin of descheduled intervals and nothing else.
#include <gtest/gtest.h>

#include <string>

#include "compute_time.hpp"
#include "tracefold/bench.hpp"

using namespace tracefold;
using benchgen::compute_by_pred;
using benchgen::compute_ns;
using benchgen::trimmed_mean_ns;

namespace {

Histogram of(std::initializer_list<std::pair<int64_t, int>> values) {
  Histogram h;
  for (auto [v, n] : values)
    for (int k = 0; k < n; ++k) h.add(v, 0);
  return h;
}

TEST(BenchCompute, DropsAFewDescheduledIntervals) {
  // As recorded for cg under load: most steps about 0.83 ms, a few a whole
  // scheduling period (about 36 ms).
  const Histogram h = of({{830'000, 169}, {36'000'000, 29}});
  ASSERT_EQ(h.bins().size(), 2u);
  EXPECT_DOUBLE_EQ(trimmed_mean_ns(h), 830'000);
  EXPECT_GT(h.mean(), 5'000'000);
}

TEST(BenchCompute, KeepsValuesSplitByABinBoundary) {
  // 1.0 and 1.1 ms lie on both sides of 2^20 ns: one kind of work.
  const Histogram h = of({{1'000'000, 90}, {1'100'000, 10}});
  ASSERT_EQ(h.bins().size(), 2u);
  EXPECT_DOUBLE_EQ(trimmed_mean_ns(h), h.mean());
}

TEST(BenchCompute, KeepsACommonOrCloseUpperBin) {
  // A third of the samples: too common for descheduling.
  const Histogram common = of({{1'000'000, 60}, {40'000'000, 30}});
  EXPECT_DOUBLE_EQ(trimmed_mean_ns(common), common.mean());
  // Rare but less than twice the usual time.
  const Histogram close = of({{1'000'000, 95}, {1'900'000, 5}});
  EXPECT_DOUBLE_EQ(trimmed_mean_ns(close), close.mean());
  EXPECT_DOUBLE_EQ(trimmed_mean_ns(Histogram{}), 0);
}

TEST(BenchCompute, WeighsEachTimingBlockByItsCount) {
  Node n;
  Timing a, b;
  a.pred = kStartKey;
  a.compute = of({{1'000, 3}});
  b.pred = kOtherKey;
  b.compute = of({{800'000, 90}, {30'000'000, 10}});
  n.timings = {a, b};
  // Block b's 100 executions at its trimmed 0.8 ms, block a's 3 at 1 us.
  EXPECT_DOUBLE_EQ(compute_ns(n, bench::ComputeMode::kTrimmed),
                   (3 * 1'000.0 + 100 * 800'000.0) / 103);
  EXPECT_DOUBLE_EQ(compute_ns(n, bench::ComputeMode::kMean),
                   (3 * 1'000.0 + 90 * 800'000.0 + 10 * 30'000'000.0) / 103);
}

TEST(BenchCompute, TheDefaultIsTheTrimmedMean) {
  EXPECT_EQ(bench::Options{}.compute, bench::ComputeMode::kTrimmed);
  Trace t;
  t.world_size = 2;
  t.comms.define_world(2);
  t.sites.intern(CallSite{{Frame{"app", 0x100}}});
  t.sites.intern(CallSite{{Frame{"app", 0x200}}});
  for (const char* op : {"MPI_Init", "MPI_Finalize"}) {
    Node n;
    n.key = {*OpTable::find(op), static_cast<SiteId>(t.nodes.size())};
    n.ranks = Ranklist::range(0, 2);
    n.count.entries().push_back({ValueSeq::repeated(1, 1), Ranklist::range(0, 2)});
    t.nodes.push_back(n);
  }
  Timing tm;
  tm.pred = t.nodes[0].key;
  tm.compute = of({{2'000'000, 9}, {50'000'000, 1}});
  t.nodes[1].timings = {tm};
  EXPECT_NE(bench::generate_c(t).find("spin_ns(2000000);"), std::string::npos);
  bench::Options mean;
  mean.compute = bench::ComputeMode::kMean;
  EXPECT_NE(bench::generate_c(t, mean).find("spin_ns(6800000);"), std::string::npos);
}

TEST(BenchCompute, KeepsTheTimeOfEachPredecessor) {
  // A pipeline stage as lu records it: 1 ms of work before the first send
  // of an iteration (after the barrier), 80 ns before the other four.
  Node n;
  Timing barrier, send;
  barrier.pred = {*OpTable::find("MPI_Barrier"), 7};
  barrier.compute = of({{1'000'000, 100}});
  send.pred = {*OpTable::find("MPI_Send"), 1};
  send.compute = of({{80, 400}});
  n.timings = {barrier, send};
  const auto c = compute_by_pred(n, bench::ComputeMode::kTrimmed);
  EXPECT_DOUBLE_EQ(c.otherwise, 80);  // the block with most samples
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases[0].first, barrier.pred);
  EXPECT_DOUBLE_EQ(c.cases[0].second, 1'000'000);
  // The `other` block is the default whatever its count; a block as long
  // as the default needs no case.
  Timing other, same;
  other.pred = kOtherKey;
  other.compute = of({{500, 10}});
  same.pred = {*OpTable::find("MPI_Recv"), 2};
  same.compute = of({{500, 1000}});
  n.timings = {barrier, send, same, other};
  const auto d = compute_by_pred(n, bench::ComputeMode::kMean);
  EXPECT_DOUBLE_EQ(d.otherwise, 500);
  ASSERT_EQ(d.cases.size(), 2u);
  EXPECT_EQ(d.cases[0].first, barrier.pred);
  EXPECT_EQ(d.cases[1].first, send.pred);
}

TEST(BenchCompute, TheProgramSpinsByItsLastCall) {
  // A barrier reached once from MPI_Init after 1 ms of work and nine times
  // from itself (a loop's back edge) after 80 ns.
  Trace t;
  t.world_size = 1;
  t.comms.define_world(1);
  for (uint64_t a : {0x100, 0x200, 0x300}) t.sites.intern(CallSite{{Frame{"app", a}}});
  for (const char* op : {"MPI_Init", "MPI_Barrier", "MPI_Finalize"}) {
    Node n;
    n.key = {*OpTable::find(op), static_cast<SiteId>(t.nodes.size())};
    n.ranks = Ranklist::range(0, 1);
    n.count.entries().push_back({ValueSeq::repeated(1, 1), Ranklist::range(0, 1)});
    t.nodes.push_back(n);
  }
  Elastic comm;
  comm.entries().push_back({ValueSeq::repeated(0, 1), Ranklist::range(0, 1)});
  t.nodes[1].fields.emplace_back(FieldTable::comm(), comm);
  Timing first, back;
  first.pred = t.nodes[0].key;
  first.compute = of({{1'000'000, 1}});
  back.pred = t.nodes[1].key;
  back.compute = of({{80, 9}});
  t.nodes[1].timings = {first, back};
  const std::string c = bench::generate_c(t);
  // Not the mean of both (100,072 ns) before every execution.
  EXPECT_NE(c.find("spin_ns(after == AFTER_MPI_Init_0 ? 1000000 : 80);"), std::string::npos) << c;
  EXPECT_NE(c.find("after = AFTER_MPI_Init_0;"), std::string::npos);
  EXPECT_NE(c.find("after = AFTER_MPI_Barrier_1;"), std::string::npos);
  EXPECT_NE(c.find("static enum after_call after = AFTER_START;"), std::string::npos);
  // --compute sample draws from each predecessor's own block.
  bench::Options sample;
  sample.compute = bench::ComputeMode::kSample;
  const std::string d = bench::generate_c(t, sample);
  EXPECT_NE(d.find("after == AFTER_MPI_Init_0 ? draw_ns("), std::string::npos) << d;
  EXPECT_NE(d.find("{1, 1000000, 1000000, 1000000}"), std::string::npos);
}

}  // namespace
