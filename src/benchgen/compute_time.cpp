// The time a generated program spins for before a call, from the node's
// recorded compute histograms (one per preceding call).
//
// A recorded interval also holds any time the rank spent descheduled. On a
// shared machine those intervals are few and long (a whole scheduling
// period, tens of ms, where the work takes 1 ms) and they move a plain mean
// far up; spinning for them makes the benchmark ask the CPU for more work
// than the program did, and on a loaded machine every extra CPU second costs
// wall time. The trimmed mean leaves out such an outlying bin.
#include "compute_time.hpp"

#include <cmath>

namespace tracefold::benchgen {

namespace {

struct Part {
  double sum = 0;
  double count = 0;
};

// The upper of two bins is taken for descheduling when it holds a minority
// of the samples (at most a quarter) and starts well above the rest (its
// least value more than twice the lower bin's mean). Two modes of real work
// that close, or that common, stay in; values split only by a bin boundary
// (1.0 and 1.1 ms around 2^20 ns) stay in.
Part trimmed(const Histogram& h) {
  const auto& bins = h.bins();
  Part all{static_cast<double>(h.sum()), static_cast<double>(h.count())};
  if (bins.size() != 2) return all;
  const Histogram::Bin& lo = bins[0];
  const Histogram::Bin& hi = bins[1];
  if (lo.count == 0 || hi.count * 4 > h.count()) return all;
  const double lo_mean = static_cast<double>(lo.sum) / static_cast<double>(lo.count);
  if (static_cast<double>(hi.min) <= 2 * lo_mean) return all;
  return {static_cast<double>(lo.sum), static_cast<double>(lo.count)};
}

}  // namespace

const Histogram& compute_histogram(const Timing& tm, bench::ComputeClock clock) {
  if (clock == bench::ComputeClock::kCpu)
    for (const auto& [name, h] : tm.stats)
      if (name == kComputeCpuStatistic && !h.empty()) return h;
  return tm.compute;
}

double trimmed_mean_ns(const Histogram& h) {
  const Part p = trimmed(h);
  return p.count > 0 ? p.sum / p.count : 0;
}

double compute_ns(const Node& n, bench::ComputeMode mode, bench::ComputeClock clock) {
  // Each block's mean weighs as many executions as it recorded, dropped
  // outliers included: they stand for executions whose work took the
  // block's usual time.
  double sum = 0, count = 0;
  for (const Timing& tm : n.timings) {
    const Histogram& h = compute_histogram(tm, clock);
    if (h.empty()) continue;
    const double c = static_cast<double>(h.count());
    sum += c * (mode == bench::ComputeMode::kMean || clock == bench::ComputeClock::kCpu
                    ? h.mean()
                    : trimmed_mean_ns(h));
    count += c;
  }
  return count > 0 ? sum / count : 0;
}

// A loop's first call comes after the work between iterations, its later
// calls straight after the previous one: one mean over both spreads the
// work over every call. In a pipeline (a wavefront's receive, compute,
// send) that delays each stage's send and the downstream ranks wait for
// it, so the benchmark ran 50-70 % longer than lu and sweep3d.
ComputeByPred compute_by_pred(const Node& n, bench::ComputeMode mode, bench::ComputeClock clock) {
  ComputeByPred out;
  const Timing* base = nullptr;
  for (const Timing& tm : n.timings) {
    if (compute_histogram(tm, clock).empty()) continue;
    if (tm.pred == kOtherKey) {
      base = &tm;
      break;
    }
    if (!base || compute_histogram(tm, clock).count() > compute_histogram(*base, clock).count())
      base = &tm;
  }
  if (!base) return out;
  auto value = [&](const Timing& tm) {
    const Histogram& h = compute_histogram(tm, clock);
    return mode == bench::ComputeMode::kMean || clock == bench::ComputeClock::kCpu
               ? h.mean()
               : trimmed_mean_ns(h);
  };
  out.otherwise = value(*base);
  for (const Timing& tm : n.timings) {
    if (&tm == base || compute_histogram(tm, clock).empty()) continue;
    const double v = value(tm);
    if (std::llround(v) != std::llround(out.otherwise)) out.cases.emplace_back(tm.pred, v);
  }
  return out;
}

}  // namespace tracefold::benchgen
