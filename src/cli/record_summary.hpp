// What `tracefold record` says after the run about the files the ranks
// wrote: per kind, how many of the world's ranks wrote theirs, and why the
// others could not (docs/recording.md#what-record-reports).
#pragma once

#include <filesystem>
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

/// Prints the summary lines for raw logs, timelines and partial traces on
/// standard error. Returns true if every file that was asked for was
/// written whole.
bool summarize_record(const RecordPlaces& places);

}  // namespace tracefold::cli
