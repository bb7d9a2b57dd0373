// The "Communication patterns" section of the HTML report: the global
// patterns of `tracefold patterns` (docs/patterns.md), each named with its
// fit and drawn as ranks on its grid (or a circle) with one instance's
// edges. Only the report's data is read here, so that export does not
// depend on the patterns library.
#include "tracefold/report_patterns.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numbers>
#include <sstream>

#include "export_util.hpp"
#include "tracefold/export.hpp"

namespace tracefold {

std::vector<int32_t> parse_grid(const std::string& text) {
  std::vector<int32_t> sides;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t x = std::min(text.find('x', at), text.size());
    const std::string part = text.substr(at, x - at);
    if (part.empty() || part.size() > 9 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return {};
    const int32_t v = std::stoi(part);
    if (v <= 0) return {};
    sides.push_back(v);
    at = x + 1;
  }
  return sides;
}

std::vector<RankPoint> rank_layout(int32_t ranks, const std::vector<int32_t>& grid, double size) {
  std::vector<RankPoint> at(static_cast<std::size_t>(std::max(ranks, 0)));
  if (ranks <= 0) return at;
  int64_t product = 1;
  for (int32_t s : grid) product *= s;
  if (!grid.empty() && grid.size() <= 3 && product == ranks) {
    // Columns and rows of cells; a 3-D grid's planes (its first side) go
    // side by side, one empty column between them.
    const int32_t planes = grid.size() == 3 ? grid[0] : 1;
    const int32_t rows = grid.size() == 1 ? 1 : grid[grid.size() - 2];
    const int32_t cols = grid.back();
    const int32_t width = planes * cols + (planes - 1);
    const double step = size / double(std::max(width, rows));
    const double left = (size - step * width) / 2, top = (size - step * rows) / 2;
    for (int32_t r = 0; r < ranks; ++r) {
      const int32_t col = r % cols, row = (r / cols) % rows, plane = r / (cols * rows);
      at[std::size_t(r)] = {left + step * (plane * (cols + 1) + col + 0.5),
                            top + step * (row + 0.5)};
    }
    return at;
  }
  const double c = size / 2, radius = ranks == 1 ? 0 : size / 2 - size / 12;
  for (int32_t r = 0; r < ranks; ++r) {
    const double a = 2 * std::numbers::pi * r / ranks;
    at[std::size_t(r)] = {c + radius * std::sin(a), c - radius * std::cos(a)};
  }
  return at;
}

namespace {

constexpr std::size_t kShown = 10;    // patterns shown before "Show more"
constexpr std::size_t kArrows = 256;  // arrows drawn per picture at most
constexpr int32_t kMaxDots = 1024;    // larger runs get no picture
constexpr double kSize = 180;

std::string num(double v) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << v;
  return o.str();
}

// Ranks as dots (the pattern's dark), one instance's edges as arrows.
void picture(std::ostream& out, const ReportPattern& p, int32_t world, std::size_t index) {
  if (world > kMaxDots) {
    out << "<span class=\"note\">no picture: more than " << kMaxDots << " ranks</span>";
    return;
  }
  const std::vector<RankPoint> at = rank_layout(world, p.grid, kSize);
  double step = kSize;  // distance to the nearest other dot, for the dot size
  if (world > 1) step = std::hypot(at[0].x - at[1].x, at[0].y - at[1].y);
  const double dot = std::clamp(step * 0.18, 1.5, 7.0);
  const std::string marker = "pat-arrow-" + std::to_string(index);
  out << "<svg class=\"pattern-picture\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kSize
      << "\" height=\"" << kSize << "\" viewBox=\"0 0 " << kSize << " " << kSize
      << "\"><defs><marker id=\"" << marker
      << "\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" "
         "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#1f4e9c\"/></marker></defs>\n";
  const std::size_t drawn = std::min(p.edges.size(), kArrows);
  for (std::size_t e = 0; e < drawn; ++e) {
    const auto [from, to] = p.edges[e];
    if (from < 0 || to < 0 || from >= world || to >= world || from == to) continue;
    const RankPoint a = at[std::size_t(from)], b = at[std::size_t(to)];
    const double dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
    if (len <= 2 * dot) continue;
    // Both directions of a pair are drawn side by side, not on one line.
    const double ux = dx / len, uy = dy / len, off = std::min(2.0, dot / 2);
    const double sx = a.x + ux * dot - uy * off, sy = a.y + uy * dot + ux * off;
    const double ex = b.x - ux * dot - uy * off, ey = b.y - uy * dot + ux * off;
    out << "<line class=\"edge\" x1=\"" << num(sx) << "\" y1=\"" << num(sy) << "\" x2=\"" << num(ex)
        << "\" y2=\"" << num(ey) << "\" stroke=\"#1f4e9c\" stroke-width=\"0.8\" marker-end=\"url(#"
        << marker << ")\"/>";
  }
  out << "\n";
  for (int32_t r = 0; r < world; ++r) {
    const RankPoint c = at[std::size_t(r)];
    out << "<circle class=\"rank\" data-rank=\"" << r << "\" cx=\"" << num(c.x) << "\" cy=\""
        << num(c.y) << "\" r=\"" << num(dot) << "\" fill=\""
        << (p.ranks.contains(r) ? "#333" : "#ccc") << "\"><title>rank " << r << "</title></circle>";
    if (world <= 36)
      out << "<text x=\"" << num(c.x + dot + 1) << "\" y=\"" << num(c.y - dot)
          << "\" font-size=\"9\" fill=\"#666\">" << r << "</text>";
  }
  out << "\n</svg>";
  if (p.edges.size() > drawn)
    out << "<br><span class=\"note capped\">" << drawn << " of " << p.edges.size()
        << " edges drawn</span>";
}

std::string params_text(const ReportPattern& p) {
  std::string s;
  for (const auto& [k, v] : p.params) s += (s.empty() ? "" : "; ") + k + " " + v;
  return s;
}

}  // namespace

