// Diagnosis (tracefold/diagnose.hpp) on hand-made timelines and samples
// whose losses are known to the nanosecond.
#include <gtest/gtest.h>

#include <sstream>

#include "../../src/analysis/diagnose/internal.hpp"  // align_by_exit_gaps, frame naming
#include "diagnose_run.hpp"
#include "test_util.hpp"
#include "tracefold/diagnose.hpp"

namespace tracefold {
namespace {

using testing::DiagRun;
using testing::find;
using testing::kMs;

TEST(Diagnose, LoadImbalanceIsAvgMinusMinAtTheClosingCall) {
  DiagRun t(4);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 5; ++s) at = t.step(at, {10 * kMs, 20 * kMs, 30 * kMs, 40 * kMs});
  t.finalize(at);
  const DiagnoseReport r = t.run();
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].instances, 5u);
  const Diagnosis* d = find(r, DiagnosisKind::kLoadImbalance);
  ASSERT_NE(d, nullptr);
  // Time in the call: 30, 20, 10, 0 ms (+10 us each): avg - min = 15 ms per step.
  EXPECT_NEAR(d->seconds, 5 * 15e-3, 1e-9);
  ASSERT_FALSE(d->causes.empty());
  EXPECT_EQ(d->causes[0].rank, 3);
  // max - avg of the computation before the call: 40 - 25 ms per step.
  EXPECT_NEAR(d->causes[0].seconds, 5 * 15e-3, 1e-9);
  EXPECT_NE(d->causes[0].label.find("computation before MPI_Allreduce"), std::string::npos);
  EXPECT_EQ(find(r, DiagnosisKind::kFrequentCommunication), nullptr);
}

TEST(Diagnose, BalancedRunHasNoDiagnosis) {
  DiagRun t(4);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 5; ++s) at = t.step(at, {20 * kMs, 20 * kMs, 20 * kMs, 20 * kMs});
  t.finalize(at);
  const DiagnoseReport r = t.run();
  EXPECT_TRUE(r.diagnoses.empty()) << r.diagnoses.size();
  EXPECT_NEAR(r.labels[int(TimeLabel::kComputation)], 4 * 5 * 20e-3, 1e-9);
}

TEST(Diagnose, CallsThatDoNotSynchroniseCloseNoPhase) {
  DiagRun t(2);
  t.init();
  // Rank 1 leaves before rank 0 enters: not a synchronisation.
  t.add(0, "MPI_Allreduce", 1, 5 * kMs, 6 * kMs, {{"comm", 0}});
  t.add(1, "MPI_Allreduce", 1, 1 * kMs, 2 * kMs, {{"comm", 0}});
  t.finalize(10 * kMs);
  const DiagnoseReport r = t.run();
  ASSERT_EQ(r.phases.size(), 1u);
  EXPECT_TRUE(r.phases[0].closing.empty());
}

// Samples every 1 ms in main > work_a (> a system frame) and main > work_b.
struct Sampled : DiagRun {
  explicit Sampled(int32_t n) : DiagRun(n) {
    in.samples.resize(std::size_t(n));
    in.context_names.assign(std::size_t(n), {"", "main", "work_a", "work_b", ""});
    for (int32_t r = 0; r < n; ++r) {
      RankSamples& s = in.samples[std::size_t(r)];
      s.rank = r;
      s.world_size = n;
      s.period_ns = kMs;
      s.modules.push_back(Module{"app", "/bin/app", "", 0});
      s.contexts = {{0, 0, 0}, {0, 0, 0x10}, {1, 0, 0x20}, {1, 0, 0x30}, {2, 0, 0x40}};
    }
  }
  // Samples of rank r in [from, from + ns) at context ctx.
  void work(int32_t r, int64_t from, int64_t ns, uint32_t ctx) {
    for (int64_t t = from; t < from + ns; t += kMs) {
      Sample s;
      s.time_ns = t;
      s.context = ctx;
      in.samples[std::size_t(r)].samples.push_back(s);
    }
  }
};

