// `tracefold extrapolate T1 T2 T3 ... --ranks N -o OUT`: a thin layer over
// src/extrap (include/tracefold/extrap/extrapolate.hpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli.hpp"
#include "progress.hpp"
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/plugin.hpp"
#include "tracefold/trace_io.hpp"

namespace fs = std::filesystem;
using namespace tracefold;

namespace tracefold::cli {

namespace {

struct ExtrapolateArgs {
  std::vector<std::string> inputs;
  std::string output;
  int64_t ranks = 0;
  std::string grid;
  bool explain = false;
  bool text = false;
  std::string plugin;
  bool no_plugins = false;
  std::string snippet;
  bool lcs = false;
  bool model_counts = false;
  SiteOptions sites;
};

// An error names nodes by describe_node, "OP at SITE", with the frames as
// recorded where the trace embeds no symbols. Only when extrapolation
// fails are the inputs symbolized (from the binaries, as `tracefold print`
// does), and each such site is named by its label: the output trace of a
// success stays as its inputs were.
std::string with_site_labels(std::string message, std::vector<extrap::ExtrapInput>& inputs,
                             const SiteOptions& sites) {
  if (sites.raw) return message;
  for (auto& in : inputs) {
    try {
      prepare_sites(in.trace, sites, true);
    } catch (const std::exception&) {
      continue;  // the message stays as it is rather than hide the error
    }
    for (SiteId id = 0; id < in.trace.sites.size(); ++id) {
      const CallSite& site = in.trace.sites.at(id);
      const std::string raw = " at " + SiteTable::format(site) + ")";
      const std::string label = " at " + site_label(in.trace.symtab, site) + ")";
      if (raw == label) continue;
      for (std::size_t at = 0; (at = message.find(raw, at)) != std::string::npos;
           at += label.size())
        message.replace(at, raw.size(), label);
    }
  }
  return message;
}

void run_extrapolate(const ExtrapolateArgs& a) {
  extrap::ExtrapOptions opts;
  opts.ranks = a.ranks;
  if (!a.grid.empty()) opts.grid = extrap::Topology::parse(a.grid);
  opts.plugin = a.plugin;
  opts.try_plugins = !a.no_plugins;
  opts.weighted_lcs = a.lcs;
  opts.model_counts = a.model_counts;
  if (!a.snippet.empty()) {
    std::ifstream f(a.snippet);
    std::stringstream text;
    text << f.rdbuf();
    if (!f) throw extrap::ExtrapError(a.snippet + ": cannot read the snippet file");
    opts.snippet = extrap::parse_snippet(text.str(), a.snippet);
  }
  std::vector<extrap::ExtrapInput> inputs;
  for (const auto& path : a.inputs) inputs.push_back({path, load_trace(path)});
  Progress progress("extrapolating to " + std::to_string(a.ranks) + " ranks: node", 0);
  opts.progress = progress.fn();
  extrap::ExtrapResult r;
  try {
    r = extrap::extrapolate(inputs, opts);
  } catch (const extrap::ExtrapError& e) {
    progress.done();
    throw extrap::ExtrapError(with_site_labels(e.what(), inputs, a.sites));
  }
  progress.done();
  if (a.explain)
    for (const auto& line : r.explanation) std::cout << line << "\n";
  for (const auto& rep : r.filtered) {
    uint64_t kept = 0, dropped = 0;
    std::string per;
    for (std::size_t i = 0; i < rep.dropped.size(); ++i) {
      kept += rep.kept[i];
      dropped += rep.dropped[i];
      if (i < 64) per += " " + std::to_string(i) + ":" + std::to_string(rep.dropped[i]);
    }
    const uint64_t all = kept + dropped;
    char share[32];
    std::snprintf(share, sizeof share, "%.2f",
                  all ? 100.0 * static_cast<double>(dropped) / static_cast<double>(all) : 0.0);
    std::cerr << "tracefold: " << rep.filter << ": " << rep.name << ": dropped " << dropped
              << " of " << all << " events (" << share << " %); per rank:" << per
              << (rep.dropped.size() > 64 ? " ..." : "");
    if (rep.links_cut > 0)
      std::cerr << "; " << rep.links_cut << " links to dropped requests cut from completions";
    std::cerr << "\n";
  }
  if (r.modelled_events > 0) {
    char share[32];
    std::snprintf(share, sizeof share, "%.2f",
                  100.0 * static_cast<double>(r.modelled_events) / static_cast<double>(r.events));
    std::cerr << "tracefold: count model: " << r.modelled_events << " of " << r.events
              << " events (" << share
              << " %) have count vectors drawn from the statistical model; the output is "
                 "marked lossy\n";
  }
  // save_trace writes a temporary file and renames it: OUT appears only
  // complete, and only after extrapolation succeeded.
  const std::size_t bytes =
      save_trace(r.trace, a.output, a.text ? TraceEncoding::kText : TraceEncoding::kCompact);
  std::string sizes;
  for (const auto& in : inputs)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(in.trace.world_size);
  std::cerr << "tracefold: extrapolated " << inputs.size() << " traces (" << sizes << " ranks) to "
            << r.trace.world_size << " ranks on a " << r.target.to_string()
            << (r.target_rule.rfind("plugin ", 0) == 0 ? " layout (" + r.target_rule + ")"
                                                       : std::string(" grid"))
            << ", " << r.trace.nodes.size() << " nodes, wrote " << a.output << " ("
            << human_bytes(bytes) << ")\n";
}

}  // namespace

void add_extrapolate_command(CLI::App& app) {
  auto args = std::make_shared<ExtrapolateArgs>();
  auto* cmd = app.add_subcommand(
      "extrapolate", "The trace of a larger (or in-between) run from traces of a few rank counts");
  cmd->add_option("traces", args->inputs,
                  "Traces of the same program at different rank counts (a d-D grid needs d+1)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--ranks", args->ranks, "Rank count of the trace to make")->required();
  cmd->add_option("-o,--output", args->output, "Trace file to write")->required();
  cmd->add_option("--grid", args->grid,
                  "Target grid, slowest dimension first as MPI_Dims_create gives it (e.g. 8x4 "
                  "or 4x4x4); default: the rule the inputs' grids follow");
  cmd->add_flag("--explain", args->explain,
                "Print the detected grids and, per node, the model of every parameter and time");
  cmd->add_flag("--text", args->text, "Write the text form (format version 2)");
  std::string names;
  for (const auto* p : extrap::registered_plugins())
    names += (names.empty() ? "" : ", ") + p->name();
  cmd->add_option("--plugin", args->plugin,
                  "Extrapolate through this pattern plugin instead of the row-major stencil "
                  "path (built in: " +
                      names + ")");
  cmd->add_option("--snippet", args->snippet,
                  "Lossy: keep, in every rank of every input, only the collectives and the "
                  "stretches matching this event snippet (one `MPI_NAME [field=value ...]` a "
                  "line); prints the events dropped per rank")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--lcs", args->lcs,
                "Lossy: keep only the events that every rank of every input shares, aligned by "
                "a longest common subsequence weighted by event counts (after --snippet if "
                "both are given); prints the events dropped per rank");
  cmd->add_flag("--model-counts", args->model_counts,
                "Lossy: draw MPI_Alltoallv count vectors that follow the program's data (they "
                "differ from rank to rank) from a statistical model fitted over the inputs "
                "instead of refusing them; prints the share of events modelled");
  cmd->add_flag("--no-plugins", args->no_plugins,
                "Do not try the plugins when the row-major stencil path fails");
  add_site_options(cmd, args->sites);
  cmd->footer("Example: tracefold extrapolate s9.tf s16.tf s25.tf --ranks 1024 -o s1024.tf");
  cmd->callback([args] {
    guarded([&] { run_extrapolate(*args); });
    throw CLI::RuntimeError(0);
  });
}

}  // namespace tracefold::cli
