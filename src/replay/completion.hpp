// Completion and poll calls replayed with their recorded outcomes (internal).
//
// MPI decides what a MPI_Test* / MPI_Waitany / MPI_Waitsome / MPI_Iprobe
// finds from what has arrived, which depends on timing. The replay must
// find what the original found, so these calls are issued through
// force_* below: the replayer defines PMPI_Test, PMPI_Testany, ... itself
// (exported from tracefold-replay), and while a call is being forced they
// produce the recorded outcome instead of asking MPI; otherwise they pass
// the call on. A recorder preloaded into the replay (which calls PMPI_*)
// therefore records the recorded outcome, with the same request handles.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "replay_internal.hpp"

namespace tracefold::replay_detail {

/// What a completion or poll call did in the recorded run.
struct Outcome {
  /// Test/Testall/Testany/Iprobe/Improbe: the flag; Testsome/Waitsome:
  /// outcount > 0; Waitany: always true.
  bool found = false;
  /// Testany/Waitany: the request completed (< 0: none, or not recorded).
  int index = -1;
  /// Testsome/Waitsome: outcount (MPI_UNDEFINED or < 0 when not recorded)
  /// and the indices completed (when recorded).
  int outcount = -1;
  bool has_indices = false;
  std::vector<int> indices;
};

/// Results of a forced completion call.
struct CompletionResult {
  int flag = 0, index = MPI_UNDEFINED, outcount = 0;
  /// Empty, or why the recorded outcome could not be reproduced.
  std::string problem;
};

/// Issues the completion call `v` (MPI_Test ... MPI_Waitsome, through the
/// MPI_ entry so a tool sees it) on `handles`, with the outcome `want`.
/// Requests the original found complete are waited for first (they will
/// complete); requests it did not find stay untouched.
CompletionResult force_completion(Variant v, std::vector<MPI_Request>& handles, const Outcome& want,
                                  MPI_Status* status, std::vector<int>& indices);

/// The same call with whatever outcome MPI gives it (no outcome recorded,
/// or probabilistic replay, whose receives are not the trace's).
void issue_completion(Variant v, std::vector<MPI_Request>& handles, MPI_Status* status,
                      std::vector<int>& indices);

/// MPI_Iprobe / MPI_Improbe (`message` non-null) with the recorded flag:
/// waits for the message when the original found one, and finds nothing
/// when it did not.
std::string force_iprobe(int source, int tag, MPI_Comm comm, bool found, MPI_Status* status,
                         MPI_Message* message, int* flag);

}  // namespace tracefold::replay_detail
