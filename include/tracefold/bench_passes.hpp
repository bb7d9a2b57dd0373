// Trace-to-trace passes that prepare a folded trace for benchmark
// generation (seed 000, 4.4.3 and 4.4.4):
//   - wildcard resolution: every receive or probe posted with
//     MPI_ANY_SOURCE / MPI_ANY_TAG names a concrete source and tag, so the
//     generated benchmark matches messages the same way on every run;
//   - collective alignment: collective nodes that are one collective at
//     run time but come from different call sites on different ranks become
//     one node with the full participant set.
// Both walk every rank (every thread of each, in a trace with threads)
// with core's RankIterator and classify calls with op_traits(); both run a
// cheap O(nodes) check first and leave a trace that needs nothing
// untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/analysis_basic.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// Where one rank stands when the traversal can go no further.
struct BlockedRank {
  int32_t rank = -1;
  std::size_t node = 0;  ///< index into Trace::nodes
  std::string op;        ///< MPI function name
  std::string waiting;   ///< what it waits for, in words
};

/// The traversal blocked: the trace (with the sources it names or the ones
/// chosen for its wildcards) cannot run to its end. what() lists every
/// blocked rank with node and operation, and the messages nobody received.
class DeadlockError : public std::runtime_error {
 public:
  DeadlockError(const std::string& what, std::vector<BlockedRank> blocked)
      : std::runtime_error(what), blocked_(std::move(blocked)) {}
  const std::vector<BlockedRank>& blocked() const { return blocked_; }

 private:
  std::vector<BlockedRank> blocked_;
};

/// A trace the passes cannot transform (a node they cannot express, such as
/// a persistent wildcard receive whose starts matched different sources).
class PassError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// O(nodes): whether any receive or probe node holds MPI_ANY_SOURCE or
/// MPI_ANY_TAG.
bool has_wildcards(const Trace& trace);

struct WildcardReport {
  uint64_t recorded = 0;  ///< wildcard calls resolved from the recorded match
  uint64_t chosen = 0;    ///< resolved by the traversal (no recorded match)
  std::size_t nodes = 0;  ///< nodes whose fields were rewritten
};

/// Algorithm 3 of seed 000 with deadlock detection. Walks all ranks together
/// as a run would: sends are delivered at once (blocking standard, buffered
/// and ready sends do not wait; synchronous ones wait for their match),
/// receives match the earliest delivered message they accept, collectives
/// wait for every member of their communicator. A wildcard with a recorded
/// match (`src`/`mtag`, `srcs`/`mtags`) accepts only that source and tag;
/// one without takes the first message delivered. When every rank is
/// finished or blocked and some are blocked, throws DeadlockError naming
/// them. On success every wildcard `peer`/`rpeer`/`tag`/`rtag` names the
/// match and the recorded matches (`src`, `mtag`, `srcs`, `mtags`) are
/// dropped: the trace reads as a run of a program that named its sources.
/// A failed MPI_Iprobe/MPI_Improbe names the source its node's next
/// successful probe matched (else its previous one, else the rank itself);
/// a cancelled wildcard receive names the rank itself.
WildcardReport resolve_wildcards(Trace& trace);

/// O(nodes): whether some collective node covers only part of its
/// communicator's members (so another node completes it at run time).
bool needs_alignment(const Trace& trace);

struct AlignReport {
  std::size_t merged = 0;  ///< nodes folded into another node
  /// Groups of nodes that are one collective but could not be combined
  /// without reordering some rank's calls (left as they are).
  std::vector<std::vector<std::size_t>> unmerged;
  /// For each node of the aligned trace, its index before alignment (the
  /// number `tracefold print` shows); empty when no node was combined.
  std::vector<std::size_t> origin;
};

/// Algorithm 2 of seed 000: walks all ranks, stopping each at a collective
/// until every member of the communicator has reached it; nodes whose calls
/// meet in one collective instance are combined into the first of them (its
/// call site; fields, counts, loops and timings of all of them), keeping
/// every rank's order. Throws PassError when one collective instance mixes
/// different operations (an incorrect program), DeadlockError when the
/// ranks cannot all reach their collectives.
AlignReport align_collectives(Trace& trace);

/// How messages name node `i` of a trace that align_collectives changed:
/// as node_label (trace_query.hpp) names node `origin[i]` of `before`, the
/// trace as `tracefold print` numbers it; node `i` of `before` when
/// `origin` is empty. Keeps a reference to `before`.
std::function<std::string(std::size_t)> print_numbering(const Trace& before,
                                                        std::vector<std::size_t> origin);

/// The event stream of one rank with every wildcard receive or probe
/// naming what it matched (as recorded), and without `src`, `mtag`, `srcs`
/// and `mtags`: a recorded wildcard program and a run of its resolved form
/// give the same stream. `open` must yield the same stream each time it is
/// called (it is read twice: nonblocking receives learn their match from a
/// later completion call).
EventSource resolved_stream(std::function<EventSource()> open);

}  // namespace tracefold
