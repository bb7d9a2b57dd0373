// One self-contained HTML page about a trace: no network, no external files.
#include <iomanip>
#include <sstream>

#include "export_util.hpp"
#include "tracefold/analysis_basic.hpp"
#include "tracefold/export.hpp"

namespace tracefold {

namespace {

const char* const kStyle = R"CSS(
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
.note { color: #666; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; }
th { background: #f0f0f0; cursor: pointer; user-select: none; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.site { font-family: monospace; font-size: 12px; max-width: 420px; overflow-wrap: anywhere; }
#summary td:first-child { font-weight: bold; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
)CSS";

// Click a column header to sort by it (numbers by data-v).
const char* const kScript = R"JS(
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var asc = th.dataset.order !== 'asc';
    th.dataset.order = asc ? 'asc' : 'desc';
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col];
      var vx = x.dataset.v !== undefined ? parseFloat(x.dataset.v) : x.textContent;
      var vy = y.dataset.v !== undefined ? parseFloat(y.dataset.v) : y.textContent;
      return (vx < vy ? -1 : vx > vy ? 1 : 0) * (asc ? 1 : -1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
)JS";

std::string num_cell(double v, const std::string& text) {
  std::ostringstream ss;
  ss << "<td class=\"num\" data-v=\"" << std::setprecision(17) << v << "\">" << xml_escape(text)
     << "</td>";
  return ss.str();
}

}  // namespace

// report_analysis.cpp
void write_report_analysis(std::ostream& out, const WaitReport& report);

void write_report_html(std::ostream& out, const Trace& trace, const std::string& label,
                       const TraceTimeline& recorded_or_not, const WaitReport* analysis) {
  const auto rows = compute_stats(trace);
  const auto& timeline = recorded_or_not.ranks;
  const char* kind = recorded_or_not.recorded ? "recorded" : "synthesized";
  const MatchResult match = match_messages(trace.comms, timeline);
  const CommMatrix matrix = comm_matrix(trace);
  uint64_t calls = 0, bytes = 0, events = 0;
  int64_t time_in_calls = 0, compute = 0, span = 0;
  for (const auto& r : rows) {
    calls += r.calls;
    bytes += r.bytes;
    time_in_calls += r.time.sum();
  }
  for (const auto& tl : timeline) {
    events += tl.events.size();
    compute += tl.compute_ns;
    span = std::max(span, tl.end_ns);
  }
  uint64_t p2p_msgs = 0, p2p_bytes = 0, pairs = 0;
  for (std::size_t k = 0; k < matrix.messages.size(); ++k) {
    p2p_msgs += matrix.messages[k];
    p2p_bytes += matrix.bytes[k];
    pairs += matrix.messages[k] ? 1 : 0;
  }

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tracefold "
         "report: "
      << xml_escape(label) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  out << "<h1>tracefold report</h1>\n<p class=\"note\">" << xml_escape(label)
      << (recorded_or_not.recorded
              ? " &mdash; the per-rank chart and the totals come from the recorded timeline (every "
                "call's enter and exit time); the call-site table shows the folded trace's "
                "means.</p>\n"
              : " &mdash; times are means recorded per call site and call path; the per-rank chart "
                "and "
                "the totals come from a timeline synthesized from those means.</p>\n");

  out << "<h2>Summary</h2>\n<table id=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    out << "<tr><td>" << xml_escape(k) << "</td><td>" << xml_escape(v) << "</td></tr>\n";
  };
  row("trace", label);
  row("ranks", std::to_string(trace.world_size));
  row("nodes / call sites",
      std::to_string(trace.nodes.size()) + " / " + std::to_string(trace.sites.size()));
  row("lossless", trace.lossy.empty() ? "yes" : "no (" + trace.lossy + ")");
  row("MPI calls", std::to_string(calls));
  row("bytes in calls", std::to_string(bytes) + " (" + bytes_text(bytes) + ")");
  row("point-to-point messages", std::to_string(p2p_msgs) + " (" + bytes_text(p2p_bytes) + ", " +
                                     std::to_string(pairs) + " rank pairs)");
  row("matched send/receive pairs", std::to_string(match.messages.size()) + " (unmatched: " +
                                        std::to_string(match.unmatched_sends) + " sends, " +
                                        std::to_string(match.unmatched_recvs) + " receives)");
  row("time in MPI calls (all ranks)", time_text(double(time_in_calls)));
  row(std::string("computation (all ranks, ") + kind + ")", time_text(double(compute)));
  row(std::string(kind) + " run length", time_text(double(span)));
  out << "</table>\n";

  out << "<h2>Call sites</h2>\n<table id=\"callsites\" "
         "class=\"sortable\">\n<thead><tr><th>operation</th>"
         "<th>call site</th><th>ranks</th><th>calls</th><th>bytes</th><th>total "
         "time</th><th>mean</th>"
         "<th>min@rank</th><th>max@rank</th><th>share</th></tr></thead>\n<tbody>\n";
  for (const auto& r : rows) {
    const double share = time_in_calls ? 100.0 * double(r.time.sum()) / double(time_in_calls) : 0.0;
    std::ostringstream sh;
    sh << std::fixed << std::setprecision(1) << share << "%";
    out << "<tr><td>" << xml_escape(r.op) << "</td><td class=\"site\">" << xml_escape(r.site)
        << "</td><td>" << xml_escape(r.ranks.to_string()) << "</td>"
        << num_cell(double(r.calls), std::to_string(r.calls))
        << num_cell(double(r.bytes), std::to_string(r.bytes))
        << num_cell(double(r.time.sum()), r.time.empty() ? "-" : time_text(double(r.time.sum())));
    if (r.time.empty()) {
      out << num_cell(0, "-") << num_cell(0, "-") << num_cell(0, "-");
    } else {
      out << num_cell(r.time.mean(), time_text(r.time.mean()))
          << num_cell(double(r.time.min()),
                      time_text(double(r.time.min())) + "@" + std::to_string(r.time.min_rank()))
          << num_cell(double(r.time.max()),
                      time_text(double(r.time.max())) + "@" + std::to_string(r.time.max_rank()));
    }
    out << num_cell(share, sh.str()) << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";

  out << "<h2>Communication</h2>\n<div class=\"charts\">\n<div id=\"matrix\">\n";
  write_matrix_svg(out, matrix, "Point-to-point bytes, sender \u2192 receiver");
  out << "</div>\n<div id=\"ranks\">\n";
  write_ranks_svg(out, timeline, "Time per rank: computation vs MPI");
  out << "</div>\n</div>\n";

  out << "<h2>Messages per rank pair</h2>\n<table id=\"pairs\" "
         "class=\"sortable\">\n<thead><tr><th>sender</th>"
         "<th>receiver</th><th>messages</th><th>bytes</th></tr></thead>\n<tbody>\n";
  for (int32_t s = 0; s < matrix.size; ++s)
    for (int32_t r = 0; r < matrix.size; ++r)
      if (matrix.msgs(s, r))
        out << "<tr>" << num_cell(s, std::to_string(s)) << num_cell(r, std::to_string(r))
            << num_cell(double(matrix.msgs(s, r)), std::to_string(matrix.msgs(s, r)))
            << num_cell(double(matrix.byte(s, r)), std::to_string(matrix.byte(s, r))) << "</tr>\n";
  out << "</tbody>\n</table>\n";
  if (analysis) write_report_analysis(out, *analysis);
  out << "<p class=\"note\">Generated by tracefold 0.1.0. Click a column header to sort.</p>\n";
  out << "<script>" << kScript << "</script>\n</body>\n</html>\n";
}

}  // namespace tracefold
