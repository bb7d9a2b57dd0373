// Small traces that use every part of the trace format, shared by the
// trace file tests.
#pragma once

#include <gtest/gtest.h>

#include "stencil.hpp"
#include "test_util.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace.hpp"

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

}  // namespace tracefold::testing
