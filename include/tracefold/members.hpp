// MemberList: the world ranks of a communicator group, in comm-rank order,
// stored as arithmetic runs.
//
// A group of a regular program is a few runs (the world is 0,1,...,P-1; a row
// of a grid r*L .. r*L+L-1; a column c, c+S, c+2S ...), so an extrapolated
// trace of a million ranks keeps a few dozen bytes per group instead of 4 MiB
// per world-sized one. A group whose runs would cost more than its ranks
// (no two steps alike) falls back to an explicit list.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

#include "tracefold/ranklist.hpp"

namespace tracefold {

/// A sequence of int32 ranks (any order, duplicates allowed) kept as runs
/// first, first+stride, ..., first+(count-1)*stride. Runs are built greedily
/// as ranks are appended, so two lists with the same ranks built the same
/// way have the same runs; equality and order compare the rank sequences
/// whatever the representation.
class MemberList {
 public:
  /// One arithmetic run; `offset` is the index of its first rank in the list.
  /// A run of one rank has stride 0.
  struct Run {
    int32_t first = 0;
    int32_t stride = 0;
    int64_t count = 0;
    int64_t offset = 0;
    bool operator==(const Run&) const = default;
  };

  /// Forward iterator yielding ranks by value.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = int32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const int32_t*;
    using reference = int32_t;
    const_iterator() = default;
    int32_t operator*() const;
    const_iterator& operator++();
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const const_iterator& o) const { return index_ == o.index_; }
    difference_type operator-(const const_iterator& o) const {
      return static_cast<difference_type>(index_) - static_cast<difference_type>(o.index_);
    }

   private:
    friend class MemberList;
    const MemberList* list_ = nullptr;
    std::size_t index_ = 0;
    std::size_t run_ = 0;
    int64_t pos_ = 0;  // within run_
  };
  using iterator = const_iterator;
  using value_type = int32_t;
  using size_type = std::size_t;

  MemberList() = default;
  MemberList(std::initializer_list<int32_t> ranks);
  /// From ranks in order (implicit: a rank vector is a member list).
  MemberList(const std::vector<int32_t>& ranks);  // NOLINT(google-explicit-constructor)
  /// The run first, first+stride, ... of `count` ranks.
  static MemberList run(int32_t first, int32_t stride, int64_t count);
  /// The ranks of `r` in ascending order, one run per interval (isolated
  /// ranks with equal gaps join one run): no rank is spelled out.
  static MemberList from_ranklist(const Ranklist& r);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Rank number i; O(1) for explicit lists and one run, O(log runs) else.
  int32_t operator[](std::size_t i) const;
  /// Like operator[], throws std::out_of_range past the end.
  int32_t at(std::size_t i) const;
  int32_t front() const { return (*this)[0]; }
  int32_t back() const { return (*this)[size_ - 1]; }
  const_iterator begin() const;
  const_iterator end() const;

  /// Appends one rank, extending the last run when it continues it.
  void push_back(int32_t rank);
  /// Appends the run first, first+stride, ... of `count` ranks; the same
  /// result as pushing them one by one, without the walk.
  void append(int32_t first, int32_t stride, int64_t count);

  /// Whether each rank is greater than the one before (a set in order).
  bool ascending() const;
  /// The ranks as a set; built from the runs. Throws std::invalid_argument
  /// on a negative rank (as Ranklist::from_ranks).
  Ranklist to_ranklist() const;
  /// All ranks spelled out, for code that hands them to MPI.
  std::vector<int32_t> to_vector() const;

  /// The runs (empty when the list is explicit).
  const std::vector<Run>& runs() const { return runs_; }
  /// Whether the ranks are kept one by one (an irregular group).
  bool is_explicit() const { return explicit_; }
  /// Heap bytes held (capacity of the run or rank storage).
  std::size_t memory_bytes() const;

  friend bool operator==(const MemberList& a, const MemberList& b);
  /// Lexicographic over the rank sequences (a proper prefix orders first).
  friend std::strong_ordering operator<=>(const MemberList& a, const MemberList& b);

 private:
  // Runs cost more than ranks once there are more than a third as many.
  void maybe_spell_out();

  std::vector<Run> runs_;
  std::vector<int32_t> list_;  // only when explicit_
  std::size_t size_ = 0;
  bool explicit_ = false;
};

}  // namespace tracefold
