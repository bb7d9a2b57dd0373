// The folder's walk path: iterations alike but not identical (inner trip
// counts, calls present in some iterations only) fold into the learned loop
// in place, losslessly, without the general path.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using testing::make_event;
using testing::make_sites;

uint32_t lcg(uint32_t& s) {
  s = s * 1664525u + 1013904223u;
  return s >> 8;
}

// A V-cycle with a data exchange at each level, as amg_like makes it: Isends
// to a per-level neighbour set, then polls (Iprobe, a varying number that
// find nothing, then one that finds a message) and a Recv per neighbour from
// the source the probe named, a Waitall, and an Allreduce per cycle. Now and
// then a level also tests its sends (a call present in some iterations only).
std::vector<Event> exchange_program(int cycles, uint32_t seed) {
  std::vector<Event> in;
  uint32_t s = seed;
  for (int c = 0; c < cycles; ++c) {
    for (int v = 0; v < 7; ++v) {
      const int level = v < 4 ? v : 6 - v;
      const int nb = 2 + (level * 3 + static_cast<int>(seed)) % 4;
      for (int p = 0; p < nb; ++p)
        in.push_back(make_event("MPI_Isend", 0,
                                {{"peer", 1 + p}, {"tag", 100 + level}, {"count", 4 + p * level}}));
      for (int p = 0; p < nb; ++p) {
        const int polls = static_cast<int>(lcg(s) % 6);
        for (int q = 0; q < polls; ++q)
          in.push_back(make_event("MPI_Iprobe", 1, {{"src", kAny}, {"flag", 0}}));
        const int64_t from = 1 + static_cast<int64_t>(lcg(s) % static_cast<uint32_t>(nb));
        in.push_back(make_event("MPI_Iprobe", 1, {{"src", from}, {"flag", 1}}));
        in.push_back(make_event("MPI_Recv", 2, {{"peer", from}, {"count", 4 + p}}));
      }
      if (lcg(s) % 5 == 0) in.push_back(make_event("MPI_Test", 4, {{"flag", 1}}));
      in.push_back(make_event("MPI_Waitall", 3, {{"count", nb}}));
    }
    in.push_back(make_event("MPI_Allreduce", 5, {{"count", 1}}));
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    in[i].compute_ns = static_cast<int64_t>(100 + i % 17);
    in[i].comm_ns = static_cast<int64_t>(i % 5);
  }
  return in;
}

Trace fold(const std::vector<Event>& in, FoldOptions o, FoldPathCounts* paths = nullptr,
           std::size_t* top = nullptr) {
  Folder f(0, std::move(o));
  for (const Event& e : in) f.append(e);
  if (paths) *paths = f.path_counts();
  if (top) *top = f.top_level_size();
  CommTable comms;
  comms.define_world(8);
  return f.finish(8, make_sites(6), comms);
}

void expect_lossless(const Trace& t, const std::vector<Event>& in) {
  const auto out = expand_rank(t, 0);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(out[i].same_call(in[i])) << "event " << i;
}

TEST(FolderWalk, IrregularIterationsFoldInPlaceAndLossless) {
  const auto in = exchange_program(200, 3);
  FoldPathCounts paths;
  std::size_t top = 0;
  const Trace t = fold(in, {}, &paths, &top);
  expect_lossless(t, in);
  EXPECT_EQ(top, 1u);
  EXPECT_EQ(paths.general + paths.fast + paths.replay + paths.repeats + paths.walk, in.size());
  // All but the first few cycles are walked.
  EXPECT_GT(paths.walk, in.size() * 9 / 10) << "general " << paths.general;
  EXPECT_LT(paths.general, in.size() / 10);
}

TEST(FolderWalk, WithoutItEveryIterationTakesTheGeneralPath) {
  // The reason for the walk: the same program without it.
  const auto in = exchange_program(60, 3);
  FoldOptions off;
  off.elastic_iterations = false;
  FoldPathCounts paths;
  const Trace t = fold(in, off, &paths);
  expect_lossless(t, in);
  EXPECT_EQ(paths.walk, 0u);
  EXPECT_GT(paths.general, in.size() / 2);
}

