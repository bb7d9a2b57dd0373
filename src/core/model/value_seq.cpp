#include "tracefold/value_seq.hpp"

#include <algorithm>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tracefold {

namespace {
// Longest pattern the online folder looks for in a literal tail. Longer
// periods are left to the loop folder, which works on events, not values.
constexpr std::size_t kMaxPeriod = 32;
// Runs this short are appended value by value so they can fold into the tail.
constexpr uint64_t kSmallRunValues = 8;
// Run-level folding looks at groups of up to this many runs, and builds
// patterns of at most this many values.
constexpr std::size_t kMaxRunGroup = 4;
constexpr std::size_t kMaxFoldedPattern = 64;

// fold_run_tail's first test, inlined where values are pushed (most pushes
// complete a repetition of a run, or grow a literal, and nothing folds): a
// group of runs can fold only if one of the last few runs before the tail
// has the tail's count and length.
template <class Span>
inline bool run_tail_may_fold(const std::vector<Span>& spans) {
  const std::size_t n = spans.size();
  if (n < 2) return false;
  const Span& tail = spans[n - 1];
  const std::size_t kmax = std::min(kMaxRunGroup, n / 2);
  for (std::size_t k = 1; k <= kmax; ++k) {
    const Span& pair = spans[n - 1 - k];
    if (pair.reps == tail.reps && pair.len == tail.len) return true;
  }
  return false;
}

// Whether x may be among w[0, kMaxPeriod): false only if it is not.
inline bool among(const int64_t* w, int64_t x) {
  static_assert(kMaxPeriod % 2 == 0);
#if defined(__SSE2__)
  // The 32-bit halves compared lane by lane, or-ed over the window: a
  // value equal to x sets both halves of its lane, and a lane with both
  // set is a candidate (or two values each matching one half).
  const __m128i xx = _mm_set1_epi64x(x);
  __m128i hit = _mm_setzero_si128();
  for (std::size_t i = 0; i < kMaxPeriod; i += 2)
    hit = _mm_or_si128(
        hit, _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)), xx));
  hit = _mm_and_si128(hit, _mm_shuffle_epi32(hit, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_movemask_epi8(hit) != 0;
#else
  bool hit = false;
  for (std::size_t i = 0; i < kMaxPeriod; ++i) hit |= w[i] == x;
  return hit;
#endif
}
}  // namespace

ValueSeq ValueSeq::repeated(int64_t value, uint64_t n) {
  ValueSeq s;
  s.append_repeated(value, n);
  return s;
}

bool ValueSeq::pattern_is(const Span& s, const int64_t* v, std::size_t len) const {
  return s.len == len && std::equal(v, v + len, pattern_of(s));
}

void ValueSeq::add_span(const int64_t* v, std::size_t len, uint64_t reps) {
  spans_.push_back(Span{vals_.size(), len, reps});
  // One value (most runs of a poll's or a probe's values) without the
  // range insert's call to memmove.
  if (len == 1)
    vals_.push_back(*v);
  else
    vals_.insert(vals_.end(), v, v + len);
}

void ValueSeq::truncate_spans(std::size_t n) {
  if (n >= spans_.size()) return;
  vals_.resize(spans_[n].off);
  spans_.resize(n);
}

void ValueSeq::materialize() {
  if (!simple_) return;
  simple_ = false;
  vals_.clear();
  spans_.clear();
  // A sequence that stops being one value mostly gets a few more runs at
  // once (a poll's flag, a probe's source): room for them in one allocation
  // each, not a reallocation per run while the buffers double from one.
  if (vals_.capacity() < 8) vals_.reserve(8);
  if (spans_.capacity() < 4) spans_.reserve(4);
  partial_ = 0;
  if (size_ > 0) add_span(&single_value_, 1, size_);
}

