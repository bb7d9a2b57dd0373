// `tracefold export`, `tracefold report` and the `stats` options that write
// files (--matrix, --matrix-svg, --matrix-png, --ranks-svg).
//
// main.cpp calls add_export_commands(app) after defining its own
// subcommands and leaves the rest to this file: the commands here run from
// their subcommand's callback, at the end of parsing. `export` and `report`
// then end the program by throwing CLI::RuntimeError with their exit status
// (main turns every CLI11 exit into 0 or 2 without printing anything for
// RuntimeError); the `stats` options write their files and return, and
// main goes on to print the usual table.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli.hpp"
#include "progress.hpp"
#include "tracefold/diagnose.hpp"
#include "tracefold/export.hpp"
#include "tracefold/report_patterns.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/waits.hpp"

namespace fs = std::filesystem;
using namespace tracefold;
using tracefold::cli::guarded;
using tracefold::cli::Progress;

namespace {

struct ExportArgs {
  std::string trace;
  std::string perfetto;
  std::string otf2;
  std::string timeline;
  tracefold::cli::SiteOptions sites;
};

struct ReportArgs {
  std::string trace;
  std::string output;
  std::string timeline;
  bool no_patterns = false;
  tracefold::cli::SiteOptions sites;
};

struct StatsFiles {
  std::string matrix_csv, matrix_svg, matrix_png, ranks_svg, timeline;
};

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot write");
  return f;
}

void close_out(std::ofstream& f, const std::string& path) {
  f.close();
  if (!f) throw std::runtime_error(path + ": write failed");
}

std::string summary(const ExportSummary& s) {
  return std::to_string(s.slices) + " calls, " + std::to_string(s.messages) + " matched messages" +
         (s.unmatched_sends || s.unmatched_recvs
              ? " (unmatched: " + std::to_string(s.unmatched_sends) + " sends, " +
                    std::to_string(s.unmatched_recvs) + " receives)"
              : "");
}

// "4 ranks, " or, with threads, "4 ranks, 6 threads calling MPI, ".
std::string who(const Trace& t, const TraceTimeline& tl) {
  std::string s = std::to_string(t.world_size) + " ranks, ";
  if (t.threads > 1) s += std::to_string(tl.ranks.size()) + " threads calling MPI, ";
  return s;
}

void run_export(const ExportArgs& a) {
  if (a.perfetto.empty() && a.otf2.empty())
    throw std::runtime_error("export: choose an output: --perfetto FILE.json and/or --otf2 DIR");
  Trace t = load_trace(a.trace);
  tracefold::cli::prepare_sites(t, a.sites);
  const TraceTimeline tl = timeline_for(t, a.trace, a.timeline);
  if (!a.perfetto.empty()) {
    std::ofstream f = open_out(a.perfetto);
    Progress progress("exporting " + a.perfetto + ": rank", tl.ranks.size());
    const ExportSummary s = write_perfetto(f, t, a.trace, tl, progress.fn());
    progress.done();
    close_out(f, a.perfetto);
    std::cerr << "tracefold: wrote " << a.perfetto << ": " << who(t, tl) << summary(s) << "; "
              << tl.describe() << "\n";
  }
  if (!a.otf2.empty()) {
    Progress progress("exporting " + a.otf2 + ": rank", tl.ranks.size());
    const ExportSummary s = write_otf2(a.otf2, t, a.trace, tl, progress.fn());
    progress.done();
    std::cerr << "tracefold: wrote " << (fs::path(a.otf2) / "traces.otf2").string() << ": "
              << who(t, tl) << summary(s) << "; " << tl.describe() << "\n";
  }
}

void run_stats_files(const std::string& path, const StatsFiles& o) {
  if (o.matrix_csv.empty() && o.matrix_svg.empty() && o.matrix_png.empty() && o.ranks_svg.empty())
    return;
  // With threads, the matrix counts every thread's sends at its rank and
  // the chart has a bar per (rank, thread).
  const Trace t = load_trace(path);
  if (!o.matrix_csv.empty() || !o.matrix_svg.empty() || !o.matrix_png.empty()) {
    const CommMatrix m = comm_matrix(t);
    if (!o.matrix_csv.empty()) {
      std::ofstream f = open_out(o.matrix_csv);
      write_matrix_csv(f, m);
      close_out(f, o.matrix_csv);
    }
    if (!o.matrix_svg.empty()) {
      std::ofstream f = open_out(o.matrix_svg);
      write_matrix_svg(
          f, m,
          "Point-to-point bytes, sender \u2192 receiver: " + fs::path(path).filename().string());
      close_out(f, o.matrix_svg);
    }
    if (!o.matrix_png.empty()) write_matrix_png(o.matrix_png, m);
  }
  if (!o.ranks_svg.empty()) {
    std::ofstream f = open_out(o.ranks_svg);
    write_ranks_svg(f, timeline_for(t, path, o.timeline).ranks,
                    "Time per rank, computation vs MPI: " + fs::path(path).filename().string());
    close_out(f, o.ranks_svg);
  }
}

}  // namespace

