// Completion links as trace files store them (docs/format.md, "Derived
// links"): a completion's `links` list that is [n, n-1, ..., 1] -- its
// requests are the n most recently made, oldest first -- is stored as the
// one value -n instead of its length and n entries, a sweep of one-request
// lists [n], [n-1], ..., [1] as the pair `1 -n`, and both are read back
// whole.
// Nothing but the file changes: every reader of a trace sees the lists.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "tracefold/trace.hpp"

namespace tracefold::links_form {

/// Text version and compact version that first store derived links, the
/// newest each reader takes (Trace::kFormatVersion and kCompactVersion are
/// the versions of a trace with threads and no derived links).
inline constexpr int kTextVersion = 7;
inline constexpr int kCompactVersion = 9;
/// Versions that first store sweeps: n one-request lists [n], [n-1], ...,
/// [1] in a row as `1 -n`. A trace is written in them only where it uses a
/// sweep, so every other trace stays the file it was.
inline constexpr int kSweepTextVersion = 8;
inline constexpr int kSweepCompactVersion = 10;

/// True when some node's `links` holds a list the file form shortens, so
/// the writer needs the versions above.
bool has_derivable(const Trace& t);

/// Per node of `t`: the `links` field as the file stores it, where that
/// differs from the trace's; nullopt where the field is stored as it is.
/// `sweeps`, when given, is set to whether some of them use a sweep.
std::vector<std::optional<std::pair<FieldId, Elastic>>> stored(const Trace& t,
                                                               bool* sweeps = nullptr);

/// The reader's inverse, for one node: every stored -n of its `links`
/// becomes [n, n-1, ..., 1] and, with `sweeps` (the sweep versions), every
/// `1 -n` the lists [n], [n-1], ..., [1]. Throws std::invalid_argument when the field is
/// not a sequence of lists (a length with fewer values after it than it
/// says) or a derived list is too long to hold.
void derive(Node& n, bool sweeps);

}  // namespace tracefold::links_form
