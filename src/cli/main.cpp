// tracefold: one command, many subcommands. Each is a thin layer over the
// libraries; exit codes: 0 success, 1 "different" (diff only), 2 errors.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "cmd_diff.hpp"
#include "cmd_trace.hpp"
#include "record_samples.hpp"

namespace fs = std::filesystem;
using namespace tracefold;
using namespace tracefold::cli;

namespace {

// tracefold-replay is an MPI program; this CLI stays MPI-free.
fs::path find_replay_program() {
  return find_companion(
      "TRACEFOLD_REPLAY",
      {"../replay/tracefold-replay", "tracefold-replay", "../libexec/tracefold/tracefold-replay"},
      "cannot find tracefold-replay (was tracefold built with MPI? set TRACEFOLD_REPLAY)");
}

// Replaces this process with `program`, given the arguments after the
// subcommand's name.
[[noreturn]] void exec_companion(const std::string& program, int argc, char** argv) {
  std::vector<char*> args;
  args.push_back(const_cast<char*>(program.c_str()));
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(program.c_str(), args.data());
  throw std::runtime_error("cannot run " + program + ": " + std::strerror(errno));
}

// Replaces this process with tracefold-replay: under mpirun every rank
// becomes the MPI program, with the environment (and any LD_PRELOAD) intact.
[[noreturn]] void exec_replay(int argc, char** argv) {
  exec_companion(find_replay_program().string(), argc, argv);
}

// The size of the MPI job this process was started in by a launcher, or 0.
int launcher_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 0;
}

// Under mpirun, `tracefold analyze` and `tracefold diagnose` become the MPI
// programs of their parallel analyses (src/analysis/waits/parallel/,
// src/analysis/diagnose/parallel/); alone they stay the serial ones.
[[noreturn]] void exec_parallel_analysis(const std::string& command, int argc, char** argv) {
  // tracefold-analyze lives in the waits module, tracefold-diagnose in
  // diagnose's: both found in the build tree, next to tracefold, or installed.
  const std::string name = "tracefold-" + command;
  const std::string env = command == "analyze" ? "TRACEFOLD_ANALYZE" : "TRACEFOLD_DIAGNOSE";
  const std::string dir = command == "analyze" ? "waits" : "diagnose";
  const std::string in_build = "../analysis/" + dir + "/parallel/" + name;
  const std::string installed = "../libexec/tracefold/" + name;
  const fs::path program =
      find_companion(env.c_str(), {in_build.c_str(), name.c_str(), installed.c_str()},
                     "cannot find " + name +
                         ", the MPI program of the parallel analysis (was tracefold built with "
                         "MPI? set " +
                         env + ", or run tracefold " + command + " without mpirun)");
  exec_companion(program.string(), argc, argv);
}

}  // namespace

