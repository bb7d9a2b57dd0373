// Ranklist: a compact set of non-negative MPI ranks.
//
// Internally the set is its sorted, disjoint, non-adjacent closed intervals
// [lo, hi], kept as runs of equal-length intervals at equal distances: a
// column of a grid of a million ranks is one run, a face of a 3-D grid one
// per plane, instead of one interval per row.  Externally it has a canonical
// text form built from nested regular sections (ScalaTrace style):
//
//   <dim start count_1 stride_1 ... count_dim stride_dim>
//
// with the outermost dimension first.  The rank set of a section is
//   { start + i_1*stride_1 + ... + i_dim*stride_dim : 0 <= i_k < count_k }.
// Examples: "<0 5>" is {5}; "<1 1 3 1>" is {1,2,3}; "<1 5 3 5>" is {5,10,15};
// "<2 6 3 5 3 1>" is {6,7,8,11,12,13,16,17,18}.  The empty set prints "<>".
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tracefold {

/// Thrown by Ranklist::parse.  what() names the expected token and the
/// character (byte) offset in the input at which parsing failed.
class RanklistParseError : public std::runtime_error {
 public:
  /// `message` describes what was expected; the offset is appended to it.
  RanklistParseError(const std::string& message, std::size_t offset);
  /// Byte offset into the parsed text at which the error was detected.
  std::size_t offset() const noexcept { return offset_; }

 private:
  std::size_t offset_;
};

/// A set of non-negative int32_t ranks with a canonical compact text form.
class Ranklist {
 public:
  /// One nested regular section.  `dims` holds (count, stride) pairs,
  /// outermost dimension first; an empty `dims` denotes the single rank
  /// `start`.
  struct Section {
    int32_t start = 0;
    std::vector<std::pair<int32_t, int32_t>> dims;
    bool operator==(const Section&) const = default;
  };

  /// The empty set.
  Ranklist() = default;

  /// The set {rank}.  Throws std::invalid_argument if rank < 0.
  static Ranklist single(int32_t rank);
  /// The ranks first .. first+count-1 (empty when count == 0).  Throws
  /// std::invalid_argument on first < 0, count < 0 or int32 overflow.
  static Ranklist range(int32_t first, int32_t count);
  /// The set of the given ranks (any order, duplicates allowed).  Throws
  /// std::invalid_argument on a negative rank.
  static Ranklist from_ranks(std::vector<int32_t> ranks);
  /// The union of the ranks of all sections (they may overlap, and strides
  /// may be zero or negative).  A count of 0 contributes nothing.  Throws
  /// std::invalid_argument on a negative count or when a section contains a
  /// negative rank or one beyond INT32_MAX.
  static Ranklist from_sections(const std::vector<Section>& sections);

  /// Adds one rank (no-op if present).  Throws std::invalid_argument if
  /// rank < 0.  O(1) past the last rank, else O(intervals).
  void insert(int32_t rank);
  /// In-place union with `other`; O(n + m) in the number of intervals.
  Ranklist& unite(const Ranklist& other);
  /// Returns the union of *this and `other`.
  Ranklist united(const Ranklist& other) const;

  /// True if `rank` is in the set; O(log runs).
  bool contains(int32_t rank) const;
  /// True if the two sets share at least one rank; O(n + m) in intervals.
  bool intersects(const Ranklist& other) const;

  /// True if the set has no ranks.
  bool empty() const { return runs_.empty(); }
  /// Number of ranks in the set (cached, O(1)).
  std::size_t size() const { return size_; }
  /// Smallest rank.  Precondition: !empty().
  int32_t first() const;
  /// Largest rank.  Precondition: !empty().
  int32_t last() const;

  /// All ranks in ascending order.
  std::vector<int32_t> to_vector() const;
  /// Calls f(rank) for every rank in ascending order.
  template <class F>
  void for_each(F&& f) const {
    for_each_interval([&f](int32_t lo, int32_t hi) {
      for (int32_t r = lo;; ++r) {
        f(r);
        if (r == hi) break;  // avoids overflow when hi == INT32_MAX
      }
    });
  }

  /// Intervals [lo + i*stride, lo + i*stride + span] for 0 <= i < count:
  /// equally long intervals at equal distances (stride 0 when count is 1).
  /// Runs are built greedily over the intervals in ascending order, so the
  /// runs depend only on the set.
  struct Run {
    int32_t lo = 0;
    int32_t span = 0;  // hi - lo of each interval
    int32_t stride = 0;
    int32_t count = 0;
    bool operator==(const Run&) const = default;
  };
  /// The runs, in ascending order.
  const std::vector<Run>& runs() const { return runs_; }
  /// Calls f(lo, hi) for every interval in ascending order.
  template <class F>
  void for_each_interval(F&& f) const {
    for (const Run& x : runs_) {
      int64_t lo = x.lo;
      for (int32_t i = 0; i < x.count; ++i, lo += x.stride)
        f(static_cast<int32_t>(lo), static_cast<int32_t>(lo + x.span));
    }
  }
  /// Walks the intervals in ascending order, one at a time, without
  /// spelling them out (for merges of many lists).
  class IntervalCursor {
   public:
    explicit IntervalCursor(const Ranklist& r) : runs_(&r.runs_) {}
    bool done() const { return run_ == runs_->size(); }
    /// The current interval [lo, hi]; precondition: !done().
    std::pair<int32_t, int32_t> operator*() const {
      const Run& x = (*runs_)[run_];
      const auto lo = static_cast<int32_t>(x.lo + static_cast<int64_t>(i_) * x.stride);
      return {lo, static_cast<int32_t>(lo + static_cast<int64_t>(x.span))};
    }
    void next() {
      if (++i_ == (*runs_)[run_].count) {
        ++run_;
        i_ = 0;
      }
    }

   private:
    const std::vector<Run>* runs_;
    std::size_t run_ = 0;
    int32_t i_ = 0;
  };
  /// Number of intervals.
  std::size_t interval_count() const;
  /// The sorted, disjoint, non-adjacent closed intervals [lo, hi], spelled
  /// out (as many as the set has: prefer for_each_interval on large sets).
  std::vector<std::pair<int32_t, int32_t>> intervals() const;
  /// Heap bytes held.
  std::size_t memory_bytes() const { return runs_.capacity() * sizeof(Run); }

  /// Canonical decomposition into disjoint sections, sorted by start.  It
  /// depends only on the set: (1) maximal runs of >= 2 consecutive ranks
  /// become 1-D stride-1 sections; (2) the remaining isolated ranks, in
  /// ascending order, are grouped greedily into arithmetic progressions of
  /// >= 2 members (a leftover becomes a 0-D section); (3) for d = 1, 2, ...
  /// sections of equal shape whose starts (consecutive in ascending order)
  /// form an arithmetic progression are chained into one (d+1)-D section.
  /// O(n log n) in the number of intervals.
  std::vector<Section> sections() const;
  /// Canonical text: sections() joined by single spaces, "<>" when empty.
  std::string to_string() const;
  /// Inverse of to_string().  Also accepts any valid, possibly overlapping
  /// or non-canonical sections, separated by optional whitespace (which is
  /// also allowed inside a section).  "<>" denotes the empty set and must be
  /// the whole list.  Counts must be >= 1, strides may be any value, and
  /// every rank must lie in [0, INT32_MAX].  Throws RanklistParseError.
  static Ranklist parse(std::string_view text);

  /// Set equality.
  friend bool operator==(const Ranklist&, const Ranklist&) = default;
  /// Total order: lexicographic over the ascending rank sequences (a proper
  /// prefix orders first).  Computed on intervals, O(n + m).
  friend std::strong_ordering operator<=>(const Ranklist& a, const Ranklist& b);

 private:
  class Builder;
  // Takes sorted, disjoint, non-adjacent intervals and computes the size.
  explicit Ranklist(const std::vector<std::pair<int32_t, int32_t>>& intervals);
  // Appends [lo, hi], which lies after the last interval with a gap.
  void append_interval(int32_t lo, int32_t hi);

  std::vector<Run> runs_;
  std::size_t size_ = 0;
};

}  // namespace tracefold
