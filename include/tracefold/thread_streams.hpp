// One thread class of a trace with threads (Trace::threads > 1) as a trace
// of one thread per rank, and back. Thread t of rank r is location
// t * P + r (docs/format.md "The thread dimension"); the tools that work
// per thread (bench's one function per thread, extrapolation's one fit per
// thread class) project the streams onto the ranks, so that every
// ranklist, peer and table reads as in a trace without threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tracefold/trace.hpp"

namespace tracefold {

/// The locations [lo, lo + p) of `locations`, as ranks 0 .. p - 1.
Ranklist project_locations(const Ranklist& locations, int32_t lo, int32_t p);

/// `ranks` moved up by `by` (ranks r become locations r + by).
Ranklist shift_ranks(const Ranklist& ranks, int32_t by);

/// Thread `thread`'s streams: the nodes some rank's thread `thread` has,
/// their ranklists and values projected onto the ranks, in the trace's
/// node order. The tables (sites, symbols, communicators) are the trace's;
/// `threads` is 1 and `omp` empty. Histograms are kept as they are (their
/// minimum and maximum name locations). With `origin`, each kept node's
/// index in `trace` is appended to it.
Trace thread_stream(const Trace& trace, int32_t thread, std::vector<std::size_t>* origin = nullptr);

/// The inverse for a trace built thread by thread: appends the nodes of
/// `stream` (a trace of one thread per rank over `into.world_size` ranks)
/// as thread `thread`'s, their call sites interned into `into`'s table and
/// every ranklist (and histogram minimum and maximum) moved to the
/// thread's locations. `into.threads` grows to hold the thread; its
/// communicator table takes in the stream's.
void append_thread_stream(Trace& into, const Trace& stream, int32_t thread);

}  // namespace tracefold
