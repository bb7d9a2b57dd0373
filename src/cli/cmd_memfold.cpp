// `tracefold memtrace-fold DIR -o TRACE`: folds a memtrace raw log into a
// memory trace (fold.hpp) and writes it in the compact form, or as text
// with --text. The work is tracefold_memtrace's; this file reads options
// and prints what the folding did. `tracefold merge` of memory traces
// (cmd_memmerge) ends here too: it folds the traces' streams again.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli.hpp"
#include "fold.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/trace_level.hpp"

namespace tracefold::cli {
namespace {

namespace mt = tracefold::memtrace;

struct FoldArgs {
  std::vector<std::string> dirs;
  std::string output = "memtrace.tf";
  bool text = false;
  std::uint32_t max_body = 64;
  bool canonical = false;
  bool quiet = false;
};

void run_memfold(const FoldArgs& a) {
  mt::MemFoldOptions options;
  options.max_body = a.max_body;
  options.canonical = a.canonical;
  mt::MemFoldStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  const Trace trace = mt::fold_raw_logs(
      std::vector<std::filesystem::path>(a.dirs.begin(), a.dirs.end()), options, &stats);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::size_t bytes =
      save_trace(trace, a.output, a.text ? TraceEncoding::kText : TraceEncoding::kCompact,
                 mt::kTraceZstdLevel);
  if (a.quiet) return;
  std::printf(
      "%s: %llu references of %d stream%s, %llu in %llu runs, %llu events, %zu nodes; %llu "
      "bytes (%.6f per reference); folded in %.2f s\n",
      a.output.c_str(), static_cast<unsigned long long>(stats.refs), trace.world_size,
      trace.world_size == 1 ? "" : "s", static_cast<unsigned long long>(stats.in_runs),
      static_cast<unsigned long long>(stats.runs), static_cast<unsigned long long>(stats.events),
      trace.nodes.size(), static_cast<unsigned long long>(bytes),
      stats.refs ? static_cast<double>(bytes) / static_cast<double>(stats.refs) : 0.0, secs);
}

}  // namespace

int cmd_memmerge(const std::vector<Trace>& traces, const std::vector<std::string>& names,
                 const std::string& out, bool text) {
  mt::MemFoldStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  const Trace trace = mt::merge_memory_traces(traces, names, {}, &stats);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::size_t bytes = save_trace(
      trace, out, text ? TraceEncoding::kText : TraceEncoding::kCompact, mt::kTraceZstdLevel);
  std::fprintf(stderr,
               "tracefold: merged %zu memory traces (%d streams, %llu references) into %s, "
               "%llu bytes, in %.2f s\n",
               traces.size(), trace.world_size, static_cast<unsigned long long>(stats.refs),
               out.c_str(), static_cast<unsigned long long>(bytes), secs);
  return 0;
}

void add_memfold_command(CLI::App& app) {
  auto a = std::make_shared<FoldArgs>();
  auto* cmd = app.add_subcommand(
      "memtrace-fold",
      "Fold a memtrace raw log into a lossless memory trace (loops of strided references)");
  cmd->add_option("dirs", a->dirs,
                  "The --raw-log directory; several (one per MPI rank) make one trace of all "
                  "their threads, directory by directory")
      ->required();
  cmd->add_option("-o,--output", a->output, "Trace file to write (default memtrace.tf)");
  cmd->add_flag("--text", a->text, "Write the text form instead of the compact one");
  cmd->add_option("--max-body", a->max_body,
                  "Longest run body, in references per iteration, looked for (default 64)");
  cmd->add_flag("--canonical", a->canonical,
                "Reproducible trace: contexts numbered by first use and data addresses made from "
                "the normalised ones, not the run's (docs/memtrace.md)");
  cmd->add_flag("-q,--quiet", a->quiet, "Print nothing");
  cmd->callback([a] {
    guarded([&] { run_memfold(*a); });
    throw CLI::RuntimeError(0);
  });
}

}  // namespace tracefold::cli