TEST(FolderWalk, WalkOffSpoiledSessionsLeaveInnerLoopsToTheFastPath) {
  // With the walk off, the sessions on the irregular cycle spoil one after
  // the other, and while one records, the fast path stays off. Once they
  // stop for a while, the tail's inner loops (runs of unsuccessful probes,
  // of Isends) take the fast path; the folding stays the general path's.
  const auto in = exchange_program(200, 3);
  FoldOptions off;
  off.elastic_iterations = false;
  FoldPathCounts paths;
  const Trace t = fold(in, off, &paths);
  expect_lossless(t, in);
  FoldOptions general = off;
  general.fast_path = false;
  EXPECT_EQ(format_trace(t), format_trace(fold(in, general)));
  EXPECT_EQ(paths.general + paths.fast + paths.replay + paths.repeats + paths.walk, in.size());
  EXPECT_GT(paths.fast, in.size() / 5) << "general " << paths.general;
}

TEST(FolderWalk, StructureDoesNotGrowWithIterations) {
  const Trace t50 = fold(exchange_program(50, 7), {});
  const Trace t500 = fold(exchange_program(500, 7), {});
  EXPECT_EQ(t50.nodes.size(), t500.nodes.size());
  for (std::size_t i = 0; i < t50.nodes.size() && i < t500.nodes.size(); ++i) {
    EXPECT_EQ(t50.nodes[i].key, t500.nodes[i].key) << i;
    EXPECT_EQ(t50.nodes[i].loops.size(), t500.nodes[i].loops.size()) << i;
  }
}

TEST(FolderWalk, NewStructureStillGoesThroughTheGeneralPath) {
  // After 40 walked cycles a call from a new site appears in every level:
  // the walk cannot place it, the general path takes those iterations and
  // the trace stays lossless.
  auto in = exchange_program(40, 5);
  auto more = exchange_program(40, 5);
  for (std::size_t i = 0; i < more.size(); ++i) {
    in.push_back(more[i]);
    if (more[i].op == *OpTable::find("MPI_Waitall")) in.push_back(make_event("MPI_Barrier", 6, {}));
  }
  FoldPathCounts paths;
  Folder f(0);
  for (const Event& e : in) f.append(e);
  paths = f.path_counts();
  CommTable comms;
  comms.define_world(8);
  const Trace t = f.finish(8, make_sites(7), comms);
  expect_lossless(t, in);
  EXPECT_GT(paths.walk, 0u);
  EXPECT_GT(paths.general, 0u);
}

TEST(FolderWalk, RegularLoopsKeepTheReplayPath) {
  // A stencil step whose values repeat: sessions are clean, the walk never
  // starts, and the result is the general path's byte for byte.
  std::vector<Event> in;
  for (int s = 0; s < 100; ++s) {
    for (int k = 0; k < 3; ++k) {
      for (int n = 0; n < 4; ++n) in.push_back(make_event("MPI_Irecv", 0, {{"peer", n}}));
      for (int n = 0; n < 4; ++n) in.push_back(make_event("MPI_Isend", 1, {{"peer", n}}));
      in.push_back(make_event("MPI_Waitall", 2, {{"count", 8}}));
    }
    in.push_back(make_event("MPI_Allreduce", 3, {{"count", 1}}));
  }
  FoldPathCounts paths;
  const Trace t = fold(in, {}, &paths);
  FoldOptions general;
  general.fast_path = false;
  EXPECT_EQ(format_trace(t), format_trace(fold(in, general)));
  EXPECT_EQ(paths.walk, 0u);
  EXPECT_GT(paths.replay, in.size() / 2);
}

