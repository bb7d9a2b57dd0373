// Compute times of generated benchmarks (compute_time.cpp).
#pragma once

#include "tracefold/bench.hpp"
#include "tracefold/histogram.hpp"
#include "tracefold/trace.hpp"

#include <utility>
#include <vector>

namespace tracefold::benchgen {

/// The histogram of the time before a call that `clock` spins for: the
/// compute_cpu statistic's for kCpu where the timing has it (MPI_Init has
/// none: its wall time), the wall-clock one otherwise.
const Histogram& compute_histogram(const Timing& tm, bench::ComputeClock clock);

/// The mean of a compute histogram without an upper bin that looks like
/// descheduling (a minority of the samples, all above twice the lower bin's
/// mean); the plain mean otherwise; 0 when empty.
double trimmed_mean_ns(const Histogram& h);

/// The time in ns to spin before node `n`: over its timing blocks, the
/// count-weighted plain mean for kMean, the count-weighted trimmed mean for
/// any other mode (kSample draws from the histogram instead; the parametric
/// and coNCePTuaL outputs ask for kTrimmed); 0 without samples. Processor
/// time holds no descheduled intervals: with kCpu every mode is the plain
/// mean.
double compute_ns(const Node& n, bench::ComputeMode mode,
                  bench::ComputeClock clock = bench::ComputeClock::kWall);

/// The time before node `n` by the call that preceded it (its timing
/// blocks, docs/format.md "Timing"): `cases` holds the predecessors whose
/// time differs from `otherwise` by at least a nanosecond, `otherwise` the
/// time of the `other` block, or else of the block with most samples (no
/// case needed for it). Not for kSample.
struct ComputeByPred {
  std::vector<std::pair<EventKey, double>> cases;
  double otherwise = 0;
};
ComputeByPred compute_by_pred(const Node& n, bench::ComputeMode mode,
                              bench::ComputeClock clock = bench::ComputeClock::kWall);

}  // namespace tracefold::benchgen
