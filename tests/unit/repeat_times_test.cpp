// A run of repeats' times added to the histograms in bulk (a summary of the
// run merged as a histogram of its own, src/core/repeat_times.cpp) must give
// exactly what adding them sample by sample gives, and so must the folds
// that use it.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "random_program.hpp"
#include "repeat_times.hpp"
#include "tracefold/event.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/histogram.hpp"
#include "tracefold/trace.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using folding::add_repeat_times;
using folding::add_repeat_times_each;
using folding::LaneSplit;
using folding::LaneSummary;
using testing::RandomProgram;
using testing::Rng;

// Times of one kind: in one log bin, across a power of two, spread wide,
// at the top of the range, or with missing samples (-1).
int64_t draw(Rng& rng, int kind) {
  static const int64_t tops[] = {INT64_MAX, INT64_MAX - 1, int64_t{1} << 62, int64_t{1} << 32};
  switch (kind) {
    case 0:
      return rng.between(128, 255);
    case 1:
      return rng.between(40, 100);  // log bins 5 and 6
    case 2:
      return rng.between(0, 1'000'000);
    case 3:
      return rng.percent(50) ? tops[rng.below(std::size(tops))] : rng.between(1, 3);
    case 4:
      return rng.percent(5) ? -1 : rng.between(0, 20);
    default:
      return rng.between(0, 1);
  }
}

TEST(RepeatTimes, SummaryEqualsPerSampleAdds) {
  Rng rng(1313);
  const std::size_t lengths[] = {0, 1, 2, 63, 64, 65, 66, 67, 100, 1001, 4095};
  int summarized = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Histogram compute, comm;
    const int kinds[2] = {static_cast<int>(rng.below(6)), static_cast<int>(rng.below(6))};
    // What the histograms held before: nothing, the run's kind of value
    // (its bins exist), or values elsewhere (spans widen on the merge).
    const int before = static_cast<int>(rng.below(6));
    for (int i = 0; i < before; ++i) {
      const auto r = static_cast<int32_t>(rng.below(4));
      const int64_t c = rng.percent(50) ? draw(rng, kinds[0]) : draw(rng, 2);
      const int64_t m = rng.percent(50) ? draw(rng, kinds[1]) : rng.between(0, 70);
      if (c >= 0) compute.add(c, r);
      if (m >= 0) comm.add(m, r);
    }
    std::vector<RepeatTiming> times(rng.percent(50) ? lengths[rng.below(std::size(lengths))]
                                                    : rng.below(3000));
    for (RepeatTiming& t : times) t = {draw(rng, kinds[0]), draw(rng, kinds[1])};
    const auto rank = static_cast<int32_t>(rng.below(4));
    Histogram compute_each = compute, comm_each = comm;
    // Every run of 64 or more with no missing sample is summarized.
    int eligible = 0;
    for (const bool compute_lane : {true, false}) {
      bool missing = false;
      for (const RepeatTiming& t : times) missing |= (compute_lane ? t.compute_ns : t.comm_ns) < 0;
      eligible += times.size() >= 64 && !missing;
    }
    const int took = add_repeat_times(compute, comm, times, rank);
    ASSERT_EQ(took, eligible) << "trial " << trial;
    summarized += took;
    add_repeat_times_each(compute_each, comm_each, times, rank);
    ASSERT_EQ(compute.to_string(), compute_each.to_string()) << "trial " << trial;
    ASSERT_EQ(comm.to_string(), comm_each.to_string()) << "trial " << trial;
    ASSERT_TRUE(compute == compute_each && comm == comm_each) << "trial " << trial;
  }
  // The summary must actually have been taken, not only the per-sample way.
  EXPECT_GT(summarized, 1500);
}