// Flattened as push_general is: called per value that leaves the inline
// one-value case of push_back.
[[gnu::flatten]] void ValueSeq::push_back_slow(int64_t value) {
  if (histogram_) {
    // One span of one value per distinct value, sorted: vals_ is the sorted
    // list of values and span i holds vals_[i].
    auto it = std::lower_bound(vals_.begin(), vals_.end(), value);
    const auto i = static_cast<std::size_t>(it - vals_.begin());
    if (it != vals_.end() && *it == value) {
      ++spans_[i].reps;
    } else {
      vals_.insert(it, value);
      spans_.insert(spans_.begin() + static_cast<std::ptrdiff_t>(i), Span{i, 1, 1});
      for (std::size_t j = i + 1; j < spans_.size(); ++j) ++spans_[j].off;
    }
    ++size_;
    return;
  }
  if (simple_) {
    if (size_ == 0 || value == single_value_) {
      single_value_ = value;
      ++size_;
      return;
    }
    materialize();
  }
  push_general(value);
}

void ValueSeq::push_back_n(int64_t value, uint64_t n) {
  if (n > 0 && !histogram_ && simple_ && (size_ == 0 || value == single_value_)) {
    single_value_ = value;
    size_ += n;
    return;
  }
  for (uint64_t i = 0; i < n; ++i) push_back(value);
}

// Flattened: most pushes that get here grow a literal that folds nothing
// (a polling code's values), and the calls to the folding tests cost about
// what the tests do.
[[gnu::flatten]] void ValueSeq::push_general(int64_t value) {
  ++size_;
  if (!spans_.empty() && spans_.back().reps >= 2) {
    Span& last = spans_.back();
    if (vals_[last.off + partial_] == value) {
      if (++partial_ == last.len) {
        ++last.reps;
        partial_ = 0;
        if (run_tail_may_fold(spans_)) fold_run_tail();
      }
      return;
    }
    flush_partial();
  }
  if (spans_.empty() || spans_.back().reps != 1) spans_.push_back(Span{vals_.size(), 0, 1});
  vals_.push_back(value);
  ++spans_.back().len;
  fold_literal_tail();
  if (run_tail_may_fold(spans_)) fold_run_tail();
}

// When the last K runs repeat the K runs before them (e.g. `2*2 1 2*2 1`),
// the 2K runs become one run of their expansion: nested regular values such
// as list lengths followed by elements then keep folding.
void ValueSeq::fold_run_tail() {
  const std::size_t n = spans_.size();
  if (n < 2) return;
  const Span& tail = spans_[n - 1];
  for (std::size_t k = 1; k <= kMaxRunGroup && 2 * k <= n; ++k) {
    // The last run against its pair k runs before, then the counts and
    // lengths of all k pairs: cheap rejects before any pattern is compared
    // (a polling code's literal tail fails the first one).
    const Span& pair = spans_[n - 1 - k];
    if (pair.reps != tail.reps || pair.len != tail.len) continue;
    const Span* a = spans_.data() + (n - 2 * k);
    const Span* b = spans_.data() + (n - k);
    bool alike = true;
    std::size_t expanded = 0;
    for (std::size_t i = 0; i < k && alike; ++i) {
      alike = a[i].reps == b[i].reps && a[i].len == b[i].len;
      expanded += b[i].reps * b[i].len;
    }
    if (!alike || expanded > kMaxFoldedPattern) continue;
    for (std::size_t i = 0; i < k && alike; ++i) alike = same_pattern(a[i], b[i]);
    if (!alike) continue;
    int64_t pattern[kMaxFoldedPattern];
    std::size_t m = 0;
    for (std::size_t i = 0; i < k; ++i)
      for (uint64_t r = 0; r < b[i].reps; ++r) {
        std::copy_n(pattern_of(b[i]), b[i].len, pattern + m);
        m += b[i].len;
      }
    truncate_spans(n - 2 * k);
    if (!spans_.empty() && spans_.back().reps >= 2 && pattern_is(spans_.back(), pattern, m)) {
      spans_.back().reps += 2;
    } else {
      add_span(pattern, m, 2);
    }
    return;
  }
}

