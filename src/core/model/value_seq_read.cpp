// Reading a value sequence without changing its growth state: sums, runs,
// cursors, comparison and hashing. Kept apart from value_seq.cpp, whose
// appends and online folding are the folder's hot path.
#include "tracefold/value_seq.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace tracefold {
int64_t ValueSeq::sum() const {
  if (simple_) return is_sentinel(single_value_) ? 0 : single_value_ * static_cast<int64_t>(size_);
  int64_t total = 0;
  for (const Run& r : runs()) {
    int64_t s = 0;
    for (int64_t v : r.pattern)
      if (!is_sentinel(v)) s += v;
    total += s * static_cast<int64_t>(r.reps);
  }
  return total;
}

std::vector<ValueSeq::Run> ValueSeq::runs() const {
  if (simple_) {
    if (size_ == 0) return {};
    return {Run{{single_value_}, size_}};
  }
  std::vector<Run> out;
  out.reserve(spans_.size() + (partial_ ? 1 : 0));
  for (const Span& s : spans_)
    out.push_back(Run{std::vector<int64_t>(pattern_of(s), pattern_of(s) + s.len), s.reps});
  if (partial_)
    out.push_back(Run{
        std::vector<int64_t>(pattern_of(spans_.back()), pattern_of(spans_.back()) + partial_), 1});
  return out;
}

std::size_t ValueSeq::run_count() const {
  if (simple_) return size_ ? 1 : 0;
  return spans_.size() + (partial_ ? 1 : 0);
}

std::size_t ValueSeq::memory_bytes() const {
  return sizeof(ValueSeq) + vals_.capacity() * sizeof(int64_t) + spans_.capacity() * sizeof(Span);
}

void ValueSeq::make_histogram() {
  if (histogram_) return;
  std::map<int64_t, uint64_t> counts;
  for (const Run& r : runs())
    for (int64_t v : r.pattern) counts[v] += r.reps;
  simple_ = false;
  partial_ = 0;
  vals_.clear();
  spans_.clear();
  for (auto& [v, c] : counts) add_span(&v, 1, c);
  histogram_ = true;
}

ValueSeq::Cursor::Cursor(const ValueSeq& seq) : remaining_(seq.size()) {
  if (seq.simple_) {
    if (seq.size_ > 0) {
      vals_.push_back(seq.single_value_);
      spans_.push_back(Span{0, 1, seq.size_});
    }
    return;
  }
  vals_ = seq.vals_;
  spans_ = seq.spans_;
  if (seq.partial_) spans_.push_back(Span{seq.spans_.back().off, seq.partial_, 1});
}

int64_t ValueSeq::Cursor::next() {
  if (remaining_ == 0) throw std::logic_error("ValueSeq::Cursor read past the end");
  --remaining_;
  const Span& r = spans_[run_];
  int64_t v = vals_[r.off + pos_];
  if (++pos_ == r.len) {
    pos_ = 0;
    if (++rep_ == r.reps) {
      rep_ = 0;
      ++run_;
    }
  }
  return v;
}

std::vector<int64_t> ValueSeq::to_vector() const {
  std::vector<int64_t> out;
  out.reserve(size_);
  for (Cursor c(*this); !c.done();) out.push_back(c.next());
  return out;
}

bool ValueSeq::same_representation(const ValueSeq& other) const {
  if (size_ != other.size_ || histogram_ != other.histogram_) return false;
  if (simple_ && other.simple_) return size_ == 0 || single_value_ == other.single_value_;
  if (!simple_ && !other.simple_ && partial_ == other.partial_ &&
      spans_.size() == other.spans_.size()) {
    for (std::size_t i = 0; i < spans_.size(); ++i)
      if (spans_[i].reps != other.spans_[i].reps ||
          !pattern_is(spans_[i], other.pattern_of(other.spans_[i]), other.spans_[i].len))
        return false;
    return true;
  }
  // runs() == other.runs(), without a copy of every pattern: the compact
  // writer checks each derived field this way, over every value.
  struct Piece {
    const int64_t* pattern;
    std::size_t len;
    uint64_t reps;
  };
  auto pieces = [](const ValueSeq& s) {
    std::vector<Piece> out;
    if (s.simple_) {
      if (s.size_ != 0) out.push_back(Piece{&s.single_value_, 1, s.size_});
      return out;
    }
    out.reserve(s.spans_.size() + 1);
    for (const Span& sp : s.spans_) out.push_back(Piece{s.pattern_of(sp), sp.len, sp.reps});
    if (s.partial_) out.push_back(Piece{s.pattern_of(s.spans_.back()), s.partial_, 1});
    return out;
  };
  const std::vector<Piece> a = pieces(*this), b = pieces(other);
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].reps != b[i].reps || a[i].len != b[i].len ||
        !std::equal(a[i].pattern, a[i].pattern + a[i].len, b[i].pattern))
      return false;
  return true;
}

bool ValueSeq::equals(const ValueSeq& other) const {
  if (size_ != other.size_ || histogram_ != other.histogram_) return false;
  if (same_representation(other)) return true;
  Cursor a(*this), b(other);
  while (!a.done())
    if (a.next() != b.next()) return false;
  return true;
}

namespace {
// Polynomial hash modulo 2^64: H(xy) = H(x) * B^|y| + H(y), so a run's hash
// follows from its pattern's and its repeat count by a geometric sum.
constexpr uint64_t kValueHashBase = 0x100000001b3ull;

uint64_t power(uint64_t b, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return r;
}

// 1 + b + ... + b^(n-1) modulo 2^64, and b^n in `pow_out`.
uint64_t geometric(uint64_t b, uint64_t n, uint64_t& pow_out) {
  if (n == 0) {
    pow_out = 1;
    return 0;
  }
  if (n % 2 == 1) {
    uint64_t p = 0;
    const uint64_t g = geometric(b, n - 1, p);
    pow_out = p * b;
    return g * b + 1;
  }
  uint64_t p = 0;
  const uint64_t g = geometric(b, n / 2, p);
  pow_out = p * p;
  return g * (1 + p);
}

void hash_pattern(uint64_t& h, const int64_t* v, std::size_t m, uint64_t reps) {
  uint64_t hp = 0;
  for (std::size_t i = 0; i < m; ++i) hp = hp * kValueHashBase + static_cast<uint64_t>(v[i]);
  const uint64_t bm = power(kValueHashBase, m);
  uint64_t bmr = 0;
  const uint64_t g = geometric(bm, reps, bmr);
  h = h * bmr + hp * g;
}
}  // namespace

uint64_t ValueSeq::value_hash() const {
  uint64_t h = histogram_ ? 0x9e3779b97f4a7c15ull : 0;
  if (simple_) {
    hash_pattern(h, &single_value_, 1, size_);
  } else {
    for (const Span& r : spans_) hash_pattern(h, pattern_of(r), r.len, r.reps);
    if (partial_) hash_pattern(h, pattern_of(spans_.back()), partial_, 1);
  }
  return h ^ size_;
}

}  // namespace tracefold
