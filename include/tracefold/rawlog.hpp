// Raw per-rank event logs: one event per line (format: docs/format.md).
//
// This is the line format `tracefold expand` prints and `tracefold fold` reads,
// and what the recorder writes with TRACEFOLD_RAWLOG. A log holds declarations
// (`rank R size P`, `site ID FRAMES`, `comm ID members RANKLIST | order R...`)
// and event lines `OP site=ID field=value ... [compute_ns=N comm_ns=N]`; a
// rank whose threads record writes `thread T` before the events of thread T
// and, at the end, `thread-order ...` (docs/format.md "The thread dimension").
// Peers are absolute ranks in the event's communicator.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// A raw log is malformed; what() reads `FILE:LINE: message`.
class RawLogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RawLog {
  int32_t rank = -1;
  int32_t size = -1;
  SiteTable sites;  ///< sites in order of declaration; events use these ids
  CommTable comms;  ///< includes the world communicator
  std::vector<Event> events;
  /// The thread of each event (`thread T` lines, after `thread-order`
  /// renumbering); empty when the log names no thread: all are thread 0.
  std::vector<int32_t> event_threads;
  /// Threads the log names (1 without `thread` lines).
  int32_t threads = 1;
  /// The events of thread `t`, in order.
  std::vector<Event> thread_events(int32_t t) const;
};

/// Parses a raw log; `source` names it in errors.
RawLog parse_raw_log(std::string_view text, const std::string& source);
RawLog read_raw_log(const std::filesystem::path& path);

/// One event line (no newline). `with_timing` adds compute_ns/comm_ns when known.
std::string format_event_line(const Event& ev, bool with_timing = false);
/// A `comm` declaration line (no newline).
std::string format_comm_line(int64_t id, const CommGroup& group);

/// Writes location `location`'s expansion of `trace` as a raw log (header,
/// site and communicator declarations, `thread T` when the trace has
/// threads, then one line per event). Without threads a location is a rank.
void write_expansion(std::ostream& out, const Trace& trace, int32_t location,
                     bool with_timing = false);

/// Folds and merges the logs `dir/rank-R.txt`, R = 0..P-1 (all must exist).
/// Throws RawLogError naming the file and line of the first problem.
Trace fold_directory(const std::filesystem::path& dir, const FoldOptions& options = {});

/// Folds one parsed log into a single-rank trace.
Trace fold_log(const RawLog& log, const FoldOptions& options = {});

}  // namespace tracefold
