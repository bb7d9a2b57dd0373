// Checks the readers of every file format share: what a well-formed trace,
// raw log or partial must hold beyond its grammar (docs/format.md, "Errors").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tracefold/event.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// Empty if `node` has every field its operation requires (required_fields)
/// for all of its ranks; else says which field is missing (and for which
/// ranks, when only some lack it).
std::string missing_required_field(const Node& node);
/// The same for one event of a raw log.
std::string missing_required_field(const Event& event);
/// A module name of a call-site frame: non-empty, valid UTF-8, without
/// spaces or control characters (a path as the loader reports it).
bool valid_module_name(std::string_view name);
/// Empty if every frame of `site` has a valid module name; else which one
/// does not.
std::string invalid_site(const CallSite& site);

/// The node of the trace's MPI_Init_thread, if the program initialized MPI
/// that way. A trace of one stream per rank may come from a recorder that
/// serialized the calls of a program's threads into one stream, recording
/// neither which thread made each nor the thread level: issued on one
/// thread, they deadlock where threads made calls concurrently (two ranks
/// interleave them differently), so replay and benchmark generation refuse
/// such a trace unless the user says that only one thread called MPI
/// (`--single-thread`).
std::optional<std::size_t> init_thread_node(const Trace& trace);
/// What both refusals say after naming the node.
inline constexpr std::string_view kInitThreadRefusal =
    "the program initialized MPI with MPI_Init_thread, and the trace holds one stream per "
    "rank: the recorder keeps each thread's calls in a stream of its own, so either one "
    "thread called MPI or the trace was written before threads were recorded, when all "
    "threads' calls went into one stream without saying which thread made each; calls that "
    "threads made concurrently (MPI_THREAD_MULTIPLE) cannot be ordered on one thread and "
    "would deadlock. If only one thread called MPI (MPI_THREAD_FUNNELED, or SERIALIZED by "
    "one thread), use --single-thread";
/// The first node that a thread other than thread 0 of its rank has (a
/// location past the world, Trace::threads), if any.
std::optional<std::size_t> other_thread_node(const Trace& trace);
/// What `bench --lang conceptual` and `bench --parametric` say of a trace
/// with more than one thread per rank (Trace::threads), after the count;
/// --single-thread does not lift it. (Replay and `bench`'s C output run a
/// thread per stream.)
inline constexpr std::string_view kThreadsRefusal =
    "threads per rank called MPI, each with its own event stream in the trace; coNCePTuaL "
    "and parametric benchmarks have one thread per rank (the C benchmark of one trace runs "
    "one thread per stream)";

}  // namespace tracefold
