// Time histograms with a bounded number of bins (seed 000, 2.3).
//
// Durations in nanoseconds go into logarithmic bins: log bin 0 holds [0, 2) ns
// and log bin b >= 1 holds [2^b, 2^(b+1)) ns. A histogram keeps at most
// kMaxBins non-empty bins: when a value or a merge would make more, adjacent
// log bins are grouped in twos, then fours, ... (the histogram's span: each
// bin covers `span` consecutive log bins and its index, a multiple of span, is
// the first of them) until they fit. The span is always the smallest one at
// which all values seen fit, so the result does not depend on the order in
// which values are added or partial histograms merged, and a trace's timing
// part stays the same size however long or wide the run is.
//
// Each bin keeps count, min, max and sum; the histogram also keeps the overall
// count, sum (so the mean is exact), min and max and the lowest rank where each
// occurred. The same type holds the values of user statistics plugins (any
// non-negative integer quantity).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tracefold {

class Histogram {
 public:
  struct Bin {
    uint8_t index = 0;
    uint64_t count = 0;
    int64_t min = 0;
    int64_t max = 0;
    int64_t sum = 0;
    bool operator==(const Bin&) const = default;
  };

  /// Number of log bins (bin indexes are below this).
  static constexpr int kBins = 64;
  /// Most non-empty bins a histogram keeps before it widens its span.
  static constexpr int kMaxBins = 2;
  /// Log bin index of a value (negative values are clamped to 0).
  static int bin_of(int64_t value) {
    if (value < 2) return 0;
    return std::bit_width(static_cast<uint64_t>(value)) - 1;
  }

  /// The value of `bin` at a uniform draw `u` in [0, 1): draws lie within the
  /// bin's [min, max] and average to its mean (replay's sampled timing).
  static int64_t draw_within(const Bin& bin, double u);

  void add(int64_t value, int32_t rank) {
    if (value < 0) value = 0;
    // Mostly the value's bin exists already (a call's times are alike).
    if (!add_to_existing_bin(value, rank)) add_new_bin(value, rank);
  }
  /// add(value_at(i), rank) for each i in [0, n) whose value is not
  /// negative (negative: no sample): the same result as those calls. While
  /// the samples fall in existing bins (a polling loop's times mostly do),
  /// only their bins are updated per sample; the histogram's totals, and
  /// its minimum and maximum, once per stretch.
  template <class ValueAt>
  void add_each(std::size_t n, ValueAt&& value_at, int32_t rank) {
    std::size_t i = 0;
    while (i < n) {
      if (bins_.empty() || bins_.size() > static_cast<std::size_t>(kMaxBins)) {
        const int64_t v = value_at(i++);
        if (v >= 0) add(v, rank);
        continue;
      }
      // A sample falls in an existing bin when its offset from the bin's
      // lowest value is below the bin's width (one unsigned comparison,
      // which a negative sample fails too); the bins' updates are kept in
      // locals and written back once per stretch.
      const std::size_t nb = bins_.size();
      uint64_t first[2] = {0, 0}, width[2] = {0, 0};
      for (std::size_t j = 0; j < nb; ++j) {
        const unsigned lo_bit = bins_[j].index, hi_bit = lo_bit + (1u << span_log_);
        first[j] = lo_bit == 0 ? 0 : uint64_t{1} << lo_bit;
        // Capped at 2^63, so that a negative sample (2^63 or more unsigned)
        // never falls inside.
        width[j] = (uint64_t{1} << (hi_bit >= 63 ? 63 : hi_bit)) - first[j];
      }
      // Per bin in scalars (no array indexed by the bin: the compiler keeps
      // them in registers); a missing second bin has width 0.
      const uint64_t first0 = first[0], width0 = width[0], first1 = first[1], width1 = width[1];
      uint64_t cnt0 = 0, cnt1 = 0;
      int64_t sm0 = 0, sm1 = 0, mn0 = INT64_MAX, mn1 = INT64_MAX, mx0 = INT64_MIN, mx1 = INT64_MIN;
      for (; i < n; ++i) {
        const int64_t v = value_at(i);
        const auto u = static_cast<uint64_t>(v);
        if (u - first0 < width0) {
          ++cnt0;
          sm0 += v;
          mn0 = v < mn0 ? v : mn0;
          mx0 = v > mx0 ? v : mx0;
        } else if (u - first1 < width1) {
          ++cnt1;
          sm1 += v;
          mn1 = v < mn1 ? v : mn1;
          mx1 = v > mx1 ? v : mx1;
        } else if (v >= 0) {
          break;
        }
      }
      const uint64_t cnt[2] = {cnt0, cnt1};
      const int64_t sm[2] = {sm0, sm1}, mn[2] = {mn0, mn1}, mx[2] = {mx0, mx1};
      uint64_t count = 0;
      int64_t sum = 0, lo = INT64_MAX, hi = INT64_MIN;
      for (std::size_t j = 0; j < nb; ++j) {
        if (cnt[j] == 0) continue;
        Bin& b = bins_[j];
        b.count += cnt[j];
        b.sum += sm[j];
        if (mn[j] < b.min) b.min = mn[j];
        if (mx[j] > b.max) b.max = mx[j];
        count += cnt[j];
        sum += sm[j];
        if (mn[j] < lo) lo = mn[j];
        if (mx[j] > hi) hi = mx[j];
      }
      if (count > 0) {
        // One rank for the whole stretch: its least and greatest values
        // decide min/max (and their rank) as the single adds would.
        if (lo < min_ || (lo == min_ && rank < min_rank_)) {
          min_ = lo;
          min_rank_ = rank;
        }
        if (hi > max_ || (hi == max_ && rank < max_rank_)) {
          max_ = hi;
          max_rank_ = rank;
        }
        count_ += count;
        sum_ += sum;
      }
      if (i < n) add(value_at(i++), rank);  // a sample (not negative) for a new bin
    }
  }
  void merge(const Histogram& other);
  /// Gives each bin of three or more samples the sum count * m, m its mean
  /// rounded to the nearest integer (halves up), and the histogram the total
  /// of those: every mean stays exact to half a unit, and a bin's sum then
  /// follows from count and m, whose digits do not grow with the count (the
  /// compact form stores m; settle_timings in trace.hpp). Bins of one or two
  /// samples, whose sums follow from min and max, are left as they are, as
  /// is a bin whose sum is negative (wrapped around) or too large to round.
  void round_bin_means();
  /// The mean of the bin with the most samples (the lower one on a tie): the
  /// typical value, which a few outliers in the other bin do not move; 0
  /// when empty.
  double typical() const;

