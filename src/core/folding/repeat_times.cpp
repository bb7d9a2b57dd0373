// A polling loop's repeats reach the folder in runs of up to thousands
// (Folder::append_repeats), and adding their two times to the histograms
// sample by sample (Histogram::add_each: the bin test, count, sum, minimum
// and maximum per sample and histogram) was the largest part of the fold's
// cost per poll. A histogram's result depends only on each bin's count,
// sum, minimum and maximum and on the totals, and not on the order of adds
// and merges. So a run is summarized by a pass or two over its times into
// the histogram that adding its samples to an empty one would make (the
// smallest span at which they fall in at most two groups of log bins), and
// that is merged into the event's. The passes keep no per-sample branch, and
// on x86-64 with AVX2 take two repeats (four times) per vector instruction.
#include "repeat_times.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <utility>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TRACEFOLD_REPEAT_TIMES_AVX2 1
#endif

namespace tracefold::folding {

static_assert(sizeof(RepeatTiming) == 2 * sizeof(int64_t) &&
                  offsetof(RepeatTiming, compute_ns) == 0 &&
                  offsetof(RepeatTiming, comm_ns) == sizeof(int64_t),
              "the passes read the times as pairs of int64_t");

namespace {

// Below this many repeats the summary's fixed cost (two small histograms
// made and merged) is more than the per-sample adds.
constexpr std::size_t kBulkMin = 64;

int64_t lane_value(const RepeatTiming& t, int lane) {
  return lane == 0 ? t.compute_ns : t.comm_ns;
}

void split_one(LaneSplit& s, int64_t v, int64_t high) {
  if (v >= high) {
    ++s.count_hi;
    s.sum_hi += static_cast<uint64_t>(v);
    s.min_hi = std::min(s.min_hi, v);
  } else {
    s.max_lo = std::max(s.max_lo, v);
  }
}

void add_lane_each(Histogram& h, std::span<const RepeatTiming> times, int lane, int32_t rank) {
  if (lane == 0)
    h.add_each(
        times.size(), [&](std::size_t j) { return times[j].compute_ns; }, rank);
  else
    h.add_each(
        times.size(), [&](std::size_t j) { return times[j].comm_ns; }, rank);
}

#ifdef TRACEFOLD_REPEAT_TIMES_AVX2

bool have_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}

[[gnu::target("avx2")]] inline __m256i min_epi64(__m256i a, __m256i b) {
  return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b));
}
[[gnu::target("avx2")]] inline __m256i max_epi64(__m256i a, __m256i b) {
  return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(b, a));
}
[[gnu::target("avx2")]] inline __m256i load_pairs(const RepeatTiming* t) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t));
}

// Lanes 0 and 2 of a vector hold compute times, 1 and 3 comm times.
[[gnu::target("avx2")]] void summarize_avx2(std::span<const RepeatTiming> times,
                                            LaneSummary out[2]) {
  const RepeatTiming* t = times.data();
  const std::size_t n = times.size();
  __m256i mn0 = _mm256_set1_epi64x(INT64_MAX), mx0 = _mm256_set1_epi64x(INT64_MIN);
  __m256i sm0 = _mm256_setzero_si256();
  __m256i mn1 = mn0, mx1 = mx0, sm1 = sm0;
  std::size_t i = 0;
  // Two independent sets of accumulators: four repeats per iteration.
  for (; i + 4 <= n; i += 4) {
    const __m256i a = load_pairs(t + i), b = load_pairs(t + i + 2);
    sm0 = _mm256_add_epi64(sm0, a);
    sm1 = _mm256_add_epi64(sm1, b);
    mn0 = min_epi64(mn0, a);
    mn1 = min_epi64(mn1, b);
    mx0 = max_epi64(mx0, a);
    mx1 = max_epi64(mx1, b);
  }
  if (i + 2 <= n) {
    const __m256i a = load_pairs(t + i);
    sm0 = _mm256_add_epi64(sm0, a);
    mn0 = min_epi64(mn0, a);
    mx0 = max_epi64(mx0, a);
    i += 2;
  }
  alignas(32) int64_t mn[4], mx[4];
  alignas(32) uint64_t sm[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(mn), min_epi64(mn0, mn1));
  _mm256_store_si256(reinterpret_cast<__m256i*>(mx), max_epi64(mx0, mx1));
  _mm256_store_si256(reinterpret_cast<__m256i*>(sm), _mm256_add_epi64(sm0, sm1));
  for (int lane = 0; lane < 2; ++lane) {
    LaneSummary& s = out[lane];
    s.min = std::min(mn[lane], mn[lane + 2]);
    s.max = std::max(mx[lane], mx[lane + 2]);
    s.sum = sm[lane] + sm[lane + 2];
    if (i < n) {
      const int64_t v = lane_value(t[i], lane);
      s.min = std::min(s.min, v);
      s.max = std::max(s.max, v);
      s.sum += static_cast<uint64_t>(v);
    }
  }
}