TEST(Diagnose, SamplesNameTheFunctionThatCausesTheImbalance) {
  Sampled t(4);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 5; ++s) {
    std::vector<int64_t> w;
    for (int32_t r = 0; r < 4; ++r) {
      w.push_back((r + 1) * 10 * kMs);
      // work_a is entered through a system frame (nanosleep): context 4.
      t.work(r, at, w.back(), 4);
    }
    at = t.step(at, w);
  }
  t.finalize(at);
  const DiagnoseReport r = t.run();
  const Diagnosis* d = find(r, DiagnosisKind::kLoadImbalance);
  ASSERT_NE(d, nullptr);
  ASSERT_FALSE(d->causes.empty());
  // The most specific place: work_a, not main (which it explains).
  EXPECT_EQ(d->causes[0].label, "work_a, called from main");
  EXPECT_EQ(d->causes[0].stack, (std::vector<std::string>{"main", "work_a"}));
  EXPECT_EQ(d->causes[0].rank, 3);
  EXPECT_NEAR(d->causes[0].seconds, 5 * 15e-3, 1e-9);
  EXPECT_EQ(d->causes.size(), 1u);
}

// The sampler lowered its rate on every rank after the first step: the
// samples that follow are 4 ms apart and each stands for 4 ms, so the
// cause's time is the computation's, not a quarter of it.
TEST(Diagnose, SamplesCountForThePeriodTheyWereTakenAt) {
  Sampled t(4);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 5; ++s) {
    std::vector<int64_t> w;
    for (int32_t r = 0; r < 4; ++r) {
      w.push_back((r + 1) * 12 * kMs);
      RankSamples& rs = t.in.samples[std::size_t(r)];
      if (s == 1) rs.periods.push_back({0, at, 4 * kMs});
      for (int64_t x = at; x < at + w.back(); x += rs.period_at(0, x)) {
        Sample smp;
        smp.time_ns = x;
        smp.context = 4;
        rs.samples.push_back(smp);
      }
    }
    at = t.step(at, w);
  }
  t.finalize(at);
  const DiagnoseReport r = t.run();
  const Diagnosis* d = find(r, DiagnosisKind::kLoadImbalance);
  ASSERT_NE(d, nullptr);
  ASSERT_FALSE(d->causes.empty());
  EXPECT_EQ(d->causes[0].label, "work_a, called from main");
  EXPECT_EQ(d->causes[0].rank, 3);
  // max - avg: 48 - 30 ms per step.
  EXPECT_NEAR(d->causes[0].seconds, 5 * 18e-3, 1e-9);
}

TEST(Diagnose, PartiallyEvenedOutImbalanceNamesBothFunctions) {
  Sampled t(4);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 4; ++s) {
    std::vector<int64_t> w;
    for (int32_t r = 0; r < 4; ++r) {
      const int64_t a = (r + 1) * 10 * kMs, b = (4 - r) * 5 * kMs;
      t.work(r, at, a, 2);
      t.work(r, at + a, b, 3);
      w.push_back(a + b);
    }
    at = t.step(at, w);
  }
  t.finalize(at);
  const DiagnoseReport r = t.run();
  const Diagnosis* d = find(r, DiagnosisKind::kLoadImbalance);
  ASSERT_NE(d, nullptr);
  // Work 35, 40, 45, 50 ms: avg - min 7.5 ms per step.
  EXPECT_NEAR(d->seconds, 4 * 7.5e-3, 1e-9);
  ASSERT_EQ(d->causes.size(), 2u);
  EXPECT_EQ(d->causes[0].label, "work_a, called from main");  // 40 - 25 ms per step
  EXPECT_EQ(d->causes[0].rank, 3);
  EXPECT_EQ(d->causes[1].label, "work_b, called from main");  // 20 - 12.5 ms per step
  EXPECT_EQ(d->causes[1].rank, 0);
  EXPECT_NE(d->detail.find("partially evened out"), std::string::npos) << d->detail;
}

