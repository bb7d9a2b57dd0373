#include "tracefold/histogram.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tracefold {

// A wide bin (up to a factor of 2^64 between min and max once the span has
// grown) is usually skewed towards one end; a flat draw would move its weight
// to the middle. min + (max - min) * u^a has mean min + (max - min) / (a + 1),
// which fixes a; a bin whose mean lies above the middle is drawn mirrored.
int64_t Histogram::draw_within(const Bin& bin, double u) {
  if (bin.max <= bin.min || bin.count == 0) return bin.min;
  const double lo = static_cast<double>(bin.min), hi = static_cast<double>(bin.max);
  const double mean =
      std::clamp(static_cast<double>(bin.sum) / static_cast<double>(bin.count), lo, hi);
  const double width = hi - lo;
  u = std::clamp(u, 0.0, 1.0);
  double x;
  if (mean - lo <= hi - mean) {
    x = mean > lo ? lo + width * std::pow(u, width / (mean - lo) - 1) : lo;
  } else {
    x = mean < hi ? hi - width * std::pow(u, width / (hi - mean) - 1) : hi;
  }
  // 2^63 (INT64_MAX as a double) does not fit llround's result.
  if (x >= static_cast<double>(std::numeric_limits<int64_t>::max())) return bin.max;
  return std::clamp(static_cast<int64_t>(std::llround(x)), bin.min, bin.max);
}

// Folds one bin, whose index is already a multiple of the current span, into
// the sorted bin list.
void Histogram::absorb(const Bin& bin) {
  auto it = std::lower_bound(bins_.begin(), bins_.end(), bin.index,
                             [](const Bin& b, uint8_t i) { return b.index < i; });
  if (it == bins_.end() || it->index != bin.index) {
    if (bins_.capacity() == 0) {
      // Room for the bins kept and the one that makes them widen: one
      // allocation for the histogram's life, not one per new bin.
      bins_.reserve(kMaxBins + 1);
      it = bins_.begin();
    }
    bins_.insert(it, bin);
    return;
  }
  it->count += bin.count;
  it->min = std::min(it->min, bin.min);
  it->max = std::max(it->max, bin.max);
  it->sum += bin.sum;
}

void Histogram::widen_to(uint8_t span_log) {
  if (span_log <= span_log_) return;
  span_log_ = span_log;
  // Bins stay sorted when their indexes are rounded down, so neighbours that
  // now share a group are adjacent and fold in one pass.
  std::size_t out = 0;
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    Bin b = bins_[i];
    b.index = static_cast<uint8_t>(b.index >> span_log << span_log);
    if (out > 0 && bins_[out - 1].index == b.index) {
      Bin& last = bins_[out - 1];
      last.count += b.count;
      last.min = std::min(last.min, b.min);
      last.max = std::max(last.max, b.max);
      last.sum += b.sum;
    } else {
      bins_[out++] = b;
    }
  }
  bins_.resize(out);
}

void Histogram::widen_until_fits() {
  while (bins_.size() > static_cast<std::size_t>(kMaxBins))
    widen_to(static_cast<uint8_t>(span_log_ + 1));
}

// add() when the value's bin does not exist yet, or the bins still need
// narrowing (add_to_existing_bin refused).
void Histogram::add_new_bin(int64_t value, int32_t rank) {
  const auto idx = static_cast<uint8_t>(bin_of(value) >> span_log_ << span_log_);
  if (count_ == 0 && bins_.empty()) {
    // A fresh histogram's first value (the folder makes one per new timing
    // record): one bin, nothing to search, widen or compare.
    if (bins_.capacity() == 0) bins_.reserve(kMaxBins + 1);
    bins_.push_back(Bin{idx, 1, value, value, value});
    min_ = max_ = value;
    min_rank_ = max_rank_ = rank;
    count_ = 1;
    sum_ = value;
    return;
  }
  absorb(Bin{idx, 1, value, value, value});
  widen_until_fits();
  if (count_ == 0 || value < min_ || (value == min_ && rank < min_rank_)) {
    min_ = value;
    min_rank_ = rank;
  }
  if (count_ == 0 || value > max_ || (value == max_ && rank < max_rank_)) {
    max_ = value;
    max_rank_ = rank;
  }
  ++count_;
  sum_ += value;
}

