// The diagnosis as text (for people) and JSON (for tools and the report).
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "internal.hpp"
#include "tracefold/export.hpp"

namespace tracefold {

namespace {

std::string secs(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(s < 0.01 ? 6 : 3) << s << " s";
  return o.str();
}

std::string pct(double p) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << p << " %";
  return o.str();
}

nlohmann::json place_json(const CodePlace& p) {
  nlohmann::json j{{"label", p.label}, {"stack", p.stack}, {"seconds", p.seconds}};
  if (p.rank >= 0) j["rank"] = p.rank;
  if (!p.where.empty()) j["where"] = p.where;
  return j;
}

}  // namespace

void write_diagnose_text(std::ostream& out, const DiagnoseReport& rep) {
  out << "Diagnosis of " << rep.world_size << " ranks, " << secs(rep.run_seconds)
      << " from MPI_Init's end to MPI_Finalize";
  if (rep.period_ns > 0)
    out << ", " << rep.samples << " samples every " << double(rep.period_ns) * 1e-6 << " ms";
  else
    out << ", no samples (causes are named by MPI call site; record with --sample to see "
           "inside the computation)";
  out << "\n\nTime of all ranks by label:\n";
  double total = 0;
  for (double v : rep.labels) total += v;
  for (int l = 0; l < static_cast<int>(TimeLabel::kCount); ++l)
    out << "  " << std::left << std::setw(28) << label_name(static_cast<TimeLabel>(l)) << std::right
        << std::setw(12) << secs(rep.labels[l]) << "  "
        << pct(total > 0 ? rep.labels[l] / total * 100 : 0) << "\n";
  out << "\nPhases (from one global synchronisation's exit to the next's):\n";
  for (std::size_t p = 0; p < rep.phases.size(); ++p) {
    const Phase& ph = rep.phases[p];
    double t = 0;
    for (double v : ph.labels) t += v;
    out << "  #" << p << "  ";
    if (ph.closing.empty())
      out << "to MPI_Finalize";
    else
      out << ph.instances << "x, closed by " << ph.closing << " (exits within " << std::fixed
          << std::setprecision(0) << ph.exit_spread_us << " us)";
    out << std::defaultfloat << ", " << secs(t / double(rep.world_size > 0 ? rep.world_size : 1))
        << " per rank";
    if (ph.groups.size() > 1) out << ", " << ph.groups.size() << " rank groups";
    out << "\n";
  }
  out << "\n";
  if (rep.diagnoses.empty()) {
    out << "No diagnosis above 1 % of the run time.\n";
  } else {
    out << "Diagnoses (most severe first; severity = time the run could save):\n";
    for (std::size_t i = 0; i < rep.diagnoses.size(); ++i) {
      const Diagnosis& d = rep.diagnoses[i];
      out << "\n" << i + 1 << ". " << diagnosis_name(d.kind);
      if (d.phase >= 0) out << " in phase #" << d.phase;
      out << ": " << secs(d.seconds) << " (" << pct(d.percent) << " of the run)\n";
      out << "   symptom: " << d.symptom.label;
      if (d.symptom.rank >= 0)
        out << (d.kind == DiagnosisKind::kSerialisation ? " (the others wait for rank "
                                                        : " (most on rank ")
            << d.symptom.rank << ")";
      out << "\n";
      if (!d.symptom.where.empty()) out << "            " << d.symptom.where << "\n";
      for (const CodePlace& c : d.causes) {
        out << "   cause:   " << c.label;
        if (c.rank >= 0 && d.kind != DiagnosisKind::kWaitForPartner) out << " on rank " << c.rank;
        out << ": " << secs(c.seconds) << "\n";
        // JSON has every cause's; the text names a cause's iterations only
        // where they are not the symptom's.
        if (!c.where.empty() && c.where != d.symptom.where)
          out << "            " << c.where << "\n";
      }
      out << "   detail:  " << d.detail << "\n";
      out << "   remedy:  " << diagnosis_remedy(d.kind) << "\n";
    }
  }
  if (!rep.diagnoses.empty()) {
    // Inefficiency ratio: the share of the run a diagnosis could save.
    out << "\nPer phase (share of the run; what its diagnoses could save, as shares of the "
           "run):\n";
    for (const PhaseSummary& s : rep.summary) {
      out << "  " << std::left << std::setw(10)
          << (s.phase >= 0 ? "#" + std::to_string(s.phase) : std::string("whole run"))
          << std::right;
      if (s.phase >= 0) out << std::setw(7) << pct(s.share * 100) << " of the run";
      if (s.diagnoses.empty()) {
        out << "; no diagnosis\n";
        continue;
      }
      out << (s.phase >= 0 ? "; could save " : "could save ") << pct(s.could_save * 100) << ":";
      for (std::size_t k = 0; k < s.diagnoses.size(); ++k) {
        const Diagnosis& d = rep.diagnoses[s.diagnoses[k]];
        out << (k ? ", " : " ") << diagnosis_name(d.kind) << " " << pct(d.percent) << " (#"
            << s.diagnoses[k] + 1 << ")";
      }
      out << "\n";
    }
  }
  if (!rep.derived.empty()) {
    out << "\nFunctions that mostly communicate (at least 70 % of their samples on every rank "
           "that runs them):\n";
    for (const DerivedLabel& d : rep.derived) {
      out << "  " << d.function;
      if (d.stack.size() > 1) out << ", called from " << d.stack[d.stack.size() - 2];
      out << ": " << d.label << ", " << pct(d.min_share * 100);
      if (d.max_share - d.min_share >= 0.0005) out << " to " << pct(d.max_share * 100);
      out << " of its " << d.samples << " samples on ranks " << human_ranks(d.ranks) << "\n";
    }
  }
  if (!rep.notes.empty()) {
    out << "\nNotes:\n";
    for (const std::string& n : rep.notes) out << "  - " << n << "\n";
  }
}

