// `tracefold analyze`: wait states, critical path and delay costs of a
// `record --timeline` recording (tracefold/waits.hpp, docs/analyze.md).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "cli.hpp"
#include "progress.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/waits.hpp"

namespace fs = std::filesystem;
using namespace tracefold;

namespace tracefold::cli {

namespace {

struct AnalyzeArgs {
  std::string trace, output, timeline, late_receiver = "scalasca";
  std::size_t top = 5;
  bool bundle = false, rendezvous_given = false;
  WaitOptions options;
  SiteOptions sites;
};

void run_analyze(const AnalyzeArgs& args) {
  // Under mpirun the parallel analysis takes over before this parser runs;
  // here there is no exchange to bundle.
  if (args.bundle)
    throw std::runtime_error(
        "--bundle applies to the parallel analysis only: mpirun -np P tracefold analyze --bundle " +
        args.trace + " (P = the recording's rank count)");
  // A size the scalasca rule would ignore is a mistake worth saying.
  if (args.rendezvous_given && args.late_receiver != "protocol")
    throw std::runtime_error("--rendezvous applies to --late-receiver protocol only");
  // A trace with threads is analysed per (rank, thread) location.
  Trace trace = load_trace(args.trace);
  // Only CUBE's call tree shows whole call paths; text and JSON show labels.
  prepare_sites(trace, args.sites, fs::path(args.output).extension() != ".cubex");
  const std::string dir = args.timeline.empty() ? default_timeline_dir(args.trace) : args.timeline;
  // Steps: reading the timelines, the clock repair, then the passes.
  Progress progress("analyzing " + args.trace + ": step", 2 + kWaitPasses);
  progress.update(0);
  WaitInput input = load_wait_input(trace, dir);
  progress.update(1);
  // One matching for the clock repair and the passes, as diagnose does: the
  // analysis would otherwise match again on a copy of every event.
  const MatchResult matched = match_wait_input(trace, input);
  const uint64_t violations = repair_clock_condition(trace, input, 20, &matched);
  progress.update(2);
  WaitOptions options = args.options;
  options.matched = &matched;
  options.late_receiver = late_receiver_rules().at(args.late_receiver);
  options.progress = [&progress](std::size_t done, std::size_t) { progress.update(2 + done); };
  WaitReport report = analyze_waits(trace, input, options);
  progress.done();
  note_clock_repair(report, violations);
  if (args.output.empty()) {
    write_wait_text(std::cout, report, args.top);
    return;
  }
  write_wait_report(report, args.output, args.top);
  std::cerr << "tracefold: analysis of " << report.events << " events written to " << args.output
            << "\n";
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Wait states, critical path and delay costs of a run recorded with --timeline");
  cmd->add_option("trace", args->trace, "Trace file (its timeline is TRACE.timeline/)")
      ->required()
      ->check(existing_trace());
  cmd->add_option("-o,--output", args->output,
                  "Write the report here; the extension chooses the form: .txt, .json or .cubex "
                  "(default: text on standard output)");
  cmd->add_option("--timeline", args->timeline, "Timeline directory (default TRACE.timeline)");
  cmd->add_option("--top", args->top, "Call paths and ranks listed per pattern")->default_val(5);
  cmd->add_option("--late-receiver", args->late_receiver,
                  "Which sends Late Receiver charges: scalasca (a blocking send or single "
                  "MPI_Wait still in its call when the receive was posted) or protocol "
                  "(synchronous and --rendezvous-sized sends)")
      ->check(CLI::IsMember(late_receiver_rules()))
      ->default_val("scalasca");
  CLI::Option* rendezvous =
      cmd->add_option("--rendezvous", args->options.rendezvous_bytes,
                      "With --late-receiver protocol: sends of this many bytes or more wait for "
                      "their receive")
          ->default_val(65536);
  cmd->add_flag("--bundle", args->bundle,
                "Under mpirun: each rank sends every peer its point-to-point records in one "
                "exchange instead of one message per recorded message (docs/analyze.md)");
  add_site_options(cmd, args->sites);
  cmd->callback([args, rendezvous] {
    args->rendezvous_given = rendezvous->count() > 0;
    guarded([&] { run_analyze(*args); });
    throw CLI::RuntimeError(0);
  });
}

}  // namespace tracefold::cli