// The high group is mostly a few outliers (or none): per four repeats two
// comparisons with the thresholds and one test, and only the greatest value
// kept while none is high; vectors holding a high value go value by value.
[[gnu::target("avx2")]] void split_avx2(std::span<const RepeatTiming> times, const int64_t high[2],
                                        LaneSplit out[2]) {
  const RepeatTiming* t = times.data();
  const std::size_t n = times.size();
  // x >= high as x > high - 1 (thresholds are above INT64_MIN).
  const __m256i below_high = _mm256_set_epi64x(high[1] - 1, high[0] - 1, high[1] - 1, high[0] - 1);
  __m256i mxl0 = _mm256_set1_epi64x(INT64_MIN), mxl1 = mxl0;
  LaneSplit s[2];
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i a = load_pairs(t + i), b = load_pairs(t + i + 2);
    const __m256i any_high =
        _mm256_or_si256(_mm256_cmpgt_epi64(a, below_high), _mm256_cmpgt_epi64(b, below_high));
    if (!_mm256_testz_si256(any_high, any_high)) [[unlikely]] {
      for (std::size_t j = i; j < i + 4; ++j) {
        split_one(s[0], t[j].compute_ns, high[0]);
        split_one(s[1], t[j].comm_ns, high[1]);
      }
      continue;
    }
    mxl0 = max_epi64(mxl0, a);
    mxl1 = max_epi64(mxl1, b);
  }
  for (; i < n; ++i) {
    split_one(s[0], t[i].compute_ns, high[0]);
    split_one(s[1], t[i].comm_ns, high[1]);
  }
  alignas(32) int64_t mxl[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(mxl), max_epi64(mxl0, mxl1));
  for (int lane = 0; lane < 2; ++lane) {
    s[lane].max_lo = std::max({s[lane].max_lo, mxl[lane], mxl[lane + 2]});
    out[lane] = s[lane];
  }
}

#endif  // TRACEFOLD_REPEAT_TIMES_AVX2

// What a lane's summary makes of its histogram: merged as the run's own
// histogram of one bin or two (split at a threshold), or added sample by
// sample.
struct Plan {
  enum Kind { kEach, kOne, kTwo } kind = kEach;
  uint8_t span_log = 0;
  uint8_t low_index = 0, high_index = 0;
  // kTwo: the first value of the high group (2^index of the log bin it
  // starts at, at least 1).
  int64_t high = INT64_MAX;
};

// The run's own histogram, as adds into an empty one would make it, has the
// smallest span at which its values fall in at most two groups of log bins.
// Its least and greatest values give a candidate: the smallest span at which
// their groups are the same or adjacent (every value lies between them, so
// it fits there), and splitting there gives the two groups' values; whether
// a smaller span fits too follows from those (settle()).
Plan plan_for(const Histogram& h, const LaneSummary& s) {
  Plan p;
  // A negative time is no sample (add_each skips it); a histogram read from
  // an old trace with more bins than kMaxBins is narrowed by the next add.
  if (s.min < 0 || h.bins().size() > static_cast<std::size_t>(Histogram::kMaxBins)) return p;
  const int b0 = Histogram::bin_of(s.min), b1 = Histogram::bin_of(s.max);
  int span_log = 0;
  while ((b1 >> span_log) - (b0 >> span_log) > 1) ++span_log;
  p.span_log = static_cast<uint8_t>(span_log);
  p.low_index = static_cast<uint8_t>(b0 >> span_log << span_log);
  p.high_index = static_cast<uint8_t>(b1 >> span_log << span_log);
  if (p.low_index == p.high_index) {
    p.kind = Plan::kOne;  // one log bin (span 1: adjacent groups at any wider span)
  } else {
    p.kind = Plan::kTwo;
    p.high = int64_t{1} << p.high_index;
  }
  return p;
}

// The two-group plan made exact once the split is known: the smallest span
// at which each group's values (from its least to its greatest) share one
// group of log bins. At that span the run fits in two groups; at half of it
// one of them spans two, so with the other there are three: the span adds
// into an empty histogram end at. It is not wider than the candidate's,
// whose threshold is a group boundary at every smaller span too.
void settle(Plan& p, const LaneSummary& s, const LaneSplit& split) {
  const int lo0 = Histogram::bin_of(s.min), lo1 = Histogram::bin_of(split.max_lo);
  const int hi0 = Histogram::bin_of(split.min_hi), hi1 = Histogram::bin_of(s.max);
  int span_log = 0;
  while ((lo0 >> span_log) != (lo1 >> span_log) || (hi0 >> span_log) != (hi1 >> span_log))
    ++span_log;
  p.span_log = static_cast<uint8_t>(span_log);
  p.low_index = static_cast<uint8_t>(lo0 >> span_log << span_log);
  p.high_index = static_cast<uint8_t>(hi0 >> span_log << span_log);
}

