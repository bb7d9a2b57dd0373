// coNCePTuaL output of benchmark generation (seed 000, 4.3 and 4.4.2).
//
// The trace becomes a coNCePTuaL program: loops become FOR n REPETITIONS
// blocks, the ranks of a node become a task set (`TASKS t SUCH THAT ...`),
// relative peers become `(t + k) MOD num_tasks`, the time before a call a
// COMPUTES FOR statement. Collectives coNCePTuaL lacks are replaced as in
// the seed's Table 4.1 (an Allgather is a REDUCE to task 0 and a MULTICAST
// back, an Alltoallv a many-to-many MULTICAST of the averaged size, ...).
// Run it through resolve_wildcards() and align_collectives() first: the
// language has no wildcard receives, and a collective is one statement.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "tracefold/trace.hpp"

namespace tracefold {

/// A trace the coNCePTuaL subset cannot express; the message names the node.
class ConceptualError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The whole program text. Throws ConceptualError naming the first node it
/// cannot express (a wildcard, a communicator other than the world, a
/// count or parameter that changes from one iteration to the next, a loop
/// whose size differs between ranks, an operation without a counterpart);
/// `label` names a node in that message (print_numbering in
/// bench_passes.hpp for a trace the passes changed; default node_label).
std::string emit_conceptual(const Trace& trace,
                            const std::function<std::string(std::size_t)>& label = {});

}  // namespace tracefold
