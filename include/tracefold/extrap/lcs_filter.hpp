// Lossy extrapolation, the weighted LCS filter (seed 000, 3.2.4, second
// and third level: across the ranks of one input and across inputs).
//
// Where no snippet describes the dominant pattern, the events every rank
// of every input has in common are found by a longest common subsequence
// over each rank's folded structure, and the rest is dropped:
//   - a rank's sequence is its nodes of the folded trace in the order it
//     first reaches them, each keyed by operation and call-site signature
//     and weighted by how many events the rank makes there (a node inside
//     a loop weighs its iterations: loops count as a whole, by their
//     events, so the alignment keeps the heavy loop body and sheds the
//     light extras around it);
//   - pass 1 (measure) folds the weighted LCS over every rank of an input
//     and then over the inputs, without changing anything: the common
//     reference;
//   - pass 2 (cut) aligns each rank's sequence with the reference and
//     drops the events of its unmatched nodes; the traces are refolded and
//     merged like recorded ones.
// As with the snippet filter, a dropped call that creates a request is
// dropped from the completions that name it (request_cut.hpp), and the
// output is marked lossy.
#pragma once

#include <string>
#include <vector>

#include "tracefold/extrap/snippet.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::extrap {

/// Filters every trace (names[i] names traces[i] in messages) down to the
/// node sequence common to all ranks of all traces. reports gets one
/// FilterReport per trace. Throws ExtrapError when no event is common.
std::vector<Trace> lcs_filter(const std::vector<const Trace*>& traces,
                              const std::vector<std::string>& names,
                              std::vector<FilterReport>& reports);

}  // namespace tracefold::extrap
