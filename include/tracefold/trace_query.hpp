// Questions several commands ask of a folded trace, answered once here so
// that they agree: how a message names a node, which predefined
// communicator an id no recorded call made stands for, whether a statistic
// was recorded; and the empty trace a tool that rewrites the nodes starts
// from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tracefold/trace.hpp"

namespace tracefold {

/// `node #N (MPI_Op at SITE)`: node `index` of `trace` with the number and
/// the call-site label `tracefold print` shows for it.
std::string node_label(const Trace& trace, std::size_t index);

/// The communicators every MPI program has without creating them.
enum class PredefinedComm : uint8_t { kNone, kWorld, kSelf };

/// What communicator `id` is on `world_rank` when no recorded call made it
/// (the recorder names such a communicator by its members):
/// MPI_COMM_SELF where its group there is the rank alone, MPI_COMM_WORLD
/// where it is the whole world in order, kNone otherwise or where the
/// trace does not define it on that rank.
PredefinedComm predefined_comm(const Trace& trace, int64_t id, int32_t world_rank);

/// Whether any timing of any node holds statistic `name`.
bool has_statistic(const Trace& trace, std::string_view name);

/// A trace without nodes that shares `trace`'s header: its world size,
/// call sites, symbol tables, communicators and lossy note. One thread per
/// rank (`threads` 1, `omp` empty): the tools that call it write the nodes
/// of one thread's stream into it.
Trace same_header(const Trace& trace);

}  // namespace tracefold