TEST(FolderWalk, LoopThatTurnsRegularStaysOffTheGeneralPath) {
  // Irregular for 30 cycles, then every cycle alike. Alike walked iterations
  // hand the loop back to the sessions; their iterations do not fit the
  // loop's structure directly (one probe where the loop has a polling loop),
  // so they spoil and the walk takes over again, each time after a run
  // twice as long: the general path takes a few iterations only.
  auto in = exchange_program(30, 11);
  const std::size_t irregular = in.size();
  for (int c = 0; c < 400; ++c) {
    for (int p = 0; p < 3; ++p)
      in.push_back(make_event("MPI_Isend", 0, {{"peer", 1 + p}, {"tag", 100}, {"count", 4}}));
    for (int p = 0; p < 3; ++p) {
      in.push_back(make_event("MPI_Iprobe", 1, {{"src", 1 + p}, {"flag", 1}}));
      in.push_back(make_event("MPI_Recv", 2, {{"peer", 1 + p}, {"count", 4}}));
    }
    in.push_back(make_event("MPI_Waitall", 3, {{"count", 3}}));
    in.push_back(make_event("MPI_Allreduce", 5, {{"count", 1}}));
  }
  FoldPathCounts paths;
  const Trace t = fold(in, {}, &paths);
  expect_lossless(t, in);
  EXPECT_LT(paths.general, irregular / 5 + (in.size() - irregular) / 20) << "walk " << paths.walk;
}

// Polls handed over in bulk (append_repeats) while walking, in an iteration
// where a probe that found a message (it reports a source: one field more)
// comes before other polls of the same node: when the iteration is folded
// in, the node has that field and the polls after it do not.
TEST(FolderWalk, BulkPollsAfterAProbeWithMoreFields) {
  std::vector<Event> in;
  Folder f(0);
  uint32_t s = 9;
  std::vector<RepeatTiming> times;
  auto add = [&](const Event& e) {
    in.push_back(e);
    f.append(e);
  };
  for (int c = 0; c < 40; ++c) {
    add(make_event("MPI_Isend", 0, {{"peer", 1}, {"count", 4}}));
    for (int m = 0; m < 2; ++m) {
      const Event fail = make_event("MPI_Iprobe", 1, {{"flag", 0}});
      add(fail);
      const int polls = 2 + static_cast<int>(lcg(s) % 7);
      times.assign(static_cast<std::size_t>(polls), RepeatTiming{50, 3});
      Event copy = fail;
      copy.compute_ns = 50;
      copy.comm_ns = 3;
      for (int p = 0; p < polls; ++p) in.push_back(copy);
      f.append_repeats(fail, times);
      // From cycle 10 on a probe finds the message first (src: one field more).
      if (c >= 10) add(make_event("MPI_Iprobe", 1, {{"flag", 1}, {"src", 1 + m}}));
      add(make_event("MPI_Recv", 2, {{"peer", 1 + m}, {"count", 4}}));
    }
    add(make_event("MPI_Waitall", 3, {{"count", 1}}));
  }
  const FoldPathCounts paths = f.path_counts();
  EXPECT_GT(paths.walk, 0u);
  EXPECT_GT(paths.repeats, 0u);
  CommTable comms;
  comms.define_world(8);
  expect_lossless(f.finish(8, make_sites(6), comms), in);
}

// Short scripts (found by a fuzzer) where a walk gives up while it holds
// poll repeats: its events are fed back without any path that keeps events
// aside starting in between (a repeat's scratch event was overwritten, a
// stale replay ran on freed nodes, events kept aside were dropped at
// finish()). Steps: 0 a probe that found nothing, 1 a receive, 2 a probe
// that found a message, 3 a wait; NxK: step N, then K-1 copies of it
// handed over as repeats.
TEST(FolderWalk, GivenUpWalksWithRepeatsStayLossless) {
  const char* const scripts[][2] = {
      {"cells16", "0x2 3 0 1 0x2 1 3 0 1 2 3 2 0x3 1x2"},
      {"window4", "0 3 0 1 0x2 3 0 1 0 0 1 0 1 0x2 3 0 1 0 1 0x2 0 1 0 1 3 0 1 0x2 0 1 2 0x3"},
      {"window4", "0 0 3 0 1 2 3 0 1 0 1 2 3 0 3 0x2 1 0 1 0x2 3 0 1 3 0 1 0 0x3"},
  };
  const Event step[4] = {
      make_event("MPI_Iprobe", 1, {{"flag", 0}}), make_event("MPI_Recv", 2, {{"tag", 1}}),
      make_event("MPI_Iprobe", 1, {{"flag", 1}, {"tag", 3}}), make_event("MPI_Waitall", 3)};
  for (const auto& [mode, script] : scripts) {
    FoldOptions o;
    if (std::string(mode) == "cells16") o.max_align_cells = 16;
    if (std::string(mode) == "window4") o.window = 4;
    Folder f(0, o);
    std::vector<Event> in;
    std::istringstream words(script);
    for (std::string w; words >> w;) {
      const Event& e = step[w[0] - '0'];
      const int copies = w.size() > 2 ? std::stoi(w.substr(2)) : 1;
      in.push_back(e);
      f.append(e);
      if (copies > 1) {
        const std::vector<RepeatTiming> times(static_cast<std::size_t>(copies - 1));
        for (int k = 1; k < copies; ++k) in.push_back(e);
        f.append_repeats(e, times);
      }
    }
    CommTable comms;
    comms.define_world(8);
    const Trace t = f.finish(8, make_sites(6), comms);
    SCOPED_TRACE(script);
    expect_lossless(t, in);
    EXPECT_EQ(f.events(), in.size());
  }
}

