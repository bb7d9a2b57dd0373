// Simulation of a trace on SimGrid's SMPI offline replay (docs/simulate.md).
//
// A trace becomes one SMPI time-independent action file per rank, written
// rank by rank through the expansion (RankIterator), and SMPI's replay
// runs them on a platform: a SimGrid XML file, or a generated fat-tree
// cluster of one host per rank. Nothing here links SimGrid: the replay is
// a separate program (tracefold-smpi-replay, built with smpicxx) that
// smpirun starts, and this library reads what it reports.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/trace.hpp"

namespace tracefold {

class SimulateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ComputeAs : uint8_t {
  kFlops,  ///< `compute FLOPS` at host_speed: scales with the platform's host speed
  kTimes,  ///< `sleep SECONDS`: the recorded time, whatever the platform
};

struct ActionOptions {
  ComputeAs compute = ComputeAs::kFlops;
  /// Speed (flops/s) of the machine the trace was recorded on: a compute
  /// time t becomes t × host_speed flops.
  double host_speed = 1e9;
  /// Drop operations SMPI cannot replay (with a warning per operation)
  /// instead of refusing the trace.
  bool skip_unsupported = false;
};

/// One operation the replay cannot perform, and why.
struct Unsupported {
  std::string reason;
  uint64_t calls = 0;    ///< over all ranks
  std::string first_at;  ///< "node #N, rank R"
};

struct ActionSummary {
  uint64_t actions = 0;            ///< lines written, over all ranks
  uint64_t bytes = 0;              ///< size of the action files
  double compute_seconds_max = 0;  ///< largest per-rank sum of compute times
  /// Operation name -> what could not be replayed.
  std::map<std::string, Unsupported> unsupported;
};

/// Writes DIR/rank-R.act for every rank and DIR/actions.list (their paths,
/// one per line, what `smpirun -replay` reads). Throws SimulateError naming
/// every unsupported operation unless options.skip_unsupported.
ActionSummary write_smpi_actions(const Trace& trace, const std::string& dir,
                                 const ActionOptions& options);

/// The generated platform: a fat tree of `hosts` hosts (two levels when
/// `hosts` has a divisor between 2 and its square root, else one switch),
/// links of `bandwidth` bytes/s and `latency` s, hosts of `host_speed`
/// flops/s. Full bisection: each leaf switch has as many up-links as hosts.
struct PlatformParams {
  double bandwidth = 1.25e9;
  double latency = 1e-6;
  double host_speed = 1e9;
};
/// Writes the platform XML and a hostfile (rank r on host r). Returns the
/// fat tree's topo_parameters.
std::string write_fat_tree_platform(int32_t hosts, const PlatformParams& params,
                                    const std::string& xml_path, const std::string& hostfile_path);

struct LinkLoad {
  std::string name;
  double bytes = 0;        ///< bytes that crossed it
  double utilization = 0;  ///< bytes / (bandwidth × predicted time)
};

struct SimulationResult {
  double predicted_seconds = 0;
  std::vector<double> comm_seconds;     ///< per rank: simulated time in communication actions
  std::vector<double> end_seconds;      ///< per rank: when its replay ended
  std::vector<LinkLoad> busiest_links;  ///< most bytes first
  double wall_seconds = 0;
};

struct SmpiRun {
  std::string smpirun = "smpirun";
  std::string replay_program;  ///< tracefold-smpi-replay
  std::string platform;        ///< XML file
  std::string hostfile;        ///< empty: the platform's hosts in order
  std::string actions_list;
  int32_t ranks = 0;
  std::string work_dir;       ///< where SMPI's output and the report go
  bool work_dir_kept = true;  ///< false: removed afterwards, so errors do not point into it
  std::vector<std::string> extra_cfg;  ///< more --cfg=... options
  int top_links = 5;
};

/// Runs the replay; throws SimulateError with SimGrid's own message when it
/// fails (a platform it cannot load, a replay that deadlocks, ...).
SimulationResult run_smpi_replay(const SmpiRun& run);

}  // namespace tracefold
