// `tracefold diagnose`: phases, semantic labels and scalability diagnoses
// of a `record --timeline` (or `--sample`) recording
// (tracefold/diagnose.hpp, docs/diagnose.md).
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli.hpp"
#include "tracefold/diagnose.hpp"
#include "tracefold/trace_io.hpp"

using namespace tracefold;

namespace tracefold::cli {

namespace {

struct DiagnoseArgs {
  std::string trace, output, timeline;
  DiagnoseOptions options;
  SiteOptions sites;
};

void run_diagnose(const DiagnoseArgs& args) {
  check_diagnose_output(args.output);
  const std::string dir = args.timeline.empty() ? default_timeline_dir(args.trace) : args.timeline;
  UnfoldedRun unfolded;
  Trace trace = load_diagnose_recording(args.trace, dir, unfolded);
  // (A trace with threads is refused by load_diagnose_recording, for the
  // parallel diagnosis too.)
  prepare_sites(trace, args.sites, true);
  std::vector<std::string> notes;
  const DiagnoseInput input =
      load_diagnose_input(trace, dir, notes, unfolded.events.empty() ? nullptr : &unfolded);
  DiagnoseReport report = diagnose(trace, input, args.options);
  report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
  write_diagnose_report(report, args.output);
  if (args.output.empty()) return;
  const std::size_t n = report.diagnoses.size();
  std::cerr << "tracefold: " << n << (n == 1 ? " diagnosis" : " diagnoses") << " written to "
            << args.output << "\n";
}

}  // namespace

void add_diagnose_command(CLI::App& app) {
  auto args = std::make_shared<DiagnoseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose",
      "Phases, load imbalance and other scalability losses of a run recorded with --timeline");
  // No existence check: a --sample-only run has no trace file, only
  // TRACE.timeline/ (load_diagnose_recording says what is missing).
  cmd->add_option("trace", args->trace,
                  "Trace file (its timeline is TRACE.timeline/), or the -o of a --sample-only run")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "Write the report here; the extension chooses the form: .txt or .json "
                  "(default: text on standard output)");
  cmd->add_option("--timeline", args->timeline, "Timeline directory (default TRACE.timeline)");
  cmd->add_option("--significant", args->options.significant,
                  "Report diagnoses of at least this share of the run time")
      ->default_val(0.01)
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--top", args->options.top, "Causes listed per diagnosis")->default_val(3);
  cmd->add_option("--large-bytes", args->options.large_bytes,
                  "Messages of at least this many bytes are large")
      ->default_val(1 << 20);
  add_site_options(cmd, args->sites);
  cmd->callback([args] {
    guarded([&] { run_diagnose(*args); });
    throw CLI::RuntimeError(0);
  });
}

}  // namespace tracefold::cli
