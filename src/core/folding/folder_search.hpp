// Search helpers of the folder, apart from the Folder::Impl that uses them
// (folder_impl.hpp): the index of items by last call, the bit-parallel
// longest common subsequence of two call sequences, and the flattening of
// an item into its calls. Not installed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "folder_items.hpp"

namespace tracefold::folding {

/// Scratch of lcs_length, kept between calls so that none allocates.
struct LcsScratch {
  std::size_t m = 0;  // the symbols of the side the masks were built over
  int bits = 4;       // log2 of slots.size()
  struct Slot {
    uint64_t key = 0;
    uint32_t mask = 0;   // index of the symbol's bit set in masks
    uint32_t stamp = 0;  // in use by the call whose stamp this is
  };
  // b's symbols, open addressing. The table only grows, and a call marks
  // the slots it uses with a stamp of its own instead of clearing them:
  // filling the whole table at each call cost as much as the search.
  std::vector<Slot> slots;
  uint32_t stamp = 0;
  std::vector<uint64_t> masks;  // per symbol, the bit set of its positions in b
  std::vector<uint64_t> row;    // the bit-parallel row over b
};

/// Positions of items by a 64-bit key (the folder's items by last call): an
/// open-addressing table of keys with one position list per key. Keys are
/// never removed (a list may become empty), as the folder asks about few
/// distinct calls; std::unordered_map's node per key and division per
/// lookup were a tenth of the general path's bookkeeping on irregular codes.
class KeyIndex {
 public:
  /// The list of `key`, made empty if missing. Valid until the next call.
  std::vector<std::size_t>& operator[](uint64_t key) {
    if (2 * (lists_.size() + 1) > slots_.size()) grow();
    Slot& s = slots_[probe(key)];
    if (s.list == kNone) {
      s.key = key;
      s.list = static_cast<uint32_t>(lists_.size());
      lists_.emplace_back();
    }
    return lists_[s.list];
  }
  /// The list of `key`, or null if it never had one.
  const std::vector<std::size_t>* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    const Slot& s = slots_[probe(key)];
    return s.list == kNone ? nullptr : &lists_[s.list];
  }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  struct Slot {
    uint64_t key = 0;
    uint32_t list = kNone;
  };
  std::size_t probe(uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    while (slots_[i].list != kNone && slots_[i].key != key) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old(std::max<std::size_t>(16, 2 * slots_.size()));
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.list != kNone) slots_[probe(s.key)] = s;
  }
  std::vector<Slot> slots_;  // a power of two, at most half full
  std::vector<std::vector<std::size_t>> lists_;
};

/// Length of a longest common subsequence of `a` and `b`, computed a word
/// of `b` at a time (the bit-vector recurrence of Allison and Dix, in
/// Hyyro's form): O(|a| * |b| / 64) word operations instead of the
/// |a| * |b| cells of the dynamic-programming table, which on a data
/// exchange's long, irregular iterations was most of the general path.
std::size_t lcs_length(std::span<const uint64_t> a, std::span<const uint64_t> b,
                       LcsScratch& scratch);

/// lcs_length of a side that stays (`a`) and one that grows (`b`), asked
/// again as `b` grows: the folder re-tests whether the calls after a loop
/// are its next iteration at every call that ends like the loop, and each
/// test used to start over. The row over `a` after `b`'s calls so far is
/// kept; a later call whose `a` is the same and whose `b` starts with the
/// calls already fed only feeds the rest. Anything else starts over. The
/// length is lcs_length's (the LCS does not depend on which side is which).
class GrowingLcs {
 public:
  std::size_t length(std::span<const uint64_t> a, std::span<const uint64_t> b);

 private:
  std::vector<uint64_t> a_, fed_;  // the sides the row stands for
  LcsScratch s_;
};

/// Appends the calls of `it` (one pass through every loop body) to `keys`,
/// stopping once it holds `limit`. With `chain`, pushes to `chain_at`, for
/// each loop of its trailing chain (the body's last item while that is a
/// loop, as try_fold's chain), where that loop's calls start in `keys`.
void flatten_calls(const Item& it, std::size_t limit, bool chain, std::vector<uint64_t>& keys,
                   std::vector<std::size_t>& chain_at);

/// The calls of the c-th loop (c >= 1) of an item's trailing chain, from
/// the item's calls keys[.., end) and the starts flatten_calls gave for it.
inline std::span<const uint64_t> chain_slice(std::span<const uint64_t> keys,
                                             std::span<const std::size_t> chain_at, std::size_t end,
                                             std::size_t c) {
  const std::size_t from = chain_at[c - 1];
  return keys.subspan(from, end - from);
}

}  // namespace tracefold::folding
