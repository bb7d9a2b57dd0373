// Questions about many ranklists at once, answered by sweeping their
// intervals in rank order: the cost follows the number of intervals, never
// the number of ranks, so a million-rank trace whose entries are a few
// strided sections each costs what its file does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tracefold/ranklist.hpp"

namespace tracefold {

/// The smallest i such that `*lists[i]` shares a rank with one of
/// `*lists[0..i-1]`, or lists.size() when no two share one. The same
/// answer as checking each list against every earlier one, in
/// O(N log L) for N intervals in L lists instead of O(L² · intervals),
/// and memory for L cursors.
std::size_t first_overlapping(const std::vector<const Ranklist*>& lists);

/// Ranks that behave alike: a class of ranks and how many it holds.
struct RankClass {
  int32_t first = 0;  ///< its smallest rank, the one to stand for the class
  uint64_t size = 0;  ///< its number of ranks
};

/// Splits `ranks` into classes: two ranks share a class when each group
/// holds both in the same one of its ranklists, or neither. The ranklists
/// of a group must be disjoint (an elastic value's entries; a node's ranks
/// as a group of one). Classes come in the order of their smallest rank;
/// their sizes add up to ranks.size(). Costs O(N log N + S · G) for N
/// intervals in all, S boundaries between them inside `ranks` and G
/// distinct groups (groups of equal ranklists count once).
std::vector<RankClass> split_ranks(const Ranklist& ranks,
                                   const std::vector<std::vector<const Ranklist*>>& groups);

}  // namespace tracefold
