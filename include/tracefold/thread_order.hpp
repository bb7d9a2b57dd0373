// The rank-wide order of point-to-point calls across the threads of a rank
// (docs/format.md "Message order across threads"): what the recorder notes
// under MPI_THREAD_MULTIPLE and what replay and export follow.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "tracefold/event.hpp"

namespace tracefold {

/// A point-to-point key: direction (0 send, 1 receive), communicator id
/// (-1 when the event has none), peer rank in that communicator, tag. MPI
/// matches the messages of one key in the order their calls were posted.
using OrderKey = std::array<int64_t, 4>;

/// The keys of a call's send part and receive part: sends of every mode
/// (blocking or not) and the send of a Sendrecv; receives whose peer and
/// tag are known when the call returns (a Recv, also from MPI_ANY_SOURCE or
/// with MPI_ANY_TAG by its status; an Irecv with both given) and the
/// receive of a Sendrecv. Nothing for MPI_PROC_NULL, persistent requests,
/// probes and collectives.
struct OrderKeys {
  std::optional<OrderKey> send, recv;
  bool sendrecv = false;  ///< the receive part's count is in `rothers`
  FieldId recv_field() const;
};
OrderKeys order_keys(const Event& ev);

/// The fields that say how many calls of other threads of the rank on the
/// same key came since the thread's previous call on it: `others` for a
/// send or receive, `rothers` for a Sendrecv's receive. Absent means 0.
FieldId others_field();
FieldId rothers_field();

}  // namespace tracefold
