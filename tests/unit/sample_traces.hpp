// Small traces that use every part of the trace format, and checks of
// text-form errors, shared by the trace file tests.
#pragma once

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

#include "stencil.hpp"
#include "test_util.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::testing {

// A trace that uses every part of the format: loops, iteration-specific
// counts, list fields, sentinels, several communicators (including a
// non-ascending 'order' group), timings with several predecessors, user
// statistics and rank groups.
inline Trace rich_trace() {
  Stencil s{.side = 3, .steps = 6, .kind = StencilKind::kPeriodicComms};
  std::vector<Trace> parts = s.fold_all();
  // Rank 4 runs something else: wildcards, PROC_NULL and a communicator whose
  // rank order is not ascending.
  SiteTable sites = make_sites(3);
  CommTable comms;
  comms.define_world(9);
  comms.define(7, CommGroup{{8, 4, 0}});
  Folder f(4);
  for (int i = 0; i < 4; ++i) {
    Event e = make_event("MPI_Irecv", 0,
                         {{"peer", kAny}, {"tag", kAny}, {"count", 3 + i % 2}, {"comm", 7}});
    e.set(FieldTable::src(), i % 2 ? 0 : 2);  // ranks in comm 7
    e.compute_ns = 100 + i;
    e.comm_ns = 7;
    encode_relative(e, 4, comms);
    f.append(e);
    Event n = make_event("MPI_Send", 1, {{"peer", kNull}, {"count", 0}, {"comm", 7}});
    if (i == 2) n = make_event("MPI_Barrier", 2, {{"comm", 7}});
    encode_relative(n, 4, comms);
    f.append(n);
  }
  parts[4] = f.finish(9, sites, comms);
  Trace t = reduce_traces(std::move(parts));
  // User statistics (plugins) ride along with the timings.
  Histogram h;
  for (int i = 0; i < 5; ++i) h.add(1000 * i, i);
  EXPECT_FALSE(t.nodes.at(0).timings.empty());
  t.nodes.at(0).timings.at(0).stats.emplace_back("cycles", h);
  t.nodes.at(0).timings.at(0).stats.emplace_back("l2_misses", Histogram{});
  return t;
}

inline Trace figure52_trace() {
  Folder f(0);
  for (int i = 0; i < 30; ++i) {
    f.append(make_event("MPI_Allreduce", 0, {{"count", i % 4}}));
    for (int j = 0; j < 1 + i % 3; ++j) {
      f.append(make_event("MPI_Isend", 1, {{"peer", 0}, {"tag", j}}));
      f.append(make_event("MPI_Irecv", 2, {{"peer", 0}}));
      f.append(make_event("MPI_Waitall", 3));
    }
  }
  CommTable comms;
  comms.define_world(1);
  return f.finish(1, make_sites(4), comms);
}

// 1-based number of the line that holds byte `pos`.
// The traces the round-trip tests use: the rich trace, Figure 5.2, folded
// stencils with and without timings, and a lossy trace whose values include
// int64 extremes and sentinels (its histograms make it the last, lossy one).
inline std::vector<Trace> sample_traces() {
  std::vector<Trace> traces;
  traces.push_back(rich_trace());
  traces.push_back(figure52_trace());
  traces.push_back(reduce_traces(Stencil{.side = 5, .steps = 11}.fold_all()));
  Stencil nt{.side = 3, .steps = 4};
  nt.timings = false;
  traces.push_back(reduce_traces(nt.fold_all()));
  FoldOptions lossy;
  lossy.histogram_threshold = 1;
  Folder f(0, lossy);
  for (int i = 0; i < 50; ++i)
    f.append(make_event("MPI_Send", 0,
                        {{"peer", (i * i) % 7},
                         {"count", i % 5 ? i : std::numeric_limits<int64_t>::max() - i % 2},
                         {"tag", i % 3 ? kUndefined : std::numeric_limits<int64_t>::min() + 4}}));
  CommTable comms;
  comms.define_world(7);
  traces.push_back(f.finish(7, make_sites(1), comms));
  return traces;
}

inline std::size_t line_of(const std::string& text, std::size_t pos) {
  return 1 + static_cast<std::size_t>(
                 std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// Parses `text`; expects a TraceFormatError from `source` whose what() starts
// with "SOURCE:LINE: ". Returns the line, or nullopt (after a failure) if
// parsing succeeded or threw something else.
inline std::optional<std::size_t> format_error_line(const std::string& text,
                                                    const std::string& source) {
  try {
    parse_trace(text, source);
    ADD_FAILURE() << source << ": parsed without error";
  } catch (const TraceFormatError& ex) {
    const std::string prefix = source + ":" + std::to_string(ex.line()) + ": ";
    EXPECT_EQ(ex.source(), source);
    EXPECT_EQ(std::string(ex.what()).rfind(prefix, 0), 0u) << ex.what();
    EXPECT_GT(std::string(ex.what()).size(), prefix.size()) << "no message: " << ex.what();
    return ex.line();
  } catch (const std::exception& ex) {
    ADD_FAILURE() << source << ": threw " << typeid(ex).name()
                  << " instead of TraceFormatError: " << ex.what();
  }
  return std::nullopt;
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace tracefold::testing
