// The text and JSON forms of a wait-state report (see waits.hpp).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tracefold/cube4.hpp"
#include "tracefold/waits.hpp"

namespace tracefold {

namespace {

std::string fixed(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

template <class K>
std::vector<std::pair<K, double>> top_of(const std::map<K, double>& m, std::size_t n) {
  std::vector<std::pair<K, double>> v(m.begin(), m.end());
  // Largest first; ties in key order so that the output is deterministic.
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (v.size() > n) v.resize(n);
  return v;
}

int depth(const WaitReport& r, int32_t p) {
  int d = 0;
  while (r.patterns[std::size_t(p)].parent >= 0) {
    p = r.patterns[std::size_t(p)].parent;
    ++d;
  }
  return d;
}

}  // namespace

void write_wait_text(std::ostream& out, const WaitReport& r, std::size_t top) {
  const double time_total = r.total(WaitPattern::kTime);
  out << "wait-state analysis: " << r.world_size << " ranks"
      << (r.locations.empty()
              ? std::string()
              : " (" + std::to_string(r.locations.size()) + " locations, named rank.thread)")
      << ", run time " << fixed(r.run_seconds) << " s, " << r.events << " events, " << r.messages
      << " messages, " << r.collectives
      << " collective instances; clock condition: " << r.clock_violations
      << " violations repaired\n";
  for (const std::string& n : r.notes) out << "note: " << n << "\n";
  out << "\npatterns (seconds summed over ranks; % of total time " << fixed(time_total) << " s)\n";
  for (std::size_t p = 0; p < r.patterns.size(); ++p) {
    const double v = r.total(static_cast<WaitPattern>(p));
    std::string name(std::size_t(2 * depth(r, int32_t(p))), ' ');
    name += r.patterns[p].name;
    char line[160];
    std::snprintf(line, sizeof line, "  %-32s %14s s %6.2f %%\n", name.c_str(), fixed(v).c_str(),
                  time_total > 0 ? 100 * v / time_total : 0.0);
    out << line;
  }
  for (std::size_t p = std::size_t(WaitPattern::kLateSender); p < r.patterns.size(); ++p) {
    if (p == std::size_t(WaitPattern::kCollective) ||
        p == std::size_t(WaitPattern::kSynchronization))
      continue;
    std::map<int32_t, double> by_cp, by_rank;
    for (const auto& [key, v] : r.severity) {
      if (std::get<0>(key) != int32_t(p)) continue;
      by_cp[std::get<1>(key)] += v;
      by_rank[std::get<2>(key)] += v;
    }
    if (by_cp.empty()) continue;
    out << "\n"
        << r.patterns[p].name << ": " << fixed(r.total(static_cast<WaitPattern>(p))) << " s\n";
    for (const auto& [cp, v] : top_of(by_cp, top))
      out << "  " << fixed(v) << " s  call path " << cp << ": "
          << r.callpaths[std::size_t(cp)].label << "\n";
    for (const auto& [rank, v] : top_of(by_rank, top))
      out << "  " << fixed(v) << " s  rank " << r.location_name(rank) << "\n";
  }
  double cp_total = 0;
  std::map<int32_t, double> cp_ranks;
  for (const auto& [key, v] : r.critical_path) {
    cp_total += v;
    cp_ranks[key.second] += v;
  }
  out << "\ncritical path: " << fixed(cp_total) << " s\n";
  for (const auto& [rank, v] : top_of(cp_ranks, top))
    out << "  " << fixed(v) << " s  rank " << r.location_name(rank) << "\n";
  for (const auto& [key, v] : top_of(r.critical_path, top))
    out << "  " << fixed(v) << " s  rank " << r.location_name(key.second) << "  call path "
        << key.first << ": " << r.callpaths[std::size_t(key.first)].label << "\n";
  double dc_total = 0;
  for (const auto& [key, v] : r.delay_costs) dc_total += v;
  out << "\ndelay costs (who made others wait): " << fixed(dc_total) << " s\n";
  for (const auto& [key, v] : top_of(r.delay_costs, top))
    out << "  " << fixed(v) << " s  rank " << r.location_name(key.second) << "  call path "
        << key.first << ": " << r.callpaths[std::size_t(key.first)].label << "\n";
  double pc_total = 0;
  for (const auto& [key, v] : r.propagated_costs) pc_total += v;
  out << "\npropagated delay costs (waiting passed on through other ranks' waits): "
      << fixed(pc_total) << " s\n";
  for (const auto& [key, v] : top_of(r.propagated_costs, top))
    out << "  " << fixed(v) << " s  rank " << r.location_name(key.second) << "  call path "
        << key.first << ": " << r.callpaths[std::size_t(key.first)].label << "\n";
}

void write_wait_json(std::ostream& out, const WaitReport& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["world_size"] = r.world_size;
  j["run_seconds"] = r.run_seconds;
  j["events"] = r.events;
  j["dropped_events"] = r.dropped;
  j["messages"] = r.messages;
  j["unmatched_sends"] = r.unmatched_sends;
  j["unmatched_recvs"] = r.unmatched_recvs;
  j["collectives"] = r.collectives;
  j["incomplete_collectives"] = r.incomplete_collectives;
  j["clock_violations"] = r.clock_violations;
  j["notes"] = r.notes;
  // With threads a cell's "rank" is the world rank and "thread" and
  // "location" (rank.thread) say which of its threads.
  auto where = [&](ordered_json& o, int32_t loc) {
    if (r.locations.empty()) {
      o["rank"] = loc;
      return;
    }
    const WaitLocation& l = r.locations[std::size_t(loc)];
    o["rank"] = l.rank;
    o["thread"] = l.thread;
    o["location"] = l.name;
  };
  if (!r.locations.empty()) {
    ordered_json locs = ordered_json::array();
    for (const WaitLocation& l : r.locations)
      locs.push_back({{"rank", l.rank}, {"thread", l.thread}, {"name", l.name}});
    j["locations"] = locs;
  }
  ordered_json pats = ordered_json::array();
  for (std::size_t p = 0; p < r.patterns.size(); ++p)
    pats.push_back({{"id", r.patterns[p].id},
                    {"name", r.patterns[p].name},
                    {"parent", r.patterns[p].parent},
                    {"description", r.patterns[p].description},
                    {"seconds", r.total(static_cast<WaitPattern>(p))}});
  j["patterns"] = pats;
  ordered_json cps = ordered_json::array();
  for (const WaitCallPath& c : r.callpaths)
    cps.push_back({{"label", c.label},
                   {"op", OpTable::name(c.op)},
                   {"site", c.site},
                   {"computation", c.computation},
                   {"parent", c.parent}});
  j["callpaths"] = cps;
  ordered_json sev = ordered_json::array();
  for (const auto& [key, v] : r.severity) {
    ordered_json c = {{"pattern", r.patterns[std::size_t(std::get<0>(key))].id},
                      {"callpath", std::get<1>(key)}};
    where(c, std::get<2>(key));
    c["seconds"] = v;
    sev.push_back(std::move(c));
  }
  j["severity"] = sev;
  auto pairs = [&](const std::map<std::pair<int32_t, int32_t>, double>& m) {
    ordered_json a = ordered_json::array();
    for (const auto& [key, v] : m) {
      if (v <= 0) continue;
      ordered_json c = {{"callpath", key.first}};
      where(c, key.second);
      c["seconds"] = v;
      a.push_back(std::move(c));
    }
    return a;
  };
  j["critical_path"] = pairs(r.critical_path);
  j["delay_costs"] = pairs(r.delay_costs);
  j["propagated_delay_costs"] = pairs(r.propagated_costs);
  out << j.dump(1) << "\n";
}

void note_clock_repair(WaitReport& report, uint64_t violations) {
  report.clock_violations = violations;
  if (violations)
    report.notes.push_back(std::to_string(violations) +
                           " receives ended before their send began (clock condition); the "
                           "controlled logical clock moved them and the later events of their "
                           "ranks forward");
}

void write_wait_report(const WaitReport& report, const std::string& path, std::size_t top) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".cubex" && ext != ".json" && ext != ".txt")
    throw WaitsError(path + ": unknown report format (use .txt, .json or .cubex)");
  if (ext == ".cubex") {
    if (!report.locations.empty())
      throw WaitsError(path +
                       ": the CUBE form here has one thread per process; this analysis has "
                       "threads (use .json or .txt)");
    write_cubex(wait_cube(report), path);
    return;
  }
  std::ofstream out(path);
  if (!out) throw WaitsError(path + ": cannot create");
  if (ext == ".json")
    write_wait_json(out, report);
  else
    write_wait_text(out, report, top);
  out.close();
  if (!out) throw WaitsError(path + ": write failed");
}

}  // namespace tracefold
