// What generated benchmarks and generation errors name: communicators the
// program did not create (MPI_COMM_SELF, duplicates of it), nodes as
// `tracefold print` numbers them after collectives were aligned, and the
// processor-time clock of --compute-clock cpu.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "tracefold/bench.hpp"
#include "tracefold/bench_conceptual.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold {
namespace {

using testing::make_event;
using testing::make_sites;

// The recorder names a communicator nobody created by its members: each
// rank's MPI_COMM_SELF has an id of its own.
constexpr int64_t kSelf0 = 2147483700, kSelf1 = 2147483701;

Trace build(const std::vector<std::vector<Event>>& ranks, const CommTable& comms) {
  return testing::fold_ranks(ranks, comms);
}

CommTable world_and_self() {
  CommTable comms;
  comms.define_world(2);
  comms.define(kSelf0, CommGroup{MemberList{0}});
  comms.define(kSelf1, CommGroup{MemberList{1}});
  return comms;
}

// A benchmark suite's test on MPI_COMM_SELF on rank 1, around world calls.
Trace self_suite() {
  std::vector<std::vector<Event>> ev(2);
  for (int32_t r = 0; r < 2; ++r) {
    auto& e = ev[static_cast<std::size_t>(r)];
    e.push_back(make_event("MPI_Barrier", 0));
    if (r == 1) {
      e.push_back(make_event("MPI_Barrier", 1, {{"comm", kSelf1}}));
      e.push_back(make_event("MPI_Allreduce", 2,
                             {{"comm", kSelf1}, {"count", 4}, {"dsize", 8}, {"redop", 3}}));
      e.push_back(
          make_event("MPI_Gather", 3, {{"comm", kSelf1}, {"count", 2}, {"dsize", 8}, {"root", 0}}));
    }
    e.push_back(make_event("MPI_Barrier", 4));
  }
  return build(ev, world_and_self());
}

TEST(BenchNames, CommSelfIsNamedInC) {
  const Trace t = self_suite();
  EXPECT_EQ(predefined_comm(t, kSelf1, 1), PredefinedComm::kSelf);
  EXPECT_EQ(predefined_comm(t, kSelf1, 0), PredefinedComm::kNone);
  EXPECT_EQ(predefined_comm(t, CommTable::kWorld, 0), PredefinedComm::kWorld);
  const std::string c = bench::generate_c(t);
  EXPECT_NE(c.find("MPI_Barrier(MPI_COMM_SELF);"), std::string::npos) << c;
  EXPECT_NE(c.find(", MPI_COMM_SELF);"), std::string::npos) << c;
  EXPECT_EQ(c.find("cannot be named"), std::string::npos);
}

TEST(BenchNames, CommSelfIsNamedInCommTables) {
  // Each rank's barrier on its own MPI_COMM_SELF at one call site, every
  // iteration on the other communicator than the last: the ids go into a
  // table, and the table's lookup names predefined ones too.
  std::vector<std::vector<Event>> ev(2);
  for (int32_t r = 0; r < 2; ++r)
    for (int i = 0; i < 6; ++i)
      ev[static_cast<std::size_t>(r)].push_back(
          make_event("MPI_Barrier", 1,
                     {{"comm", i % 2 == 0 ? (r == 0 ? kSelf0 : kSelf1) : CommTable::kWorld}}));
  const std::string c = bench::generate_c(build(ev, world_and_self()));
  EXPECT_NE(c.find("case " + std::to_string(kSelf1) + ": return MPI_COMM_SELF;"), std::string::npos)
      << c;
}

TEST(BenchNames, CommSelfHasNoStatementInConceptual) {
  const std::string text = emit_conceptual(self_suite());
  // The two world barriers only: collectives of one task move nothing.
  std::size_t syncs = 0;
  for (std::size_t at = text.find("SYNCHRONIZE"); at != std::string::npos;
       at = text.find("SYNCHRONIZE", at + 1))
    ++syncs;
  EXPECT_EQ(syncs, 2u) << text;
  EXPECT_EQ(text.find("REDUCE"), std::string::npos) << text;
}

TEST(BenchNames, AnUnknownCommunicatorIsStillRefused) {
  std::vector<std::vector<Event>> ev(2);
  CommTable comms;
  comms.define_world(2);
  // Both ranks, in order, but one that is not the world: a pair.
  comms.define(77, CommGroup{MemberList{0, 1}});
  comms.define(78, CommGroup{MemberList{1, 0}});
  for (int32_t r = 0; r < 2; ++r)
    ev[static_cast<std::size_t>(r)].push_back(make_event("MPI_Barrier", 0, {{"comm", 78}}));
  const Trace t = build(ev, comms);
  EXPECT_EQ(predefined_comm(t, 78, 0), PredefinedComm::kNone);
  try {
    bench::generate_c(t);
    FAIL() << "named a communicator nobody made";
  } catch (const bench::BenchError& e) {
    EXPECT_NE(std::string(e.what()).find("comm 78 cannot be named in C"), std::string::npos)
        << e.what();
  }
}

// Rank 0 and rank 1 reach one barrier from two lines (two nodes before
// alignment, one after), then make a call the generator refuses: its
// number in the message is the one `tracefold print` shows for the
// recorded trace, not its index in the aligned one.
TEST(BenchNames, ErrorsNumberNodesAsPrintDoes) {
  CommTable comms;
  comms.define_world(2);
  std::vector<std::vector<Event>> ev(2);
  for (int32_t r = 0; r < 2; ++r) {
    ev[static_cast<std::size_t>(r)].push_back(make_event("MPI_Barrier", r == 0 ? 0 : 1));
    ev[static_cast<std::size_t>(r)].push_back(make_event("MPI_Put", 2, {{"count", 1}}));
  }
  const Trace t = build(ev, comms);
  ASSERT_TRUE(needs_alignment(t));
  std::size_t put = t.nodes.size();
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    if (OpTable::name(t.nodes[i].key.op) == "MPI_Put") put = i;
  ASSERT_EQ(put, 2u);
  Trace aligned = t;
  const AlignReport a = align_collectives(aligned);
  ASSERT_EQ(a.merged, 1u);
  ASSERT_EQ(a.origin, (std::vector<std::size_t>{0, 2}));
  try {
    bench::generate_c(t);
    FAIL() << "generated MPI_Put";
  } catch (const bench::BenchError& e) {
    const std::string want = node_label(t, put) + ": ";
    EXPECT_EQ(std::string(e.what()).rfind(want, 0), 0u) << e.what() << " (want " << want << ")";
    EXPECT_EQ(std::string(e.what()).rfind("node #2 (MPI_Put at ", 0), 0u) << e.what();
  }
}

// 1 ms of wall time before each call, of which the rank computed 0.2 ms.
Trace timed(bool with_cpu) {
  CommTable comms;
  comms.define_world(2);
  std::vector<std::vector<Event>> ev(2);
  for (int32_t r = 0; r < 2; ++r)
    for (int k = 0; k < 3; ++k) {
      Event e = make_event("MPI_Barrier", 0);
      e.compute_ns = 1'000'000;
      e.comm_ns = 1000;
      if (with_cpu) e.stats.emplace_back(std::string(kComputeCpuStatistic), 200'000);
      ev[static_cast<std::size_t>(r)].push_back(e);
    }
  return build(ev, comms);
}

TEST(BenchNames, ComputeClockCpuSpinsForTheProcessorTime) {
  const Trace t = timed(true);
  ASSERT_TRUE(has_statistic(t, kComputeCpuStatistic));
  const std::string wall = bench::generate_c(t);
  EXPECT_NE(wall.find("spin_ns(1000000);"), std::string::npos) << wall;
  bench::Options o;
  o.clock = bench::ComputeClock::kCpu;
  const std::string cpu = bench::generate_c(t, o);
  EXPECT_NE(cpu.find("spin_cpu_ns(200000);"), std::string::npos) << cpu;
  EXPECT_EQ(cpu.find("spin_ns(1000000);"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("CLOCK_THREAD_CPUTIME_ID"), std::string::npos);
}

TEST(BenchNames, ComputeClockCpuNeedsTheStatistic) {
  bench::Options o;
  o.clock = bench::ComputeClock::kCpu;
  try {
    bench::generate_c(timed(false), o);
    FAIL() << "generated without compute_cpu";
  } catch (const bench::BenchError& e) {
    EXPECT_NE(std::string(e.what()).find("record with --stats compute_cpu"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tracefold
