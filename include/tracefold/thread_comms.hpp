// How the threads of one rank share communicators in a trace with threads
// (Trace::threads > 1): which thread's stream makes each one, where each
// thread last uses it, and whether the streams can be run on threads of
// their own at all. Replay (src/replay/shared_comms.cpp) and the benchmark
// generator (src/benchgen/threads.cpp) both run one thread per recorded
// thread, and both ask these questions, once here.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tracefold/op_class.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// A collective whose participants are the members of its communicator:
/// the calls whose order across threads of a rank would matter.
/// MPI_Comm_create_group is not one (only the new group's members call it),
/// nor MPI_Intercomm_merge (its communicator spans two groups).
bool collective_over_comm(OpId op);

/// The communicators of one rank's threads, from a walk of each thread's
/// stream (location t * P + rank).
struct ThreadComms {
  /// Communicator id -> the thread whose stream makes it.
  std::unordered_map<int64_t, int32_t> creators;
  /// Per thread: communicator id -> index of the thread's last event that
  /// names it (as `comm` or `pcomm`).
  std::vector<std::unordered_map<int64_t, uint64_t>> last_use;
  /// Whether any call notes its order among the threads sharing its
  /// (communicator, peer, tag) (`others`/`rothers`, thread_order.hpp): a
  /// run of the streams must then make those calls in the noted order.
  bool ordered = false;
  /// If `ordered`: the first node (index in Trace::nodes) whose call notes it.
  std::size_t ordered_node = 0;
  /// Empty, or why the streams cannot run on threads of their own: two
  /// threads of the rank make collective calls on one communicator, in an
  /// order across threads the trace does not record.
  std::string error;
};

/// Walks the streams of `rank`'s threads once. `what` names the command in
/// the error ("the replay", "the benchmark").
ThreadComms thread_comms(const Trace& trace, int32_t rank, const std::string& what);

}  // namespace tracefold
