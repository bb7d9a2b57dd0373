// The wait analysis as the diagnosis runs it (diagnose_detail::event_facts):
// the same wait states as `tracefold analyze` finds, without the critical
// path and delay costs, which the diagnosis never reads.
#include <gtest/gtest.h>

#include "../../src/analysis/diagnose/internal.hpp"  // event_facts
#include "test_util.hpp"
#include "tracefold/waits.hpp"

namespace tracefold {
namespace {

// Rank 0 computes 1000 ns before it sends to rank 1, which forwards to
// rank 2 at once: two Late Senders, and a critical path and delay costs
// through rank 0's computation when they are asked for.
struct Chain {
  Trace trace;
  WaitInput in;
  Chain() {
    trace.world_size = 3;
    trace.comms.define_world(3);
    trace.sites = testing::make_sites(8);
    in.ranks.resize(3);
    for (int32_t r = 0; r < 3; ++r) add(r, "MPI_Init", 7, 0, 0);
    add(0, "MPI_Send", 0, 1000, 1010, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
    add(1, "MPI_Recv", 1, 0, 1000, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
    add(1, "MPI_Send", 2, 1000, 1010, {{"peer", 2}, {"tag", 1}, {"comm", 0}});
    add(2, "MPI_Recv", 3, 0, 1010, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
    for (int32_t r = 0; r < 3; ++r) add(r, "MPI_Finalize", 7, 2000, 2100);
  }
  void add(int32_t r, const std::string& op, SiteId site, int64_t start, int64_t end,
           std::vector<std::pair<std::string, int64_t>> fields = {}) {
    testing::add_timed(in.ranks[std::size_t(r)], op, site, start, end, std::move(fields));
  }
};

TEST(DiagnoseWaits, TheDiagnosisFindsTheWaitStatesWithoutTheirCauses) {
  Chain t;
  WaitOptions all;
  all.keep_instances = true;
  const WaitReport full = analyze_waits(t.trace, t.in, all);
  ASSERT_FALSE(full.critical_path.empty());
  ASSERT_FALSE(full.delay_costs.empty());
  const diagnose_detail::EventFacts f = diagnose_detail::event_facts(t.trace, t.in);
  EXPECT_TRUE(f.waits.critical_path.empty());
  EXPECT_TRUE(f.waits.delay_costs.empty());
  EXPECT_TRUE(f.waits.propagated_costs.empty());
  // The wait states themselves are the full analysis's, in its order.
  EXPECT_EQ(f.waits.severity, full.severity);
  ASSERT_EQ(f.waits.instances.size(), full.instances.size());
  ASSERT_EQ(full.instances.size(), 2u);
  for (std::size_t i = 0; i < full.instances.size(); ++i) {
    const WaitInstance &a = f.waits.instances[i], &b = full.instances[i];
    EXPECT_EQ(std::tie(a.waiter, a.event, a.late, a.late_event, a.seconds, a.pattern),
              std::tie(b.waiter, b.event, b.late, b.late_event, b.seconds, b.pattern));
  }
  EXPECT_EQ(f.waited[1][1], 1000);
  EXPECT_EQ(f.waited[2][1], 1000);
}

}  // namespace
}  // namespace tracefold
