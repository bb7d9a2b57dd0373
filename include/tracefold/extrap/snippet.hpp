// Lossy extrapolation, the snippet filter (seed 000, 3.2.4, first level).
//
// Some programs have a dominant, regular pattern and a minor one that
// depends on the rank (NPB MG's extra partners): no row-major model
// explains them whole. The user writes down a few events of the dominant
// pattern (a snippet); a finite-state machine built from it reads each
// rank's events and keeps:
//   - collectives and environment calls (MPI_Init, MPI_Finalize ...)
//     met while no snippet is under way, at once;
//   - a stretch of events that matches the whole snippet in order;
// and drops every other point-to-point, probe, request or completion call.
// When an event breaks a match under way, the events pending in it are
// dropped; the breaking event is kept if it is a collective, and is tried
// again as the start of a new match otherwise (the seed drops it; a ring
// whose snippet starts with its own Irecv would lose every other step).
//
// A dropped call that creates a request takes its completion's link to it
// along (request_cut.hpp: a completion left with no request is dropped
// too), so later completions never point at the wrong calls. The filtered
// traces are refolded and merged like recorded ones; the extrapolation
// written from them is marked lossy in its header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::extrap {

/// One expected event: an operation and, optionally, plain field values it
/// must have (`MPI_Isend tag=3 count=64`).
struct SnippetEvent {
  OpId op = 0;
  std::vector<std::pair<FieldId, int64_t>> fields;
  int line = 0;
};

struct Snippet {
  /// File name, for messages and the lossy header.
  std::string source;
  std::vector<SnippetEvent> events;
};

/// Parses a snippet: one event per line, `MPI_NAME [field=value ...]`;
/// blank lines and `#` comments are skipped. Peer fields (which depend on
/// the rank) are refused. Throws ExtrapError naming source:line.
Snippet parse_snippet(std::string_view text, const std::string& source);

/// What the filter did to one trace, per rank.
struct FilterReport {
  /// Which filter: "snippet filter" or "weighted LCS" (lcs_filter.hpp).
  std::string filter = "snippet filter";
  std::string name;
  std::vector<uint64_t> kept;
  /// Dropped events per rank, completions dropped with their requests
  /// included (request_cut.hpp).
  std::vector<uint64_t> dropped;
  /// Links to dropped requests taken out of kept completions.
  uint64_t links_cut = 0;
};

/// `trace` with every rank's events filtered through the snippet's FSM,
/// refolded and merged; `lossy` names the snippet. A dropped request is
/// dropped from its completion too (request_cut.hpp).
Trace filter_trace(const Trace& trace, const Snippet& snippet, const std::string& name,
                   FilterReport& report);

}  // namespace tracefold::extrap