namespace {
// merge()'s common case, done in place: every bin of the other histogram
// falls in a bin this one has at its span (the timing records a folder
// merges mostly hold a call's alike times). The result is what absorbing
// them gives: no bin is added, so none widens. False, having changed
// nothing, when a bin is missing or the spans or bin counts say otherwise.
bool merge_into_existing_bins(std::vector<Histogram::Bin>& bins, uint8_t span_log,
                              const std::vector<Histogram::Bin>& other, uint8_t other_span_log) {
  if (other_span_log > span_log || bins.size() > static_cast<std::size_t>(Histogram::kMaxBins) ||
      other.size() > static_cast<std::size_t>(Histogram::kMaxBins))
    return false;
  std::size_t at[Histogram::kMaxBins];
  for (std::size_t k = 0; k < other.size(); ++k) {
    const auto idx = static_cast<uint8_t>(other[k].index >> span_log << span_log);
    std::size_t j = 0;
    while (j < bins.size() && bins[j].index != idx) ++j;
    if (j == bins.size()) return false;
    at[k] = j;
  }
  for (std::size_t k = 0; k < other.size(); ++k) {
    Histogram::Bin& b = bins[at[k]];
    const Histogram::Bin& ob = other[k];
    b.count += ob.count;
    b.min = std::min(b.min, ob.min);
    b.max = std::max(b.max, ob.max);
    b.sum += ob.sum;
  }
  return true;
}
}  // namespace

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    widen_until_fits();
    return;
  }
  if (!merge_into_existing_bins(bins_, span_log_, other.bins_, other.span_log_)) {
    // Both sides are at the smallest span that fits their own values; the
    // union needs at least the larger of the two, and maybe more.
    widen_to(other.span_log_);
    for (Bin ob : other.bins_) {
      ob.index = static_cast<uint8_t>(ob.index >> span_log_ << span_log_);
      absorb(ob);
    }
    widen_until_fits();
  }
  if (other.min_ < min_ || (other.min_ == min_ && other.min_rank_ < min_rank_)) {
    min_ = other.min_;
    min_rank_ = other.min_rank_;
  }
  if (other.max_ > max_ || (other.max_ == max_ && other.max_rank_ < max_rank_)) {
    max_ = other.max_;
    max_rank_ = other.max_rank_;
  }
  count_ += other.count_;
  sum_ += other.sum_;
}

void Histogram::round_bin_means() {
  for (Bin& b : bins_) {
    // Rounding moves a sum by less than count / 2: far from overflowing.
    if (b.count < 3 || b.sum < 0 || b.sum >= (int64_t{1} << 62)) continue;
    const auto c = static_cast<int64_t>(b.count);
    const int64_t rounded = (b.sum + c / 2) / c * c;
    // The total as it is kept: modulo 2^64.
    sum_ = static_cast<int64_t>(static_cast<uint64_t>(sum_) + static_cast<uint64_t>(rounded) -
                                static_cast<uint64_t>(b.sum));
    b.sum = rounded;
  }
}

double Histogram::typical() const {
  const Bin* top = nullptr;
  for (const Bin& b : bins_)
    if (!top || b.count > top->count) top = &b;
  return top ? static_cast<double>(top->sum) / static_cast<double>(top->count) : 0;
}

std::string Histogram::to_string() const {
  if (count_ == 0) return "n=0";
  std::string s = "n=" + std::to_string(count_) + " sum=" + std::to_string(sum_) +
                  " min=" + std::to_string(min_) + "@" + std::to_string(min_rank_) +
                  " max=" + std::to_string(max_) + "@" + std::to_string(max_rank_);
  if (span_log_ > 0) s += " span=" + std::to_string(span());
  s += " bins=";
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    const Bin& b = bins_[i];
    if (i) s += ',';
    s += std::to_string(b.index) + ':' + std::to_string(b.count) + ':' + std::to_string(b.min) +
         ':' + std::to_string(b.max) + ':' + std::to_string(b.sum);
  }
  return s;
}

namespace {
template <class T>
T number(std::string_view& text, const char* what) {
  T v{};
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p == text.data())
    throw std::invalid_argument(std::string("histogram: expected ") + what + " at '" +
                                std::string(text.substr(0, 20)) + "'");
  text.remove_prefix(static_cast<std::size_t>(p - text.data()));
  return v;
}

void expect(std::string_view& text, std::string_view lit) {
  if (text.substr(0, lit.size()) != lit)
    throw std::invalid_argument("histogram: expected '" + std::string(lit) + "' at '" +
                                std::string(text.substr(0, 20)) + "'");
  text.remove_prefix(lit.size());
}
}  // namespace