// Turns the values matched into an unfinished repetition back into a literal.
void ValueSeq::flush_partial() {
  if (partial_ == 0) return;
  const std::size_t from = spans_.back().off;
  const std::size_t n = partial_;
  partial_ = 0;
  const std::size_t off = vals_.size();
  vals_.resize(off + n);
  std::copy_n(vals_.begin() + static_cast<std::ptrdiff_t>(from), n,
              vals_.begin() + static_cast<std::ptrdiff_t>(off));
  spans_.push_back(Span{off, n, 1});
}

void ValueSeq::fold_literal_tail() {
  Span& lit = spans_.back();
  const std::size_t n = lit.len;
  const int64_t* v = pattern_of(lit);
  const int64_t last = v[n - 1];
  // A literal of values that follow data (a sparse matrix's columns) is
  // long and its last value seldom among the kMaxPeriod before it: asking
  // that of all of them at once costs a third of the period loop's rejects.
  if (n >= 2 * kMaxPeriod && !among(v + (n - 1 - kMaxPeriod), last)) return;
  const std::size_t periods = std::min(kMaxPeriod, n / 2);
  for (std::size_t p = 1; p <= periods; ++p) {
    if (v[n - 1 - p] != last) continue;  // cheap reject
    if (!std::equal(v + (n - 2 * p), v + (n - p), v + (n - p))) continue;
    if (n == 2 * p) {
      // The whole literal repeats: it becomes the run in place, or joins
      // the run before it.
      const std::size_t before = spans_.size() - 1;
      if (before > 0 && spans_[before - 1].reps >= 2 && pattern_is(spans_[before - 1], v + p, p)) {
        truncate_spans(before);
        spans_.back().reps += 2;
      } else {
        lit.len = p;
        lit.reps = 2;
        vals_.resize(lit.off + p);
      }
      return;
    }
    // The last 2p values become a run of their last p values.
    lit.len = n - 2 * p;
    const std::size_t off = lit.off + lit.len;
    vals_.resize(off + p);
    spans_.push_back(Span{off, p, 2});
    return;
  }
}

void ValueSeq::push_run(const int64_t* v, std::size_t len, uint64_t reps) {
  if (reps == 0 || len == 0) return;
  materialize();
  flush_partial();
  size_ += reps * len;
  if (!spans_.empty() && spans_.back().reps >= 2 && reps >= 2 &&
      pattern_is(spans_.back(), v, len)) {
    spans_.back().reps += reps;
    fold_run_tail();
    return;
  }
  add_span(v, len, reps);
  fold_run_tail();
}

void ValueSeq::append_repeated(int64_t value, uint64_t n) {
  if (n == 0) return;
  if (histogram_) {
    for (uint64_t i = 0; i < n && i < 2; ++i) push_back(value);
    if (n > 2) {
      auto it = std::lower_bound(vals_.begin(), vals_.end(), value);
      spans_[static_cast<std::size_t>(it - vals_.begin())].reps += n - 2;
      size_ += n - 2;
    }
    return;
  }
  if (simple_ && (size_ == 0 || value == single_value_)) {
    single_value_ = value;
    size_ += n;
    return;
  }
  materialize();
  if (partial_ == 0 && !spans_.empty() && spans_.back().reps >= 2 &&
      pattern_is(spans_.back(), &value, 1)) {
    spans_.back().reps += n;
    size_ += n;
    fold_run_tail();
    return;
  }
  if (n <= 3) {
    for (uint64_t i = 0; i < n; ++i) push_general(value);
    return;
  }
  push_run(&value, 1, n);
}

