// What completion calls say about the wildcard receives they complete.
//
// A receive posted with MPI_ANY_SOURCE or MPI_ANY_TAG learns its match only
// when it completes: the recorder notes it on the completion call, as scalar
// `src`/`mtag` on MPI_Wait, MPI_Test, MPI_Waitany and MPI_Testany, and as the
// lists `srcs`/`mtags` (one entry per wildcard receive among the requests, in
// array order) on MPI_Waitall, MPI_Testall, MPI_Waitsome and MPI_Testsome.
// Readers that pair messages (export, deterministic replay) ask this helper
// which request position of a completion matched what.
#pragma once

#include <cstdint>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold {

/// Outcome of one request position of a completion call.
enum class WildcardOutcome : uint8_t {
  kNotWild,       ///< not a wildcard receive (as the caller said)
  kUnknown,       ///< a wildcard receive, but the event does not say (status ignored, old trace,
                  ///< or the entries do not line up with the caller's wildcard receives)
  kNotCompleted,  ///< a wildcard receive that did not complete (or matched nothing) in this call
  kMatched,       ///< completed here; src/tag hold what the event recorded
};

struct WildcardMatch {
  WildcardOutcome outcome = WildcardOutcome::kNotWild;
  /// Matched source (rank in the receive's communicator, as recorded: absolute
  /// once expanded) and tag; kAbsent where the event does not record them
  /// (MPI_Wait/Test/Waitany/Testany record only the part that was a wildcard).
  int64_t src = kAbsent;
  int64_t tag = kAbsent;
};

/// One entry per position of `completion`'s `links` list (empty if it has
/// none). `wild[k]`: the caller knows the request at position k to be a
/// live wildcard receive (positions beyond `wild` count as not wild). For
/// the list forms the entries are assigned to those positions in order; if
/// their number differs from the event's list lengths, every wildcard
/// position is kUnknown rather than guessed. A Testall with flag=0 and a
/// Test/Waitany/Testany that completed nothing make every
/// wildcard position kNotCompleted.
std::vector<WildcardMatch> wildcard_matches(const Event& completion, const std::vector<bool>& wild);

/// Whether a request-creating event is a wildcard receive: MPI_Irecv or
/// MPI_Recv_init whose `peer` is `any` or whose `tag` is `any`.
bool is_wildcard_receive(const Event& creator);

}  // namespace tracefold
