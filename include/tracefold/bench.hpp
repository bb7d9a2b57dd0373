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
  kMean,    ///< each node's recorded mean compute time (default)
  kSample,  ///< drawn from the node's histogram, with a fixed seed
};

struct Options {
  ComputeMode compute = ComputeMode::kMean;
  double scale = 1.0;  ///< multiplies every compute time (`--compute scale=F`)
  uint64_t seed = 1;   ///< seed of kSample's draws
};

/// The trace holds something the generator cannot express (an operation,
/// a datatype, a loop shape); the message names the node.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The C source of the benchmark. Throws BenchError.
std::string generate_c(const Trace& trace, const Options& options = {});

/// generate_c written to `path` through a temporary file in the same
/// directory, renamed into place: on any error nothing is written.
void write_c(const Trace& trace, const Options& options, const std::string& path);

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