// Samples files that reached their size bound after two of four steps:
// the later steps' computation is named by call site, and a note says
// where the samples end. Samples dropped while later ones were kept are
// gaps: no note, every step named from the samples.
TEST(Diagnose, SamplesThatEndEarlyLeaveTheRestToCallSites) {
  for (const bool early : {true, false}) {
    Sampled t(4);
    t.init();
    int64_t at = 0;
    for (int s = 0; s < 4; ++s) {
      std::vector<int64_t> w;
      for (int32_t r = 0; r < 4; ++r) {
        w.push_back((r + 1) * 10 * kMs);
        if (!early || s < 2) t.work(r, at, w.back(), 2);
      }
      at = t.step(at, w);
    }
    t.finalize(at);
    for (RankSamples& rs : t.in.samples) {
      rs.has_trailer = true;
      rs.dropped = 5;
    }
    const DiagnoseReport r = t.run();
    const Diagnosis* d = find(r, DiagnosisKind::kLoadImbalance);
    ASSERT_NE(d, nullptr);
    EXPECT_NEAR(d->seconds, 4 * 15e-3, 1e-9);
    std::vector<std::string> notes;
    for (const std::string& n : r.notes)
      if (n.find("end before their computation does") != std::string::npos) notes.push_back(n);
    if (!early) {
      EXPECT_TRUE(notes.empty()) << notes[0];
      ASSERT_EQ(d->causes.size(), 1u);
      EXPECT_EQ(d->causes[0].label, "work_a, called from main");
      EXPECT_NEAR(d->causes[0].seconds, 4 * 15e-3, 1e-9);
      continue;
    }
    // Rank 0's last sample: 9 ms into the second step, which began at 40.01 ms.
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(
        notes[0].find("samples of ranks 0\u20133 end before their computation does, the first "
                      "0.049 s into the run"),
        std::string::npos)
        << notes[0];
    ASSERT_EQ(d->causes.size(), 2u);
    for (const CodePlace& cause : d->causes) {
      EXPECT_EQ(cause.rank, 3);
      EXPECT_NEAR(cause.seconds, 2 * 15e-3, 1e-9) << cause.label;
    }
    EXPECT_TRUE(d->causes[0].label == "work_a, called from main" ||
                d->causes[1].label == "work_a, called from main");
  }
}

TEST(Diagnose, WaitForPartnerNamesTheLateRankAndWhatItDid) {
  Sampled t(2);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 3; ++s) {
    // Rank 0 works 20 ms in work_b, then sends; rank 1 waits in MPI_Recv.
    t.work(0, at, 20 * kMs, 3);
    t.add(0, "MPI_Send", 2, at + 20 * kMs, at + 20 * kMs + 50000,
          {{"peer", 1}, {"tag", 0}, {"comm", 0}, {"count", 1}, {"dsize", 8}});
    t.add(1, "MPI_Recv", 3, at, at + 20 * kMs + 60000,
          {{"peer", 0}, {"tag", 0}, {"comm", 0}, {"count", 1}, {"dsize", 8}});
    at += 21 * kMs;
  }
  t.finalize(at);
  const DiagnoseReport r = t.run();
  const Diagnosis* d = find(r, DiagnosisKind::kWaitForPartner);
  ASSERT_NE(d, nullptr);
  EXPECT_NEAR(d->seconds, 3 * 20e-3 / 2, 1e-9);
  EXPECT_EQ(d->symptom.rank, 1);
  ASSERT_GE(d->causes.size(), 2u);
  EXPECT_EQ(d->causes[0].rank, 0);
  EXPECT_NE(d->causes[0].label.find("rank 0 late in MPI_Send"), std::string::npos);
  EXPECT_NE(d->causes[1].label.find("work_b"), std::string::npos) << d->causes[1].label;
}

