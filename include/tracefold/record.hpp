// Extending the MPI recorder (libtracefold.so) with user statistics
// (seed 000, 5.2.5).
//
// A Statistic is measured around every wrapped MPI call: start() runs when
// the call is entered, end() when it returns, and the value end() gives goes
// into a histogram kept per call site and preceding call, next to the
// computation and communication times (the trace's `stat NAME` lines). A
// statistic is enabled by name with TRACEFOLD_STATS=name,name (or
// `tracefold record --stats`); built in are:
//   bytes  - bytes the call moves (count x datatype size, both directions)
//   minflt - minor page faults during the call (getrusage; no hardware counters)
// A program (or a library it loads) can add its own with register_statistic()
// before MPI_Init; it is then enabled when its name is listed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tracefold/event.hpp"

namespace tracefold::record {

class Statistic {
 public:
  virtual ~Statistic() = default;
  /// Name used in TRACEFOLD_STATS and in the trace ([a-z][a-z0-9_]*).
  virtual std::string name() const = 0;
  /// Called when a wrapped call is entered.
  virtual void start() = 0;
  /// Called when it returns, with the call's event; the value to record.
  virtual int64_t end(const Event& event) = 0;
};

/// Makes a statistic available (call before MPI_Init). Thread-safe.
void register_statistic(std::unique_ptr<Statistic> statistic);

}  // namespace tracefold::record
