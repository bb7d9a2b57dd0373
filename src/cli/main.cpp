// tracefold: one command, many subcommands. Each is a thin layer over the
// libraries; exit codes: 0 success, 1 "different" (diff only), 2 errors.
#include <CLI/CLI.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.hpp"
#include "cmd_diff.hpp"
#include "fold.hpp"
#include "progress.hpp"
#include "record_samples.hpp"
#include "tracefold/analysis_basic.hpp"
#include "tracefold/event_log.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/export.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/validate.hpp"
#include "tracefold/waits.hpp"

namespace fs = std::filesystem;
using namespace tracefold;
using namespace tracefold::cli;

namespace tracefold::cli {

const CLI::Validator& existing_trace() {
  static const CLI::Validator v(
      [](std::string& path) -> std::string {
        std::error_code ec;
        if (std::filesystem::is_regular_file(path, ec) ||
            !is_unfolded_run(default_timeline_dir(path)))
          return CLI::ExistingFile(path);
        return path +
               " does not exist: a run recorded with `record --sample-only` has no folded "
               "trace, only samples, the timeline and the event logs in " +
               default_timeline_dir(path) +
               "/; `tracefold diagnose` reads it, this command needs the trace: record with "
               "--sample (or --timeline) instead of --sample-only";
      },
      "FILE");
  return v;
}

std::string human_bytes(uint64_t b) {
  std::ostringstream ss;
  if (b < 10 * 1024)
    ss << b << " B";
  else if (b < 10ull * 1024 * 1024)
    ss << std::fixed << std::setprecision(1) << b / 1024.0 << " KiB";
  else
    ss << std::fixed << std::setprecision(1) << b / (1024.0 * 1024) << " MiB";
  return ss.str();
}

static fs::path self_path() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

// A companion file of this CLI: $ENV_VAR, else the first candidate (relative
// to this binary's directory: build tree first, then install layouts).
fs::path find_companion(const char* env_var, std::initializer_list<const char*> candidates,
                        const std::string& missing) {
  if (const char* env = std::getenv(env_var)) return env;
  const fs::path exe_dir = self_path().parent_path();
  for (const char* candidate : candidates)
    if (fs::exists(exe_dir / candidate)) return fs::weakly_canonical(exe_dir / candidate);
  throw std::runtime_error(missing);
}

// `tracefold merge` of memory traces (cmd_memfold.cpp): `names` name the
// traces in messages. Declared here, its one caller, not in cli.hpp, which
// every command includes.
int cmd_memmerge(const std::vector<Trace>& traces, const std::vector<std::string>& names,
                 const std::string& out, bool text);

}  // namespace tracefold::cli

