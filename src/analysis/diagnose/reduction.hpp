// What the diagnosis's rules need of the events of some recorded ranks,
// summed (not a public header). The analysis rank that holds a rank's
// events reduces them (reduce_rank); reductions of neighbouring ranks
// combine (merge), along the parallel diagnosis's binary tree or rank by
// rank in the serial one, so the rules read sums, not every rank's events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold::diagnose_detail {

struct EventSpan;

/// A call path's calls inside one iteration of a loop (the loops of
/// LoopFacts), summed over ranks: what places its diagnosis in the loops.
struct IterationSums {
  int32_t loop = -1;
  uint32_t entry = 0;
  int64_t iteration = 0;
  uint64_t calls = 0, bytes = 0;
  int64_t transfer_ns = 0;  ///< time in the calls without their waiting
};

/// A call path's calls (MPI_Init and MPI_Finalize left out), summed.
struct CallPathSums {
  OpId op = 0;
  SiteId site = 0;
  uint64_t count = 0, bytes = 0;
  int64_t ns = 0, waited = 0;  ///< waited: each call's capped at its length
  /// The iterations its calls are in, in the order the serial walk meets
  /// them (ranks in order, each rank's events in order).
  std::vector<IterationSums> iterations;
  /// The ranks with calls of it inside a loop, ascending.
  std::vector<int32_t> ranks;
};

/// One entry of a loop on one rank, with the iterations it makes.
struct LoopEntrySpan {
  int32_t rank = 0, loop = -1;
  int64_t of = 0;
  uint32_t entry = 0;
  /// Fills what would be padding: the struct travels as its bytes, which
  /// must not carry stray ones.
  uint32_t zero = 0;
};

/// The reduction of a contiguous block of recorded ranks.
struct Reduction {
  int32_t first = 0, last = 0;         ///< the ranks [first, last) it sums
  std::vector<CallPathSums> calls;     ///< ordered by (op, site)
  std::vector<LoopEntrySpan> entries;  ///< ordered by rank, loop, entry
};

/// `rank`'s events reduced (the events as event_spans gives them).
Reduction reduce_rank(int32_t rank, const std::vector<EventSpan>& events);
/// Adds `later`, the reduction of the ranks right after `into`'s, to
/// `into`. Throws DiagnoseError when they are not neighbours: a block lost
/// or counted twice would change every sum.
void merge(Reduction& into, Reduction&& later);

/// Bytes for MPI, and back (throws DiagnoseError when cut short).
std::string encode(const Reduction& r);
Reduction decode_reduction(const std::string& bytes);

}  // namespace tracefold::diagnose_detail
