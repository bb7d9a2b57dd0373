// `tracefold analyze`: wait states, critical path and delay costs of a
// `record --timeline` recording (tracefold/waits.hpp, docs/analyze.md).
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli.hpp"
#include "progress.hpp"
#include "tracefold/cube4.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/waits.hpp"

namespace fs = std::filesystem;
using namespace tracefold;

namespace tracefold::cli {

namespace {

struct AnalyzeArgs {
  std::string trace, output, timeline;
  std::size_t top = 5;
  WaitOptions options;
  SiteOptions sites;
};

// The size of the MPI job this process was started in by a launcher, or 0.
int launcher_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 0;
}

void run_analyze(const AnalyzeArgs& args) {
  Trace trace = load_trace(args.trace);
  const int launched = launcher_size();
  if (launched > 1 && launched != trace.world_size)
    throw std::runtime_error("analysis started with " + std::to_string(launched) +
                             " ranks, the recording has " + std::to_string(trace.world_size) +
                             ": run it with mpirun -np " + std::to_string(trace.world_size) +
                             " or without mpirun");
  if (launched > 1)
    throw std::runtime_error(
        "parallel analysis under mpirun is not available yet: run tracefold analyze without "
        "mpirun (the serial analysis reads every rank's timeline)");
  prepare_sites(trace, args.sites);
  const std::string dir = args.timeline.empty() ? default_timeline_dir(args.trace) : args.timeline;
  // Steps: reading the timelines, the clock repair, then the passes.
  Progress progress("analyzing " + args.trace + ": step", 2 + kWaitPasses);
  progress.update(0);
  WaitInput input = load_wait_input(trace, dir);
  progress.update(1);
  const uint64_t violations = repair_clock_condition(trace, input);
  progress.update(2);
  WaitOptions options = args.options;
  options.progress = [&progress](std::size_t done, std::size_t) { progress.update(2 + done); };
  WaitReport report = analyze_waits(trace, input, options);
  progress.done();
  report.clock_violations = violations;
  if (violations)
    report.notes.push_back(std::to_string(violations) +
                           " receives ended before their send began (clock condition); the "
                           "controlled logical clock moved them and the later events of their "
                           "ranks forward");
  if (args.output.empty()) {
    write_wait_text(std::cout, report, args.top);
    return;
  }
  const std::string ext = fs::path(args.output).extension().string();
  if (ext != ".cubex" && ext != ".json" && ext != ".txt")
    throw std::runtime_error(args.output + ": unknown report format (use .txt, .json or .cubex)");
  if (ext == ".cubex") {
    write_cubex(wait_cube(report), args.output);
  } else {
    std::ofstream out(args.output);
    if (!out) throw std::runtime_error(args.output + ": cannot create");
    if (ext == ".json")
      write_wait_json(out, report);
    else
      write_wait_text(out, report, args.top);
    out.close();
    if (!out) throw std::runtime_error(args.output + ": write failed");
  }
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
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->output,
                  "Write the report here; the extension chooses the form: .txt, .json or .cubex "
                  "(default: text on standard output)");
  cmd->add_option("--timeline", args->timeline, "Timeline directory (default TRACE.timeline)");
  cmd->add_option("--top", args->top, "Call paths and ranks listed per pattern")->default_val(5);
  cmd->add_option("--rendezvous", args->options.rendezvous_bytes,
                  "Sends of this many bytes or more wait for their receive (Late Receiver)")
      ->default_val(65536);
  add_site_options(cmd, args->sites);
  cmd->callback([args] {
    guarded([&] { run_analyze(*args); });
    throw CLI::RuntimeError(0);
  });
}

}  // namespace tracefold::cli