  bool empty() const { return count_ == 0; }
  uint64_t count() const { return count_; }
  int64_t sum() const { return sum_; }
  double mean() const {
    return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0;
  }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  int32_t min_rank() const { return min_rank_; }
  int32_t max_rank() const { return max_rank_; }
  /// Log bins per bin: 1, 2, 4, ... 64.
  int span() const { return 1 << span_log_; }
  /// Non-empty bins in ascending index order.
  const std::vector<Bin>& bins() const { return bins_; }

  /// `n=C sum=S min=V@R max=V@R [span=W ]bins=I:C:MIN:MAX:SUM,...` or `n=0`
  /// (`span=` only when bins are wider than one log bin).
  std::string to_string() const;
  /// Inverse of to_string; throws std::invalid_argument describing the problem.
  /// Histograms written before bins were bounded (up to 64 bins) read as they
  /// are; the next add or merge narrows them to kMaxBins.
  static Histogram parse(std::string_view text);

  /// Everything a histogram holds, field by field: what the compact trace
  /// form stores instead of the text (version 3 as is, version 4 in columns
  /// with derived numbers left out; docs/format.md).
  struct Parts {
    uint64_t count = 0;
    int64_t sum = 0, min = 0, max = 0;
    int32_t min_rank = -1, max_rank = -1;
    uint8_t span_log = 0;
    std::vector<Bin> bins;
  };
  Parts parts() const;
  /// Inverse of parts(), with the checks parse() makes; throws
  /// std::invalid_argument describing the problem.
  static Histogram from_parts(Parts parts);

  bool operator==(const Histogram&) const = default;

 private:
  // add(value, rank) when the value's bin exists (then nothing is inserted
  // and nothing needs widening); false, having done nothing, when it does
  // not, or when the bins still need narrowing (a histogram read from an
  // old trace: add narrows it).
  bool add_to_existing_bin(int64_t value, int32_t rank) {
    if (bins_.size() > static_cast<std::size_t>(kMaxBins)) return false;
    const auto idx = static_cast<uint8_t>(bin_of(value) >> span_log_ << span_log_);
    for (Bin& b : bins_) {
      if (b.index != idx) continue;
      ++b.count;
      if (value < b.min) b.min = value;
      if (value > b.max) b.max = value;
      b.sum += value;
      if (value < min_ || (value == min_ && rank < min_rank_)) {
        min_ = value;
        min_rank_ = rank;
      }
      if (value > max_ || (value == max_ && rank < max_rank_)) {
        max_ = value;
        max_rank_ = rank;
      }
      ++count_;
      sum_ += value;
      return true;
    }
    return false;
  }
  void add_new_bin(int64_t value, int32_t rank);
  void absorb(const Bin& bin);
  void widen_until_fits();
  void widen_to(uint8_t span_log);

  std::vector<Bin> bins_;
  uint8_t span_log_ = 0;
  uint64_t count_ = 0;
  int64_t sum_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  int32_t min_rank_ = -1;
  int32_t max_rank_ = -1;
};

}  // namespace tracefold
