// The sampler's decisions that need no signals: its rate under its own
// cost (src/record/sampler_rate.hpp), driven with made-up handler costs
// (lowered when the median tick costs more than 5 % of the period, raised
// back only when it would cost at most 2.5 % at the shorter period for
// kCalmWindows windows in a row), and where copies for ticks missed
// inside an MPI wrapper belong (sampler_impl.hpp).
#include <gtest/gtest.h>

#include <vector>

#include "sampler_impl.hpp"

using namespace tracefold::record::sampling;

namespace {

constexpr int64_t kAsked = 1000000;  // 1 ms

// Feeds `windows` full windows of ticks costing `cost_ns` each; returns the
// period after each window.
std::vector<int64_t> run(RateWindow& w, int64_t& period, int64_t cost_ns, int windows) {
  std::vector<int64_t> after;
  for (int k = 0; k < windows; ++k) {
    for (uint32_t t = 0; t < kCostWindow; ++t) {
      note_tick_cost(w, cost_ns, period);
      period = next_period(w, period, kAsked);
    }
    after.push_back(period);
  }
  return after;
}

TEST(SamplerRate, LowersOnceWhenTheMedianTickCostsMoreThanFivePercent) {
  RateWindow w;
  int64_t period = kAsked;
  // 60 us: 6 % of 1 ms, 3 % of 2 ms. One step down, then it stays: 3 % is
  // neither too much nor cheap enough to raise (at most 1.25 %).
  const std::vector<int64_t> after = run(w, period, 60000, 20);
  EXPECT_EQ(after.front(), 2 * kAsked);
  for (int64_t p : after) EXPECT_EQ(p, 2 * kAsked);
}

TEST(SamplerRate, DecidesByTheMedianAtTheEndOfAWindow) {
  RateWindow w;
  int64_t period = kAsked;
  // Half the window over 5 %: the median is not, so no change...
  for (uint32_t t = 0; t < kCostWindow; ++t) {
    note_tick_cost(w, t % 2 ? 60000 : 5000, period);
    EXPECT_EQ(next_period(w, period, kAsked), kAsked);
  }
  // ... one more than half: lowered, at the window's end and not before.
  for (uint32_t t = 0; t < kCostWindow; ++t) {
    note_tick_cost(w, t <= kCostWindow / 2 ? 60000 : 5000, period);
    period = next_period(w, period, kAsked);
    EXPECT_EQ(period, t + 1 < kCostWindow ? kAsked : 2 * kAsked) << "tick " << t;
  }
}

TEST(SamplerRate, RaisesBackAfterCalmWindowsInARowNotBeforeNorBelowTheAskedPeriod) {
  RateWindow w;
  int64_t period = kAsked;
  // A costly start (code unwound for the first time): 4 ms after two windows.
  run(w, period, 200000, 2);
  ASSERT_EQ(period, 4 * kAsked);
  // Cheap again (5 us): one step up after kCalmWindows windows, the next
  // after as many more, and never faster than asked.
  const std::vector<int64_t> after = run(w, period, 5000, 3 * kCalmWindows);
  for (uint32_t k = 0; k < after.size(); ++k) {
    const int64_t want = k + 1 < kCalmWindows       ? 4 * kAsked
                         : k + 1 < 2 * kCalmWindows ? 2 * kAsked
                                                    : kAsked;
    EXPECT_EQ(after[k], want) << "window " << k;
  }
}

TEST(SamplerRate, AnUncalmWindowStartsTheCountOver) {
  RateWindow w;
  int64_t period = kAsked;
  run(w, period, 60000, 1);
  ASSERT_EQ(period, 2 * kAsked);
  // Calm windows but one short, a window in the band between the two
  // thresholds (2 % of 2 ms), then calm again: the count starts over.
  run(w, period, 5000, kCalmWindows - 1);
  run(w, period, 40000, 1);
  const std::vector<int64_t> after = run(w, period, 5000, kCalmWindows);
  for (uint32_t k = 0; k + 1 < kCalmWindows; ++k) EXPECT_EQ(after[k], 2 * kAsked) << k;
  EXPECT_EQ(after.back(), kAsked);
}

// Whatever the cost, a steady one moves the period one way only: lowered
// to the first period where it is within 5 %, never raised after that.
TEST(SamplerRate, ASteadyCostNeverSwitchesBackAndForth) {
  for (int64_t cost = 1000; cost <= 4000000; cost += 1000 + cost / 7) {
    RateWindow w;
    int64_t period = kAsked, last = kAsked;
    int ups = 0;
    for (int k = 0; k < 64; ++k) {
      run(w, period, cost, 1);
      ups += period < last;
      last = period;
    }
    int64_t want = kAsked;
    while (cost * kCostShareInverse > want && want < kMaxSlowdown * kAsked) want *= 2;
    EXPECT_EQ(ups, 0) << "cost " << cost;
    EXPECT_EQ(period, want) << "cost " << cost;
  }
}

TEST(SamplerRate, NoSlowerThanTheBound) {
  RateWindow w;
  int64_t period = kAsked;
  run(w, period, 1000000000, 100);  // a second per tick
  EXPECT_EQ(period, kMaxSlowdown * kAsked);
}

// Ticks due at 10, 11, ... ms; the call entered at 13.5 ms: the copies due
// at 10–13 ms were outside it, the later ones inside.
TEST(SamplerCopies, OutsideTheCallAreThoseDueBeforeItsEnterTime) {
  EXPECT_EQ(copies_outside(6, 10000000, kAsked, true, 13500000), 4u);
  EXPECT_EQ(copies_outside(6, 10000000, kAsked, true, 13000000), 3u);  // due at 13: inside
  EXPECT_EQ(copies_outside(6, 10000000, kAsked, true, 9000000), 0u);   // all after entering
  EXPECT_EQ(copies_outside(6, 10000000, kAsked, true, 99000000), 6u);  // never more than missed
  EXPECT_EQ(copies_outside(0, 10000000, kAsked, true, 13500000), 0u);
}

// A tick that lands in the wrapper before it has read the call's enter
// time: the clock is read after the handler returns, so the tick's own
// sample is outside the call as well as its copies (a thread taken off its
// core right after the handler entered the call on the timeline
// milliseconds later).
TEST(SamplerCopies, BeforeTheEnterTimeIsReadTheTickItselfIsOutside) {
  EXPECT_EQ(copies_outside(0, 10000000, kAsked, false, 0), 1u);
  EXPECT_EQ(copies_outside(6, 10000000, kAsked, false, 0), 7u);
}

}  // namespace
