// The point-to-point exchanges of the parallel wait-state analysis: each
// recorded message replayed as one message of the same kind (windowed), or
// every peer's records in one MPI_Alltoallv (--bundle).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "tracefold/timeline.hpp"

namespace tracefold::waits_parallel::detail {

using Buffer = std::vector<int64_t>;

/// Each destination's records in one exchange. Returns what arrived, with
/// `from[s]` the offset of source s's part (from[P] = the end).
Buffer alltoallv(MPI_Comm c, const std::vector<Buffer>& out, std::vector<int>& from);

/// A recorded send or receive and where its replay goes; `live` once both
/// sides know the message was recorded at both ends.
struct P2p {
  std::size_t ev = 0, complete = 0;
  /// The event from which the replay may wait for this receive: where the
  /// recorded run had it completed (the Recv, or the Wait/Test of an
  /// Irecv); npos when no completion was recorded (never waited for
  /// before the end of the walk).
  std::size_t due = npos;
  int64_t comm = 0, tag = 0;
  int32_t peer = -1;  ///< world rank
  int peer_in = -1;   ///< rank in mc
  bool send = false, live = false;
  /// The sender needs the receive's enter time back: a send that can be
  /// Late Receiver (late_receiver_candidate). Receives learn it from the
  /// forward message.
  bool reply = false;
  uint64_t bytes = 0;
  MPI_Comm mc = MPI_COMM_NULL, rc = MPI_COMM_NULL;
  static constexpr std::size_t npos = std::size_t(-1);
};

/// What one replayed message carries: an enter time, an exit time, the
/// event (its index in the sender's events; the call path follows from it)
/// and, forward, whether the sender needs a reply.
using Payload = std::array<int64_t, 4>;

/// Marks the operations whose message was recorded at both ends `live`:
/// each pair of ranks trades its counts per communicator and tag, and the
/// first min(sent, received) of each are replayed.
void mark_matched(MPI_Comm world, std::size_t P, std::vector<P2p>& ops);

/// Replays the live operations (`ops` in program order) one message per
/// recorded message, forward (senders to receivers) or backward (the
/// receives of `reply` sends tell their sender their enter time). What
/// arrives goes to `in`, one payload per live incoming operation in
/// program order. With `changed_from` (forward only; per world rank the
/// first event its clock repair moved) only the messages whose send is at
/// or after that event travel: the others' payloads in `in` are current.
/// Returns how often the walk waited before the end (MPI_Waitsome calls).
int64_t replay(const std::vector<P2p>& ops, const std::vector<TimedEvent>& mine, bool forward,
               std::vector<Payload>& in, const std::vector<int64_t>* changed_from, int32_t me);

/// The same exchange as replay(), bundled: each rank sends every peer all
/// the records meant for it in one MPI_Alltoallv; every live message
/// travels.
void replay_bundled(MPI_Comm world, std::size_t P, const std::vector<P2p>& ops,
                    const std::vector<TimedEvent>& mine, bool forward, std::vector<Payload>& in);

}  // namespace tracefold::waits_parallel::detail
