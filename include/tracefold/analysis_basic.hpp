// Comparisons, profiles and views of folded traces (the logic behind the
// `diff`, `stats` and `print` subcommands).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tracefold/histogram.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// Where two event sources first disagree.
struct Difference {
  int32_t rank = -1;
  uint64_t position = 0;  ///< 0-based event index in that rank's sequence
  std::string field;      ///< "op", "site", "length", "world size" or a field name
  std::string left;
  std::string right;
  /// Names the place when `rank` is a location of a trace with threads
  /// ("rank R thread T"); empty: "rank RANK".
  std::string where;
  std::string describe() const;
};

/// Produces one rank's events in order; returns false at the end.
using EventSource = std::function<bool(Event&)>;

struct DiffOptions {
  bool ignore_callsites = false;
  /// Polls (MPI_Test*, MPI_Iprobe, MPI_Improbe) are compared by operation
  /// only: whether a poll found its request complete, and so which request a
  /// later poll still names, depends on timing, not on the program.
  bool ignore_polls = false;
  /// The matched source/tag of wildcard receives (`src`, `mtag`) are not
  /// compared: which sender a wildcard matches depends on timing.
  bool ignore_matched = false;
  /// What completion calls found complete (`index`, `indices`, `outcount`)
  /// and the request `links` of every call are not compared: MPI_Waitany
  /// and MPI_Waitsome return what has arrived, and a request one run
  /// completed earlier than the other shows as null in the links of the
  /// calls after it. Every other field is still compared.
  bool ignore_outcomes = false;
};

/// True for the polling calls DiffOptions::ignore_polls relaxes.
bool is_poll(OpId op);

/// Compares two event streams of one rank. Call sites are compared by their
/// frames (via the two site tables), never by id.
std::optional<Difference> diff_events(int32_t rank, const EventSource& a, const SiteTable& sa,
                                      const EventSource& b, const SiteTable& sb,
                                      const DiffOptions& options = {});

/// Compares two traces rank by rank.
std::optional<Difference> diff_traces(const Trace& a, const Trace& b,
                                      const DiffOptions& options = {});

/// One row of the profile: one operation at one call site.
struct StatsRow {
  EventKey key;
  std::string op;
  std::string site;         ///< site_label: `function (file:line)` when known, else frames
  std::string frames;       ///< frames text (module+0xoffset ...)
  bool site_named = false;  ///< `site` holds names, not the frames
  uint64_t calls = 0;
  uint64_t bytes = 0;  ///< count * dsize (+ rcount * rdsize; v-variants: sum of counts)
  Histogram time;      ///< time inside the call, all ranks and paths merged
  Histogram compute;   ///< time before the call
  Ranklist ranks;
};

/// Per call site and operation: calls and bytes (exact, by walking every
/// rank) and time statistics from the histograms. Sorted by total time inside
/// the call (descending), then by op and site.
std::vector<StatsRow> compute_stats(const Trace& trace);

/// Bytes one event moves (0 when it has no count/size fields).
uint64_t event_bytes(const Event& ev);

/// Indented, human-readable view of loops, ranklists and parameters.
/// With `call_paths`, each node is followed by its call site's whole path
/// (`path:` line, frames innermost first, named where symbols are known).
std::string render_trace(const Trace& trace, bool call_paths = false);

}  // namespace tracefold
