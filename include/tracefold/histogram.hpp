// Fixed-bin time histograms (seed 000, 2.3).
//
// Durations in nanoseconds go into logarithmic bins: bin 0 holds [0, 2) ns and
// bin b >= 1 holds [2^b, 2^(b+1)) ns. Each bin keeps count, min, max and sum
// (so the mean is exact); the histogram also keeps the overall min and max and
// the lowest rank where each occurred. Histograms merge across loop iterations
// and ranks without losing any of that. The same type holds the values of user
// statistics plugins (any non-negative integer quantity).
#pragma once

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

  static constexpr int kBins = 64;
  /// Bin index of a value (negative values are clamped to 0).
  static int bin_of(int64_t value);

  void add(int64_t value, int32_t rank);
  void merge(const Histogram& other);

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
  /// Non-empty bins in ascending index order.
  const std::vector<Bin>& bins() const { return bins_; }

  /// `n=C sum=S min=V@R max=V@R bins=I:C:MIN:MAX:SUM,...` or `n=0`.
  std::string to_string() const;
  /// Inverse of to_string; throws std::invalid_argument describing the problem.
  static Histogram parse(std::string_view text);

  bool operator==(const Histogram&) const = default;

 private:
  std::vector<Bin> bins_;
  uint64_t count_ = 0;
  int64_t sum_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  int32_t min_rank_ = -1;
  int32_t max_rank_ = -1;
};

}  // namespace tracefold
