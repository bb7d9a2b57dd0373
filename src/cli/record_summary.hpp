// What `tracefold record` says after the run about the files the ranks
// wrote: per kind, how many of the world's ranks wrote theirs, and why the
// others could not (docs/recording.md#what-record-reports).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace tracefold::cli {

/// Which kinds of file the run was asked for, and where they go.
struct RecordPlaces {
  std::filesystem::path output;    ///< the trace
  std::filesystem::path rawlog;    ///< empty: no raw logs
  std::filesystem::path timeline;  ///< empty: no timelines
  std::filesystem::path status;    ///< TRACEFOLD_STATUS_DIR: the ranks' reports
  std::filesystem::path fallback;  ///< TRACEFOLD_FALLBACK_DIR (may be empty)
  int world_size = 0;              ///< from the trace if known, else 0
};

/// What rank 0 reported writing at MPI_Finalize ("trace ok WORLD NODES"):
/// the merged trace's world size and node count, or nothing.
struct WrittenTrace {
  int world_size = 0;
  std::size_t nodes = 0;
};
std::optional<WrittenTrace> written_trace(const std::filesystem::path& status_dir);

/// Prints the summary lines for raw logs, timelines and partial traces on
/// standard error. Returns true if every file that was asked for was
/// written whole.
bool summarize_record(const RecordPlaces& places);

}  // namespace tracefold::cli
