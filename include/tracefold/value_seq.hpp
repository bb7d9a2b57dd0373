// ValueSeq: the value vector of an elastic data element.
//
// A ValueSeq is the sequence of integer values one parameter (or one loop
// count) takes on one rank, in the order they occur. It folds itself while it
// grows: repeating stretches become runs `(pattern)*reps`, so a vector of m*n
// values that repeats an m-value pattern n times costs m values plus a count.
// Folding is online and deterministic: the same sequence of operations always
// gives the same representation (and so the same bytes on disk).
//
// An opt-in lossy mode replaces the sequence by a value histogram (value ->
// number of occurrences); iteration then yields the values in ascending order
// with their counts, which keeps totals but not order.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tracefold {

/// Sentinels that fit in any field. They print as names, not numbers.
inline constexpr int64_t kAbsent = std::numeric_limits<int64_t>::min();  ///< field not present
inline constexpr int64_t kAny =
    std::numeric_limits<int64_t>::min() + 1;  ///< MPI_ANY_SOURCE / MPI_ANY_TAG
inline constexpr int64_t kNull = std::numeric_limits<int64_t>::min() + 2;       ///< MPI_PROC_NULL
inline constexpr int64_t kUndefined = std::numeric_limits<int64_t>::min() + 3;  ///< MPI_UNDEFINED

/// True for the sentinel values above (they are never relative-encoded).
inline bool is_sentinel(int64_t v) {
  return v <= kUndefined;
}

/// Formats one value: sentinels by name, numbers in decimal.
std::string format_value(int64_t v);
/// Parses one value written by format_value; returns false on bad text.
bool parse_value(std::string_view text, int64_t& out);

class ValueSeqParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ValueSeq {
 public:
  /// A stretch of the sequence: `pattern` repeated `reps` times. A run with
  /// reps == 1 is a literal stretch that has not (yet) been seen to repeat.
  struct Run {
    std::vector<int64_t> pattern;
    uint64_t reps = 0;
    bool operator==(const Run&) const = default;
  };

  ValueSeq() = default;
  /// A sequence of `n` copies of `value`.
  static ValueSeq repeated(int64_t value, uint64_t n);

  /// Inline for the one-value case: most fields of most calls (datatype,
  /// communicator, a constant count) stay one value, and folding pushes
  /// every field of every call.
  void push_back(int64_t value) {
    if (!histogram_ && simple_ && (size_ == 0 || value == single_value_)) {
      single_value_ = value;
      ++size_;
      return;
    }
    push_back_slow(value);
  }
  /// The same as n push_back(value) calls, representation included (which
  /// append_repeated does not promise); constant time while the sequence
  /// is one repeated value.
  void push_back_n(int64_t value, uint64_t n);
  void append_repeated(int64_t value, uint64_t n);
  void append(const ValueSeq& other);
  /// The same as n append(other) calls, representation included; constant
  /// time per call once the sequence ends in a run of `other`'s values (a
  /// list field repeated by a polling loop), outside the few counts at
  /// which the run could fold with the runs before it.
  void append_n(const ValueSeq& other, uint64_t n);
  /// Puts `n` copies of `value` in front (used to pad histories with zeros).
  void prepend_repeated(int64_t value, uint64_t n);
  /// Back to the empty sequence (same state as a default-constructed one;
  /// keeps the run buffer's capacity).
  void clear() {
    simple_ = true;
    single_value_ = 0;
    vals_.clear();
    spans_.clear();
    partial_ = 0;
    size_ = 0;
    histogram_ = false;
  }
  /// clear(), giving back the buffers if they hold more than `keep_values`
  /// values: a sequence kept for reuse (the folder recycles merged-away
  /// events' sequences) keeps small buffers, not a large one.
  void recycle(std::size_t keep_values) {
    clear();
    if (vals_.capacity() > keep_values) std::vector<int64_t>().swap(vals_);
    if (spans_.capacity() > keep_values) std::vector<Span>().swap(spans_);
  }
  /// Removes the last value. Precondition: !empty().
  void pop_back();
  /// The last value. Precondition: !empty().
  int64_t back() const;
  /// Replaces the last value (pop + push, so folding stays consistent).
  void set_back(int64_t value);
  /// The same as n set_back(back() + step) calls, representation included;
  /// constant time for a one-value sequence.
  void step_back(int64_t step, uint64_t n);

  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Sum of all values (sentinels count as 0). Used for execution counts.
  int64_t sum() const;
  /// The folded form; the trailing partial repetition (if any) is shown as a
  /// literal run. Cheap for the common single-constant case.
  std::vector<Run> runs() const;
  /// Calls f(pattern, len, reps) for each run as runs() gives them, in
  /// order, without copying patterns (writers walk every sequence of a
  /// trace; runs() would allocate a vector per run). `pattern` points into
  /// this sequence and is valid until it changes.
  template <class F>
  void for_each_run(F&& f) const {
    if (simple_) {
      if (size_ > 0) f(&single_value_, std::size_t{1}, size_);
      return;
    }
    for (const Span& s : spans_) f(pattern_of(s), s.len, s.reps);
    if (partial_) f(pattern_of(spans_.back()), partial_, uint64_t{1});
  }
  /// Number of runs, a measure of how well the sequence folded.
  std::size_t run_count() const;
  /// Approximate bytes this sequence occupies in memory.
  std::size_t memory_bytes() const;

