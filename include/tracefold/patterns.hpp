// Communication-pattern recovery (seed 004; `tracefold patterns`, being
// built in src/analysis/patterns/). This header holds its string layer: a
// rank's events as symbols, and the repeats found in them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tracefold::patterns {

/// One event as the detection sees it: an index into a table of distinct
/// (operation class, peer, communicator, tag class) tuples, so equal events
/// compare equal as integers.
using Symbol = uint32_t;

/// A maximal repeat of a symbol string S: a substring w that occurs at
/// least twice and has two occurrences at p1 < p2 that can be extended
/// neither to the left nor to the right together, i.e.
/// S[p1 - 1] != S[p2 - 1] (or p1 == 0) and S[p1 + |w|] != S[p2 + |w|] (or
/// one of them ends S). This is the seed's definition (its Section III,
/// step 1); occurrences may overlap.
struct Repeat {
  std::size_t length = 0;
  /// Every start position of w in S, ascending.
  std::vector<std::size_t> positions;
};

/// All maximal repeats of `s`, longest first, then by first position.
/// A suffix array and its LCP array give every right-maximal repeat as an
/// LCP interval; an interval whose suffixes are preceded by at least two
/// different symbols (or one starts S) is also left-maximal, and those are
/// exactly the maximal repeats (Gusfield, Algorithms on Strings, 7.12).
/// O(n log^2 n) time (prefix doubling) and O(n) memory besides the
/// output, which itself can hold O(n^2) positions (a run of one symbol has
/// a maximal repeat of every length).
std::vector<Repeat> maximal_repeats(std::span<const Symbol> s);

}  // namespace tracefold::patterns