namespace {

std::string ns_text(double ns) {
  std::ostringstream ss;
  ss << std::fixed << std::setprecision(ns < 1e4 ? 0 : 1);
  if (ns < 1e4)
    ss << ns << "ns";
  else if (ns < 1e7)
    ss << ns / 1e3 << "us";
  else
    ss << ns / 1e6 << "ms";
  return ss.str();
}

// How fold, merge and convert write: the compact form unless --text.
struct WriteOptions {
  bool text = false;
  bool no_timing = false;
  TraceEncoding encoding() const { return text ? TraceEncoding::kText : TraceEncoding::kCompact; }
};

int cmd_fold(const std::string& dir, const std::string& out, const FoldOptions& opts,
             const WriteOptions& w) {
  Trace t = fold_directory(dir, opts);
  if (w.no_timing) drop_timing(t);
  save_trace(t, out, w.encoding());
  std::cerr << "tracefold: folded " << t.world_size << " ranks into " << t.nodes.size()
            << " nodes, wrote " << out << " (" << human_bytes(fs::file_size(out)) << ")\n";
  return 0;
}

namespace {
// A partial-trace directory should hold one file per rank of the run; say
// which ranks saved nothing, so a merged trace is not taken for the whole run.
void report_missing_ranks(const std::string& dir, const std::vector<Trace>& traces,
                          std::size_t first) {
  const int32_t world = traces[first].world_size;
  std::vector<bool> seen(static_cast<std::size_t>(std::max(world, 0)));
  for (std::size_t i = first; i < traces.size(); ++i)
    for (int32_t r : traces[i].ranks().to_vector())
      if (r >= 0 && r < world) seen[static_cast<std::size_t>(r)] = true;
  std::string missing;
  int n = 0;
  for (int32_t r = 0; r < world; ++r)
    if (!seen[static_cast<std::size_t>(r)]) {
      if (n++ < 20) missing += (missing.empty() ? "" : ",") + std::to_string(r);
    }
  if (n > 0)
    std::cerr << "tracefold: merge: " << dir << " has no trace of " << n << " of " << world
              << " ranks (" << missing << (n > 20 ? ",..." : "")
              << "): they saved nothing before they stopped\n";
}
}  // namespace

int cmd_merge(const std::vector<std::string>& inputs, const std::string& out, const WriteOptions& w,
              std::size_t histogram_threshold) {
  std::vector<Trace> traces;
  std::vector<std::string> names;  // by trace, for messages
  for (const auto& in : inputs) {
    if (fs::is_directory(in)) {
      std::vector<fs::path> files, stray;
      // Only the per-rank traces: a rank killed while saving leaves a
      // temporary file behind, which is reported, not merged.
      for (const auto& e : fs::directory_iterator(in)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file() || name.rfind("rank-", 0) != 0) continue;
        (name.find(".tmp.") == std::string::npos ? files : stray).push_back(e.path());
      }
      if (files.empty()) throw std::runtime_error(in + ": no rank-R.tf files to merge");
      std::sort(files.begin(), files.end());
      std::sort(stray.begin(), stray.end());
      for (const auto& f : stray)
        std::cerr << "tracefold: merge: skipped " << f.string() << " (" << fs::file_size(f)
                  << " bytes): a rank was stopped while saving it\n";
      const std::size_t first = traces.size();
      Progress reading("reading " + in, files.size());
      for (const auto& f : files) {
        traces.push_back(load_trace(f));
        names.push_back(f.string());
        reading.update(traces.size() - first);
      }
      report_missing_ranks(in, traces, first);
    } else {
      traces.push_back(load_trace(in));
      names.push_back(in);
    }
  }
  if (traces.empty()) throw std::runtime_error("merge: no traces given");
  // Memory traces are folded again from their streams, with one numbering
  // of contexts and modules (docs/memtrace.md "Merging").
  for (const Trace& t : traces)
    if (traces.size() > 1 && !t.nodes.empty() && memtrace::is_memory_trace(t))
      return cmd_memmerge(traces, names, out, w.text);
  Trace acc = std::move(traces[0]);
  Progress merging("merging traces", traces.size());
  for (std::size_t i = 1; i < traces.size(); ++i) {
    acc = merge_traces(acc, traces[i]);
    merging.update(i + 1);
  }
  merging.done();
  canonicalize_sites(acc);
  if (w.no_timing) drop_timing(acc);
  if (apply_histogram_threshold(acc, histogram_threshold))
    std::cerr << "tracefold: merge: LOSSY: " << acc.lossy << "\n";
  save_trace(acc, out, w.encoding());
  std::cerr << "tracefold: merged " << traces.size() << " traces (ranks "
            << human_ranks(acc.ranks()) << ") into " << out << "\n";
  return 0;
}

int cmd_expand(const std::string& path, int32_t rank, int32_t thread, bool timing) {
  Trace t = load_trace(path);
  if (rank < 0 || rank >= t.world_size)
    throw std::out_of_range(path + ": rank " + std::to_string(rank) + " is outside 0.." +
                            std::to_string(t.world_size - 1));
  if (thread < 0 || thread >= t.threads)
    throw std::out_of_range(path + ": thread " + std::to_string(thread) + " is outside 0.." +
                            std::to_string(t.threads - 1));
  write_expansion(std::cout, t, thread * t.world_size + rank, timing);
  return 0;
}

// `-o -`: the text form to standard output, for reading or piping.
int cmd_convert(const std::string& in, const std::string& out, const WriteOptions& w) {
  Trace t = load_trace(in);
  if (w.no_timing) drop_timing(t);
  if (out == "-") {
    if (!w.text) throw std::runtime_error("convert: -o - writes the text form only (add --text)");
    std::cout << format_trace(t);
    return 0;
  }
  save_trace(t, out, w.encoding());
  std::cerr << "tracefold: wrote " << out << " (" << human_bytes(fs::file_size(out)) << ", "
            << (w.text ? "text" : "compact") << ")\n";
  return 0;
}

