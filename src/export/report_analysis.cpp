// The "Analysis" section of the HTML report: wait states from
// `tracefold analyze` (tracefold/waits.hpp) as a pattern x rank heatmap and
// bars per call path. Only the report's data is read here, so that export
// does not depend on the analysis library.
#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "export_util.hpp"
#include "tracefold/export.hpp"
#include "tracefold/waits.hpp"

namespace tracefold {

void write_report_analysis(std::ostream& out, const WaitReport& r) {
  // Wait-state patterns only: the tree's time categories are in the
  // summary already.
  const int32_t first = static_cast<int32_t>(WaitPattern::kLateSender);
  std::map<std::pair<int32_t, int32_t>, double> cell;  // pattern, rank
  std::map<int32_t, double> per_pattern;
  std::map<std::pair<int32_t, int32_t>, double> per_cp;  // pattern, call path
  double peak = 0;
  for (const auto& [key, v] : r.severity) {
    const auto [p, cp, rank] = key;
    if (p < first || p == int32_t(WaitPattern::kCollective) ||
        p == int32_t(WaitPattern::kSynchronization))
      continue;
    peak = std::max(peak, cell[{p, rank}] += v);
    per_pattern[p] += v;
    per_cp[{p, cp}] += v;
  }
  out << "<h2>Analysis</h2>\n<p class=\"note\">Wait states found by <code>tracefold "
         "analyze</code> in the recorded timeline (docs/analyze.md): seconds lost per pattern "
         "and rank, run time "
      << time_text(r.run_seconds * 1e9) << ".</p>\n";
  for (const std::string& n : r.notes) out << "<p class=\"note\">" << xml_escape(n) << "</p>\n";
  if (per_pattern.empty()) {
    out << "<p>No wait states found.</p>\n";
    return;
  }
  out << "<table id=\"waits-heatmap\">\n<thead><tr><th>pattern</th><th>total</th>";
  for (int32_t rank = 0; rank < r.location_count(); ++rank)
    out << "<th>" << xml_escape(r.location_name(rank)) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& [p, total] : per_pattern) {
    out << "<tr><td>" << xml_escape(r.patterns[std::size_t(p)].name) << "</td><td class=\"num\">"
        << time_text(total * 1e9) << "</td>";
    for (int32_t rank = 0; rank < r.location_count(); ++rank) {
      auto it = cell.find({p, rank});
      const double v = it == cell.end() ? 0 : it->second;
      out << "<td class=\"num\" style=\"background:" << heat_colour(peak > 0 ? v / peak : 0)
          << "\" title=\"" << xml_escape(time_text(v * 1e9)) << "\">"
          << (v > 0 ? time_text(v * 1e9) : "") << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";

  std::vector<std::pair<std::pair<int32_t, int32_t>, double>> bars(per_cp.begin(), per_cp.end());
  std::stable_sort(bars.begin(), bars.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (bars.size() > 15) bars.resize(15);
  const double top = bars.front().second;
  out << "<h3>Call paths that waited most</h3>\n<table id=\"waits-callpaths\">\n"
         "<thead><tr><th>pattern</th><th>call path</th><th>seconds</th><th></th></tr></thead>\n"
         "<tbody>\n";
  for (const auto& [key, v] : bars) {
    std::ostringstream width;
    width << std::fixed << std::setprecision(1) << (top > 0 ? 300.0 * v / top : 0);
    out << "<tr><td>" << xml_escape(r.patterns[std::size_t(key.first)].name)
        << "</td><td class=\"site\">" << xml_escape(r.callpaths[std::size_t(key.second)].label)
        << "</td><td class=\"num\">" << time_text(v * 1e9)
        << "</td><td><div style=\"background:#b03030;height:10px;width:" << width.str()
        << "px\"></div></td></tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

}  // namespace tracefold
