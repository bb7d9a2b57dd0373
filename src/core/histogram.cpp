#include "tracefold/histogram.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <stdexcept>

namespace tracefold {

int Histogram::bin_of(int64_t value) {
  if (value < 2) return 0;
  return std::bit_width(static_cast<uint64_t>(value)) - 1;
}

void Histogram::add(int64_t value, int32_t rank) {
  if (value < 0) value = 0;
  const auto idx = static_cast<uint8_t>(bin_of(value));
  auto it = std::lower_bound(bins_.begin(), bins_.end(), idx,
                             [](const Bin& b, uint8_t i) { return b.index < i; });
  if (it == bins_.end() || it->index != idx) it = bins_.insert(it, Bin{idx, 0, value, value, 0});
  ++it->count;
  it->min = std::min(it->min, value);
  it->max = std::max(it->max, value);
  it->sum += value;
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

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  // In place: the other side usually has one or two bins (one event's worth).
  for (const Bin& ob : other.bins_) {
    auto it = std::lower_bound(bins_.begin(), bins_.end(), ob.index,
                               [](const Bin& b, uint8_t i) { return b.index < i; });
    if (it == bins_.end() || it->index != ob.index) {
      bins_.insert(it, ob);
      continue;
    }
    it->count += ob.count;
    it->min = std::min(it->min, ob.min);
    it->max = std::max(it->max, ob.max);
    it->sum += ob.sum;
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

std::string Histogram::to_string() const {
  if (count_ == 0) return "n=0";
  std::string s = "n=" + std::to_string(count_) + " sum=" + std::to_string(sum_) +
                  " min=" + std::to_string(min_) + "@" + std::to_string(min_rank_) +
                  " max=" + std::to_string(max_) + "@" + std::to_string(max_rank_) + " bins=";
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
  Histogram h;
  expect(text, "n=");
  h.count_ = number<uint64_t>(text, "a count");
  if (h.count_ == 0) {
    if (!text.empty()) throw std::invalid_argument("histogram: trailing text after n=0");
    return h;
  }
  expect(text, " sum=");
  h.sum_ = number<int64_t>(text, "a sum");
  expect(text, " min=");
  h.min_ = number<int64_t>(text, "a minimum");
  expect(text, "@");
  h.min_rank_ = number<int32_t>(text, "a rank");
  expect(text, " max=");
  h.max_ = number<int64_t>(text, "a maximum");
  expect(text, "@");
  h.max_rank_ = number<int32_t>(text, "a rank");
  expect(text, " bins=");
  uint64_t total = 0;
  int last_index = -1;
  while (true) {
    Bin b;
    int idx = number<int>(text, "a bin index");
    if (idx <= last_index || idx >= kBins)
      throw std::invalid_argument("histogram: bin indexes must ascend within 0..63");
    last_index = idx;
    b.index = static_cast<uint8_t>(idx);
    expect(text, ":");
    b.count = number<uint64_t>(text, "a bin count");
    expect(text, ":");
    b.min = number<int64_t>(text, "a bin minimum");
    expect(text, ":");
    b.max = number<int64_t>(text, "a bin maximum");
    expect(text, ":");
    b.sum = number<int64_t>(text, "a bin sum");
    total += b.count;
    h.bins_.push_back(b);
    if (text.empty()) break;
    expect(text, ",");
  }
  if (total != h.count_) throw std::invalid_argument("histogram: bin counts do not add up to n");
  return h;
}

}  // namespace tracefold