void write_diagnose_json(std::ostream& out, const DiagnoseReport& rep) {
  nlohmann::json j;
  j["ranks"] = rep.world_size;
  j["run_seconds"] = rep.run_seconds;
  j["period_ns"] = rep.period_ns;
  j["samples"] = rep.samples;
  nlohmann::json labels;
  for (int l = 0; l < static_cast<int>(TimeLabel::kCount); ++l)
    labels[label_name(static_cast<TimeLabel>(l))] = rep.labels[l];
  j["labels"] = labels;
  j["phases"] = nlohmann::json::array();
  for (const Phase& ph : rep.phases) {
    nlohmann::json p{{"instances", ph.instances},
                     {"start_ns", ph.start_ns},
                     {"end_ns", ph.end_ns},
                     {"closing", ph.closing},
                     {"exit_spread_us", ph.exit_spread_us},
                     {"groups", ph.groups}};
    nlohmann::json pl;
    for (int l = 0; l < static_cast<int>(TimeLabel::kCount); ++l)
      pl[label_name(static_cast<TimeLabel>(l))] = ph.labels[l];
    p["labels"] = pl;
    j["phases"].push_back(std::move(p));
  }
  j["diagnoses"] = nlohmann::json::array();
  for (const Diagnosis& d : rep.diagnoses) {
    nlohmann::json x{{"kind", diagnosis_id(d.kind)},
                     {"phase", d.phase},
                     {"seconds", d.seconds},
                     {"percent", d.percent},
                     {"symptom", place_json(d.symptom)},
                     {"detail", d.detail},
                     {"remedy", diagnosis_remedy(d.kind)}};
    x["causes"] = nlohmann::json::array();
    for (const CodePlace& c : d.causes) x["causes"].push_back(place_json(c));
    j["diagnoses"].push_back(std::move(x));
  }
  j["summary"] = nlohmann::json::array();
  for (const PhaseSummary& s : rep.summary) {
    nlohmann::json x{{"phase", s.phase},
                     {"seconds", s.seconds},
                     {"share", s.share},
                     {"could_save", s.could_save}};
    x["diagnoses"] = nlohmann::json::array();
    for (std::size_t i : s.diagnoses)
      x["diagnoses"].push_back({{"index", i},
                                {"kind", diagnosis_id(rep.diagnoses[i].kind)},
                                {"ratio", rep.diagnoses[i].percent / 100}});
    j["summary"].push_back(std::move(x));
  }
  j["derived_labels"] = nlohmann::json::array();
  for (const DerivedLabel& d : rep.derived)
    j["derived_labels"].push_back({{"function", d.function},
                                   {"stack", d.stack},
                                   {"label", d.label},
                                   {"min_share", d.min_share},
                                   {"max_share", d.max_share},
                                   {"samples", d.samples},
                                   {"ranks", d.ranks}});
  j["notes"] = rep.notes;
  // The temporal context trees, bounded (ContextTree): nodes in preorder,
  // each naming its parent's index.
  j["context_trees"] = nlohmann::json::array();
  for (const ContextTree& t : rep.trees) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const ContextTreeNode& n : t.nodes)
      nodes.push_back({{"label", n.label},
                       {"parent", n.parent},
                       {"start_ns", n.start_ns},
                       {"end_ns", n.end_ns},
                       {"samples", n.samples}});
    j["context_trees"].push_back(
        {{"rank", t.rank}, {"nodes", std::move(nodes)}, {"left_out", t.left_out}});
  }
  out << j.dump(1) << "\n";
}

void check_diagnose_output(const std::string& path) {
  if (path.empty()) return;
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".txt" && ext != ".json")
    throw DiagnoseError(path + ": unknown report form '" + ext + "' (use .txt or .json)");
}

void write_diagnose_report(const DiagnoseReport& report, const std::string& path) {
  if (path.empty()) {
    write_diagnose_text(std::cout, report);
    return;
  }
  check_diagnose_output(path);
  std::ofstream out(path);
  if (!out) throw DiagnoseError(path + ": cannot write");
  if (std::filesystem::path(path).extension() == ".json")
    write_diagnose_json(out, report);
  else
    write_diagnose_text(out, report);
  out.close();
  if (!out) throw DiagnoseError(path + ": write failed");
}

}  // namespace tracefold
