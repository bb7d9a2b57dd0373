#include "record_summary.hpp"

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "cli.hpp"

namespace fs = std::filesystem;

namespace tracefold::cli {

namespace {

// One kind of file (rawlog, timeline, partial) as the ranks reported it.
struct Kind {
  std::set<int> ok;
  std::map<std::string, std::set<int>> failed;  // errno text -> ranks
  bool any() const { return !ok.empty() || !failed.empty(); }
};

struct Reports {
  int world = 0;
  std::set<int> reporting;
  std::map<std::string, Kind> kinds;
  std::set<fs::path> partial_elsewhere;  // directories
};

// The status files the ranks wrote at the end (src/record/finalize.cpp):
// "size N", then "KIND ok PATH", "KIND failed TEXT", "partial-elsewhere PATH".
Reports read_reports(const fs::path& dir) {
  Reports r;
  std::error_code ec;
  if (dir.empty()) return r;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rank-", 0) != 0 || name.find('.') != std::string::npos) continue;
    int rank = -1;
    try {
      rank = std::stoi(name.substr(5));
    } catch (const std::exception&) {
      continue;
    }
    r.reporting.insert(rank);
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string kind, state;
      words >> kind >> state;
      std::string rest;
      std::getline(words >> std::ws, rest);
      if (kind == "size") {
        r.world = std::max(r.world, std::atoi(state.c_str()));
      } else if (kind == "partial-elsewhere") {
        r.partial_elsewhere.insert(
            fs::path(state + (rest.empty() ? "" : " " + rest)).parent_path());
      } else if (state == "ok") {
        r.kinds[kind].ok.insert(rank);
      } else if (state == "failed") {
        r.kinds[kind].failed[rest].insert(rank);
      }
    }
  }
  return r;
}

// "rank 3", "ranks 0-2, 5".
std::string rank_list(const std::set<int>& ranks) {
  std::string out;
  for (auto it = ranks.begin(); it != ranks.end();) {
    const int first = *it;
    int last = first;
    for (++it; it != ranks.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ", ";
    out += std::to_string(first);
    if (last != first) out += (last == first + 1 ? ", " : "-") + std::to_string(last);
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + out;
}

std::string failures(const Kind& k) {
  std::string out;
  for (const auto& [why, ranks] : k.failed)
    out += (out.empty() ? "" : "; ") + rank_list(ranks) + ": " + why;
  return out;
}

// Ranks of the world that sent no report (killed before they could).
std::set<int> silent(const Reports& r, int world) {
  std::set<int> out;
  for (int i = 0; i < world; ++i)
    if (!r.reporting.count(i)) out.insert(i);
  return out;
}

uint64_t bytes_in(const fs::path& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec))
    if (f.is_regular_file(ec)) bytes += f.file_size(ec);
  return bytes;
}

// One line for raw logs or timelines; true if all were written whole.
bool report_kind(const char* what, const fs::path& dir, const Kind& k, const Reports& r, int world,
                 bool have_reports) {
  std::cerr << "tracefold: " << what << " in " << dir.string() << "/ ("
            << human_bytes(bytes_in(dir)) << ")";
  if (!have_reports) {
    std::cerr << ": no rank reported how its file went (see the messages above)\n";
    return true;
  }
  std::cerr << ": " << k.ok.size() << " of " << world << " written";
  bool whole = k.failed.empty() && static_cast<int>(k.ok.size()) == world;
  if (!k.failed.empty()) std::cerr << "; incomplete: " << failures(k);
  if (const auto quiet = silent(r, world); !quiet.empty() && world > 0)
    std::cerr << "; no report from " << rank_list(quiet) << " (ended before it could say)";
  std::cerr << "\n";
  return whole;
}

}  // namespace

std::optional<WrittenTrace> written_trace(const fs::path& dir) {
  if (dir.empty()) return std::nullopt;
  std::ifstream in(dir / "rank-0");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind, state;
    WrittenTrace w;
    if (words >> kind >> state >> w.world_size >> w.nodes && kind == "trace" && state == "ok" &&
        w.world_size > 0)
      return w;
  }
  return std::nullopt;
}

bool summarize_record(const RecordPlaces& p) {
  const Reports r = read_reports(p.status);
  const int world = p.world_size > 0 ? p.world_size : r.world;
  const bool have_reports = !r.reporting.empty();
  bool whole = true;
  auto kind = [&](const char* name) {
    auto it = r.kinds.find(name);
    return it == r.kinds.end() ? Kind{} : it->second;
  };
  std::error_code ec;
  if (!p.rawlog.empty() && fs::exists(p.rawlog, ec))
    whole &= report_kind("raw logs", p.rawlog, kind("rawlog"), r, world, have_reports);
  if (!p.timeline.empty() && fs::is_directory(p.timeline, ec))
    whole &= report_kind("timeline", p.timeline, kind("timeline"), r, world, have_reports);
  if (const Kind events = kind("events"); events.any())
    whole &= report_kind("event logs (--sample-only)", p.timeline, events, r, world, have_reports);
  const Kind partial = kind("partial");
  const fs::path partial_dir = p.output.string() + ".partial";
  if (partial.any()) {
    std::cerr << "tracefold: partial traces: " << partial.ok.size() << " of " << world
              << " ranks wrote theirs to " << partial_dir.string() << "/";
    if (!partial.failed.empty()) {
      whole = false;
      std::cerr << "; not written there: " << failures(partial);
    }
    std::cerr << "\n";
  }
  for (const auto& dir : r.partial_elsewhere)
    std::cerr << "tracefold: partial traces the output place refused are in " << dir.string()
              << "/ (combine them all: tracefold merge "
              << (partial.ok.empty() ? "" : partial_dir.string() + " ") << dir.string() << " -o "
              << p.output.string() << ")\n";
  return whole;
}

}  // namespace tracefold::cli
