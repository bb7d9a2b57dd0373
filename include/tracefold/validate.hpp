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
/// A trace whose MPI_Init_thread node records the thread level
/// (recorded_thread_level) comes from a recorder that gives every thread
/// its own stream, so it is not such a trace: this returns the node only
/// when it records no level.
std::optional<std::size_t> init_thread_node(const Trace& trace);
/// The thread levels of MPI_Init_thread as the recorder stores them, on
/// that call's node (fields `required` and `provided`, docs/format.md "The
/// thread level"): MPI's own constants differ between libraries, so the
/// trace numbers them 0 SINGLE, 1 FUNNELED, 2 SERIALIZED, 3 MULTIPLE.
struct ThreadLevel {
  int required = 0;  ///< what the program asked for
  int provided = 0;  ///< what the MPI library gave it
};
/// The levels of the lowest rank that has them, if the trace's
/// MPI_Init_thread node records them (nullopt for MPI_Init and for traces
/// of recorders that did not).
std::optional<ThreadLevel> recorded_thread_level(const Trace& trace);
/// `MPI_THREAD_SINGLE` ... `MPI_THREAD_MULTIPLE` for 0 to 3, else the number.
std::string thread_level_name(int level);
/// `required MPI_THREAD_X, provided MPI_THREAD_Y` (print and stats).
std::string describe_thread_level(const ThreadLevel& level);
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
