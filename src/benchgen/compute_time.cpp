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

double trimmed_mean_ns(const Histogram& h) {
  const Part p = trimmed(h);
  return p.count > 0 ? p.sum / p.count : 0;
}

double compute_ns(const Node& n, bench::ComputeMode mode) {
  // Each block's mean weighs as many executions as it recorded, dropped
  // outliers included: they stand for executions whose work took the
  // block's usual time.
  double sum = 0, count = 0;
  for (const Timing& tm : n.timings) {
    if (tm.compute.empty()) continue;
    const double c = static_cast<double>(tm.compute.count());
    sum +=
        c * (mode == bench::ComputeMode::kMean ? tm.compute.mean() : trimmed_mean_ns(tm.compute));
    count += c;
  }
  return count > 0 ? sum / count : 0;
}

// A loop's first call comes after the work between iterations, its later
// calls straight after the previous one: one mean over both spreads the
// work over every call. In a pipeline (a wavefront's receive, compute,
// send) that delays each stage's send and the downstream ranks wait for
// it, so the benchmark ran 50-70 % longer than lu and sweep3d.
ComputeByPred compute_by_pred(const Node& n, bench::ComputeMode mode) {
  ComputeByPred out;
  const Timing* base = nullptr;
  for (const Timing& tm : n.timings) {
    if (tm.compute.empty()) continue;
    if (tm.pred == kOtherKey) {
      base = &tm;
      break;
    }
    if (!base || tm.compute.count() > base->compute.count()) base = &tm;
  }
  if (!base) return out;
  auto value = [&](const Histogram& h) {
    return mode == bench::ComputeMode::kMean ? h.mean() : trimmed_mean_ns(h);
  };
  out.otherwise = value(base->compute);
  for (const Timing& tm : n.timings) {
    if (&tm == base || tm.compute.empty()) continue;
    const double v = value(tm.compute);
    if (std::llround(v) != std::llround(out.otherwise)) out.cases.emplace_back(tm.pred, v);
  }
  return out;
}

}  // namespace tracefold::benchgen
