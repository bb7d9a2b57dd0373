// One self-contained HTML page about a trace: no network, no external files.
#include <algorithm>
#include <iomanip>
#include <map>
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
tr.more { display: none; }
table.open tr.more { display: table-row; }
button.more { margin-top: 6px; font-size: 13px; }
.bar { display: inline-block; height: 10px; background: #c0504d; vertical-align: middle; }
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
// "Show all": unfold the rows a long table keeps folded away.
document.querySelectorAll('button.more').forEach(function (b) {
  b.addEventListener('click', function () {
    var t = document.getElementById(b.dataset.table);
    var open = t.classList.toggle('open');
    b.textContent = open ? b.dataset.less : b.dataset.label;
  });
});
)JS";

std::string num_cell(double v, const std::string& text) {
  std::ostringstream ss;
  ss << "<td class=\"num\" data-v=\"" << std::setprecision(17) << v << "\">" << xml_escape(text)
     << "</td>";
  return ss.str();
}

// Rows past the first `shown` of a table are folded away behind a button.
constexpr std::size_t kShownRows = 15;

void more_button(std::ostream& out, const std::string& table, std::size_t hidden,
                 const std::string& what) {
  if (hidden == 0) return;
  const std::string label = "Show " + std::to_string(hidden) + " more " + what;
  out << "<button class=\"more\" data-table=\"" << table << "\" data-label=\"" << label
      << "\" data-less=\"Show fewer\">" << label << "</button>\n";
}

// With threads, the locations of a call-site row as people read them:
// `thread 0: 0–3; thread 1: 0,2`.
std::string human_locations(const Trace& trace, const Ranklist& locations) {
  std::vector<std::vector<int32_t>> per_thread(static_cast<std::size_t>(trace.threads));
  locations.for_each([&](int32_t l) {
    if (trace.thread_of(l) < trace.threads)
      per_thread[static_cast<std::size_t>(trace.thread_of(l))].push_back(trace.rank_of(l));
  });
  std::string out;
  for (std::size_t t = 0; t < per_thread.size(); ++t)
    if (!per_thread[t].empty())
      out += (out.empty() ? "thread " : "; thread ") + std::to_string(t) + ": " +
             human_ranks(per_thread[t]);
  return out;
}

std::string share_cell(double share) {
  std::ostringstream sh;
  sh << std::fixed << std::setprecision(1) << share << "%";
  std::ostringstream o;
  o << "<td class=\"num\" data-v=\"" << share << "\">" << sh.str()
    << " <span class=\"bar\" style=\"width:" << std::max(1, int(share)) << "px\"></span></td>";
  return o.str();
}

}  // namespace

// report_analysis.cpp
void write_report_analysis(std::ostream& out, const WaitReport& report);
// report_diagnosis.cpp
void write_report_diagnosis(std::ostream& out, const DiagnoseReport& report);
// report_patterns.cpp
void write_report_patterns(std::ostream& out, const PatternsReport& report);

