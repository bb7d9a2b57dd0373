// `tracefold simulate`: a trace through SimGrid's SMPI replay
// (tracefold/simulate.hpp, docs/simulate.md).
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "one_thread.hpp"
#include "tracefold/simulate.hpp"
#include "tracefold/trace_io.hpp"

namespace fs = std::filesystem;
using namespace tracefold;

namespace {

struct SimulateArgs {
  std::string trace, platform, output, compute = "flops";
  double host_speed = 1e9;
  PlatformParams net;
  bool skip_unsupported = false;
  std::vector<std::string> cfg;
  int links = 5;
};

// Without -o the files go to a temporary directory, removed at the end.
struct WorkDir {
  fs::path path;
  bool temporary = false;
  explicit WorkDir(const std::string& requested) {
    if (!requested.empty()) {
      path = requested;
      return;
    }
    std::string tmpl = (fs::temp_directory_path() / "tracefold-simulate-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory");
    path = tmpl;
    temporary = true;
  }
  ~WorkDir() {
    std::error_code ec;
    if (temporary) fs::remove_all(path, ec);
  }
};

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void print_ranks(const SimulationResult& r, const fs::path& csv) {
  const auto n = r.comm_seconds.size();
  std::size_t lo = 0, hi = 0;
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += r.comm_seconds[i];
    if (r.comm_seconds[i] < r.comm_seconds[lo]) lo = i;
    if (r.comm_seconds[i] > r.comm_seconds[hi]) hi = i;
  }
  std::cout << std::fixed << std::setprecision(9);
  std::cout << "communication time per rank: min " << r.comm_seconds[lo] << " s (rank " << lo
            << "), mean " << sum / static_cast<double>(n) << " s, max " << r.comm_seconds[hi]
            << " s (rank " << hi << ")\n";
  if (n <= 64) {
    std::cout << "rank  comm_s       end_s\n";
    for (std::size_t i = 0; i < n; ++i)
      std::cout << std::setw(4) << i << "  " << r.comm_seconds[i] << "  " << r.end_seconds[i]
                << "\n";
  }
  if (!csv.empty()) {
    std::ofstream f(csv);
    f << std::fixed << std::setprecision(9) << "rank,comm_s,end_s\n";
    for (std::size_t i = 0; i < n; ++i)
      f << i << ',' << r.comm_seconds[i] << ',' << r.end_seconds[i] << '\n';
    if (n > 64) std::cout << "per rank: " << csv.string() << "\n";
  }
}

