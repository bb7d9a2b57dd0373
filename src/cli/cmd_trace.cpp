// The commands on whole trace files (cmd_trace.hpp): fold, merge,
// convert, expand, print, stats.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.hpp"
#include "cmd_trace.hpp"
#include "fold.hpp"
#include "progress.hpp"
#include "tracefold/analysis_basic.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/export.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/validate.hpp"

namespace fs = std::filesystem;

namespace tracefold::cli {

// `tracefold merge` of memory traces (cmd_memfold.cpp): `names` name the
// traces in messages. Declared here, its one caller, not in cli.hpp, which
// every command includes.
int cmd_memmerge(const std::vector<Trace>& traces, const std::vector<std::string>& names,
                 const std::string& out, bool text);

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

int cmd_fold(const std::string& dir, const std::string& out, const FoldOptions& opts,
             const WriteOptions& w) {
  Trace t = fold_directory(dir, opts);
  if (w.no_timing) drop_timing(t);
  const std::size_t bytes = save_trace(t, out, w.encoding());
  std::cerr << "tracefold: folded " << t.world_size << " ranks into " << t.nodes.size()
            << " nodes, wrote " << out << " (" << human_bytes(bytes) << ")\n";
  return 0;
}

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
    acc = merge_traces(std::move(acc), std::move(traces[i]));
    merging.update(i + 1);
  }
  merging.done();
  canonicalize_sites(acc);
  if (w.no_timing) drop_timing(acc);
  if (apply_histogram_threshold(acc, histogram_threshold)) {
    share_histograms(acc);
    std::cerr << "tracefold: merge: LOSSY: " << acc.lossy << "\n";
  }
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
  const std::size_t bytes = save_trace(t, out, w.encoding());
  std::cerr << "tracefold: wrote " << out << " (" << human_bytes(bytes) << ", "
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

}  // namespace tracefold::cli