  /// Lossy mode: histogram of values, order dropped. Irreversible.
  void make_histogram();
  bool is_histogram() const { return histogram_; }

 private:
  // A run whose pattern is vals_[off, off + len). All patterns share one
  // buffer in sequence order: pushing a value allocates nothing once the
  // buffers are warm (a vector per pattern cost a malloc/free pair per
  // literal run on polling codes, whose values seldom repeat).
  struct Span {
    std::size_t off = 0;
    std::size_t len = 0;
    uint64_t reps = 0;
  };

 public:
  /// Sequential reader; does not expand the sequence.
  class Cursor {
   public:
    Cursor() = default;
    explicit Cursor(const ValueSeq& seq);
    bool done() const { return remaining_ == 0; }
    /// Next value. Precondition: !done().
    int64_t next();

   private:
    // A copy, so a cursor stays valid while its sequence changes.
    std::vector<int64_t> vals_;
    std::vector<Span> spans_;
    std::size_t run_ = 0;
    std::size_t pos_ = 0;
    uint64_t rep_ = 0;
    uint64_t remaining_ = 0;
  };
  Cursor cursor() const { return Cursor(*this); }
  /// All values (for tests and small sequences).
  std::vector<int64_t> to_vector() const;

  /// Same values in the same order (and same lossy flag), whatever the folding.
  bool equals(const ValueSeq& other) const;
  /// A hash of the values in order (and the lossy flag), whatever the
  /// folding: equal sequences (equals) hash alike. Costs O(runs * log reps),
  /// not O(size): merges use it to find equal sequences among many.
  uint64_t value_hash() const;
  /// Same representation (stronger than equals; used for deterministic output).
  bool same_representation(const ValueSeq& other) const;

  /// Text form: runs separated by spaces; a repeated run is `v*N` or
  /// `(a b c)*N`; literal values stand alone; the empty sequence is `~`; the
  /// histogram form is `hist(v:count v:count ...)`.
  std::string to_string() const;
  /// Inverse of to_string (rebuilds the same representation).
  static ValueSeq parse(std::string_view text);
  /// The sequence of `runs` (as runs() gives them; adjacent literal runs
  /// join), or with `histogram` the value:count pairs of the lossy form:
  /// the same representation parse() rebuilds from the text of those runs.
  /// Throws ValueSeqParseError on what parse() would refuse, or on more
  /// than 2^64-1 values.
  static ValueSeq from_runs(std::vector<Run> runs, bool histogram);

  /// from_runs one run at a time (below).
  class RunBuilder;

 private:
  void materialize();
  void push_back_slow(int64_t value);
  void push_general(int64_t value);
  void fold_literal_tail();
  void fold_run_tail();
  void flush_partial();
  // A run of `reps` copies of v[0, len); v must not point into vals_.
  void push_run(const int64_t* v, std::size_t len, uint64_t reps);
  uint64_t grow_last_run(uint64_t step, uint64_t n);
  const int64_t* pattern_of(const Span& s) const { return vals_.data() + s.off; }
  bool pattern_is(const Span& s, const int64_t* v, std::size_t len) const;
  bool same_pattern(const Span& a, const Span& b) const {
    return pattern_is(a, pattern_of(b), b.len);
  }
  // Appends a span (v must not point into vals_).
  void add_span(const int64_t* v, std::size_t len, uint64_t reps);
  // Drops spans_[n..] and their values.
  void truncate_spans(std::size_t n);

  // Single-constant fast path: the whole sequence is `single_value_ * size_`.
  bool simple_ = true;
  int64_t single_value_ = 0;
  std::vector<int64_t> vals_;
  std::vector<Span> spans_;
  // Values already matched into the next repetition of spans_.back().
  std::size_t partial_ = 0;
  uint64_t size_ = 0;
  bool histogram_ = false;
};

/// from_runs one run at a time, with no vector per run (the compact
/// reader's form: a trace's sequences hold millions of runs). The same
/// checks and the same representation.
class ValueSeq::RunBuilder {
 public:
  /// `runs`: how many runs will be added, if known (room is made for them).
  explicit RunBuilder(bool histogram, std::size_t runs = 0);
  /// Throws ValueSeqParseError as from_runs does. `pattern` must not point
  /// into a sequence this builder made.
  void add(const int64_t* pattern, std::size_t len, uint64_t reps);
  ValueSeq finish() &&;

 private:
  ValueSeq seq_;
};

}  // namespace tracefold