// Samples across a power of two (compute: log bins 5 and 6 at span 1),
// samples in two bins far apart (comm: log bin 6 and an outlier in 19: span
// 1 although the candidate from the least and greatest is 16), and a third
// value between those (span 16) take the two-group summary.
TEST(RepeatTimes, RunInTwoGroupsIsSplit) {
  for (const bool filled : {false, true}) {
    for (const int64_t outlier : {int64_t{0}, int64_t{1'000'000}, int64_t{5'000}}) {
      Histogram compute, comm;
      if (filled) {
        compute.add(50, 1);
        comm.add(70, 0);
      }
      std::vector<RepeatTiming> times;
      for (int i = 0; i < 500; ++i) times.push_back({40 + (i * 37) % 61, 64 + (i * 13) % 9});
      if (outlier > 0) {
        times[77].comm_ns = 1'000'000;                     // log bin 19, far above 64..72
        if (outlier == 5'000) times[300].comm_ns = 5'000;  // log bin 12: between
      }
      Histogram compute_each = compute, comm_each = comm;
      EXPECT_EQ(add_repeat_times(compute, comm, times, 2), 2);
      add_repeat_times_each(compute_each, comm_each, times, 2);
      EXPECT_EQ(compute.to_string(), compute_each.to_string());
      EXPECT_EQ(comm.to_string(), comm_each.to_string());
      EXPECT_EQ(compute.bins().size(), 2u);
    }
  }
}

// The vector passes (AVX2, where the processor has it) give what the scalar
// ones give, for every length (the tail of one repeat) and extreme values.
TEST(RepeatTimes, VectorPassesEqualScalarPasses) {
  Rng rng(77);
  const int64_t extremes[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX};
  int vector_runs = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<RepeatTiming> times(trial < 40 ? static_cast<std::size_t>(trial) : rng.below(300));
    for (RepeatTiming& t : times) {
      auto one = [&] {
        return rng.percent(10) ? extremes[rng.below(std::size(extremes))]
                               : rng.between(-5, 1'000'000);
      };
      t = {one(), one()};
    }
    LaneSummary scalar[2], vector[2];
    folding::summarize_scalar(times, scalar);
    int64_t high[2];
    for (int64_t& h : high)
      h = rng.percent(10)   ? INT64_MAX
          : rng.percent(10) ? INT64_MIN + 1
                            : rng.between(-3, 1'000'000);
    LaneSplit split_scalar[2], split_vector[2];
    folding::split_scalar(times, high, split_scalar);
    const bool has_vector = folding::summarize_vector(times, vector);
    ASSERT_EQ(has_vector, folding::split_vector(times, high, split_vector));
    if (!has_vector) continue;
    ++vector_runs;
    for (int lane = 0; lane < 2; ++lane) {
      ASSERT_EQ(vector[lane].min, scalar[lane].min) << "trial " << trial << " lane " << lane;
      ASSERT_EQ(vector[lane].max, scalar[lane].max) << "trial " << trial << " lane " << lane;
      ASSERT_EQ(vector[lane].sum, scalar[lane].sum) << "trial " << trial << " lane " << lane;
      const LaneSplit& a = split_vector[lane];
      const LaneSplit& b = split_scalar[lane];
      ASSERT_EQ(a.count_hi, b.count_hi) << "trial " << trial << " lane " << lane;
      ASSERT_EQ(a.sum_hi, b.sum_hi) << "trial " << trial << " lane " << lane;
      ASSERT_EQ(a.min_hi, b.min_hi) << "trial " << trial << " lane " << lane;
      ASSERT_EQ(a.max_lo, b.max_lo) << "trial " << trial << " lane " << lane;
    }
  }
#if defined(__x86_64__)
  // Where the processor has AVX2 the vector passes must have been compared.
  if (__builtin_cpu_supports("avx2")) {
    EXPECT_EQ(vector_runs, 2000);
  }
#endif
}

// Polling loops of hundreds to thousands of polls per round (runs long
// enough for the summary), times in one bin, across two, or spread, folded
// with append_repeats and with single appends: the same trace text.
TEST(RepeatTimes, LongPollingRunsFoldLikeSingleAppends) {
  const OpId irecv = *OpTable::find("MPI_Irecv"), test = *OpTable::find("MPI_Test"),
             iprobe = *OpTable::find("MPI_Iprobe"), wait = *OpTable::find("MPI_Wait"),
             barrier = *OpTable::find("MPI_Barrier");
  const FieldId flag = *FieldTable::find("flag"), links = *FieldTable::find("links"),
                tag = *FieldTable::find("tag");
  SiteTable sites;
  for (SiteId i = 0; i < 5; ++i) sites.intern(RandomProgram::site_frames(i));
  CommTable comms;
  comms.define_world(2);
  for (int variant = 0; variant < 12; ++variant) {
    Rng rng(static_cast<uint64_t>(variant) + 500);
    const int kind_compute = variant % 6, kind_comm = (variant / 2) % 6;
    auto timed = [&](Event e) {
      e.compute_ns = draw(rng, kind_compute);
      e.comm_ns = draw(rng, kind_comm);
      return e;
    };
    auto plain = [&](OpId op, SiteId site) {
      Event e;
      e.op = op;
      e.site = site;
      return timed(e);
    };
    Folder single(0), repeated(0);
    std::vector<RepeatTiming> times;
    for (int round = 0; round < 15; ++round) {
      const Event post = plain(irecv, 0);
      single.append(post);
      repeated.append(post);
      Event poll = plain(variant % 2 ? iprobe : test, variant % 2 ? 4 : 1);
      if (variant % 2)
        poll.set(tag, 3);
      else
        poll.set_list(links, {1});
      poll.set(flag, 0);
      single.append(poll);
      repeated.append(poll);
      const int n = static_cast<int>(rng.between(1, 2500));
      times.clear();
      for (int p = 1; p < n; ++p) {
        const Event again = timed(poll);
        single.append(again);
        times.push_back({again.compute_ns, again.comm_ns});
        // The recorder hands a run over in pieces (its batches).
        if (times.size() == 1000 || p + 1 == n) {
          repeated.append_repeats(poll, times);
          times.clear();
        }
      }
      for (const Event& e : {plain(wait, 2), plain(barrier, 3)}) {
        single.append(e);
        repeated.append(e);
      }
    }
    ASSERT_EQ(single.structure(), repeated.structure()) << "variant " << variant;
    ASSERT_EQ(format_trace(single.finish(2, sites, comms)),
              format_trace(repeated.finish(2, sites, comms)))
        << "variant " << variant;
  }
}

}  // namespace
}  // namespace tracefold
