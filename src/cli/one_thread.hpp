// The refusal of the commands that take one thread per rank.
#pragma once

#include <stdexcept>
#include <string>

#include "tracefold/trace.hpp"

namespace tracefold::cli {

/// For the commands that take one thread per rank: refuses a trace with
/// more (docs/format.md "The thread dimension") rather than misread it,
/// saying `why` the command cannot take a rank's threads.
inline const Trace& one_thread_per_rank(const Trace& t, const std::string& command,
                                        const std::string& why) {
  if (t.threads > 1)
    throw std::runtime_error(command + " takes traces of one thread per rank (" + why +
                             "); this one has " + std::to_string(t.threads) +
                             " threads per rank calling MPI");
  return t;
}

}  // namespace tracefold::cli