TEST(Diagnose, AFunctionThatMostlyWaitsTakesTheDerivedLabel) {
  Sampled t(2);
  // The calls are made from main > exchange (site 8) and main > reduce
  // (site 9), named by embedded symbols as a symbolized trace has them.
  const Frame main_f{"app", 0x600}, exchange_f{"app", 0x500}, reduce_f{"app", 0x700};
  t.trace.symtab.symbols[main_f] = {SourceFrame{"main", "x.c", 10}};
  t.trace.symtab.symbols[exchange_f] = {SourceFrame{"exchange", "x.c", 20}};
  t.trace.symtab.symbols[reduce_f] = {SourceFrame{"reduce", "x.c", 30}};
  ASSERT_EQ(t.trace.sites.intern(CallSite{{exchange_f, main_f}}), 8u);
  ASSERT_EQ(t.trace.sites.intern(CallSite{{reduce_f, main_f}}), 9u);
  t.init();
  // Samples inside an MPI call: rank r's, every 1 ms over [from, to).
  auto in_call = [&](int32_t r, int64_t from, int64_t to) {
    for (int64_t at = from; at < to; at += kMs) {
      Sample s;
      s.time_ns = at;
      s.in_mpi = true;
      t.in.samples[std::size_t(r)].samples.push_back(s);
    }
  };
  int64_t at = 0;
  for (int s = 0; s < 3; ++s) {
    // Rank 0 works 20 ms in work_b, then sends; rank 1 waits in MPI_Recv.
    t.work(0, at, 20 * kMs, 3);
    t.add(0, "MPI_Send", 8, at + 20 * kMs, at + 20 * kMs + 50000,
          {{"peer", 1}, {"tag", 0}, {"comm", 0}, {"count", 1}, {"dsize", 8}});
    t.add(1, "MPI_Recv", 8, at, at + 20 * kMs + 60000,
          {{"peer", 0}, {"tag", 0}, {"comm", 0}, {"count", 1}, {"dsize", 8}});
    in_call(1, at, at + 20 * kMs);
    at += 21 * kMs;
    // Both reduce together for 5 ms: collective synchronisation, on both.
    t.add(0, "MPI_Allreduce", 9, at, at + 5 * kMs, {{"comm", 0}, {"count", 1}, {"dsize", 8}});
    t.add(1, "MPI_Allreduce", 9, at, at + 5 * kMs, {{"comm", 0}, {"count", 1}, {"dsize", 8}});
    in_call(0, at, at + 5 * kMs);
    in_call(1, at, at + 5 * kMs);
    at += 6 * kMs;
  }
  t.finalize(at);
  const DiagnoseReport r = t.run();
  // exchange: rank 1's 60 samples all wait (rank 0 has none there);
  // reduce: 15 samples per rank, all in the collective; main: computation
  // on rank 0 and waiting on rank 1, so no label.
  ASSERT_EQ(r.derived.size(), 2u);
  EXPECT_EQ(r.derived[0].stack, (std::vector<std::string>{"main", "exchange"}));
  EXPECT_EQ(r.derived[0].label, "wait for partner");
  EXPECT_EQ(r.derived[0].ranks, (std::vector<int32_t>{1}));
  EXPECT_EQ(r.derived[0].samples, 60u);
  EXPECT_DOUBLE_EQ(r.derived[0].min_share, 1.0);
  EXPECT_EQ(r.derived[1].function, "reduce");
  EXPECT_EQ(r.derived[1].label, "collective synchronisation");
  EXPECT_EQ(r.derived[1].ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(r.derived[1].samples, 30u);
  std::ostringstream text;
  write_diagnose_text(text, r);
  EXPECT_NE(text.str().find("exchange, called from main: wait for partner, 100.0 % of its 60 "
                            "samples on ranks 1"),
            std::string::npos)
      << text.str();
  // Too few samples on every rank: no label.
  DiagnoseOptions strict;
  strict.derived_min_samples = 100;
  EXPECT_TRUE(t.run(strict).derived.empty());
}

TEST(Diagnose, PhaseSummaryGivesEachDiagnosisItsShareOfTheRun) {
  DiagRun t(4);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 5; ++s) at = t.step(at, {10 * kMs, 20 * kMs, 30 * kMs, 40 * kMs});
  // A balanced tail closed by another call site: a second phase kind with
  // no diagnosis.
  for (int32_t r = 0; r < 4; ++r)
    t.add(r, "MPI_Barrier", 2, at + 50 * kMs, at + 50 * kMs + 10000, {{"comm", 0}});
  at += 50 * kMs + 10000;
  t.finalize(at);
  const DiagnoseReport r = t.run();
  ASSERT_EQ(r.phases.size(), 3u);
  ASSERT_EQ(r.summary.size(), 3u);  // no whole-run diagnoses: no fourth line
  const Diagnosis* d = find(r, DiagnosisKind::kLoadImbalance);
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->phase, 0);
  const PhaseSummary& s0 = r.summary[0];
  EXPECT_EQ(s0.phase, 0);
  ASSERT_EQ(s0.diagnoses.size(), 1u);
  EXPECT_EQ(&r.diagnoses[s0.diagnoses[0]], d);
  // 5 steps of 40 ms + 10 us per rank, of a run of 5 * 40.01 + 50.01 ms.
  const double run = r.run_seconds;
  EXPECT_NEAR(s0.seconds, 5 * 40.01e-3, 1e-6);
  EXPECT_NEAR(s0.share, s0.seconds / run, 1e-9);
  EXPECT_NEAR(s0.could_save, d->seconds / run, 1e-9);
  EXPECT_LE(s0.could_save, s0.share);
  EXPECT_TRUE(r.summary[1].diagnoses.empty());
  EXPECT_NEAR(r.summary[1].seconds, 50.01e-3, 1e-6);
  double shares = 0;
  for (const PhaseSummary& s : r.summary) shares += s.share;
  EXPECT_NEAR(shares, 1.0, 1e-6);
  std::ostringstream text, json;
  write_diagnose_text(text, r);
  write_diagnose_json(json, r);
  EXPECT_NE(text.str().find("Per phase"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("load imbalance 30.0 % (#1)"), std::string::npos) << text.str();
  EXPECT_NE(json.str().find("\"could_save\""), std::string::npos) << json.str();
}

