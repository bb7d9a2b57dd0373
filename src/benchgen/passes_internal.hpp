// Shared pieces of the benchmark-generation passes (bench_passes.hpp).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>

#include "tracefold/analysis_basic.hpp"
#include "tracefold/event.hpp"

namespace tracefold::passes {

/// Field ids the passes read and write.
struct PassFields {
  FieldId peer, rpeer, tag, rtag, src, mtag, srcs, mtags, comm, flag, index, indices, links;
};
const PassFields& pass_fields();

/// A recorded match: source (rank in the receive's communicator) and tag;
/// kAbsent where the trace does not say.
struct Match {
  int64_t src = kAbsent;
  int64_t tag = kAbsent;
  bool operator==(const Match&) const = default;
};

/// What one rank's completion calls say about its nonblocking wildcard
/// receives, found by reading the rank's stream once ahead.
struct RecordedMatches {
  /// Request number (1-based count of request-making calls) of a wildcard
  /// MPI_Irecv, or of an MPI_Start of a wildcard MPI_Recv_init -> match.
  std::unordered_map<uint64_t, Match> by_number;
  /// Request number of a wildcard MPI_Recv_init -> the match all its starts
  /// share; `conflict` holds the inits whose starts matched differently.
  std::unordered_map<uint64_t, Match> by_init;
  std::unordered_map<uint64_t, std::pair<Match, Match>> conflict;
};
RecordedMatches scan_recorded_matches(const EventSource& source);

/// Request number named by backward distance `d` when `made` request-making
/// calls have been seen; 0 when it names none (null, undef, out of range).
inline uint64_t linked_number(int64_t d, uint64_t made) {
  if (is_sentinel(d) || d <= 0 || static_cast<uint64_t>(d) > made) return 0;
  return made - static_cast<uint64_t>(d) + 1;
}

/// Relative form of a rank `v` in a communicator where the caller is `me`
/// of `size` (sentinels unchanged), as the trace stores peers.
inline int64_t relative(int64_t v, int32_t me, int32_t size) {
  if (is_sentinel(v) || size <= 0 || me < 0) return v;
  return ((v - me) % size + size) % size;
}

}  // namespace tracefold::passes