void write_report_patterns(std::ostream& out, const PatternsReport& r) {
  out << "<h2>Communication patterns</h2>\n<p class=\"note\">Repeated "
         "exchanges found by <code>tracefold patterns</code> with its default options "
         "(docs/patterns.md), named by their shape; most bytes first. Each picture shows the "
         "ranks (those in the pattern dark) and the edges of one instance; the time share is that "
         "of "
         "the point-to-point calls in its functions.</p>\n";
  const bool threads = r.threads > 1;
  if (threads && r.error.empty())
    out << "<p class=\"note\">This trace has " << r.threads
        << " threads per rank calling MPI. As <code>tracefold patterns</code> does, the threads "
           "of one index on every rank (a thread class: the main threads, the second threads, "
           "...) are analysed alone, as one thread per rank; the thread column names each "
           "pattern's class.</p>\n";
  if (!r.error.empty()) {
    out << "<p id=\"patterns\" class=\"note\">The pattern analysis failed: " << xml_escape(r.error)
        << "</p>\n";
    return;
  }
  if (r.patterns.empty()) {
    out << "<p id=\"patterns\">No communication patterns found: no "
        << (threads ? "thread of a rank" : "rank") << " repeats a sequence of messages.</p>\n";
    return;
  }
  out << "<table id=\"patterns\">\n<thead><tr><th>#</th>"
      << (threads ? "<th title=\"the thread class: the threads of this index on every "
                    "rank\">thread</th>"
                  : "")
      << "<th>pattern</th><th>context</th>"
         "<th>ranks</th><th>occurrences</th><th>messages</th><th>bytes per message</th>"
         "<th title=\"time in the point-to-point calls of its functions, from the trace's "
         "histograms\">share of MPI time</th><th>picture</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < r.patterns.size(); ++i) {
    const ReportPattern& p = r.patterns[i];
    out << "<tr class=\"pattern" << (i < kShown ? "" : " more") << "\"><td>" << i + 1 << "</td>";
    if (threads) out << "<td class=\"num pattern-thread\">" << p.thread << "</td>";
    out << "<td><b class=\"pattern-title\">" << xml_escape(p.title) << "</b>";
    const std::string params = params_text(p);
    if (!params.empty()) out << "<br><span class=\"params\">" << xml_escape(params) << "</span>";
    if (p.classified)
      out << "<br><span class=\"note\">quality " << int(p.quality * 100 + 0.5) << " % ("
          << p.matched << " of " << p.total_edges << " edges)</span>";
    out << "</td><td class=\"site\">";
    for (std::size_t k = 0; k < p.contexts.size(); ++k)
      out << (k ? "<br>" : "") << xml_escape(p.contexts[k]);
    for (const std::string& s : p.sites)
      out << "<br><span class=\"note\" style=\"white-space:nowrap\">" << xml_escape(s) << "</span>";
    out << "</td><td class=\"pattern-ranks\">" << xml_escape(human_ranks(p.ranks))
        << "</td><td class=\"num\">" << p.occurrences << "</td><td class=\"num\">" << p.messages
        << "</td><td class=\"num\">"
        << (p.messages ? bytes_text(p.bytes / p.messages) : std::string("-")) << "</td>"
        << "<td class=\"num\">" << (p.time_share ? num(*p.time_share) + " %" : "-") << "</td><td>";
    picture(out, p, r.world_size, i);
    out << "</td></tr>\n";
  }
  out << "</tbody>\n</table>\n";
  if (r.patterns.size() > kShown) {
    const std::string label =
        "Show " + std::to_string(r.patterns.size() - kShown) + " more patterns";
    out << "<button class=\"more\" data-table=\"patterns\" data-label=\"" << label
        << "\" data-less=\"Show fewer\">" << label << "</button>\n";
  }
}

}  // namespace tracefold