// An aborted run: no rank's timeline has its end offset. Rank 2's clock
// runs 1 % fast since its start offset was measured; the exits of the
// synchronisations scatter by up to 300 us (rank 0's too).
TEST(Diagnose, ExitGapsFindTheDriftOfARankWithoutEndOffset) {
  DiagRun t(4);
  t.init();
  const double drift = 0.01;
  auto skew = [&](int32_t r, int64_t ns) {
    // Since the end of MPI_Init (at 0), where the start offset is measured.
    return r == 2 ? ns + static_cast<int64_t>(drift * double(ns)) : ns;
  };
  int64_t at = 0;
  std::vector<int64_t> ends;
  for (int s = 0; s < 40; ++s) {
    const int64_t end = at + 20 * kMs;
    for (int32_t r = 0; r < 4; ++r) {
      const int64_t scatter = ((s * 7 + r * 3) % 4) * 100000;  // 0-300 us
      t.add(r, "MPI_Allreduce", 1, skew(r, at + (r + 1) * kMs), skew(r, end + scatter),
            {{"comm", 0}, {"count", 1}, {"dsize", 8}});
    }
    ends.push_back(end);
    at = end + 400000;
  }
  t.in.events.end_offset.assign(4, 0);
  std::vector<int32_t> unfitted;
  const auto fits = diagnose_detail::align_by_exit_gaps(t.trace, t.in.events, unfitted);
  EXPECT_TRUE(unfitted.empty());
  ASSERT_EQ(fits.size(), 3u);  // ranks 1-3; rank 0 is the reference
  for (const auto& f : fits) {
    if (f.rank != 2) {
      EXPECT_FALSE(f.applied) << f.rank << " " << f.slope;
      continue;
    }
    EXPECT_TRUE(f.applied);
    EXPECT_NEAR(f.slope, drift, 0.0005);
  }
  // After the correction rank 2's exits are back within the scatter.
  const auto& r2 = t.in.events.ranks[2];
  for (std::size_t k = 1; k < r2.size(); ++k)
    EXPECT_NEAR(double(r2[k].end_ns), double(ends[k - 1]), 700000.0) << k;
  // Measured end offsets: nothing to do.
  DiagRun u(2);
  u.init();
  u.in.events.end_offset.assign(2, 1);
  EXPECT_TRUE(diagnose_detail::align_by_exit_gaps(u.trace, u.in.events, unfitted).empty());
}