// Flattened as push_general is: merging an item appends each of its fields.
[[gnu::flatten]] void ValueSeq::append(const ValueSeq& other) {
  if (other.empty()) return;
  if (&other == this) {
    const ValueSeq copy = other;
    append(copy);
    return;
  }
  if (histogram_ || other.histogram_) {
    if (!histogram_) make_histogram();
    for (const Run& r : other.runs())
      for (int64_t v : r.pattern) append_repeated(v, r.reps);
    return;
  }
  if (other.simple_) {
    // append_repeated's first case, here: most appends merge an event's
    // constant field into a sequence of that same constant.
    if (simple_ && (size_ == 0 || other.single_value_ == single_value_)) {
      single_value_ = other.single_value_;
      size_ += other.size_;
      return;
    }
    append_repeated(other.single_value_, other.size_);
    return;
  }
  // push_back of each value. Values that continue the repetition of the
  // last run (an iteration's values merged into a loop's: the common case)
  // only advance it, as push_general would, without a call per value.
  auto push_values = [this](const int64_t* v, std::size_t n) {
    std::size_t i = 0;
    while (i < n) {
      if (!simple_ && !spans_.empty() && spans_.back().reps >= 2) {
        Span& last = spans_.back();
        const int64_t* pat = pattern_of(last);
        std::size_t p = partial_;
        const std::size_t start = i;
        while (i < n && p < last.len && pat[p] == v[i]) {
          ++p;
          ++i;
        }
        size_ += i - start;
        if (p == last.len) {
          ++last.reps;
          partial_ = 0;
          fold_run_tail();  // may change spans_: look again
          continue;
        }
        partial_ = p;
        if (i == n) return;
      }
      // push_back's own tests, minus the lossy one (neither side is lossy).
      if (simple_ && (size_ == 0 || v[i] == single_value_)) {
        single_value_ = v[i++];
        ++size_;
        continue;
      }
      if (simple_) materialize();
      push_general(v[i++]);
    }
  };
  for (const Span& r : other.spans_) {
    const int64_t* pat = other.pattern_of(r);
    if (r.reps == 1 || r.reps * r.len <= kSmallRunValues) {
      for (uint64_t k = 0; k < r.reps; ++k) push_values(pat, r.len);
    } else if (r.len == 1) {
      append_repeated(pat[0], r.reps);
    } else {
      push_run(pat, r.len, r.reps);
    }
  }
  if (other.partial_ > 0) push_values(other.pattern_of(other.spans_.back()), other.partial_);
}

// What `n` steps of "the last run gains `step` repetitions, then
// fold_run_tail" give, for as many of the n steps as provably fold nothing;
// returns how many it did. A fold after a step needs the last run to equal
// the run k places before it (the last pair of the two k-run groups that
// fold_run_tail compares), count included: only counts that such a run
// holds are steps that may fold, and those are left to the caller.
uint64_t ValueSeq::grow_last_run(uint64_t step, uint64_t n) {
  Span& last = spans_.back();
  const uint64_t reps = last.reps;
  const std::size_t count = spans_.size();
  uint64_t safe = n;
  for (std::size_t k = 1; k <= kMaxRunGroup && 2 * k <= count; ++k) {
    const Span& c = spans_[count - k - 1];
    if (c.reps > reps && (c.reps - reps) % step == 0 && same_pattern(c, last))
      safe = std::min(safe, (c.reps - reps) / step - 1);
  }
  last.reps += safe * step;
  size_ += safe * step * last.len;
  return safe;
}

