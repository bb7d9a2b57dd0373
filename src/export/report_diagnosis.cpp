// The "Findings" section of the HTML report: the diagnoses of `tracefold
// diagnose` (tracefold/diagnose.hpp) with per-diagnosis bars, and a ranks x
// time picture coloured by semantic label, phases marked; choosing a
// diagnosis shows its symptom and cause in colour and everything else in
// grey (seed 002, Figure 10). Only the report's data is read here, so that
// export does not depend on the analysis library.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "export_util.hpp"
#include "tracefold/diagnose.hpp"
#include "tracefold/export.hpp"

namespace tracefold {

namespace {

const char* const kLabelColour[] = {"#9db8d9", "#f0a030", "#5cb85c", "#d9534f"};
const char* const kNoTime = "#ffffff";
const char* const kGrey = "#e4e4e4";
const char* const kSymptom = "#d62728";
const char* const kCause = "#1f4e9c";

constexpr int kBinPx = 2;
constexpr int kLeft = 60;

std::string fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

// One layer of the picture: rows of runs of equal colour.
template <class Colour>
void layer(std::ostream& out, const DiagnosePicture& p, int row_h, const std::string& view,
           bool shown, Colour colour) {
  out << "<g class=\"view\" data-view=\"" << view << "\""
      << (shown ? "" : " style=\"display:none\"") << ">\n";
  for (int32_t row = 0; row < p.rows; ++row) {
    for (int32_t b = 0; b < p.bins;) {
      const std::size_t at = std::size_t(row) * std::size_t(p.bins);
      const std::string c = colour(at + std::size_t(b));
      int32_t e = b + 1;
      while (e < p.bins && colour(at + std::size_t(e)) == c) ++e;
      if (c != kNoTime)
        out << "<rect x=\"" << kLeft + b * kBinPx << "\" y=\"" << row * row_h << "\" width=\""
            << (e - b) * kBinPx << "\" height=\"" << row_h << "\" fill=\"" << c << "\"/>";
      b = e;
    }
    out << "\n";
  }
  out << "</g>\n";
}

void picture(std::ostream& out, const DiagnoseReport& r) {
  const DiagnosePicture& p = r.picture;
  if (p.rows == 0 || p.bins == 0) return;
  const int row_h = std::clamp(360 / p.rows, 3, 16);
  const int width = kLeft + p.bins * kBinPx + 10, height = p.rows * row_h + 34;
  out << "<div id=\"diag-picture\">\n<p class=\"note\">Ranks &times; time, from MPI_Init's end to "
         "MPI_Finalize ("
      << time_text(r.run_seconds * 1e9) << "); each cell shows what took most of "
      << time_text(double(p.bin_ns)) << (p.ranks_per_row > 1 ? " of a block of ranks" : "")
      << ". Dashed lines end phase instances. View: <label><input type=\"radio\" "
         "name=\"diag-view\" "
         "value=\"labels\" checked> time by label</label>";
  for (std::size_t d = 0; d < p.marks.size(); ++d)
    out << " <label><input type=\"radio\" name=\"diag-view\" value=\"d" << d << "\"> #" << d + 1
        << " " << xml_escape(diagnosis_name(r.diagnoses[d].kind)) << "</label>";
  out << "</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
      << height << "\" font-size=\"11\">\n";
  layer(out, p, row_h, "labels", true, [&](std::size_t cell) -> std::string {
    const uint8_t l = p.label[cell];
    return l == DiagnosePicture::kNone ? kNoTime : kLabelColour[l];
  });
  for (std::size_t d = 0; d < p.marks.size(); ++d)
    layer(out, p, row_h, "d" + std::to_string(d), false, [&](std::size_t cell) -> std::string {
      if (p.marks[d][cell] == 2) return kCause;
      if (p.marks[d][cell] == 1) return kSymptom;
      return p.label[cell] == DiagnosePicture::kNone ? kNoTime : kGrey;
    });
  const int bottom = p.rows * row_h;
  for (int64_t t : p.phase_ends) {
    const int x = kLeft + int(t / p.bin_ns) * kBinPx;
    out << "<line x1=\"" << x << "\" y1=\"0\" x2=\"" << x << "\" y2=\"" << bottom
        << "\" stroke=\"#333\" stroke-width=\"0.5\" stroke-dasharray=\"2,2\"/>";
  }
  // Rank labels: a few, so they stay readable.
  const int32_t every = std::max(1, 14 / row_h + 1);
  for (int32_t row = 0; row < p.rows; row += every) {
    const int32_t first = p.row_first[std::size_t(row)];
    const int32_t last = std::min(first + p.ranks_per_row, r.world_size) - 1;
    out << "<text x=\"" << kLeft - 4 << "\" y=\"" << row * row_h + row_h - 1
        << "\" text-anchor=\"end\">"
        << (first == last ? std::to_string(first)
                          : std::to_string(first) + "\u2013" + std::to_string(last))
        << "</text>";
  }
  // Legend.
  int x = kLeft;
  auto key = [&](const char* colour, const std::string& text, const char* view) {
    out << "<g class=\"legend\" data-view=\"" << view << "\"><rect x=\"" << x << "\" y=\""
        << bottom + 12 << "\" width=\"10\" height=\"10\" fill=\"" << colour << "\"/><text x=\""
        << x + 14 << "\" y=\"" << bottom + 21 << "\">" << xml_escape(text) << "</text></g>";
    x += 26 + int(text.size()) * 7;
  };
  for (int l = 0; l < static_cast<int>(TimeLabel::kCount); ++l)
    key(kLabelColour[l], label_name(static_cast<TimeLabel>(l)), "labels");
  key(kSymptom, "symptom", "marks");
  key(kCause, "cause", "marks");
  key(kGrey, "everything else", "marks");
  out << "</svg>\n</div>\n";
  out << "<script>\n(function () {\n"
         "  function show(v) {\n"
         "    document.querySelectorAll('#diag-picture g.view').forEach(function (g) {\n"
         "      g.style.display = g.dataset.view === v ? '' : 'none'; });\n"
         "  }\n"
         "  document.querySelectorAll('input[name=diag-view]').forEach(function (i) {\n"
         "    i.addEventListener('change', function () { show(i.value); }); });\n"
         "})();\n</script>\n";
}

}  // namespace

void write_report_diagnosis(std::ostream& out, const DiagnoseReport& r) {
  out << "<h2>Findings</h2>\n<p class=\"note\">Scalability losses found by <code>tracefold "
         "diagnose</code> in the recorded timeline (docs/diagnose.md); severity is the time the "
         "run "
         "could save, per rank.</p>\n";
  if (r.diagnoses.empty()) {
    out << "<p id=\"diagnoses\">No diagnosis above 1 % of the run time.</p>\n";
  } else {
    out << "<table id=\"diagnoses\">\n<thead><tr><th>#</th><th>diagnosis</th><th>severity</th>"
           "<th>share of the run</th><th>symptom</th><th>cause</th><th>remedy</th></tr></thead>\n"
           "<tbody>\n";
    for (std::size_t i = 0; i < r.diagnoses.size(); ++i) {
      const Diagnosis& d = r.diagnoses[i];
      out << "<tr class=\"diagnosis\" data-kind=\"" << diagnosis_id(d.kind) << "\"><td>" << i + 1
          << "</td><td>" << xml_escape(diagnosis_name(d.kind));
      if (d.phase >= 0) out << " (phase #" << d.phase << ")";
      out << "</td><td class=\"num\">" << time_text(d.seconds * 1e9) << "</td><td class=\"num\">"
          << fixed(d.percent, 1)
          << " % <span class=\"bar\" style=\"width:" << std::max(1, int(d.percent * 2))
          << "px\"></span></td><td class=\"site\">" << xml_escape(d.symptom.label)
          << "</td><td class=\"site\">";
      for (std::size_t k = 0; k < d.causes.size(); ++k) {
        const CodePlace& c = d.causes[k];
        out << (k ? "<br>" : "") << xml_escape(c.label);
        if (c.rank >= 0 && d.kind != DiagnosisKind::kWaitForPartner) out << " on rank " << c.rank;
        out << " (" << time_text(c.seconds * 1e9) << ")";
      }
      out << "</td><td>" << xml_escape(diagnosis_remedy(d.kind)) << "<br><span class=\"note\">"
          << xml_escape(d.detail) << "</span></td></tr>\n";
    }
    out << "</tbody>\n</table>\n";
  }
  picture(out, r);
  if (r.phases.size() > 1 || !r.phases.empty()) {
    out << "<p class=\"note\">Phases: ";
    for (std::size_t p = 0; p < r.phases.size(); ++p) {
      const Phase& ph = r.phases[p];
      out << (p ? "; " : "") << "#" << p << " "
          << (ph.closing.empty()
                  ? "to MPI_Finalize"
                  : std::to_string(ph.instances) + "&times; closed by " + xml_escape(ph.closing));
      if (ph.groups.size() > 1) {
        out << " (rank groups";
        for (const auto& g : ph.groups) out << " " << xml_escape(human_ranks(g));
        out << ")";
      }
      // The per-phase summary: the phase's share, and what its diagnoses
      // could save, both as shares of the run.
      for (const PhaseSummary& s : r.summary) {
        if (s.phase != static_cast<int32_t>(p)) continue;
        out << ": " << fixed(s.share * 100, 1) << " % of the run";
        if (!s.diagnoses.empty())
          out << ", could save <span class=\"could-save\">" << fixed(s.could_save * 100, 1)
              << " %</span>";
      }
    }
    out << ".</p>\n";
  }
  for (const std::string& n : r.notes) out << "<p class=\"note\">" << xml_escape(n) << "</p>\n";
}

}  // namespace tracefold
