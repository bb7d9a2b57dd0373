// The sampler's rate under its own cost (docs/sampling.md): each thread's
// handler measures what its ticks cost and, per window of 64 ticks,
// lowers the thread's rate when the median tick costs more than 5 % of
// the period and raises it again once the median would cost at most half
// that at the shorter period, for two windows in a row. The two
// thresholds a factor of 2 apart, and the windows in a row, keep a cost
// near one threshold from switching the rate back and forth. Header-only
// and free of signals so that tests/unit/sampler_test.cpp can drive
// it with made-up costs; the handler (sampler.cpp) calls it.
#pragma once

#include <cstdint>

#pragma GCC visibility push(hidden)

namespace tracefold::record::sampling {

// Ticks per decision.
constexpr uint32_t kCostWindow = 64;
// Lower when the median tick costs more than 1/20 (5 %) of the period.
constexpr int64_t kCostShareInverse = 20;
// Raise only when the median tick costs at most 1/80 of the period: 2.5 %
// of the halved period, half the share that lowers it.
constexpr int64_t kCalmShareInverse = 80;
// ... for this many windows in a row.
constexpr uint32_t kCalmWindows = 2;
// Never slower than this many times the period asked for.
constexpr int64_t kMaxSlowdown = 64;

struct RateWindow {
  uint32_t ticks = 0;         // on-time ticks in this window
  uint32_t over = 0;          // of them, costlier than 5 % of the period
  uint32_t calm = 0;          // of them, at most 1/80 of the period
  uint32_t calm_windows = 0;  // calm windows in a row before this one
};

/// One tick that cost `cost_ns` at `period_ns` (late ones too: the time
/// their thread was off its core is not in their cost, and their copies
/// are written outside the handler).
inline void note_tick_cost(RateWindow& w, int64_t cost_ns, int64_t period_ns) {
  ++w.ticks;
  if (cost_ns * kCostShareInverse > period_ns)
    ++w.over;
  else if (cost_ns * kCalmShareInverse <= period_ns)
    ++w.calm;
}

/// The thread's period from its next sample on: `period_ns` unless the
/// window is full and its median says otherwise; a full window starts
/// over. `asked_ns` is the period the run asked for (the shortest).
inline int64_t next_period(RateWindow& w, int64_t period_ns, int64_t asked_ns) {
  if (w.ticks < kCostWindow) return period_ns;
  int64_t next = period_ns;
  if (2 * w.over > w.ticks) {
    if (period_ns < kMaxSlowdown * asked_ns) next = period_ns * 2;
    w.calm_windows = 0;
  } else if (2 * w.calm > w.ticks && period_ns > asked_ns) {
    if (++w.calm_windows >= kCalmWindows) {
      next = period_ns / 2;
      w.calm_windows = 0;
    }
  } else {
    w.calm_windows = 0;
  }
  w.ticks = w.over = w.calm = 0;
  return next;
}

}  // namespace tracefold::record::sampling

#pragma GCC visibility pop
