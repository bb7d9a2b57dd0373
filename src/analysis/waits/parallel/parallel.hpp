// The parallel wait-state analysis: one MPI rank per recorded rank.
#pragma once

#include <mpi.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "internal.hpp"
#include "mpi_common.hpp"
#include "tracefold/waits.hpp"

namespace tracefold::waits_parallel {

/// Another rank failed (it reports why).
class PeerFailed : public WaitsError {
 public:
  using WaitsError::WaitsError;
};

/// Collective: returns if no rank has an error (`err` empty everywhere);
/// else the lowest failing rank throws WaitsError(its err), the others
/// PeerFailed.
void agree_or_throw(MPI_Comm comm, const std::string& err);

using mpi_common::cpu_seconds;

/// Wall and processor time per phase of one rank's parallel analysis
/// (main.cpp prints the slowest rank's wall time and the processor time
/// summed over the ranks with TRACEFOLD_ANALYZE_PHASES=1). On a machine
/// with more ranks than cores the processor time is what the ranks share,
/// so it tells the phases' costs apart where wall times mostly tell who
/// waited for whom.
struct Phases {
  double last = MPI_Wtime(), last_cpu = cpu_seconds();
  struct Spent {
    std::string name;
    double wall = 0, cpu = 0;
  };
  std::vector<Spent> spent;
  std::vector<std::pair<std::string, int64_t>> counts;  ///< summed over the ranks
  void mark(const std::string& name) {
    const double now = MPI_Wtime(), cpu = cpu_seconds();
    spent.push_back({name, now - last, cpu - last_cpu});
    last = now;
    last_cpu = cpu;
  }
};

/// Analyses rank `rank of comm`'s recorded events, read from its own
/// timeline file in `dir` only, exchanging timestamps with the other ranks
/// in the recorded direction (senders to receivers, members of a
/// collective instance by a collective of the same shape). The clock
/// condition is repaired first, as repair_clock_condition does. Collective
/// over `comm`, whose size must be the recording's (the caller checks).
/// Returns the whole report on rank 0 (identical to the serial
/// analyze_waits + repair_clock_condition + note_clock_repair), an empty one
/// elsewhere. `bundled`: the point-to-point replays send each peer all its
/// records in one MPI_Alltoallv instead of one message per recorded
/// message (same numbers; see docs/analyze.md). Throws WaitsError on this rank's bad input; the
/// caller makes the ranks agree on failing. `before_labels`, if set, is
/// called on rank 0 before the report's call-path labels are made from
/// `trace` (the caller may finish symbolizing it there, see main.cpp).
WaitReport analyze_parallel(MPI_Comm comm, const Trace& trace, const std::string& dir,
                            const WaitOptions& options, bool bundled, Phases& phases,
                            const std::function<void()>& before_labels = {});

namespace detail {

struct Counters {
  int64_t messages = 0, unmatched_recvs = 0, sends = 0, collectives = 0, incomplete = 0,
          dropped = 0;
};

/// One MPI communicator per (recorded communicator id, first world rank of
/// the group) that holds this rank, ranked as in the recording. Collective
/// over `world`; the caller frees them.
using GroupComms = std::map<std::pair<int64_t, int32_t>, MPI_Comm>;
GroupComms split_groups(MPI_Comm world, const Trace& trace, int32_t me);

/// The blocking collectives of rank `me`, each combined with the other
/// members by a collective of its shape on the communicator of its group
/// in `comms`; adds the collective counts of the groups `me` leads to `c`.
void collectives_parallel(MPI_Comm world, waits_detail::Analysis& a, int32_t me,
                          const GroupComms& comms, Counters& c);

/// The backward replay of rank `me` (critical path, delay costs), against
/// the direction of the wait states, each rank over its own events; leaves
/// the results in `a` (this rank's call paths). Collective over `world`.
void backward_replay(MPI_Comm world, waits_detail::Analysis& a, int32_t me, Phases& phases);

/// Runs the backward replay, then gathers every rank's totals per (pattern
/// or metric, call path) and its counts to rank 0, which calls
/// `before_labels` (if set) and writes the report.
WaitReport gather_report(MPI_Comm world, const Trace& trace, waits_detail::Analysis& a,
                         const WaitOptions& options, const Counters& c, uint64_t violations,
                         Phases& phases, const std::function<void()>& before_labels);

}  // namespace detail

}  // namespace tracefold::waits_parallel