// The run's own histogram at the target's span, merged into it: what adding
// its samples one by one gives. At that span the run's samples fill the
// bins below and no others; merging widens the target's span exactly as far
// as the adds would (to the smallest span at which all its values fit).
void merge_run(Histogram& h, const Plan& p, const LaneSummary& s, const LaneSplit& split,
               std::size_t n, int32_t rank) {
  Histogram::Parts parts;
  parts.count = n;
  parts.sum = static_cast<int64_t>(s.sum);
  parts.min = s.min;
  parts.max = s.max;
  parts.min_rank = parts.max_rank = rank;
  parts.span_log = p.span_log;
  if (p.kind == Plan::kOne) {
    parts.bins.push_back({p.low_index, n, s.min, s.max, static_cast<int64_t>(s.sum)});
  } else {
    const uint64_t n_hi = split.count_hi;
    parts.bins.push_back(
        {p.low_index, n - n_hi, s.min, split.max_lo, static_cast<int64_t>(s.sum - split.sum_hi)});
    parts.bins.push_back(
        {p.high_index, n_hi, split.min_hi, s.max, static_cast<int64_t>(split.sum_hi)});
  }
  h.merge(Histogram::from_parts(std::move(parts)));
}

}  // namespace

void summarize_scalar(std::span<const RepeatTiming> times, LaneSummary out[2]) {
  LaneSummary c, m;
  for (const RepeatTiming& t : times) {
    c.min = std::min(c.min, t.compute_ns);
    c.max = std::max(c.max, t.compute_ns);
    c.sum += static_cast<uint64_t>(t.compute_ns);
    m.min = std::min(m.min, t.comm_ns);
    m.max = std::max(m.max, t.comm_ns);
    m.sum += static_cast<uint64_t>(t.comm_ns);
  }
  out[0] = c;
  out[1] = m;
}

void split_scalar(std::span<const RepeatTiming> times, const int64_t high[2], LaneSplit out[2]) {
  for (int lane = 0; lane < 2; ++lane) {
    LaneSplit s;
    for (const RepeatTiming& t : times) split_one(s, lane_value(t, lane), high[lane]);
    out[lane] = s;
  }
}

bool summarize_vector(std::span<const RepeatTiming> times, LaneSummary out[2]) {
#ifdef TRACEFOLD_REPEAT_TIMES_AVX2
  if (have_avx2()) {
    summarize_avx2(times, out);
    return true;
  }
#endif
  (void)times;
  (void)out;
  return false;
}

bool split_vector(std::span<const RepeatTiming> times, const int64_t high[2], LaneSplit out[2]) {
#ifdef TRACEFOLD_REPEAT_TIMES_AVX2
  if (have_avx2()) {
    split_avx2(times, high, out);
    return true;
  }
#endif
  (void)times;
  (void)high;
  (void)out;
  return false;
}

void add_repeat_times_each(Histogram& compute, Histogram& comm, std::span<const RepeatTiming> times,
                           int32_t rank) {
  add_lane_each(compute, times, 0, rank);
  add_lane_each(comm, times, 1, rank);
}

int add_repeat_times(Histogram& compute, Histogram& comm, std::span<const RepeatTiming> times,
                     int32_t rank) {
  if (times.size() < kBulkMin) {
    add_repeat_times_each(compute, comm, times, rank);
    return 0;
  }
  LaneSummary summary[2];
  if (!summarize_vector(times, summary)) summarize_scalar(times, summary);
  Histogram* const hist[2] = {&compute, &comm};
  Plan plan[2] = {plan_for(compute, summary[0]), plan_for(comm, summary[1])};
  LaneSplit split[2];
  if (plan[0].kind == Plan::kTwo || plan[1].kind == Plan::kTwo) {
    const int64_t high[2] = {plan[0].high, plan[1].high};
    if (!split_vector(times, high, split)) split_scalar(times, high, split);
    for (int lane = 0; lane < 2; ++lane)
      if (plan[lane].kind == Plan::kTwo) settle(plan[lane], summary[lane], split[lane]);
  }
  int summarized = 0;
  for (int lane = 0; lane < 2; ++lane) {
    if (plan[lane].kind == Plan::kEach) {
      add_lane_each(*hist[lane], times, lane, rank);
    } else {
      merge_run(*hist[lane], plan[lane], summary[lane], split[lane], times.size(), rank);
      ++summarized;
    }
  }
  return summarized;
}

}  // namespace tracefold::folding
