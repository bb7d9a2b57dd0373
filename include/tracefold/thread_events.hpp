// A rank's MPI calls thread by thread. Samples (samples.hpp) and event logs
// (event_log.hpp) name a call by its index in the rank's sequence, which
// mixes the threads' calls; a timeline of version 3 or later names each
// record's thread, and with it a rank-wide index gives a place in one
// thread's own sequence. No MPI here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tracefold/timeline_io.hpp"

namespace tracefold {

/// The rank-wide indices of each thread's calls.
class ThreadEvents {
 public:
  /// `records`: one rank's timeline records, in the rank's order
  /// (RankTimelineFile::records; each names the trace's thread).
  explicit ThreadEvents(std::span<const TimelineRecord> records);
  /// Threads 0 .. threads() - 1 may have calls; later ones have none.
  uint32_t threads() const { return static_cast<uint32_t>(calls_.size()); }
  /// Rank-wide indices of `thread`'s calls, in its order.
  std::span<const uint64_t> calls(uint32_t thread) const;
  /// Position among `thread`'s calls of its first call at or after
  /// rank-wide index `event`: for a sample of that thread naming `event`,
  /// the call it was in (in_mpi; the recorder names a call by its own index
  /// once it has given it one, by the rank's next index until then) or the
  /// thread's next call (outside MPI). None: the thread made no call from
  /// there on (it was in a call that never ended, or in MPI_Finalize).
  std::optional<std::size_t> thread_event(uint32_t thread, uint64_t event) const;

 private:
  std::vector<std::vector<uint64_t>> calls_;
};

}  // namespace tracefold