void write_report_html(std::ostream& out, const Trace& trace, const std::string& label,
                       const TraceTimeline& recorded_or_not, const WaitReport* analysis,
                       const DiagnoseReport* diagnosis, const PatternsReport* patterns) {
  auto rows = compute_stats(trace);
  // Busiest first: the table shows the top and folds the rest away.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.time.sum() > b.time.sum(); });
  const auto& timeline = recorded_or_not.ranks;
  const bool threads = trace.threads > 1;
  // A histogram's min and max name a location, `R.T` with threads (as
  // `tracefold stats` and `analyze` write it).
  const auto where = [&](int32_t l) {
    return threads ? std::to_string(trace.rank_of(l)) + "." + std::to_string(trace.thread_of(l))
                   : std::to_string(l);
  };
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
  if (threads) {
    out << "<p class=\"note\">Several threads of a rank called MPI: the per-rank chart has one bar "
           "per (rank, thread) location, <code>rank.thread</code>, and the call-site table names "
           "locations; messages and pairs are by rank.";
    if (analysis)
      out << " The findings of <code>tracefold diagnose</code> are left out: it takes traces of "
             "one thread per rank.";
    out << "</p>\n";
  }

  out << "<h2>Summary</h2>\n<table id=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    out << "<tr><td>" << xml_escape(k) << "</td><td>" << xml_escape(v) << "</td></tr>\n";
  };
  row("trace", label);
  row("ranks", std::to_string(trace.world_size));
  if (threads)
    row("threads calling MPI", std::to_string(timeline.size()) +
                                   " (rank, thread) locations, up to " +
                                   std::to_string(trace.threads) + " a rank");
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

  if (diagnosis) write_report_diagnosis(out, *diagnosis);

  // Time by operation: where the time in MPI goes, before the details.
  std::map<std::string, std::pair<uint64_t, int64_t>> by_op;
  for (const auto& r : rows) {
    auto& o = by_op[r.op];
    o.first += r.calls;
    o.second += r.time.sum();
  }
  std::vector<std::pair<std::string, std::pair<uint64_t, int64_t>>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& x, const auto& y) { return x.second.second > y.second.second; });
  out << "<h2>Time by operation</h2>\n<table id=\"by-op\" class=\"sortable\">\n<thead><tr>"
         "<th>operation</th><th>calls</th><th>total time</th><th>share of MPI time</th></tr>"
         "</thead>\n<tbody>\n";
  for (const auto& [op, v] : ops) {
    const double share = time_in_calls ? 100.0 * double(v.second) / double(time_in_calls) : 0.0;
    out << "<tr><td>" << xml_escape(op) << "</td>"
        << num_cell(double(v.first), std::to_string(v.first))
        << num_cell(double(v.second), time_text(double(v.second))) << share_cell(share)
        << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
  if (patterns) write_report_patterns(out, *patterns);

  out << "<h2>Communication</h2>\n<div class=\"charts\">\n<div id=\"matrix\">\n";
  write_matrix_svg(out, matrix, "Point-to-point bytes, sender \u2192 receiver");
  out << "</div>\n<div id=\"ranks\">\n";
  write_ranks_svg(out, timeline,
                  threads ? "Time per (rank, thread): computation vs MPI"
                          : "Time per rank: computation vs MPI");
  out << "</div>\n</div>\n";

  out << "<h2>Call sites</h2>\n<p class=\"note\">The busiest " << std::min(kShownRows, rows.size())
      << " of " << rows.size()
      << " call sites by total time.</p>\n<table id=\"callsites\" "
         "class=\"sortable\">\n<thead><tr><th>operation</th>"
         "<th>call site</th><th>"
      << (threads ? "locations" : "ranks")
      << "</th><th>calls</th><th>bytes</th><th>total "
         "time</th><th>mean</th>"
      << (threads ? "<th>min@rank.thread</th><th>max@rank.thread</th>"
                  : "<th>min@rank</th><th>max@rank</th>")
      << "<th>share</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double share = time_in_calls ? 100.0 * double(r.time.sum()) / double(time_in_calls) : 0.0;
    out << (i < kShownRows ? "<tr>" : "<tr class=\"more\">") << "<td>" << xml_escape(r.op)
        << "</td><td class=\"site\">" << xml_escape(r.site) << "</td><td>"
        << xml_escape(threads ? human_locations(trace, r.ranks) : human_ranks(r.ranks)) << "</td>"
        << num_cell(double(r.calls), std::to_string(r.calls))
        << num_cell(double(r.bytes), std::to_string(r.bytes))
        << num_cell(double(r.time.sum()), r.time.empty() ? "-" : time_text(double(r.time.sum())));
    if (r.time.empty()) {
      out << num_cell(0, "-") << num_cell(0, "-") << num_cell(0, "-");
    } else {
      out << num_cell(r.time.mean(), time_text(r.time.mean()))
          << num_cell(double(r.time.min()),
                      time_text(double(r.time.min())) + "@" + where(r.time.min_rank()))
          << num_cell(double(r.time.max()),
                      time_text(double(r.time.max())) + "@" + where(r.time.max_rank()));
    }
    out << share_cell(share) << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
  more_button(out, "callsites", rows.size() > kShownRows ? rows.size() - kShownRows : 0,
              "call sites");

  out << "<h2>Messages per rank pair</h2>\n<table id=\"pairs\" "
         "class=\"sortable\">\n<thead><tr><th>sender</th>"
         "<th>receiver</th><th>messages</th><th>bytes</th></tr></thead>\n<tbody>\n";
  std::vector<std::pair<int32_t, int32_t>> busy;
  for (int32_t s = 0; s < matrix.size; ++s)
    for (int32_t r = 0; r < matrix.size; ++r)
      if (matrix.msgs(s, r)) busy.emplace_back(s, r);
  std::stable_sort(busy.begin(), busy.end(), [&](const auto& x, const auto& y) {
    return matrix.byte(x.first, x.second) > matrix.byte(y.first, y.second);
  });
  for (std::size_t i = 0; i < busy.size(); ++i) {
    const auto [s, r] = busy[i];
    out << (i < kShownRows ? "<tr>" : "<tr class=\"more\">") << num_cell(s, std::to_string(s))
        << num_cell(r, std::to_string(r))
        << num_cell(double(matrix.msgs(s, r)), std::to_string(matrix.msgs(s, r)))
        << num_cell(double(matrix.byte(s, r)), std::to_string(matrix.byte(s, r))) << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
  more_button(out, "pairs", busy.size() > kShownRows ? busy.size() - kShownRows : 0, "rank pairs");
  if (analysis) write_report_analysis(out, *analysis);
  out << "<p class=\"note\">Generated by tracefold 0.1.0. Click a column header to sort.</p>\n";
  out << "<script>" << kScript << "</script>\n</body>\n</html>\n";
}

}  // namespace tracefold