// Rounds of a setup phase's data exchange, as exchange_setup makes them:
// Isends to a computed set of ranks (a different number each round), then a
// loop that probes for any source (a Recv when the probe finds a message)
// and tests the sends still pending; once every message is in, iterations
// only test. A Waitall and an Allreduce or a Barrier close the round.
std::vector<Event> setup_rounds(int rounds, uint32_t seed) {
  std::vector<Event> in;
  uint32_t s = seed;
  for (int r = 0; r < rounds; ++r) {
    const int tag = 700 + r % 4;
    const int nsend = 1 + static_cast<int>(lcg(s) % 3);
    int expect = 1 + static_cast<int>(lcg(s) % 3);
    int pending = nsend;
    for (int p = 0; p < nsend; ++p)
      in.push_back(make_event("MPI_Isend", 0, {{"peer", 1 + p}, {"tag", tag}, {"count", 1 + p}}));
    while (expect > 0 || pending > 0) {
      if (expect > 0) {
        if (lcg(s) % 2 == 0) {
          const int64_t from = 1 + static_cast<int64_t>(lcg(s) % 3);
          in.push_back(make_event("MPI_Iprobe", 1, {{"src", from}, {"tag", tag}, {"flag", 1}}));
          in.push_back(make_event("MPI_Recv", 2, {{"peer", from}, {"tag", tag}}));
          --expect;
          continue;
        }
        in.push_back(make_event("MPI_Iprobe", 1, {{"tag", tag}, {"flag", 0}}));
      }
      for (int i = 0; i < pending;) {
        const bool done = lcg(s) % 3 == 0;
        in.push_back(make_event("MPI_Test", 3, {{"flag", done ? 1 : 0}}));
        if (done)
          --pending;
        else
          ++i;
      }
    }
    in.push_back(make_event("MPI_Waitall", 4, {{"count", 0}}));
    in.push_back(r % 2 == 0 ? make_event("MPI_Allreduce", 5, {{"count", 1}})
                            : make_event("MPI_Barrier", 6, {}));
  }
  for (std::size_t i = 0; i < in.size(); ++i) in[i].compute_ns = static_cast<int64_t>(50 + i % 7);
  return in;
}

TEST(FolderWalk, SetupPhaseRoundsStayLossless) {
  // Irregular enough that the general path learns a different structure per
  // seed; whatever it learns and the walk then keeps, the trace expands back
  // to the calls made.
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const auto in = setup_rounds(300, seed);
    FoldPathCounts paths;
    const Trace t = fold(in, {}, &paths);
    expect_lossless(t, in);
    EXPECT_EQ(paths.general + paths.fast + paths.replay + paths.repeats + paths.walk, in.size());
  }
}

TEST(FolderWalk, PartialIterationAtFinishIsKept) {
  auto in = exchange_program(20, 2);
  // Cut inside a cycle: the walked events kept aside go through the general
  // path at finish().
  in.resize(in.size() - 17);
  expect_lossless(fold(in, {}), in);
}

}  // namespace
}  // namespace tracefold
