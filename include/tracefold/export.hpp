// Exporters of folded traces: Chrome trace-event JSON (Perfetto), OTF2,
// communication-matrix CSV/SVG/PNG, per-rank time chart, HTML report.
// Timelines are the recorded ones (`record --timeline`) or synthesized from
// the trace's mean times (timeline.hpp); the outputs say which.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "tracefold/progress.hpp"
#include "tracefold/ranklist.hpp"
#include "tracefold/timeline.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

struct WaitReport;
struct DiagnoseReport;
struct PatternsReport;

/// What an export wrote (for the command's summary line).
struct ExportSummary {
  uint64_t slices = 0;    ///< call slices (Perfetto) or call regions (OTF2)
  uint64_t messages = 0;  ///< matched messages (flows)
  uint64_t unmatched_sends = 0;
  uint64_t unmatched_recvs = 0;
};

/// Chrome trace-event JSON: one process per rank ("rank R"), a complete
/// slice per call and per computation gap, a flow from each matched send to
/// the receive's completion. `label` goes into the metadata. `progress` is
/// told after each rank.
ExportSummary write_perfetto(std::ostream& out, const Trace& trace, const std::string& label,
                             const TraceTimeline& timeline, const ProgressFn& progress = {});

/// Writes an OTF2 archive `dir/traces.otf2` (+ `traces.def`, `traces/`).
/// Throws std::runtime_error on failure or if built without OTF2. `progress`
/// is told after each rank's events.
ExportSummary write_otf2(const std::filesystem::path& dir, const Trace& trace,
                         const std::string& label, const TraceTimeline& timeline,
                         const ProgressFn& progress = {});
/// Was this build linked with libotf2?
bool have_otf2();

/// `sender,receiver,messages,bytes`, one line per non-zero pair.
void write_matrix_csv(std::ostream& out, const CommMatrix& m);
/// Heatmap of bytes (log colour scale) with labelled axes and a legend.
void write_matrix_svg(std::ostream& out, const CommMatrix& m, const std::string& title);
/// The heatmap as a PNG image (cells only, no text), `cell` pixels per pair.
void write_matrix_png(const std::filesystem::path& path, const CommMatrix& m, int cell = 0);
/// Stacked bars per rank: computation vs time in MPI calls.
void write_ranks_svg(std::ostream& out, const std::vector<RankTimeline>& timeline,
                     const std::string& title);

/// One self-contained HTML page that opens with what a reader wants first:
/// the summary, then the findings of `diagnosis` (if given: its
/// diagnoses and a ranks x time picture by label, docs/diagnose.md), time
/// by operation, the communication patterns of `patterns` (if given:
/// tracefold/report_patterns.hpp), the matrix heatmap and per-rank chart, then the busiest
/// call sites and rank pairs (the rest folded away behind a button).
/// With `analysis` (tracefold/waits.hpp, from a recorded timeline), the
/// page ends with an "Analysis" section: a pattern x rank heatmap and the
/// call paths that waited most.
void write_report_html(std::ostream& out, const Trace& trace, const std::string& label,
                       const TraceTimeline& timeline, const WaitReport* analysis = nullptr,
                       const DiagnoseReport* diagnosis = nullptr,
                       const PatternsReport* patterns = nullptr);

/// Ranks as people write them: `0–7`, `0,2,…,14`, `3`, `0–3,8–11,…,56–59`.
std::string human_ranks(const Ranklist& ranks);
std::string human_ranks(const std::vector<int32_t>& ranks);

/// Colour of a heatmap cell: t in [0, 1] -> "#rrggbb" (white .. dark red).
std::string heat_colour(double t);

}  // namespace tracefold