void add_export_commands(CLI::App& app) {
  auto ex = std::make_shared<ExportArgs>();
  auto* exp =
      app.add_subcommand("export", "Write a trace as Perfetto/Chrome JSON or an OTF2 archive");
  exp->add_option("trace", ex->trace, "Trace file")
      ->required()
      ->check(tracefold::cli::existing_trace());
  exp->add_option("--perfetto", ex->perfetto,
                  "Chrome trace-event JSON file (ui.perfetto.dev, chrome://tracing)");
  exp->add_option("--otf2", ex->otf2, "Directory for an OTF2 archive (DIR/traces.otf2)");
  exp->add_option("--timeline", ex->timeline,
                  "Recorded timeline directory (default: TRACE.timeline/ if it exists, from record "
                  "--timeline)");
  tracefold::cli::add_site_options(exp, ex->sites);
  exp->footer(
      "Without a recorded timeline the times are synthesized from the trace's mean times.\n"
      "Example: tracefold export run.tf --perfetto run.json --otf2 run-otf2");
  exp->callback([ex] {
    guarded([&] { run_export(*ex); });
    throw CLI::RuntimeError(0);
  });

  auto rep = std::make_shared<ReportArgs>();
  auto* report = app.add_subcommand("report", "Write a self-contained HTML report of a trace");
  report->add_option("trace", rep->trace, "Trace file")
      ->required()
      ->check(tracefold::cli::existing_trace());
  report->add_option("-o,--output", rep->output, "HTML file to write")->required();
  report->add_option("--timeline", rep->timeline,
                     "Recorded timeline directory (default: TRACE.timeline/ if it exists)");
  report->add_flag("--no-patterns", rep->no_patterns,
                   "Leave out the communication patterns section (its analysis walks every "
                   "rank's events)");
  tracefold::cli::add_site_options(report, rep->sites);
  report->callback([rep] {
    guarded([&] {
      Trace t = load_trace(rep->trace);
      tracefold::cli::prepare_sites(t, rep->sites);
      std::ofstream f = open_out(rep->output);
      const TraceTimeline tl = timeline_for(t, rep->trace, rep->timeline);
      // A recorded timeline also gives the wait-state analysis section.
      // ... and the diagnosis's findings.
      std::optional<WaitReport> waits;
      std::optional<DiagnoseReport> diagnosis;
      if (tl.recorded && t.threads > 1) {
        // Wait states per (rank, thread) location, as `analyze` finds them;
        // diagnose takes one thread per rank.
        const std::string dir =
            rep->timeline.empty() ? default_timeline_dir(rep->trace) : rep->timeline;
        WaitInput input = load_wait_input(t, dir);
        const uint64_t violations = repair_clock_condition(t, input);
        waits = analyze_waits(t, input);
        note_clock_repair(*waits, violations);
      } else if (tl.recorded) {
        const std::string dir =
            rep->timeline.empty() ? default_timeline_dir(rep->trace) : rep->timeline;
        std::vector<std::string> notes;
        const DiagnoseInput input = load_diagnose_input(t, dir, notes);
        waits = analyze_waits(t, input.events);
        waits->clock_violations = input.clock_violations;
        diagnosis = diagnose(t, input);
        diagnosis->notes.insert(diagnosis->notes.begin(), notes.begin(), notes.end());
      }
      // A pattern analysis that fails costs its section, not the report.
      std::optional<PatternsReport> patterns;
      if (!rep->no_patterns) {
        try {
          patterns = tracefold::cli::patterns_for_report(t, rep->sites.raw);
        } catch (const std::exception& e) {
          patterns = PatternsReport{};
          patterns->world_size = t.world_size;
          patterns->error = e.what();
        }
      }
      write_report_html(f, t, rep->trace, tl, waits ? &*waits : nullptr,
                        diagnosis ? &*diagnosis : nullptr, patterns ? &*patterns : nullptr);
      close_out(f, rep->output);
      std::cerr << "tracefold: wrote " << rep->output << "\n";
    });
    throw CLI::RuntimeError(0);
  });

  // Extra outputs of `stats`, defined in main.cpp.
  CLI::App* stats = app.get_subcommand("stats");
  auto files = std::make_shared<StatsFiles>();
  stats->add_option("--matrix", files->matrix_csv,
                    "Write the rank-to-rank point-to-point matrix as CSV");
  stats->add_option("--matrix-svg", files->matrix_svg, "Write the matrix as an SVG heatmap");
  stats->add_option("--matrix-png", files->matrix_png, "Write the matrix heatmap as a PNG image");
  stats->add_option("--ranks-svg", files->ranks_svg,
                    "Write a per-rank computation/MPI time bar chart (SVG)");
  stats->add_option(
      "--timeline", files->timeline,
      "Recorded timeline directory for --ranks-svg (default: TRACE.timeline/ if it exists)");
  stats->callback([stats, files] {
    guarded([&] { run_stats_files(stats->get_option("trace")->as<std::string>(), *files); });
  });
}