int cmd_print(const std::string& path, const SiteOptions& sites, bool call_paths) {
  Trace t = load_trace(path);
  prepare_sites(t, sites);
  std::cout << render_trace(t, call_paths);
  return 0;
}

int cmd_stats(const std::string& path, bool json, const SiteOptions& sites) {
  Trace t = load_trace(path);
  prepare_sites(t, sites);
  auto rows = compute_stats(t);
  int64_t total_time = 0;
  for (const auto& r : rows) total_time += r.time.sum();
  if (json) {
    nlohmann::json j;
    j["trace"] = path;
    j["ranks"] = t.world_size;
    j["threads"] = t.threads;
    if (const auto level = recorded_thread_level(t)) {
      j["thread_required"] = thread_level_name(level->required);
      j["thread_provided"] = thread_level_name(level->provided);
    }
    j["lossy"] = !t.lossy.empty();
    j["rows"] = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json row{
          {"op", r.op},
          {"site", r.site},
          {"calls", r.calls},
          {"bytes", r.bytes},
          {"ranks", r.ranks.to_string()},
          {"time_total_ns", r.time.sum()},
          {"time_share", total_time ? double(r.time.sum()) / double(total_time) : 0.0}};
      if (r.site_named) row["frames"] = r.frames;
      if (!r.time.empty()) {
        row["time_mean_ns"] = r.time.mean();
        row["time_min_ns"] = r.time.min();
        row["time_min_rank"] = r.time.min_rank();
        row["time_max_ns"] = r.time.max();
        row["time_max_rank"] = r.time.max_rank();
      }
      j["rows"].push_back(row);
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "trace " << path << ": " << t.world_size << " ranks"
            << (t.threads > 1 ? " x " + std::to_string(t.threads) + " threads" : "")
            << (t.lossy.empty() ? "" : " (LOSSY: " + t.lossy + ")") << "\n";
  if (const auto level = recorded_thread_level(t))
    std::cout << "thread level: " << describe_thread_level(*level) << "\n";
  // With threads, min@ and max@ name a location as RANK.THREAD.
  const auto where = [&](int32_t l) {
    return t.threads > 1 ? std::to_string(t.rank_of(l)) + "." + std::to_string(t.thread_of(l))
                         : std::to_string(l);
  };
  // Frame lists are cut to the column; names are shown whole (the column
  // widens to the longest).
  std::size_t width = 28;
  for (const auto& r : rows)
    if (r.site_named) width = std::max(width, r.site.size() + 2);
  std::cout << std::left << std::setw(24) << "operation" << std::setw(static_cast<int>(width))
            << "call site" << std::right << std::setw(10) << "calls" << std::setw(12) << "bytes"
            << std::setw(10) << "mean" << std::setw(16) << "min@rank" << std::setw(16) << "max@rank"
            << std::setw(8) << "share"
            << "\n";
  for (const auto& r : rows) {
    std::string site = !r.site_named && r.site.size() > 27 ? r.site.substr(0, 24) + "..." : r.site;
    std::ostringstream share;
    share << std::fixed << std::setprecision(1)
          << (total_time ? 100.0 * double(r.time.sum()) / double(total_time) : 0.0) << "%";
    std::cout << std::left << std::setw(24) << r.op << std::setw(static_cast<int>(width)) << site
              << std::right << std::setw(10) << r.calls << std::setw(12) << r.bytes;
    if (r.time.empty()) {
      std::cout << std::setw(10) << "-" << std::setw(16) << "-" << std::setw(16) << "-";
    } else {
      std::cout << std::setw(10) << ns_text(r.time.mean()) << std::setw(16)
                << (ns_text(double(r.time.min())) + "@" + where(r.time.min_rank())) << std::setw(16)
                << (ns_text(double(r.time.max())) + "@" + where(r.time.max_rank()));
    }
    std::cout << std::setw(8) << share.str() << "\n";
  }
  return 0;
}

// ------------------------------------------------------------------ record

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
      "LOSSY: value sequences of peer/src/count with more runs become histograms (0 = off)";
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
