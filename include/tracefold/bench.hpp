// Benchmark generation (tracefold bench): a folded trace becomes one
// self-contained, readable C+MPI program that makes the same MPI calls as
// the traced run, rank for rank, with the recorded computation between
// them replaced by calibrated spinning (seed 000, chapter 4).
//
// The program follows the trace's folded form, not an expansion: loops of
// the trace are `for` loops, rank groups are predicates on the rank, peers
// are arithmetic on the rank and the communicator size, values that vary
// per iteration are small constant arrays. docs/bench.md shows an example.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/trace.hpp"

namespace tracefold::bench {

/// How the time between calls is reproduced.
enum class ComputeMode : uint8_t {
  kMean,     ///< each node's recorded mean compute time
  kSample,   ///< drawn from the node's histogram, with a fixed seed
  kTrimmed,  ///< the mean without an outlying upper bin (descheduling; default)
};

/// Which recorded time a computation spins for.
enum class ComputeClock : uint8_t {
  kWall,  ///< the wall-clock time between calls
  /// The processor time of the compute_cpu statistic (record --stats
  /// compute_cpu), spun on the thread's processor clock: for runs recorded
  /// with more ranks than cores, where the wall-clock time holds the waits
  /// for a core (`--compute-clock cpu`, as replay's).
  kCpu,
};

struct Options {
  ComputeMode compute = ComputeMode::kTrimmed;
  ComputeClock clock = ComputeClock::kWall;
  double scale = 1.0;  ///< multiplies every compute time (`--compute scale=F`)
  uint64_t seed = 1;   ///< seed of kSample's draws
  /// Keep MPI_ANY_SOURCE / MPI_ANY_TAG as recorded (`--keep-wildcards`);
  /// by default every wildcard receive and probe names the source and tag
  /// it matched (resolve_wildcards in bench_passes.hpp).
  bool keep_wildcards = false;
  /// Generate from a lossy trace (`--lossy-ok`): each value histogram
  /// becomes a table of its values in an order drawn with `seed` (the same
  /// draw for every rank group of a node, so collectives agree). Without
  /// it a lossy trace is refused. Wildcards are then kept as recorded: the
  /// resolution needs the exact order.
  bool lossy_ok = false;
  /// Generate from a trace of one stream per rank that starts with
  /// MPI_Init_thread (`--single-thread`): the user says only one thread of
  /// the program called MPI. Without it such a trace is refused
  /// (init_thread_node in validate.hpp: it may come from a recorder that
  /// did not keep threads apart). A trace with several threads per rank
  /// needs no option: the benchmark runs one pthread per recorded thread.
  bool single_thread = false;
};

/// What generation did to the trace before writing it out.
struct Summary {
  uint64_t wildcards_recorded = 0;     ///< wildcard calls given their recorded match
  uint64_t wildcards_chosen = 0;       ///< given a match chosen by the traversal
  std::size_t collectives_merged = 0;  ///< collective nodes combined by alignment
};

/// The trace holds something the generator cannot express (an operation,
/// a datatype, a loop shape); the message names the node.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// For the outputs with one thread per rank (coNCePTuaL, parametric):
/// throws BenchError naming the node when `trace` has several threads per
/// rank, or starts with MPI_Init_thread and options.single_thread is not
/// set.
void check_single_thread(const Trace& trace, const Options& options);

/// Throws BenchError when options.clock is kCpu and `trace` holds no
/// compute_cpu statistic.
void check_clock(const Trace& trace, const Options& options);

/// The C source of the benchmark. Unless options.keep_wildcards, wildcard
/// receives are resolved first, and collectives reached from different
/// lines are aligned when needs_alignment() says so (bench_passes.hpp).
/// A trace with several threads per rank gives one function per recorded
/// thread, each run by a pthread of its own under MPI_THREAD_MULTIPLE.
/// Throws BenchError, DeadlockError (no valid assignment of wildcard
/// sources: the message names the blocked ranks, nodes and operations) or
/// PassError. `summary`, when given, receives what the passes did.
std::string generate_c(const Trace& trace, const Options& options = {}, Summary* summary = nullptr);

/// generate_c written to `path` through a temporary file in the same
/// directory, renamed into place: on any error nothing is written.
Summary write_c(const Trace& trace, const Options& options, const std::string& path);

/// One input of a parametric benchmark: a trace and the name messages
/// give it (its file name).
struct TraceAtScale {
  std::string name;
  Trace trace;
};

/// The C source of a parametric benchmark (seed 000, 4.4.5) from traces of
/// one program at several rank counts (those `tracefold extrapolate`
/// takes: a d-D grid needs d+1 counts). The program computes its grid from
/// the rank count it runs with and refuses counts the grid does not admit;
/// every rank group, peer, count, trip count and compute time is a model in
/// the grid sizes, checked against every rank of every input before it is
/// written. docs/bench.md, "Parametric benchmarks". Throws BenchError (or
/// extrap::ExtrapError, a std::runtime_error, for topology and alignment).
std::string generate_parametric_c(std::vector<TraceAtScale> traces, const Options& options = {});

/// generate_parametric_c written to `path` through a temporary file.
void write_parametric_c(std::vector<TraceAtScale> traces, const Options& options,
                        const std::string& path);

}  // namespace tracefold::bench
