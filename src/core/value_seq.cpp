#include "tracefold/value_seq.hpp"

#include <algorithm>
#include <limits>
#include <map>

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
}  // namespace

ValueSeq ValueSeq::repeated(int64_t value, uint64_t n) {
  ValueSeq s;
  s.append_repeated(value, n);
  return s;
}

void ValueSeq::materialize() {
  if (!simple_) return;
  simple_ = false;
  runs_.clear();
  partial_ = 0;
  if (size_ > 0) runs_.push_back(Run{{single_value_}, size_});
}

void ValueSeq::push_back(int64_t value) {
  if (histogram_) {
    // Keep runs sorted by value, one run per distinct value.
    auto it = std::lower_bound(runs_.begin(), runs_.end(), value,
                               [](const Run& r, int64_t v) { return r.pattern[0] < v; });
    if (it != runs_.end() && it->pattern[0] == value) {
      ++it->reps;
    } else {
      runs_.insert(it, Run{{value}, 1});
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

void ValueSeq::push_general(int64_t value) {
  ++size_;
  if (!runs_.empty() && runs_.back().reps >= 2) {
    Run& last = runs_.back();
    if (last.pattern[partial_] == value) {
      if (++partial_ == last.pattern.size()) {
        ++last.reps;
        partial_ = 0;
        fold_run_tail();
      }
      return;
    }
    flush_partial();
  }
  if (runs_.empty() || runs_.back().reps != 1) runs_.push_back(Run{{}, 1});
  runs_.back().pattern.push_back(value);
  fold_literal_tail();
  fold_run_tail();
}

// When the last K runs repeat the K runs before them (e.g. `2*2 1 2*2 1`),
// the 2K runs become one run of their expansion: nested regular values such
// as list lengths followed by elements then keep folding.
void ValueSeq::fold_run_tail() {
  const std::size_t n = runs_.size();
  for (std::size_t k = 1; k <= kMaxRunGroup && 2 * k <= n; ++k) {
    // Counts and lengths of all k pairs first: a cheap reject before any
    // pattern is compared.
    const Run* a = runs_.data() + (n - 2 * k);
    const Run* b = runs_.data() + (n - k);
    bool alike = true;
    for (std::size_t i = 0; i < k && alike; ++i)
      alike = a[i].reps == b[i].reps && a[i].pattern.size() == b[i].pattern.size();
    for (std::size_t i = 0; i < k && alike; ++i) alike = a[i].pattern == b[i].pattern;
    if (!alike) continue;
    std::vector<int64_t> pattern;
    for (std::size_t i = n - k; i < n; ++i)
      for (uint64_t r = 0; r < runs_[i].reps; ++r)
        pattern.insert(pattern.end(), runs_[i].pattern.begin(), runs_[i].pattern.end());
    if (pattern.size() > kMaxFoldedPattern) continue;
    runs_.resize(n - 2 * k);
    if (!runs_.empty() && runs_.back().reps >= 2 && runs_.back().pattern == pattern) {
      runs_.back().reps += 2;
    } else {
      runs_.push_back(Run{std::move(pattern), 2});
    }
    return;
  }
}

// Turns the values matched into an unfinished repetition back into a literal.
void ValueSeq::flush_partial() {
  if (partial_ == 0) return;
  std::vector<int64_t> lit(runs_.back().pattern.begin(),
                           runs_.back().pattern.begin() + static_cast<std::ptrdiff_t>(partial_));
  partial_ = 0;
  runs_.push_back(Run{std::move(lit), 1});
}

void ValueSeq::fold_literal_tail() {
  Run& lit = runs_.back();
  const std::size_t n = lit.pattern.size();
  for (std::size_t p = 1; p <= kMaxPeriod && 2 * p <= n; ++p) {
    if (lit.pattern[n - 1] != lit.pattern[n - 1 - p]) continue;  // cheap reject
    if (!std::equal(lit.pattern.end() - static_cast<std::ptrdiff_t>(2 * p),
                    lit.pattern.end() - static_cast<std::ptrdiff_t>(p),
                    lit.pattern.end() - static_cast<std::ptrdiff_t>(p))) {
      continue;
    }
    if (n == 2 * p) {
      // The whole literal repeats: it becomes the run in place (its buffer
      // kept), or joins the run before it.
      const std::size_t before = runs_.size() - 1;
      if (before > 0 && runs_[before - 1].reps >= 2 &&
          std::equal(runs_[before - 1].pattern.begin(), runs_[before - 1].pattern.end(),
                     lit.pattern.begin() + static_cast<std::ptrdiff_t>(p), lit.pattern.end())) {
        runs_.pop_back();
        runs_.back().reps += 2;
      } else {
        lit.pattern.erase(lit.pattern.begin(),
                          lit.pattern.begin() + static_cast<std::ptrdiff_t>(p));
        lit.reps = 2;
      }
      return;
    }
    std::vector<int64_t> pattern(lit.pattern.end() - static_cast<std::ptrdiff_t>(p),
                                 lit.pattern.end());
    lit.pattern.resize(n - 2 * p);
    if (!runs_.empty() && runs_.back().reps >= 2 && runs_.back().pattern == pattern) {
      runs_.back().reps += 2;
    } else {
      runs_.push_back(Run{std::move(pattern), 2});
    }
    return;
  }
}

void ValueSeq::push_run(Run run) {
  if (run.reps == 0 || run.pattern.empty()) return;
  materialize();
  flush_partial();
  size_ += run.reps * run.pattern.size();
  if (!runs_.empty() && runs_.back().reps >= 2 && run.reps >= 2 &&
      runs_.back().pattern == run.pattern) {
    runs_.back().reps += run.reps;
    fold_run_tail();
    return;
  }
  runs_.push_back(std::move(run));
  fold_run_tail();
}

void ValueSeq::append_repeated(int64_t value, uint64_t n) {
  if (n == 0) return;
  if (histogram_) {
    for (uint64_t i = 0; i < n && i < 2; ++i) push_back(value);
    if (n > 2) {
      auto it = std::find_if(runs_.begin(), runs_.end(),
                             [&](const Run& r) { return r.pattern[0] == value; });
      it->reps += n - 2;
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
  if (partial_ == 0 && !runs_.empty() && runs_.back().reps >= 2 &&
      runs_.back().pattern.size() == 1 && runs_.back().pattern[0] == value) {
    runs_.back().reps += n;
    size_ += n;
    fold_run_tail();
    return;
  }
  if (n <= 3) {
    for (uint64_t i = 0; i < n; ++i) push_general(value);
    return;
  }
  push_run(Run{{value}, n});
}

void ValueSeq::append(const ValueSeq& other) {
  if (other.empty()) return;
  if (histogram_ || other.histogram_) {
    if (!histogram_) make_histogram();
    for (const Run& r : other.runs())
      for (int64_t v : r.pattern) append_repeated(v, r.reps);
    return;
  }
  if (other.simple_) {
    append_repeated(other.single_value_, other.size_);
    return;
  }
  // push_back of each value. Values that continue the repetition of the
  // last run (an iteration's values merged into a loop's: the common case)
  // only advance it, as push_general would, without a call per value.
  auto push_values = [this](const int64_t* v, std::size_t n) {
    std::size_t i = 0;
    while (i < n) {
      if (!simple_ && !runs_.empty() && runs_.back().reps >= 2) {
        Run& last = runs_.back();
        const std::size_t len = last.pattern.size();
        std::size_t p = partial_;
        const std::size_t start = i;
        while (i < n && p < len && last.pattern[p] == v[i]) {
          ++p;
          ++i;
        }
        size_ += i - start;
        if (p == len) {
          ++last.reps;
          partial_ = 0;
          fold_run_tail();  // may change runs_: look again
          continue;
        }
        partial_ = p;
        if (i == n) return;
      }
      push_back(v[i++]);
    }
  };
  for (const Run& r : other.runs_) {
    if (r.reps == 1 || r.reps * r.pattern.size() <= kSmallRunValues) {
      for (uint64_t k = 0; k < r.reps; ++k) push_values(r.pattern.data(), r.pattern.size());
    } else if (r.pattern.size() == 1) {
      append_repeated(r.pattern[0], r.reps);
    } else {
      // push_run's merge with the last run, without copying r first.
      materialize();
      flush_partial();
      if (!runs_.empty() && runs_.back().reps >= 2 && runs_.back().pattern == r.pattern) {
        size_ += r.reps * r.pattern.size();
        runs_.back().reps += r.reps;
        fold_run_tail();
      } else {
        push_run(r);
      }
    }
  }
  if (other.partial_ > 0) push_values(other.runs_.back().pattern.data(), other.partial_);
}

// What `n` steps of "the last run gains `step` repetitions, then
// fold_run_tail" give, for as many of the n steps as provably fold nothing;
// returns how many it did. A fold after a step needs the last run to equal
// the run k places before it (the last pair of the two k-run groups that
// fold_run_tail compares), count included: only counts that such a run
// holds are steps that may fold, and those are left to the caller.
uint64_t ValueSeq::grow_last_run(uint64_t step, uint64_t n) {
  Run& last = runs_.back();
  const uint64_t reps = last.reps;
  const std::size_t count = runs_.size();
  uint64_t safe = n;
  for (std::size_t k = 1; k <= kMaxRunGroup && 2 * k <= count; ++k) {
    const Run& c = runs_[count - k - 1];
    if (c.reps > reps && (c.reps - reps) % step == 0 && c.pattern == last.pattern)
      safe = std::min(safe, (c.reps - reps) / step - 1);
  }
  last.reps += safe * step;
  size_ += safe * step * last.pattern.size();
  return safe;
}

void ValueSeq::append_n(const ValueSeq& other, uint64_t n) {
  if (n == 0 || other.empty()) return;
  if (histogram_ || other.histogram_) {
    for (uint64_t i = 0; i < n; ++i) append(other);
    return;
  }
  auto ends_in_run_of = [&](const std::vector<int64_t>& pattern) {
    return !simple_ && partial_ == 0 && !runs_.empty() && runs_.back().reps >= 2 &&
           runs_.back().pattern == pattern;
  };
  if (other.simple_) {
    // append(other) is append_repeated(v, s): in a run of v, s more.
    const int64_t v = other.single_value_;
    const uint64_t s = other.size_;
    const std::vector<int64_t> one{v};
    while (n > 0) {
      if (simple_ && (size_ == 0 || v == single_value_)) {
        single_value_ = v;
        size_ += s * n;
        return;
      }
      if (ends_in_run_of(one) && (n -= grow_last_run(s, n)) == 0) return;
      append_repeated(v, s);
      --n;
    }
    return;
  }
  // append pushes a sequence of small runs value by value; its values then
  // complete one more repetition of a run of exactly those values.
  for (const Run& r : other.runs_) {
    if (r.reps != 1 && r.reps * r.pattern.size() > kSmallRunValues) {
      for (uint64_t i = 0; i < n; ++i) append(other);
      return;
    }
  }
  const std::vector<int64_t> values = other.to_vector();
  while (n > 0) {
    if (ends_in_run_of(values) && (n -= grow_last_run(1, n)) == 0) return;
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
    if (--runs_.back().reps == 0) runs_.pop_back();
    return;
  }
  Run& last = runs_.back();
  if (partial_ > 0) {
    --partial_;
  } else if (last.reps >= 2) {
    --last.reps;
    partial_ = last.pattern.size() - 1;
    if (last.reps == 1 && partial_ > 0) {
      // One full copy plus a partial copy: keep it all as a literal.
      std::vector<int64_t> lit = last.pattern;
      lit.insert(lit.end(), last.pattern.begin(),
                 last.pattern.begin() + static_cast<std::ptrdiff_t>(partial_));
      last.pattern = std::move(lit);
      partial_ = 0;
    } else if (last.reps == 1) {
      partial_ = 0;
    }
  } else {
    last.pattern.pop_back();
    if (last.pattern.empty()) runs_.pop_back();
  }
  // A run of one repetition before an earlier literal: merge to keep the
  // invariant that literals are the only runs with reps == 1 at the tail.
  if (runs_.size() >= 2 && runs_.back().reps == 1 && runs_[runs_.size() - 2].reps == 1) {
    Run tail = std::move(runs_.back());
    runs_.pop_back();
    runs_.back().pattern.insert(runs_.back().pattern.end(), tail.pattern.begin(),
                                tail.pattern.end());
  }
}

int64_t ValueSeq::back() const {
  if (size_ == 0) throw std::logic_error("ValueSeq::back on empty sequence");
  if (simple_) return single_value_;
  if (partial_ > 0) return runs_.back().pattern[partial_ - 1];
  return runs_.back().pattern.back();
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
  if (partial_ == 0) return runs_;
  std::vector<Run> out = runs_;
  out.push_back(Run{
      std::vector<int64_t>(runs_.back().pattern.begin(),
                           runs_.back().pattern.begin() + static_cast<std::ptrdiff_t>(partial_)),
      1});
  return out;
}

std::size_t ValueSeq::run_count() const {
  if (simple_) return size_ ? 1 : 0;
  return runs_.size() + (partial_ ? 1 : 0);
}

std::size_t ValueSeq::memory_bytes() const {
  std::size_t bytes = sizeof(ValueSeq);
  for (const Run& r : runs_) bytes += sizeof(Run) + r.pattern.capacity() * sizeof(int64_t);
  return bytes;
}

void ValueSeq::make_histogram() {
  if (histogram_) return;
  std::map<int64_t, uint64_t> counts;
  for (const Run& r : runs())
    for (int64_t v : r.pattern) counts[v] += r.reps;
  simple_ = false;
  partial_ = 0;
  runs_.clear();
  for (auto& [v, c] : counts) runs_.push_back(Run{{v}, c});
  histogram_ = true;
}

ValueSeq::Cursor::Cursor(const ValueSeq& seq) : runs_(seq.runs()), remaining_(seq.size()) {}

int64_t ValueSeq::Cursor::next() {
  if (remaining_ == 0) throw std::logic_error("ValueSeq::Cursor read past the end");
  --remaining_;
  const Run& r = runs_[run_];
  int64_t v = r.pattern[pos_];
  if (++pos_ == r.pattern.size()) {
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
  return runs() == other.runs();
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
    for (const Run& r : runs_) hash_pattern(h, r.pattern.data(), r.pattern.size(), r.reps);
    if (partial_) hash_pattern(h, runs_.back().pattern.data(), partial_, 1);
  }
  return h ^ size_;
}

}  // namespace tracefold
