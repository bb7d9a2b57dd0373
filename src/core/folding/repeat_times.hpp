// The times of a run of repeats (Folder::append_repeats) added to an event's
// compute and comm histograms in bulk. Internal to core (folder_fast.cpp);
// the functions are declared here so that the unit tests can compare the
// bulk path with the per-sample one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tracefold/folder.hpp"
#include "tracefold/histogram.hpp"

namespace tracefold::folding {

/// compute.add_each(the times' compute_ns) and comm.add_each(their comm_ns),
/// with exactly that result. A run of 64 repeats or more is summarized in one
/// or two passes over the times (a few vector instructions per repeat) into
/// the histogram that adding it to an empty one would make, which is merged
/// in; a shorter run, one with missing samples (negative times) and one into
/// a histogram of more than kMaxBins bins (read from an old trace) are added
/// sample by sample. Returns how many of the two histograms took the
/// summary (0, 1 or 2; tests read it).
int add_repeat_times(Histogram& compute, Histogram& comm, std::span<const RepeatTiming> times,
                     int32_t rank);

/// The per-sample way only: what add_repeat_times must equal.
void add_repeat_times_each(Histogram& compute, Histogram& comm, std::span<const RepeatTiming> times,
                           int32_t rank);

/// One pass over a run: per lane (0: compute_ns, 1: comm_ns) its least and
/// greatest value and its sum modulo 2^64.
struct LaneSummary {
  int64_t min = INT64_MAX;
  int64_t max = INT64_MIN;
  uint64_t sum = 0;
};
/// The second pass, for a lane whose samples fall in two groups of log bins:
/// of the values at or above `high` (the high group's first value) their
/// count, sum and least value, and the greatest value below it.
struct LaneSplit {
  uint64_t count_hi = 0;
  uint64_t sum_hi = 0;
  int64_t min_hi = INT64_MAX;
  int64_t max_lo = INT64_MIN;
};

/// The passes, scalar and (x86-64 with AVX2 only) vector; add_repeat_times
/// takes the vector ones where the processor has AVX2. Exposed for tests.
void summarize_scalar(std::span<const RepeatTiming> times, LaneSummary out[2]);
/// `high` per lane, above INT64_MIN.
void split_scalar(std::span<const RepeatTiming> times, const int64_t high[2], LaneSplit out[2]);
/// False (and nothing done) where the vector passes are not available.
bool summarize_vector(std::span<const RepeatTiming> times, LaneSummary out[2]);
bool split_vector(std::span<const RepeatTiming> times, const int64_t high[2], LaneSplit out[2]);

}  // namespace tracefold::folding