void ValueSeq::append_n(const ValueSeq& other, uint64_t n) {
  if (n == 0 || other.empty()) return;
  if (&other == this) {
    const ValueSeq copy = other;
    append_n(copy, n);
    return;
  }
  if (histogram_ || other.histogram_) {
    for (uint64_t i = 0; i < n; ++i) append(other);
    return;
  }
  auto ends_in_run_of = [&](const int64_t* v, std::size_t len) {
    return !simple_ && partial_ == 0 && !spans_.empty() && spans_.back().reps >= 2 &&
           pattern_is(spans_.back(), v, len);
  };
  if (other.simple_) {
    // append(other) is append_repeated(v, s): in a run of v, s more.
    const int64_t v = other.single_value_;
    const uint64_t s = other.size_;
    while (n > 0) {
      if (simple_ && (size_ == 0 || v == single_value_)) {
        single_value_ = v;
        size_ += s * n;
        return;
      }
      if (ends_in_run_of(&v, 1) && (n -= grow_last_run(s, n)) == 0) return;
      append_repeated(v, s);
      --n;
    }
    return;
  }
  // append pushes a sequence of small runs value by value; its values then
  // complete one more repetition of a run of exactly those values.
  for (const Span& r : other.spans_) {
    if (r.reps != 1 && r.reps * r.len > kSmallRunValues) {
      for (uint64_t i = 0; i < n; ++i) append(other);
      return;
    }
  }
  const std::vector<int64_t> values = other.to_vector();
  while (n > 0) {
    if (ends_in_run_of(values.data(), values.size()) && (n -= grow_last_run(1, n)) == 0) return;
    for (int64_t v : values) push_back(v);
    --n;
  }
}

void ValueSeq::prepend_repeated(int64_t value, uint64_t n) {
  if (n == 0) return;
  ValueSeq front = ValueSeq::repeated(value, n);
  if (histogram_) front.make_histogram();
  front.append(*this);
  *this = std::move(front);
}

void ValueSeq::pop_back() {
  if (size_ == 0) throw std::logic_error("ValueSeq::pop_back on empty sequence");
  if (simple_) {
    --size_;
    return;
  }
  --size_;
  if (histogram_) {
    // Lossy sequences have no order; drop one occurrence of the largest value.
    if (--spans_.back().reps == 0) truncate_spans(spans_.size() - 1);
    return;
  }
  Span& last = spans_.back();
  if (partial_ > 0) {
    --partial_;
  } else if (last.reps >= 2) {
    --last.reps;
    partial_ = last.len - 1;
    if (last.reps == 1 && partial_ > 0) {
      // One full copy plus a partial copy: keep it all as a literal.
      const std::size_t end = vals_.size();
      vals_.resize(end + partial_);
      std::copy_n(vals_.begin() + static_cast<std::ptrdiff_t>(last.off), partial_,
                  vals_.begin() + static_cast<std::ptrdiff_t>(end));
      last.len += partial_;
      partial_ = 0;
    } else if (last.reps == 1) {
      partial_ = 0;
    }
  } else {
    --last.len;
    vals_.pop_back();
    if (last.len == 0) spans_.pop_back();
  }
  // A run of one repetition before an earlier literal: merge to keep the
  // invariant that literals are the only runs with reps == 1 at the tail.
  // Their values are adjacent in vals_, so only the lengths join.
  const std::size_t c = spans_.size();
  if (c >= 2 && spans_[c - 1].reps == 1 && spans_[c - 2].reps == 1) {
    spans_[c - 2].len += spans_[c - 1].len;
    spans_.pop_back();
  }
}

int64_t ValueSeq::back() const {
  if (size_ == 0) throw std::logic_error("ValueSeq::back on empty sequence");
  if (simple_) return single_value_;
  if (partial_ > 0) return vals_[spans_.back().off + partial_ - 1];
  return vals_.back();
}

void ValueSeq::set_back(int64_t value) {
  // One value (a loop's trip count while its enclosing body ran once): the
  // pop empties the sequence and the push refills it with `value` alone.
  if (!histogram_ && simple_ && size_ == 1) {
    single_value_ = value;
    return;
  }
  pop_back();
  push_back(value);
}

void ValueSeq::step_back(int64_t step, uint64_t n) {
  // One value: each pop_back empties the sequence and push_back refills it.
  if (n > 0 && !histogram_ && simple_ && size_ == 1) {
    single_value_ += step * static_cast<int64_t>(n);
    return;
  }
  for (uint64_t i = 0; i < n; ++i) set_back(back() + step);
}

}  // namespace tracefold
