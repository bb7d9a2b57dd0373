// Replay: running a folded trace as an MPI program (seed 000, 2.4 and 5.2.6).
//
// Every rank walks its own projection of the trace with a RankIterator (no
// expansion in memory) and issues the recorded MPI calls with the recorded
// operations, peers, tags, counts, datatype sizes, roots and reduction ops,
// on communicators recreated by replaying the calls that made them, with
// requests linked to the completions that consumed them, and with random
// payloads. Computation between calls is reproduced from the timing
// histograms. Traces recorded with lossy parameter histograms are replayed
// probabilistically (see ReplayOptions::probabilistic).
//
// The header is MPI-free: the replay library initializes MPI itself (with
// the same MPI_Init variant the trace recorded), so it can be driven from any
// front end.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "tracefold/trace.hpp"

namespace tracefold {

/// A trace replay cannot run (unsupported operation, missing communicator,
/// wrong rank count). The message names the rank, node or operation.
class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ComputeMode { kSpin, kSleep, kNone };
enum class TimingMode { kMean, kSample };
/// Which recorded time a computation spins for: kWall the wall-clock gap
/// between calls (every trace has it); kCpu the processor time of the
/// compute_cpu statistic (record --stats compute_cpu), spun on the thread's
/// processor clock, so a replay on a machine with fewer cores than ranks
/// asks for the processor time the program used and waits for cores as the
/// program did, instead of waiting on top of recorded waiting.
enum class ComputeClock { kWall, kCpu };

struct ReplayOptions {
  ComputeMode compute = ComputeMode::kSpin;
  /// kMean: the mean of each (call, predecessor) histogram; kSample: a value
  /// drawn per event from the histogram's bins (brings back spread and
  /// imbalance).
  TimingMode timing = TimingMode::kMean;
  ComputeClock clock = ComputeClock::kWall;
  double compute_scale = 1.0;  ///< multiplies computation times
  double message_scale = 1.0;  ///< multiplies element counts of messages
  /// Call-site ids (as in `tracefold print`) the two scales apply to; empty = all.
  std::set<uint32_t> scale_sites;
  /// Wildcard receives use the recorded matched source/tag instead of ANY_*.
  bool deterministic = false;
  /// Seed of the random streams (timing samples, probabilistic choices).
  uint64_t seed = 1;
  /// Original run time in seconds: the summary reports the replay's error.
  std::optional<double> compare_time;
  /// Probabilistic replay: nullopt = automatic (on when the trace holds value
  /// histograms, i.e. was recorded with a histogram threshold).
  std::optional<bool> probabilistic;
  /// Rank 0 writes `RANK OP CALLS BYTES_SENT` lines here (every rank, every
  /// operation issued).
  std::optional<std::string> counts_file;
  /// The user says only one thread of the program called MPI: a trace that
  /// starts with MPI_Init_thread is replayed (preflight_check refuses it
  /// otherwise).
  bool single_thread = false;
};

/// What one replay did, summed over ranks (filled on rank 0).
struct ReplaySummary {
  int32_t ranks = 0;
  int32_t threads = 1;      ///< replay threads per rank (the trace's threads)
  double wall_seconds = 0;  ///< slowest rank, MPI_Init return to MPI_Finalize call
  uint64_t calls = 0;       ///< MPI calls issued
  uint64_t bytes_sent = 0;  ///< bytes in send buffers of point-to-point and collective calls
  bool probabilistic = false;
  std::string line() const;  ///< the one-line summary the CLI prints
};

/// Checks, without MPI, that replay can perform every operation of the trace.
/// Throws ReplayError naming the first node that it cannot.
void check_replayable(const Trace& trace);

/// Checks, without MPI, the whole trace before replay: every node has the
/// fields its operation requires; a trace with threads (one stream per
/// thread) is not to be replayed probabilistically; a trace of one stream
/// per rank that starts with MPI_Init_thread (which may come from a recorder
/// that put all threads in one stream) is refused unless
/// `options.single_thread`. Throws ReplayError naming the node.
void preflight_check(const Trace& trace, const ReplayOptions& options);

/// Whether `rank` makes the same collective calls (same operations, same
/// roots, in the same order) as the lowest member of each communicator
/// group it belongs to: "" if so, else the error naming communicator, call
/// and node. Each process of a replay checks its own rank (walking its own
/// events and those of the few ranks that lead its groups, not every
/// rank's); the lowest rank that fails reports, so the message is the one a
/// check of all ranks in order would give. A trace whose ranks all pass
/// cannot make replay wait forever in a mismatched collective. Throws
/// ExpandError on a trace that does not expand.
std::string collective_order_error(const Trace& trace, int32_t rank);

/// Loads `trace_path`, initializes MPI, replays this process's rank and
/// finalizes MPI. A trace with T threads per rank is replayed by T threads
/// per rank under MPI_THREAD_MULTIPLE, thread t walking location
/// t * P + rank (thread 0 is the one that initialized MPI). Returns the process exit code (0 on
/// success); errors are reported on stderr (once, by rank 0, when every rank sees the same problem)
/// and never leave other ranks waiting. `argc/argv` go to MPI_Init.
int run_replay(const std::string& trace_path, const ReplayOptions& options, int* argc,
               char*** argv);

}  // namespace tracefold