Histogram Histogram::parse(std::string_view text) {
  Parts p;
  expect(text, "n=");
  p.count = number<uint64_t>(text, "a count");
  if (p.count == 0) {
    if (!text.empty()) throw std::invalid_argument("histogram: trailing text after n=0");
    return Histogram{};
  }
  expect(text, " sum=");
  p.sum = number<int64_t>(text, "a sum");
  expect(text, " min=");
  p.min = number<int64_t>(text, "a minimum");
  expect(text, "@");
  p.min_rank = number<int32_t>(text, "a rank");
  expect(text, " max=");
  p.max = number<int64_t>(text, "a maximum");
  expect(text, "@");
  p.max_rank = number<int32_t>(text, "a rank");
  if (text.substr(0, 6) == " span=") {
    text.remove_prefix(6);
    const int span = number<int>(text, "a span");
    if (span < 2 || span > kBins || !std::has_single_bit(static_cast<unsigned>(span)))
      throw std::invalid_argument("histogram: span must be a power of two within 2..64");
    p.span_log = static_cast<uint8_t>(std::countr_zero(static_cast<unsigned>(span)));
  }
  expect(text, " bins=");
  while (true) {
    Bin b;
    const int idx = number<int>(text, "a bin index");
    if (idx < 0 || idx >= kBins)
      throw std::invalid_argument("histogram: bin indexes must ascend within 0..63");
    b.index = static_cast<uint8_t>(idx);
    expect(text, ":");
    b.count = number<uint64_t>(text, "a bin count");
    expect(text, ":");
    b.min = number<int64_t>(text, "a bin minimum");
    expect(text, ":");
    b.max = number<int64_t>(text, "a bin maximum");
    expect(text, ":");
    b.sum = number<int64_t>(text, "a bin sum");
    p.bins.push_back(b);
    if (text.empty()) break;
    expect(text, ",");
  }
  return from_parts(std::move(p));
}

Histogram::Parts Histogram::parts() const {
  return Parts{count_, sum_, min_, max_, min_rank_, max_rank_, span_log_, bins_};
}

Histogram Histogram::from_parts(Parts p) {
  Histogram h;
  if (p.count == 0) {
    if (!p.bins.empty()) throw std::invalid_argument("histogram: bins without values (n=0)");
    return h;
  }
  if (p.span_log > 6)
    throw std::invalid_argument("histogram: span must be a power of two within 2..64");
  h.count_ = p.count;
  h.sum_ = p.sum;
  h.min_ = p.min;
  h.max_ = p.max;
  h.min_rank_ = p.min_rank;
  h.max_rank_ = p.max_rank;
  h.span_log_ = p.span_log;
  if (p.bins.empty()) throw std::invalid_argument("histogram: expected at least one bin");
  uint64_t total = 0;
  int last_index = -1;
  for (const Bin& b : p.bins) {
    const int idx = b.index;
    if (idx <= last_index || idx >= kBins)
      throw std::invalid_argument("histogram: bin indexes must ascend within 0..63");
    if (idx % h.span() != 0)
      throw std::invalid_argument("histogram: bin index " + std::to_string(idx) +
                                  " is not a multiple of the span " + std::to_string(h.span()));
    last_index = idx;
    // What add and merge make: non-empty bins whose values lie in the log
    // bins the bin covers. An empty bin or one with stray values would
    // count towards kMaxBins, or widen the span, and carry its min and max
    // into whatever it is merged with.
    if (b.count == 0)
      throw std::invalid_argument("histogram: bin " + std::to_string(idx) + " is empty");
    if (b.min > b.max || bin_of(b.min) < idx || bin_of(b.max) >= idx + h.span() || b.min < 0)
      throw std::invalid_argument("histogram: bin " + std::to_string(idx) +
                                  " holds values outside its range");
    if (b.count > std::numeric_limits<uint64_t>::max() - total)
      throw std::invalid_argument("histogram: bin counts overflow");
    total += b.count;
  }
  h.bins_ = std::move(p.bins);
  // Only traces from before bins were bounded (span 1) have more.
  if (h.span_log_ > 0 && h.bins_.size() > static_cast<std::size_t>(kMaxBins))
    throw std::invalid_argument("histogram: more than " + std::to_string(kMaxBins) +
                                " bins at span " + std::to_string(h.span()));
  if (total != h.count_) throw std::invalid_argument("histogram: bin counts do not add up to n");
  return h;
}

}  // namespace tracefold
