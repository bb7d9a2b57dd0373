// The diagnosis's rules that tell kinds apart on a loaded machine:
// frequent communication against an imbalance's waiting, serialisation
// against imbalance, on hand-made timelines.
#include <gtest/gtest.h>

#include "diagnose_run.hpp"

namespace tracefold {
namespace {

using testing::DiagRun;
using testing::find;
using testing::kMs;

TEST(Diagnose, ManyShortCallsAreFrequentAFewLongOnesAreNot) {
  DiagRun t(2);
  t.init();
  int64_t at = 0;
  // 400 steps of 1 ms computation and a 100 us Allreduce without waiting.
  for (int s = 0; s < 400; ++s) {
    for (int32_t r = 0; r < 2; ++r)
      t.add(r, "MPI_Allreduce", 1, at + kMs, at + kMs + 100000, {{"comm", 0}});
    at += kMs + 100000;
  }
  // Then 5 Allreduces of 30 ms each (other site), 4 MiB each.
  for (int s = 0; s < 5; ++s) {
    for (int32_t r = 0; r < 2; ++r)
      t.add(r, "MPI_Allreduce", 2, at + kMs, at + 31 * kMs,
            {{"comm", 0}, {"count", 1 << 19}, {"dsize", 8}});
    at += 31 * kMs;
  }
  t.finalize(at);
  const DiagnoseReport r = t.run();
  int frequent = 0;
  for (const Diagnosis& d : r.diagnoses) {
    if (d.kind != DiagnosisKind::kFrequentCommunication) continue;
    ++frequent;
    EXPECT_NE(d.symptom.label.find("app+0x20"), std::string::npos) << d.symptom.label;
    EXPECT_NEAR(d.seconds, 400 * 100e-6, 1e-9);
  }
  EXPECT_EQ(frequent, 1);
  const Diagnosis* large = find(r, DiagnosisKind::kLargeTransfer);
  ASSERT_NE(large, nullptr);
  EXPECT_NE(large->symptom.label.find("app+0x30"), std::string::npos) << large->symptom.label;
  EXPECT_NEAR(large->seconds, 5 * 30e-3, 1e-9);
}

// A loaded machine stretches a collective unevenly after the last rank
// entered it (a rank descheduled in it leaves late): the imbalance is the
// ranks' time in the closing call before the last one entered, which that
// does not change.
TEST(Diagnose, ImbalanceLeavesOutTheCallsTimeAfterTheLastRankEntered) {
  DiagRun t(4);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 5; ++s) {
    const int64_t end = at + 40 * kMs + 10000;
    for (int32_t r = 0; r < 4; ++r)
      t.add(r, "MPI_Allreduce", 1, at + 10 * kMs * (r + 1), end + (s == 4 && r == 1 ? 5 * kMs : 0),
            {{"comm", 0}, {"count", 1}, {"dsize", 8}});
    at = end;
  }
  t.finalize(at + 5 * kMs);
  const DiagnoseReport r = t.run();
  const Diagnosis* d = find(r, DiagnosisKind::kLoadImbalance);
  ASSERT_NE(d, nullptr);
  // Waiting 30, 20, 10 and 0 ms a step: 15 ms on average, in every step.
  EXPECT_NEAR(d->seconds, 5 * 15e-3, 1e-9);
}

// A phase whose closing call all ranks but one wait in is serialised when
// they did little work of their own. When they did work (an imbalance of
// 20, 40, 60 and 80 ms), it stays an imbalance even where the slowest
// rank, descheduled on its way out of each call, enters the next one so
// late that every other rank waits 80 % as long as it computed.
TEST(Diagnose, SerialisedPhaseOnlyWhenTheOthersComputedLittle) {
  for (const bool others_work : {false, true}) {
    DiagRun t(4);
    t.init();
    std::vector<int64_t> from(4, 0);
    for (int s = 0; s < 5; ++s) {
      int64_t last_in = 0;
      std::vector<int64_t> in(4);
      for (int32_t r = 0; r < 4; ++r) {
        in[std::size_t(r)] = from[std::size_t(r)] + (others_work ? 20 * kMs * (r + 1)
                                                     : r == 3    ? 80 * kMs
                                                                 : kMs);
        last_in = std::max(last_in, in[std::size_t(r)]);
      }
      for (int32_t r = 0; r < 4; ++r) {
        const int64_t end = last_in + 10000 + (r == 3 ? 50 * kMs : 0);
        t.add(r, "MPI_Allreduce", 1, in[std::size_t(r)], end,
              {{"comm", 0}, {"count", 1}, {"dsize", 8}});
        from[std::size_t(r)] = end;
      }
    }
    t.finalize(*std::max_element(from.begin(), from.end()));
    const DiagnoseReport r = t.run();
    ASSERT_FALSE(r.diagnoses.empty());
    const Diagnosis& d = r.diagnoses[0];
    EXPECT_EQ(d.kind, others_work ? DiagnosisKind::kLoadImbalance : DiagnosisKind::kSerialisation)
        << d.detail;
    ASSERT_FALSE(d.causes.empty());
    EXPECT_EQ(d.causes[0].rank, 3);
  }
}

TEST(Diagnose, SerialisationWhenAllOthersWaitAsLongAsOneComputes) {
  DiagRun t(3);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 4; ++s) {
    // In step 2 rank 2 enters 20 ms late (descheduled, say): it waits only
    // 10 ms, yet the call stays serialised and its waiting counts.
    for (int32_t r = 0; r < 3; ++r)
      t.add(r, "MPI_Bcast", 4, r == 0 ? at + 30 * kMs : at + (s == 2 && r == 2 ? 20 * kMs : 0),
            at + 30 * kMs + 20000, {{"comm", 0}, {"root", 0}, {"count", 1}, {"dsize", 4}});
    at += 30 * kMs + 20000;
  }
  t.finalize(at);
  const DiagnoseReport r = t.run();
  const Diagnosis* d = find(r, DiagnosisKind::kSerialisation);
  ASSERT_NE(d, nullptr);
  // Ranks 1 and 2 wait 30 ms per step but rank 2 10 ms in step 2: 220 ms over 3 ranks.
  EXPECT_NEAR(d->seconds, (4 * 60e-3 - 20e-3) / 3, 1e-6);
  EXPECT_NE(d->detail.find("in 3 of 4 instances"), std::string::npos) << d->detail;
  ASSERT_FALSE(d->causes.empty());
  EXPECT_EQ(d->causes[0].rank, 0);
}

// One rank waiting for another now and then is not serialisation.
TEST(Diagnose, NoSerialisationWhenMostInstancesHaveARankThatDidNotWait) {
  DiagRun t(3);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 4; ++s) {
    for (int32_t r = 0; r < 3; ++r)
      t.add(r, "MPI_Bcast", 4, r == 0 ? at + 30 * kMs : at + (s != 1 && r == 2 ? 25 * kMs : 0),
            at + 30 * kMs + 20000, {{"comm", 0}, {"root", 0}, {"count", 1}, {"dsize", 4}});
    at += 30 * kMs + 20000;
  }
  t.finalize(at);
  EXPECT_EQ(find(t.run(), DiagnosisKind::kSerialisation), nullptr);
}

}  // namespace
}  // namespace tracefold