// tracefold-diagnose names each distinct frame once, on the analysis rank
// it falls to, and rank 0 names the contexts from those names: the same
// names and the same frames without symbols as the serial reader's.
TEST(Diagnose, FramesNamedOnePerAnalysisRankGiveTheSerialNames) {
  std::vector<RankSamples> ranks(3);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankSamples& s = ranks[r];
    // No binary exists at these paths: frames keep module+offset.
    s.modules = {Module{"app", "/nonexistent/app", "", 0},
                 Module{"libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "", 0},
                 Module{"solver.so", "/nonexistent/solver.so", "", 0x1000 * r}};
    // Ranks share most frames, each has one of its own; libc is a system
    // library (no name).
    s.contexts = {{0, 0, 0}, {0, 0, 0x10}, {1, 1, 0x99}, {1, 2, 0x20 + 0x8 * r}, {1, 0, 0x30}};
  }
  symbolize::Symbolizer serial_sym;
  diagnose_detail::FrameMemo memo;
  std::set<diagnose_detail::FrameKey> serial_unnamed;
  std::vector<std::vector<std::string>> serial;
  for (const RankSamples& s : ranks)
    serial.push_back(diagnose_detail::name_contexts(s, serial_sym, memo, serial_unnamed));
  std::set<diagnose_detail::FrameKey> seen;
  std::vector<diagnose_detail::FrameQuery> frames;
  for (const RankSamples& s : ranks) diagnose_detail::frame_queries(s, seen, frames);
  // Per rank: app 0x10, app 0x30 (rank 0 only: rank 1 and 2 repeat them)
  // and its own solver frame; never libc's.
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[0].key, (diagnose_detail::FrameKey{"/nonexistent/app", 0x10}));
  EXPECT_EQ(frames[4].key, (diagnose_detail::FrameKey{"/nonexistent/solver.so", 0x30}));
  // Two "analysis ranks", every second frame each.
  diagnose_detail::FrameMemo names;
  std::set<diagnose_detail::FrameKey> unnamed;
  for (std::size_t me = 0; me < 2; ++me) {
    symbolize::Symbolizer sym;
    for (std::size_t i = me; i < frames.size(); i += 2) {
      bool none = false;
      names.emplace(frames[i].key, diagnose_detail::name_frame(frames[i], sym, none));
      if (none) unnamed.insert(frames[i].key);
    }
  }
  EXPECT_EQ(unnamed, serial_unnamed);
  EXPECT_EQ(unnamed.size(), 5u);
  for (std::size_t r = 0; r < ranks.size(); ++r)
    EXPECT_EQ(diagnose_detail::names_from_memo(ranks[r], names), serial[r]) << "rank " << r;
  EXPECT_EQ(serial[2],
            (std::vector<std::string>{"", "app+0x10", "", "solver.so+0x30", "app+0x30"}));
}

// A temporal context tree from hand-made samples: adjacent samples share
// the nodes of their common (loop, iteration, function) prefix; a sample
// whose LCA marker lies above a frame starts a new call of it; the
// recorder's loop gives the iterations, one without samples included.
TEST(Diagnose, TemporalContextTreeMergesAdjacentSamplesByIteration) {
  RankSamples rs;
  rs.period_ns = kMs;
  rs.modules = {Module{"app", "/nonexistent/app", "", 0}};
  rs.contexts = {{0, 0, 0}, {0, 0, 0x10}, {1, 0, 0x20}, {1, 0, 0x30}};
  const std::vector<std::string> names{"", "main", "work", "other"};
  auto sample = [&](int64_t t, uint32_t ctx, uint16_t lca, uint64_t ev, bool in_mpi = false) {
    Sample s;
    s.time_ns = t, s.context = ctx, s.lca_depth = lca, s.mpi_event = ev, s.in_mpi = in_mpi;
    rs.samples.push_back(s);
  };
  const OpId allreduce = *OpTable::find("MPI_Allreduce");
  std::vector<diagnose_detail::EventSpan> evs(5);
  evs[0] = {-kMs, -kMs, 0, 0, *OpTable::find("MPI_Init"), 0};
  for (int i = 1; i <= 3; ++i) {
    const int64_t at = (i - 1) * 10 * kMs;
    evs[std::size_t(i)] = {at, at + (i == 3 ? kMs / 2 : 8 * kMs), at + 10 * kMs, 0, allreduce, 1};
    evs[std::size_t(i)].loop = 0, evs[std::size_t(i)].entry = 1, evs[std::size_t(i)].iteration = i;
  }
  evs[4] = {30 * kMs, 30 * kMs, 31 * kMs, 0, *OpTable::find("MPI_Finalize"), 2};
  sample(1 * kMs, 2, 0, 1);         // iteration 1: main > work
  sample(2 * kMs, 2, 2, 1);         // the same call of work
  sample(3 * kMs, 3, 1, 1);         // main goes on, other is new
  sample(11 * kMs, 2, 0, 2);        // iteration 2
  sample(12 * kMs, 2, 1, 2);        // work left and called again
  sample(21 * kMs, 0, 0, 3, true);  // iteration 3, inside the Allreduce
  diagnose_detail::DigestParams p;
  p.run_start = 0, p.run_end = 30 * kMs, p.period_ns = kMs;
  p.bin_ns = diagnose_detail::picture_bin_ns(p.run_end);
  const diagnose_detail::RankDigest d = diagnose_detail::digest_rank(rs, names, evs, p);
  std::ostringstream got;
  for (const diagnose_detail::TreeNode& n : d.tree) {
    got << int32_t(n.parent == UINT32_MAX ? -1 : int32_t(n.parent)) << " ";
    switch (n.kind) {
      case diagnose_detail::TreeNode::kLoop:
        got << "loop" << n.what;
        break;
      case diagnose_detail::TreeNode::kIteration:
        got << "iteration" << n.what;
        break;
      case diagnose_detail::TreeNode::kFrame:
        got << d.frames.at(std::size_t(n.what));
        break;
      default:
        got << OpTable::name(OpId(n.what));
    }
    got << " " << n.start_ns / kMs << "-" << n.end_ns / kMs << " ms " << n.samples << "\n";
  }
  EXPECT_EQ(got.str(),
            "-1 loop0 0-30 ms 6\n"
            "0 iteration1 0-10 ms 3\n"
            "1 main 1-4 ms 3\n"
            "2 work 1-3 ms 2\n"
            "2 other 3-4 ms 1\n"
            "0 iteration2 10-20 ms 2\n"
            "5 main 11-13 ms 2\n"
            "6 work 11-12 ms 1\n"
            "6 work 12-13 ms 1\n"
            "0 iteration3 20-30 ms 1\n"
            "9 MPI_Allreduce 21-22 ms 1\n");
  EXPECT_EQ(d.tree_left_out, 0u);
}

