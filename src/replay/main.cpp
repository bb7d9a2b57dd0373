// tracefold-replay: the MPI side of `tracefold replay` (the MPI-free CLI
// execs it, so `mpirun -np N tracefold replay T` runs this on every rank).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <sstream>

#include "tracefold/replay.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "Replay a folded trace as an MPI program (run under mpirun with the recorded rank count)"};
  app.name("tracefold replay");
  tracefold::ReplayOptions o;
  std::string trace, timing = "mean", sites, clock = "wall";
  bool no_compute = false, sleep = false, probabilistic = false;
  double compare = -1;
  app.add_option("TRACE", trace, "Folded trace (.tf or .tf.zst)")->required();
  app.add_flag("--no-compute", no_compute, "Communication only: no computation between calls");
  app.add_flag("--sleep", sleep, "Reproduce computation by sleeping instead of spinning");
  app.add_option("--timing", timing,
                 "Computation durations: mean (per call and path) or sample (drawn from the "
                 "histogram bins)")
      ->check(CLI::IsMember({"mean", "sample"}));
  app.add_option("--compute-clock", clock,
                 "Computation spins for the recorded wall time (wall) or for the processor time "
                 "of the compute_cpu statistic (cpu: record with --stats compute_cpu; for runs "
                 "with more ranks than cores)")
      ->check(CLI::IsMember({"wall", "cpu"}));
  app.add_option("--compute-scale", o.compute_scale, "Multiply computation times by K")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--message-scale", o.message_scale, "Multiply message element counts by K")
      ->check(CLI::NonNegativeNumber);
  app.add_option(
      "--scale-sites", sites,
      "Apply the scales only to these call-site ids (comma-separated, as in `tracefold print`)");
  app.add_flag("--deterministic", o.deterministic,
               "Receive wildcards from the recorded matched source/tag");
  app.add_option("--seed", o.seed,
                 "Seed of the random streams (timing samples, probabilistic choices)");
  app.add_option("--compare-time", compare,
                 "Original run time in seconds: report the replay's error against it");
  app.add_flag("--probabilistic", probabilistic,
               "Force probabilistic replay (automatic for lossy traces)");
  app.add_flag("--single-thread", o.single_thread,
               "Replay a trace that starts with MPI_Init_thread: only one thread of the program "
               "called MPI");
  std::string counts;
  app.add_option("--counts", counts,
                 "Write 'RANK OP CALLS BYTES_SENT' lines for every rank and operation to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  o.compute = no_compute ? tracefold::ComputeMode::kNone
              : sleep    ? tracefold::ComputeMode::kSleep
                         : tracefold::ComputeMode::kSpin;
  o.clock = clock == "cpu" ? tracefold::ComputeClock::kCpu : tracefold::ComputeClock::kWall;
  o.timing = timing == "sample" ? tracefold::TimingMode::kSample : tracefold::TimingMode::kMean;
  if (compare > 0) o.compare_time = compare;
  if (probabilistic) o.probabilistic = true;
  if (!counts.empty()) o.counts_file = counts;
  if (!sites.empty()) {
    std::stringstream ss(sites);
    std::string item;
    while (std::getline(ss, item, ',')) {
      try {
        o.scale_sites.insert(static_cast<uint32_t>(std::stoul(item)));
      } catch (const std::exception&) {
        std::fprintf(stderr, "tracefold replay: error: --scale-sites: '%s' is not a call-site id\n",
                     item.c_str());
        return 2;
      }
    }
  }
  return tracefold::run_replay(trace, o, &argc, &argv);
}
