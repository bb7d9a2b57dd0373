// Dropping a request together with its completion's reference to it, for
// the lossy filters (snippet.hpp, lcs_filter.hpp).
//
// A completion (MPI_Wait, MPI_Waitall, MPI_Test, ...) names the requests it
// handles by `links`: backward distances counted over the rank's calls that
// create or start requests. A filter that drops such a call must drop the
// link to it as well, and every link that spans it gets one shorter; the
// per-request lists that run alongside the links (`srcs`, `mtags`) lose the
// same position, and `index` (Waitany, Testany) and `indices` (Waitsome,
// Testsome) are renumbered.
//
// The rule for what is left: a kept completion that named at least one
// request and whose requests were all dropped is dropped too (an
// MPI_Waitall(0, ...) is not written in its place); so is a Waitany or
// Testany whose completed request was dropped, and a Waitsome or Testsome
// all of whose completed requests were. A completion that named no request
// in the first place (MPI_Waitall(0, ...) recorded as such) is kept as is.
#pragma once

#include <cstdint>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold::extrap {

/// Feeds one rank's events in their order, each with the filter's decision.
class RequestCut {
 public:
  /// Takes `e` with the filter's decision `keep` and gives back whether it
  /// stays: a dropped request-creating call is remembered; a kept
  /// completion gets its links (and the lists along them) rewritten, and
  /// is dropped by the rule above when nothing of it is left. Decisions
  /// must come in event order.
  bool pass(Event& e, bool keep);
  /// Completions dropped because their requests were (counted in the
  /// filter's dropped events).
  uint64_t completions_dropped() const { return completions_dropped_; }
  /// Links removed from kept completions.
  uint64_t links_cut() const { return links_cut_; }

 private:
  // Per request-creating call so far: its position among the kept ones, or
  // -1 when it was dropped.
  std::vector<int64_t> kept_at_;
  int64_t kept_ = 0;
  bool any_dropped_ = false;
  uint64_t completions_dropped_ = 0;
  uint64_t links_cut_ = 0;
};

}  // namespace tracefold::extrap