void add_export_commands(CLI::App& app);   // cmd_export.cpp: export, report, stats files
void add_simulate_command(CLI::App& app);  // cmd_simulate.cpp
namespace tracefold::cli {
void add_analyze_command(CLI::App& app);   // cmd_analyze.cpp
void add_patterns_command(CLI::App& app);  // cmd_patterns.cpp
void add_diagnose_command(CLI::App& app);  // cmd_diagnose.cpp
}  // namespace tracefold::cli
void add_resolve_command(CLI::App& app);  // cmd_resolve.cpp

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "replay") {
    try {
      exec_replay(argc, argv);
    } catch (const std::exception& ex) {
      std::cerr << "tracefold: error: " << ex.what() << "\n";
      return 2;
    }
  }
  if (argc > 1 && (std::string(argv[1]) == "analyze" || std::string(argv[1]) == "diagnose") &&
      launcher_size() > 1) {
    try {
      exec_parallel_analysis(argv[1], argc, argv);
    } catch (const std::exception& ex) {
      std::cerr << "tracefold: error: " << ex.what() << "\n";
      return 2;
    }
  }
  CLI::App app{"tracefold: scalable tracing and analysis of MPI applications"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tracefold 0.1.0");

  FoldOptions fold_opts;
  std::string fold_dir, fold_out;
  auto* fold =
      app.add_subcommand("fold", "Fold per-rank raw event logs (DIR/rank-R.txt) into one trace");
  WriteOptions fold_write, merge_write, convert_write;
  const char* const text_help = "Write the text form (format version 2) instead of the compact one";
  const char* const no_timing_help = "Drop the time histograms: parameters only";
  fold->add_option("rawlog_dir", fold_dir, "Directory of rank-R.txt logs")
      ->required()
      ->check(CLI::ExistingDirectory);
  fold->add_option("-o,--output", fold_out, "Trace file to write (.zst: zstd-compressed text)")
      ->required();
  fold->add_flag("--text", fold_write.text, text_help);
  fold->add_flag("--no-timing", fold_write.no_timing, no_timing_help);
  fold->add_option(
          "--window", fold_opts.window,
          "Top-level items searched back for differing iterations (exact repeats: any distance)")
      ->capture_default_str();
  fold->add_option("--similarity", fold_opts.min_similarity,
                   "Minimum aligned share for approximate iterations (1 = exact only)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  const char* const histogram_help =
      "LOSSY: value sequences of peer/src/count/tag with more values become histograms (0 = off)";
  bool fold_no_walk = false;
  fold->add_flag("--no-walk", fold_no_walk,
                 "Fold irregular iterations on the general path only (for comparisons)");
  fold->add_option("--histogram-threshold", fold_opts.histogram_threshold, histogram_help)
      ->capture_default_str();

  std::vector<std::string> record_command;
  RecordOptions record_opts;
  auto* record = app.add_subcommand(
      "record", "Trace an MPI run: tracefold record [-o TRACE] [--] mpirun -np N ./app args...");
  record->add_option("-o,--output", record_opts.output, "Trace file to write")
      ->capture_default_str();
  record->add_option("--raw-log", record_opts.rawlog,
                     "Also write per-rank raw event logs to this directory");
  record->add_option("--stack-depth", record_opts.stack_depth,
                     "Call-site frames per signature (default 6)");
  record->add_option("--histogram-threshold", record_opts.histogram_threshold, histogram_help);
  record->add_option("--site-tolerance", record_opts.site_tolerance,
                     "LOSSY: treat call sites differing in fewer than N frames as one (0 = exact)");
  record->add_flag(
      "--timeline", record_opts.timeline,
      "Also write every call's enter/exit time to TRACE.timeline/ (for exports and analysis)");
  record->add_option(
      "--timeline-dir", record_opts.timeline_dir,
      "Write the timeline (--timeline) to this directory instead of TRACE.timeline/");
  record->add_option("--timeline-max", record_opts.timeline_max,
                     "Bound on each rank's timeline file in bytes (default 268435456); later "
                     "events are dropped with a warning");
  std::string sample_period;
  auto* sample_opt =
      record
          ->add_option("--sample", sample_period,
                       "Also take call-path samples every PERIOD (default 5ms, at least 250us) "
                       "into the timeline's directory; implies --timeline. Write --sample=PERIOD")
          ->expected(0, 1);
  record->add_flag("--sample-only", record_opts.sample_only,
                   "Samples, the timeline and each call's parameters, without folding: no trace "
                   "file (tracefold diagnose reads such a run; docs/sampling.md)");
  record
      ->add_option("--sample-clock", record_opts.sample_clock,
                   "What the sampling timer counts: wall (default; waits are sampled) or cpu")
      ->check(CLI::IsMember({"wall", "cpu"}));
  record->add_option("--stats", record_opts.stats,
                     "User statistics per call, comma-separated (built in: bytes, minflt)");
  record->add_flag("--no-timing", record_opts.no_timing,
                   "Keep no computation or communication times: parameters only");
  record->add_flag("--text", record_opts.text, text_help);
  // Everything after `--` (or from the first word that is not an option) is
  // the command, passed through untouched.
  record->add_option("command", record_command,
                     "The launcher, program and arguments (after --, or from the first word that "
                     "is not an option), passed on untouched");
  record->footer("Example: tracefold record -o run.tf --raw-log raw -- mpirun -np 16 ./app 100");

  std::vector<std::string> merge_inputs;
  std::string merge_out;
  auto* merge =
      app.add_subcommand("merge", "Merge traces of disjoint ranks (files or directories of files)");
  merge->add_option("inputs", merge_inputs, "Trace files or directories (e.g. TRACE.partial)")
      ->required();
  merge->add_option("-o,--output", merge_out, "Trace file to write")->required();
  merge->add_flag("--text", merge_write.text, text_help);
  merge->add_flag("--no-timing", merge_write.no_timing, no_timing_help);
  std::size_t merge_histogram = 0;
  merge->add_option("--histogram-threshold", merge_histogram, histogram_help);

  std::string convert_in, convert_out;
  auto* convert = app.add_subcommand(
      "convert", "Rewrite a trace in the compact form, or as text with --text (-o - prints it)");
  convert->add_option("trace", convert_in, "Trace file (any form)")
      ->required()
      ->check(existing_trace());
  convert->add_option("-o,--output", convert_out, "Trace file to write, or - for standard output")
      ->required();
  convert->add_flag("--text", convert_write.text, text_help);
  convert->add_flag("--no-timing", convert_write.no_timing, no_timing_help);

  std::string expand_path;
  int32_t expand_rank_opt = 0;
  bool expand_timing = false;
  auto* expand =
      app.add_subcommand("expand", "Print one rank's events, one per line (raw-log format)");
  expand->add_option("trace", expand_path, "Trace file")->required()->check(existing_trace());
  expand->add_option("-r,--rank", expand_rank_opt, "Rank to expand")->required();
  expand->add_flag("--timing", expand_timing, "Add mean compute_ns/comm_ns per event");
  int32_t expand_thread = 0;
  expand->add_option("-t,--thread", expand_thread,
                     "Thread of the rank to expand (numbered as the trace's thread dimension)");

  DiffArgs diff_args;
  CLI::App* diff = add_diff_command(app, diff_args);

  std::string print_path;
  auto* print =
      app.add_subcommand("print", "Readable, indented view of loops, ranklists and parameters");
  print->add_option("trace", print_path, "Trace file")->required()->check(existing_trace());
  SiteOptions print_sites;
  add_site_options(print, print_sites);
  bool print_paths = false;
  print->add_flag("--call-paths", print_paths,
                  "Also show each call site's whole call path (innermost frame first)");

  std::string stats_path;
  bool stats_json = false;
  auto* stats =
      app.add_subcommand("stats", "Profile per call site and operation (calls, bytes, time)");
  stats->add_option("trace", stats_path, "Trace file")->required()->check(existing_trace());
  stats->add_flag("--json", stats_json, "Machine-readable output");
  SiteOptions stats_sites;
  add_site_options(stats, stats_sites);
  add_export_commands(app);
  add_symbolize_command(app);
  add_memtrace_commands(app);
  add_extrapolate_command(app);
  add_bench_command(app);
  add_simulate_command(app);
  add_analyze_command(app);
  add_patterns_command(app);
  add_diagnose_command(app);
  add_resolve_command(app);

  // Listed for --help only: `replay` is handed to tracefold-replay above.
  app.add_subcommand("replay",
                     "Run a trace as an MPI program: mpirun -np N tracefold replay TRACE (see "
                     "tracefold replay --help)")
      ->allow_extras();

  // `record` takes the command after `--` verbatim (options like -np must
  // reach the launcher in order), so split it off before CLI11 sees it.
  std::vector<std::string> command_after_dashes;
  bool have_command = false;
  if (argc > 1 && std::string(argv[1]) == "record") {
    // One scan from the left: the command starts after `--` or at the first
    // word that is neither one of record's options nor an option's value,
    // whichever comes first (a `--` inside the command belongs to it).
    // Whether a word is one of record's options that take a value, as
    // declared above (so the scan cannot drift from the declarations).
    // An option whose value may be left out (--sample) takes the next word
    // only if it starts with a digit, as its values do and commands do not.
    auto takes_value = [record](const std::string& word, const std::string& next) {
      for (const CLI::Option* opt : record->get_options()) {
        if (opt->get_expected_max() <= 0) continue;  // a flag
        if (opt->get_expected_min() == 0 && (next.empty() || !std::isdigit(next[0]))) continue;
        for (const auto& name : opt->get_lnames())
          if (word == "--" + name) return true;
        for (const auto& name : opt->get_snames())
          if (word == "-" + name) return true;
      }
      return false;
    };
    for (int i = 2; i < argc; ++i) {
      const std::string word = argv[i];
      if (word == "--") {
        have_command = true;
        command_after_dashes.assign(argv + i + 1, argv + argc);
        argc = i;
        break;
      }
      if (takes_value(word, i + 1 < argc ? argv[i + 1] : "")) {
        ++i;
        continue;
      }
      if (!word.empty() && word[0] == '-') continue;  // a flag, or --option=value
      have_command = true;
      command_after_dashes.assign(argv + i, argv + argc);
      argc = i;
      break;
    }
  }
  split_memtrace_program(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version are successes; every usage mistake is exit status 2.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (*record) {
      if (!have_command)
        throw std::runtime_error(
            "record: no command given, e.g. tracefold record -o run.tf -- mpirun -np 4 ./app");
      record_command = command_after_dashes;
      if (sample_opt->count() > 0 || record_opts.sample_only)
        record_opts.sample_ns = parse_sample_period(sample_period);
      else if (record->count("--sample-clock") > 0)
        throw std::runtime_error("record: --sample-clock needs --sample");
      return cmd_record(record_command, record_opts);
    }
    if (*fold) {
      fold_opts.elastic_iterations = !fold_no_walk;
      return cmd_fold(fold_dir, fold_out, fold_opts, fold_write);
    }
    if (*merge) return cmd_merge(merge_inputs, merge_out, merge_write, merge_histogram);
    if (*convert) return cmd_convert(convert_in, convert_out, convert_write);
    if (*expand) return cmd_expand(expand_path, expand_rank_opt, expand_thread, expand_timing);
    if (*diff) return run_diff(diff_args);
    if (*print) return cmd_print(print_path, print_sites, print_paths);
    if (*stats) return cmd_stats(stats_path, stats_json, stats_sites);
  } catch (const std::exception& ex) {
    std::cerr << "tracefold: error: " << ex.what() << "\n";
    return 2;
  }
  return 2;
}