// Any diagnosis's losses at ranks' events are placed in the iterations of
// their loop that hold them: shares at several ranks' events of one
// iteration add up; a loss of some iterations names them, one every
// iteration carries (uneven only by jitter) is in all of them.
TEST(Diagnose, LossesAtAnyRanksEventsArePlacedInTheirIterations) {
  DiagRun t(2);
  Node loop;
  loop.key = testing::make_event("MPI_Recv", 3).key();
  t.trace.nodes.push_back(loop);
  DiagnoseOptions o;
  DiagnoseReport rep;
  diagnose_detail::Context c(t.trace, t.in, o, rep);
  c.loops.loops.push_back({0, 0, -1});
  c.loops.at.assign(2, {});
  for (auto& at : c.loops.at)
    for (int64_t i = 1; i <= 10; ++i) at.push_back({0, 1, i, 10});
  // Iterations 3-7 lose 40 ms, half on each rank; the others 0.2 ms.
  std::vector<diagnose_detail::Context::LossAt> bursts;
  for (int32_t r = 0; r < 2; ++r)
    for (std::size_t k = 0; k < 10; ++k)
      bursts.push_back({r, k, k >= 2 && k <= 6 ? 0.020 : 0.0001});
  const std::string label = c.loop_label(0);
  EXPECT_EQ(c.iterations_where(bursts, 0), "in iterations 3\u20137 of 10 of " + label);
  // On rank 1 only, with one iteration far above the others: that one.
  std::vector<diagnose_detail::Context::LossAt> one(bursts.begin() + 10, bursts.end());
  one[8].seconds = 0.5;
  EXPECT_EQ(c.iterations_where(one, 0), "in iteration 9 of 10 of " + label);
  // Every iteration 1 ms or so, two 3 ms: the loss is in all of them.
  std::vector<diagnose_detail::Context::LossAt> jitter;
  for (std::size_t k = 0; k < 10; ++k)
    jitter.push_back({0, k, k == 4 || k == 8 ? 0.003 : 0.001 + 0.0001 * double(k % 3)});
  EXPECT_EQ(c.iterations_where(jitter, 0), "in all 10 iterations of " + label);
  // Events outside any loop place nothing.
  c.loops.at[0][0].loop = -1;
  EXPECT_EQ(c.iterations_where({{0, 0, 1.0}}, 0), "");
}

TEST(Diagnose, ReportsReadAsTextAndJson) {
  DiagRun t(2);
  t.init();
  int64_t at = 0;
  for (int s = 0; s < 3; ++s) at = t.step(at, {10 * kMs, 30 * kMs});
  t.finalize(at);
  const DiagnoseReport r = t.run();
  std::ostringstream text, json;
  write_diagnose_text(text, r);
  write_diagnose_json(json, r);
  EXPECT_NE(text.str().find("1. load imbalance in phase #0"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("remedy:"), std::string::npos);
  EXPECT_NE(json.str().find("\"kind\": \"load_imbalance\""), std::string::npos) << json.str();
}

}  // namespace
}  // namespace tracefold
