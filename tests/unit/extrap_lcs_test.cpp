// The weighted LCS filter of lossy extrapolation: what it keeps and drops
// across ranks, across inputs, and which of two orders it keeps (the one
// with more events).
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/lcs_filter.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"

using namespace tracefold;
using namespace tracefold::extrap;

namespace {

// A trace of Barriers: calls[r] lists rank r's call sites (0..3, frames
// app+0x10 ... app+0x40), folded and merged as the recorder does.
Trace make(const std::vector<std::vector<SiteId>>& calls) {
  const auto world = static_cast<int32_t>(calls.size());
  const SiteTable sites = tracefold::testing::make_sites(4);
  CommTable comms;
  comms.define_world(world);
  std::vector<Trace> per_rank;
  for (int32_t r = 0; r < world; ++r) {
    Folder f(r);
    for (SiteId s : calls[static_cast<std::size_t>(r)])
      f.append(tracefold::testing::make_event("MPI_Barrier", s));
    per_rank.push_back(f.finish(world, sites, comms));
  }
  return reduce_traces(std::move(per_rank));
}

// The call sites (frame text) rank `rank` goes through, in order: site ids
// are renumbered when the filtered ranks are merged.
std::vector<std::string> sites(const Trace& t, int32_t rank) {
  std::vector<std::string> out;
  for (const Event& e : expand_rank(t, rank)) out.push_back(SiteTable::format(t.sites.at(e.site)));
  return out;
}

const std::string k0 = "app+0x10", k2 = "app+0x30", k3 = "app+0x40";

}  // namespace

// Rank 0 has an extra call (site 1) between two others: dropped on rank 0
// only.
TEST(ExtrapLcs, DropsWhatNotEveryRankHas) {
  const Trace t = make({{0, 1, 2}, {0, 2}, {0, 2}});
  std::vector<FilterReport> reps;
  const auto out = lcs_filter({&t}, {"a.tf"}, reps);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_EQ(reps[0].filter, "weighted LCS");
  EXPECT_EQ(reps[0].dropped, (std::vector<uint64_t>{1, 0, 0}));
  EXPECT_EQ(reps[0].kept, (std::vector<uint64_t>{2, 2, 2}));
  for (int32_t r = 0; r < 3; ++r) EXPECT_EQ(sites(out[0], r), (std::vector<std::string>{k0, k2}));
}

// Rank 0 loops ten times over site 0 and then calls sites 1 and 2; rank 1
// calls 1 and 2 first. Only one of the two orders can stay: a plain LCS
// keeps the two calls (two nodes against one), the weighted one the loop
// (20 events against 4).
TEST(ExtrapLcs, TheHeavierLoopWins) {
  std::vector<SiteId> r0(10, 0), r1{1, 2};
  r0.insert(r0.end(), {1, 2});
  r1.insert(r1.end(), 10, 0);
  const Trace t = make({r0, r1});
  std::vector<FilterReport> reps;
  const auto out = lcs_filter({&t}, {"w.tf"}, reps);
  EXPECT_EQ(reps[0].dropped, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(reps[0].kept, (std::vector<uint64_t>{10, 10}));
  EXPECT_EQ(sites(out[0], 0), std::vector<std::string>(10, k0));
  EXPECT_EQ(sites(out[0], 1), std::vector<std::string>(10, k0));
}

// Every rank of the second input has a call (site 1) that the first lacks:
// dropped there (across inputs), nothing in the first. Inputs with nothing
// in common are an error.
TEST(ExtrapLcs, DropsWhatNotEveryInputHas) {
  const Trace a = make({{0, 3}, {0, 3}});
  const Trace b = make({{0, 1, 3}, {0, 1, 3}, {0, 1, 3}});
  std::vector<FilterReport> reps;
  const auto out = lcs_filter({&a, &b}, {"a.tf", "b.tf"}, reps);
  ASSERT_EQ(reps.size(), 2u);
  EXPECT_EQ(reps[0].dropped, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(reps[1].dropped, (std::vector<uint64_t>{1, 1, 1}));
  EXPECT_EQ(reps[1].name, "b.tf");
  EXPECT_EQ(sites(out[1], 2), (std::vector<std::string>{k0, k3}));

  const Trace c = make({{1}, {1}});
  EXPECT_THROW(lcs_filter({&a, &c}, {"a.tf", "c.tf"}, reps), ExtrapError);
}

// The fold gives rank 0's site 0 two nodes (inside the loop and after it);
// rank 1 has only the loop. Site 0 is kept whole on rank 0: only its extra
// call at site 2 goes, not the call at site 0 after it (aligning node by
// node would match the loop's node only and drop the other).
TEST(ExtrapLcs, KeepsACallSiteWholeAcrossItsNodes) {
  const Trace t = make({{0, 1, 0, 1, 0, 1, 2, 0}, {0, 1, 0, 1, 0, 1}});
  std::vector<FilterReport> reps;
  const auto out = lcs_filter({&t}, {"a.tf"}, reps);
  EXPECT_EQ(reps[0].dropped, (std::vector<uint64_t>{1, 0}));
  const std::string k1 = "app+0x20";
  EXPECT_EQ(sites(out[0], 0), (std::vector<std::string>{k0, k1, k0, k1, k0, k1, k0}));
  EXPECT_EQ(sites(out[0], 1), (std::vector<std::string>{k0, k1, k0, k1, k0, k1}));
}
