// The per-rank reductions of the events (src/analysis/diagnose/reduction.hpp)
// that the parallel diagnosis combines along its binary tree: every
// recorded rank is counted once, whatever the shares.
#include <gtest/gtest.h>

#include "../../src/analysis/diagnose/internal.hpp"  // reduce_rank, merge
#include "diagnose_run.hpp"

namespace tracefold {
namespace {

using diagnose_detail::CallPathSums;
using diagnose_detail::EventSpan;
using diagnose_detail::Reduction;
using testing::kMs;

// Rank r makes r + 1 Allreduces at site 1, one per iteration of loop 0
// (entry 1), each 2 ms long of which r ms waiting, moving 8 (r + 1) bytes;
// rank 2 also one Barrier at site 2 outside any loop.
std::vector<EventSpan> rank_events(int32_t r) {
  const OpId allreduce = *OpTable::find("MPI_Allreduce"), barrier = *OpTable::find("MPI_Barrier");
  std::vector<EventSpan> out;
  for (int32_t i = 0; i <= r; ++i) {
    EventSpan e;
    e.start_ns = 10 * kMs * i, e.end_ns = e.start_ns + 2 * kMs, e.waited_ns = r * kMs;
    e.op = allreduce, e.site = 1, e.bytes = uint64_t(8 * (r + 1));
    e.loop = 0, e.entry = 1, e.iteration = i + 1, e.of = r + 1;
    out.push_back(e);
  }
  if (r == 2) {
    EventSpan e;
    e.start_ns = 100 * kMs, e.end_ns = 101 * kMs, e.op = barrier, e.site = 2;
    out.push_back(e);
  }
  return out;
}

Reduction reduce(int32_t first, int32_t last) {
  Reduction out;
  for (int32_t r = first; r < last; ++r)
    merge(out, diagnose_detail::reduce_rank(r, rank_events(r)));
  return out;
}

const CallPathSums& path(const Reduction& red, SiteId site) {
  for (const CallPathSums& p : red.calls)
    if (p.site == site) return p;
  throw std::runtime_error("no call path at site " + std::to_string(site));
}

TEST(DiagnoseReduction, EveryRankCountedOnce) {
  const Reduction whole = reduce(0, 4);
  EXPECT_EQ(whole.first, 0);
  EXPECT_EQ(whole.last, 4);
  const CallPathSums& a = path(whole, 1);
  EXPECT_EQ(a.count, 1u + 2 + 3 + 4);
  EXPECT_EQ(a.bytes, 8u * (1 * 1 + 2 * 2 + 3 * 3 + 4 * 4));
  EXPECT_EQ(a.ns, 10 * 2 * kMs);
  // Waiting capped at the call's length: 0, 1, 2, 2 ms per call of ranks 0-3.
  EXPECT_EQ(a.waited, (2 * 1 + 3 * 2 + 4 * 2) * kMs);
  // Iteration i is made by ranks i-1..3, in the order first met.
  ASSERT_EQ(a.iterations.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.iterations[i].iteration, int64_t(i + 1));
    EXPECT_EQ(a.iterations[i].calls, 4 - i);
  }
  EXPECT_EQ(a.ranks, (std::vector<int32_t>{0, 1, 2, 3}));
  const CallPathSums& b = path(whole, 2);
  EXPECT_EQ(b.count, 1u);
  EXPECT_TRUE(b.ranks.empty());  // outside any loop
  EXPECT_EQ(whole.entries.size(), 4u);
}

// Shares of 1, 2 and 1 ranks, sent as bytes and combined as the tree does,
// give the serial walk's reduction exactly.
TEST(DiagnoseReduction, SharesCombineToTheSerialReduction) {
  Reduction tree = diagnose_detail::decode_reduction(encode(reduce(0, 1)));
  Reduction right = diagnose_detail::decode_reduction(encode(reduce(1, 3)));
  merge(right, diagnose_detail::decode_reduction(encode(reduce(3, 4))));
  merge(tree, std::move(right));
  EXPECT_EQ(encode(tree), encode(reduce(0, 4)));
}

TEST(DiagnoseReduction, ALostOrRepeatedShareIsAnError) {
  Reduction lost = reduce(0, 1);
  EXPECT_THROW(merge(lost, reduce(2, 4)), DiagnoseError);
  Reduction twice = reduce(0, 2);
  EXPECT_THROW(merge(twice, reduce(1, 2)), DiagnoseError);
  EXPECT_THROW(diagnose_detail::decode_reduction(encode(reduce(0, 2)).substr(0, 20)),
               DiagnoseError);
}

// The whole diagnosis reads its call counts from the reductions: 4 ranks
// meet in 4 Allreduces, rank r making r + 1 of them long ones of 4 MiB at
// site 2, the others short ones at site 3.
TEST(DiagnoseReduction, ReportCountsEveryRanksCalls) {
  testing::DiagRun t(4);
  t.init();
  int64_t at = 0;
  for (int32_t s = 0; s < 4; ++s) {
    for (int32_t r = 0; r < 4; ++r)
      if (r >= s)
        t.add(r, "MPI_Allreduce", 2, at + kMs, at + 31 * kMs,
              {{"comm", 0}, {"count", 1 << 19}, {"dsize", 8}});
      else
        t.add(r, "MPI_Allreduce", 3, at + kMs, at + 31 * kMs,
              {{"comm", 0}, {"count", 1}, {"dsize", 8}});
    at += 31 * kMs;
  }
  t.finalize(at);
  const DiagnoseReport r = t.run();
  const Diagnosis* large = testing::find(r, DiagnosisKind::kLargeTransfer);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(large->detail.rfind("10 calls, 4194304 bytes each", 0), 0u) << large->detail;
  EXPECT_NEAR(large->seconds, 10 * 30e-3 / 4, 1e-9);
}

}  // namespace
}  // namespace tracefold