void run_simulate(const SimulateArgs& a) {
  const Trace trace = load_trace(a.trace);
  // SMPI's replay gives each rank one actor reading one action stream.
  cli::one_thread_per_rank(trace, "simulate",
                           "SimGrid's SMPI replay runs one actor per rank, which replays one "
                           "stream of calls");
  const fs::path replay = cli::find_companion(
      "TRACEFOLD_SMPI_REPLAY",
      {"../extrap/simulate/tracefold-smpi-replay", "tracefold-smpi-replay",
       "../libexec/tracefold/tracefold-smpi-replay"},
      "cannot find tracefold-smpi-replay (was tracefold built with SimGrid? "
      "scripts/install-deps.sh installs libsimgrid-dev; or set TRACEFOLD_SMPI_REPLAY)");
  WorkDir work(a.output);

  ActionOptions ao;
  ao.compute = a.compute == "times" ? ComputeAs::kTimes : ComputeAs::kFlops;
  ao.host_speed = a.host_speed;
  ao.skip_unsupported = a.skip_unsupported;
  const ActionSummary acts = write_smpi_actions(trace, work.path.string(), ao);
  for (const auto& [op, u] : acts.unsupported)
    std::cerr << "tracefold: warning: " << op << " not simulated: " << u.reason << " (" << u.calls
              << " calls dropped, first at " << u.first_at << ")\n";

  SmpiRun run;
  run.replay_program = replay.string();
  run.ranks = trace.world_size;
  run.work_dir = work.path.string();
  run.work_dir_kept = !work.temporary;
  run.actions_list = (work.path / "actions.list").string();
  run.extra_cfg = a.cfg;
  run.top_links = a.links;
  std::string platform_note;
  if (a.platform.empty()) {
    PlatformParams p = a.net;
    p.host_speed = a.host_speed;
    run.platform = (work.path / "platform.xml").string();
    run.hostfile = (work.path / "hostfile").string();
    const std::string topo =
        write_fat_tree_platform(trace.world_size, p, run.platform, run.hostfile);
    std::ostringstream s;
    s << "generated fat tree " << topo << ", links " << p.bandwidth << " B/s, " << p.latency
      << " s, hosts " << p.host_speed << " flops/s";
    platform_note = s.str();
  } else {
    run.platform = a.platform;
    platform_note = a.platform + " (ranks on its hosts in order)";
  }

  std::cout << "simulate: " << trace.world_size << " ranks on " << platform_note << "\n";
  std::cout << "compute: mean of each call's compute-time histogram, "
            << (ao.compute == ComputeAs::kFlops ? "as flops at " + num(ao.host_speed) + " flops/s"
                                                : std::string("as times (sleep)"))
            << "; largest per-rank sum " << std::fixed << std::setprecision(9)
            << acts.compute_seconds_max << " s\n";
  std::cout << "actions: " << acts.actions << " lines, " << cli::human_bytes(acts.bytes)
            << (work.temporary ? "" : " in " + work.path.string()) << "\n";

  const SimulationResult r = run_smpi_replay(run);
  std::cout << "predicted run time: " << std::fixed << std::setprecision(9) << r.predicted_seconds
            << " s\n";
  print_ranks(r, work.temporary ? fs::path() : work.path / "ranks.csv");
  std::cout << "busiest links (SimGrid link_load: bytes through the link, mean utilization):\n";
  if (r.busiest_links.empty()) std::cout << "  (no link carried data)\n";
  for (const LinkLoad& l : r.busiest_links)
    std::cout << "  " << l.name << "  " << std::setprecision(0) << l.bytes << " B  "
              << std::setprecision(1) << 100 * l.utilization << " %\n";
  std::cout << "simulation wall time: " << std::setprecision(2) << r.wall_seconds << " s\n";
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto a = std::make_shared<SimulateArgs>();
  auto* sim = app.add_subcommand(
      "simulate", "Predict a trace's run time on a platform with SimGrid's SMPI replay");
  sim->add_option("trace", a->trace, "Trace file (recorded or extrapolated)")
      ->required()
      ->check(tracefold::cli::existing_trace());
  sim->add_option("--platform", a->platform,
                  "SimGrid platform XML (default: a generated fat tree, one host per rank)")
      ->check(CLI::ExistingFile);
  sim->add_option("--host-speed", a->host_speed,
                  "Flops/s of the machine the trace was recorded on (compute times become "
                  "flops at this speed; also the generated platform's host speed)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sim->add_option("--compute", a->compute,
                  "flops: compute times as flops at --host-speed; times: as recorded times")
      ->capture_default_str()
      ->check(CLI::IsMember({"flops", "times"}));
  sim->add_option("--bandwidth", a->net.bandwidth, "Generated platform: link bandwidth, bytes/s")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sim->add_option("--latency", a->net.latency, "Generated platform: link latency, seconds")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sim->add_option("-o,--output", a->output,
                  "Keep the action files, platform, SMPI log and ranks.csv in this directory");
  sim->add_flag("--skip-unsupported", a->skip_unsupported,
                "Simulate without the operations SMPI cannot replay (each one is named)");
  sim->add_option("--cfg", a->cfg, "More SimGrid configuration, KEY:VALUE (repeatable)");
  sim->add_option("--links", a->links, "How many of the busiest links to print")
      ->capture_default_str();
  sim->footer("Example: tracefold simulate run.tf --bandwidth 2.5e9 -o sim/  (docs/simulate.md)");
  sim->callback([a] {
    cli::guarded([&] { run_simulate(*a); });
    throw CLI::RuntimeError(0);
  });
}
