// What the tracefold command's source files share.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/report_patterns.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::cli {

/// `1234 B`, `12.1 KiB`, `3.4 MiB`.
std::string human_bytes(uint64_t bytes);

/// CLI::ExistingFile for a trace argument; for the path of a `record
/// --sample-only` run (no trace file, by design) it says so and which
/// option records the trace.
const CLI::Validator& existing_trace();

/// A companion file of this CLI: $ENV_VAR, else the first candidate that
/// exists (relative to this binary's directory); throws `missing` if none.
std::filesystem::path find_companion(const char* env_var,
                                     std::initializer_list<const char*> candidates,
                                     const std::string& missing);

/// For subcommands that run from their CLI11 callback: runs `body`; an
/// exception becomes the usual error line and exit status 2 (main turns
/// CLI::RuntimeError into its status without printing more).
template <class F>
void guarded(F&& body) {
  try {
    body();
  } catch (const CLI::Error&) {
    throw;
  } catch (const std::exception& ex) {
    std::cerr << "tracefold: error: " << ex.what() << "\n";
    throw CLI::RuntimeError(2);
  }
}

struct RecordOptions {
  std::string output = "tracefold.tf";
  std::string rawlog;
  int stack_depth = 0;
  int site_tolerance = 0;
  std::size_t histogram_threshold = 0;  // LOSSY; 0: off
  std::string stats;
  bool timeline = false;
  std::string timeline_dir;   // empty: TRACE.timeline
  uint64_t timeline_max = 0;  // 0: the recorder's default
  int64_t sample_ns = 0;      // --sample: call-path samples every this many ns (0: none)
  std::string sample_clock = "wall";
  bool sample_only = false;  // --sample-only: no folded trace, an event log per rank instead
  bool no_timing = false;
  bool text = false;
};

/// How viewing commands show call sites (cmd_symbolize.cpp).
struct SiteOptions {
  bool raw = false;                     ///< --raw-sites: frames as recorded
  std::vector<std::string> debug_dirs;  ///< --debug-dir
};
/// Adds --raw-sites and --debug-dir to `cmd`.
void add_site_options(CLI::App* cmd, SiteOptions& o);
/// Before a view: names the frames the trace's symbols do not, from the
/// binaries when they can be found; with `raw`, drops all names. With
/// `labels_only`, only the frames a site's label can show (not those of
/// system libraries: see symbolize::FrameScope), for views that show no
/// whole call paths.
void prepare_sites(Trace& trace, const SiteOptions& o, bool labels_only = false);
/// The report's "Communication patterns" section: `tracefold patterns`
/// with its default options, as plain data (report_patterns.cpp).
PatternsReport patterns_for_report(const Trace& trace, bool raw_sites);
/// `tracefold symbolize` (cmd_symbolize.cpp).
void add_symbolize_command(CLI::App& app);

/// `tracefold memtrace` and `tracefold memtrace-stats` (cmd_memtrace.cpp).
void add_memtrace_commands(CLI::App& app);
/// Before parsing: for `tracefold memtrace`, takes the program and its
/// arguments (after `--`, or from the first word that is no option of
/// memtrace) off argv, shortening argc.
void split_memtrace_program(int& argc, char** argv);
/// `tracefold memreplay` (cmd_memreplay.cpp); add_memtrace_commands adds it.
void add_memreplay_command(CLI::App& app);

/// `tracefold extrapolate` (cmd_extrapolate.cpp).
void add_extrapolate_command(CLI::App& app);
/// `tracefold bench` (cmd_bench.cpp).
void add_bench_command(CLI::App& app);

/// `tracefold record`: runs `command` with the recorder preloaded.
int cmd_record(std::vector<std::string> command, const RecordOptions& options);

}  // namespace tracefold::cli
