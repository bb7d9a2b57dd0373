// Benchmark-generation passes on small hand-built traces: wildcard
// resolution with deadlock detection (seed 000, 4.4.4, Figure 4.6), the
// resolved view that `diff --resolved` compares, collective alignment
// (4.4.3, Figure 4.4), and both on traces with threads (one walker per
// thread of each rank).
#include "tracefold/bench_passes.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.hpp"
#include "tracefold/bench.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using testing::make_event;
using testing::make_sites;

// Each rank's events folded and merged, on MPI_COMM_WORLD only.
Trace build(const std::vector<std::vector<Event>>& ranks, std::size_t sites = 8) {
  CommTable comms;
  comms.define_world(static_cast<int32_t>(ranks.size()));
  return testing::fold_ranks(ranks, comms, sites);
}

Event p2p(const char* op, SiteId site, int64_t peer, int64_t tag = 0) {
  return make_event(op, site, {{"peer", peer}, {"tag", tag}, {"count", 1}, {"dsize", 8}});
}

Event wait_all(SiteId site, std::vector<int64_t> links) {
  Event e = make_event("MPI_Waitall", site);
  e.set_list(FieldTable::links(), std::move(links));
  return e;
}

const FieldId kPeer = FieldTable::peer();
const FieldId kSrc = FieldTable::src();
const FieldId kSrcs = FieldTable::intern("srcs", FieldKind::kList);
const FieldId kTag = FieldTable::intern("tag", FieldKind::kScalar);
const FieldId kMtag = FieldTable::intern("mtag", FieldKind::kScalar);

std::vector<int64_t> peers_of(const Trace& t, int32_t rank, const char* op) {
  std::vector<int64_t> out;
  for (const Event& e : expand_rank(t, rank))
    if (OpTable::name(e.op) == op) out.push_back(e.get(kPeer));
  return out;
}

// Figure 4.6: rank 1 receives from anyone, then from 0; ranks 0 and 2 each
// send it one message.
std::vector<std::vector<Event>> figure46(int64_t recorded_src) {
  Event wild = p2p("MPI_Recv", 0, kAny);
  if (recorded_src != kAbsent) wild.set(kSrc, recorded_src);
  return {{p2p("MPI_Send", 2, 1)}, {wild, p2p("MPI_Recv", 1, 0)}, {p2p("MPI_Send", 3, 1)}};
}

TEST(BenchPassesWildcards, Figure46WithoutRecordedMatchIsADeadlock) {
  Trace t = build(figure46(kAbsent));
  ASSERT_TRUE(has_wildcards(t));
  try {
    resolve_wildcards(t);
    FAIL() << "no deadlock reported";
  } catch (const DeadlockError& e) {
    // The traversal gives the wildcard rank 0's message (it ran first), so
    // rank 1's MPI_Recv(0) can never complete; rank 2's send is left over.
    ASSERT_EQ(e.blocked().size(), 1u);
    EXPECT_EQ(e.blocked()[0].rank, 1);
    EXPECT_EQ(e.blocked()[0].op, "MPI_Recv");
    EXPECT_EQ(t.nodes[e.blocked()[0].node].key.site, 1u);
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1 at node"), std::string::npos) << what;
    EXPECT_NE(what.find("a message from rank 0"), std::string::npos) << what;
    EXPECT_NE(what.find("unreceived: rank 2 -> rank 1"), std::string::npos) << what;
  }
}

TEST(BenchPassesWildcards, Figure46WithRecordedMatchResolves) {
  Trace t = build(figure46(2));
  const WildcardReport rep = resolve_wildcards(t);
  EXPECT_EQ(rep.recorded, 1u);
  EXPECT_EQ(rep.chosen, 0u);
  EXPECT_EQ(peers_of(t, 1, "MPI_Recv"), (std::vector<int64_t>{2, 0}));
  for (const Event& e : expand_rank(t, 1)) EXPECT_EQ(e.find(kSrc), nullptr);
  EXPECT_FALSE(has_wildcards(t));
  // The result is a valid trace: it survives the text form.
  Trace back = parse_trace(format_trace(t));
  EXPECT_FALSE(diff_traces(t, back).has_value());
}

TEST(BenchPassesWildcards, RecordedSourceThatNeverSendsIsReported) {
  Trace t = build({{p2p("MPI_Send", 2, 1)},
                   {[] {
                     Event e = p2p("MPI_Recv", 0, kAny);
                     e.set(kSrc, 2);  // rank 2 sends nothing
                     return e;
                   }()},
                   {}});
  EXPECT_THROW(resolve_wildcards(t), DeadlockError);
}

TEST(BenchPassesWildcards, TraversalChoosesInArrivalOrderAndFoldsAgain) {
  // Rank 0 receives 3 times from anyone in a loop, ranks 1..3 send once.
  std::vector<std::vector<Event>> ev(4);
  for (int i = 0; i < 3; ++i) ev[0].push_back(p2p("MPI_Recv", 0, kAny, kAny));
  for (int r = 1; r < 4; ++r) ev[static_cast<std::size_t>(r)].push_back(p2p("MPI_Send", 1, 0, r));
  Trace t = build(ev);
  const WildcardReport rep = resolve_wildcards(t);
  EXPECT_EQ(rep.chosen, 3u);
  EXPECT_EQ(peers_of(t, 0, "MPI_Recv"), (std::vector<int64_t>{1, 2, 3}));
  std::vector<int64_t> tags;
  for (const Event& e : expand_rank(t, 0)) tags.push_back(e.get(kTag));
  EXPECT_EQ(tags, (std::vector<int64_t>{1, 2, 3}));
  // Deterministic: a second resolution of a fresh copy gives the same bytes.
  Trace again = build(ev);
  resolve_wildcards(again);
  EXPECT_EQ(format_trace(t), format_trace(again));
}

TEST(BenchPassesWildcards, NonblockingMatchesComeFromTheCompletion) {
  // Rank 0: two wildcard Irecvs and a Waitall that records (2, 1).
  Event w = wait_all(3, {2, 1});
  w.set_list(kSrcs, {2, 1});
  w.set_list(FieldTable::intern("mtags", FieldKind::kList), {0, 0});
  Trace t = build({{p2p("MPI_Irecv", 0, kAny), p2p("MPI_Irecv", 0, kAny), w},
                   {p2p("MPI_Send", 1, 0)},
                   {p2p("MPI_Send", 2, 0)}});
  const Trace original = t;
  const WildcardReport rep = resolve_wildcards(t);
  EXPECT_EQ(rep.recorded, 2u);
  EXPECT_EQ(peers_of(t, 0, "MPI_Irecv"), (std::vector<int64_t>{2, 1}));
  for (const Event& e : expand_rank(t, 0)) EXPECT_EQ(e.find(kSrcs), nullptr);
  // The resolved view of the original equals the resolved trace; without
  // it they differ.
  EXPECT_TRUE(diff_traces(original, t).has_value());
  RankIterator a(original, 0), b(t, 0);
  auto open_a = [&] {
    auto it = std::make_shared<RankIterator>(original, 0);
    return EventSource([it](Event& e) { return it->next(e); });
  };
  auto open_b = [&] {
    auto it = std::make_shared<RankIterator>(t, 0);
    return EventSource([it](Event& e) { return it->next(e); });
  };
  EXPECT_FALSE(
      diff_events(0, resolved_stream(open_a), original.sites, resolved_stream(open_b), t.sites)
          .has_value());
}

TEST(BenchPassesWildcards, ResolvedViewKeepsADifferentSourceDifferent) {
  Event wild = p2p("MPI_Recv", 0, kAny);
  wild.set(kSrc, 2);
  Trace a = build({{}, {wild}, {}});
  Trace b = build({{}, {p2p("MPI_Recv", 0, 0)}, {}});
  auto open = [](const Trace& t) {
    return [&t] {
      auto it = std::make_shared<RankIterator>(t, 1);
      return EventSource([it](Event& e) { return it->next(e); });
    };
  };
  auto d = diff_events(1, resolved_stream(open(a)), a.sites, resolved_stream(open(b)), b.sites);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field, "peer");
}

TEST(BenchPassesWildcards, SynchronousSendsWaitForTheirMatch) {
  // Both ranks Ssend first: no buffering, so neither receive is reached.
  Trace t = build({{p2p("MPI_Ssend", 0, 1), p2p("MPI_Recv", 1, kAny)},
                   {p2p("MPI_Ssend", 0, 0), p2p("MPI_Recv", 1, kAny)}});
  try {
    resolve_wildcards(t);
    FAIL() << "no deadlock reported";
  } catch (const DeadlockError& e) {
    EXPECT_EQ(e.blocked().size(), 2u);
    EXPECT_EQ(e.blocked()[0].op, "MPI_Ssend");
  }
}

TEST(BenchPassesWildcards, CollectivesOrderTheTraversal) {
  // Rank 1 sends tag 7 only after a barrier, rank 2 before it; rank 0's
  // wildcard receive comes after the barrier and takes the first arrival.
  Trace t = build({{make_event("MPI_Barrier", 4), p2p("MPI_Recv", 0, kAny, kAny),
                    p2p("MPI_Recv", 0, kAny, kAny)},
                   {make_event("MPI_Barrier", 4), p2p("MPI_Send", 1, 0, 7)},
                   {p2p("MPI_Send", 2, 0, 9), make_event("MPI_Barrier", 4)}});
  resolve_wildcards(t);
  EXPECT_EQ(peers_of(t, 0, "MPI_Recv"), (std::vector<int64_t>{2, 1}));
}

TEST(BenchPassesWildcards, NoWildcardsLeavesTheTraceAlone) {
  Trace t = build({{p2p("MPI_Send", 0, 1)}, {p2p("MPI_Recv", 1, 0)}});
  const std::string before = format_trace(t);
  EXPECT_FALSE(has_wildcards(t));
  const WildcardReport rep = resolve_wildcards(t);
  EXPECT_EQ(rep.recorded + rep.chosen, 0u);
  EXPECT_EQ(format_trace(t), before);
}

// ------------------------------------------------------------ alignment

std::vector<std::string> ops_of(const Trace& t, int32_t rank) {
  std::vector<std::string> out;
  for (const Event& e : expand_rank(t, rank)) out.push_back(OpTable::name(e.op));
  return out;
}

TEST(BenchPassesAlign, Figure44BarriersFromTwoLinesBecomeOne) {
  Event wait = make_event("MPI_Wait", 5);
  wait.set_list(FieldTable::links(), {1});
  Trace t = build({{p2p("MPI_Isend", 0, 1), make_event("MPI_Barrier", 1), wait},
                   {make_event("MPI_Barrier", 2), p2p("MPI_Irecv", 3, 0), wait}});
  const Trace before = t;
  ASSERT_TRUE(needs_alignment(t));
  const AlignReport rep = align_collectives(t);
  EXPECT_EQ(rep.merged, 1u);
  EXPECT_TRUE(rep.unmerged.empty());
  EXPECT_FALSE(needs_alignment(t));
  std::size_t barriers = 0;
  for (const Node& n : t.nodes)
    if (OpTable::name(n.key.op) == "MPI_Barrier") {
      ++barriers;
      EXPECT_EQ(n.ranks.to_string(), Ranklist::range(0, 2).to_string());
    }
  EXPECT_EQ(barriers, 1u);
  DiffOptions no_sites;
  no_sites.ignore_callsites = true;
  EXPECT_FALSE(diff_traces(before, t, no_sites).has_value());
  EXPECT_TRUE(diff_traces(before, t).has_value());  // rank 1's barrier site changed
  Trace back = parse_trace(format_trace(t));
  EXPECT_FALSE(diff_traces(t, back).has_value());
}

TEST(BenchPassesAlign, LoopedAllreducesOfEvenAndOddRanks) {
  std::vector<std::vector<Event>> ev(4);
  for (int32_t r = 0; r < 4; ++r)
    for (int i = 0; i < 5; ++i) {
      ev[static_cast<std::size_t>(r)].push_back(p2p("MPI_Send", 6, (r + 1) % 4));
      ev[static_cast<std::size_t>(r)].push_back(p2p("MPI_Recv", 7, (r + 3) % 4));
      ev[static_cast<std::size_t>(r)].push_back(
          make_event("MPI_Allreduce", r % 2 ? 1 : 0, {{"count", 4}, {"dsize", 8}}));
    }
  Trace t = build(ev);
  const Trace before = t;
  const AlignReport rep = align_collectives(t);
  EXPECT_EQ(rep.merged, 1u);
  EXPECT_EQ(t.nodes.size(), before.nodes.size() - 1);
  DiffOptions no_sites;
  no_sites.ignore_callsites = true;
  EXPECT_FALSE(diff_traces(before, t, no_sites).has_value());
  for (int32_t r = 0; r < 4; ++r) EXPECT_EQ(ops_of(t, r), ops_of(before, r));
}

TEST(BenchPassesAlign, DifferentCollectivesInOneInstanceAreAnError) {
  Trace t = build({{make_event("MPI_Barrier", 0)}, {make_event("MPI_Bcast", 1, {{"root", 0}})}});
  try {
    align_collectives(t);
    FAIL() << "no error";
  } catch (const PassError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is node #0 (MPI_Barrier at "), std::string::npos) << what;
    EXPECT_NE(what.find(") on rank 0 but node #1 (MPI_Bcast at "), std::string::npos) << what;
  }
}

TEST(BenchPassesAlign, MissingCollectiveIsReported) {
  Trace t = build({{make_event("MPI_Barrier", 0)},
                   {make_event("MPI_Barrier", 1), make_event("MPI_Barrier", 1)}});
  EXPECT_THROW(align_collectives(t), DeadlockError);
}

TEST(BenchPassesAlign, AlignedTraceIsLeftAlone) {
  Trace t = build({{make_event("MPI_Barrier", 0)}, {make_event("MPI_Barrier", 0)}});
  EXPECT_FALSE(needs_alignment(t));
  const std::string before = format_trace(t);
  EXPECT_EQ(align_collectives(t).merged, 0u);
  EXPECT_EQ(format_trace(t), before);
}

}  // namespace
}  // namespace tracefold

namespace tracefold {
namespace {

// Rank 0 starts one persistent wildcard receive twice; each start is
// completed by an MPI_Wait that records its source. The second start links
// to the first, as the recorder writes it.
Trace persistent_trace(int64_t first_src, int64_t second_src) {
  auto start = [] {
    Event e = make_event("MPI_Start", 1);
    e.set_list(FieldTable::links(), {1});
    return e;
  };
  auto wait = [](int64_t src) {
    Event e = make_event("MPI_Wait", 2);
    e.set_list(FieldTable::links(), {1});
    e.set(kSrc, src);
    return e;
  };
  return build(
      {{p2p("MPI_Recv_init", 0, kAny, 5), start(), wait(first_src), start(), wait(second_src)},
       {p2p("MPI_Send", 3, 0, 5)},
       {p2p("MPI_Send", 4, 0, 5)}});
}

TEST(BenchPassesWildcards, PersistentReceiveNamesTheSourceItsStartsShare) {
  // Both starts matched rank 1? Rank 1 sends once: so rank 2 must be one.
  Trace t = persistent_trace(2, 1);
  try {
    resolve_wildcards(t);
    FAIL() << "no error";
  } catch (const PassError& e) {
    EXPECT_NE(std::string(e.what()).find("its starts matched source 2 and source 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(BenchPassesWildcards, PersistentReceiveWithOneSourceResolves) {
  Trace t = build({{p2p("MPI_Recv_init", 0, kAny, 5),
                    [] {
                      Event e = make_event("MPI_Start", 1);
                      e.set_list(FieldTable::links(), {1});
                      return e;
                    }(),
                    [] {
                      Event e = make_event("MPI_Wait", 2);
                      e.set_list(FieldTable::links(), {1});
                      e.set(kSrc, 2);
                      return e;
                    }()},
                   {},
                   {p2p("MPI_Send", 4, 0, 5)}});
  const WildcardReport rep = resolve_wildcards(t);
  EXPECT_EQ(rep.recorded, 1u);
  EXPECT_EQ(peers_of(t, 0, "MPI_Recv_init"), (std::vector<int64_t>{2}));
}

// The C generator runs the resolution itself: the wildcard is gone from the
// program unless asked to keep it, and a deadlock stops it with nothing
// written.
TEST(BenchGenPasses, GeneratedCodeNamesTheRecordedSource) {
  const Trace t = build(figure46(2));
  bench::Summary s;
  const std::string c = bench::generate_c(t, {}, &s);
  EXPECT_EQ(c.find("MPI_ANY_SOURCE"), std::string::npos) << c;
  EXPECT_EQ(s.wildcards_recorded, 1u);
  EXPECT_EQ(s.wildcards_chosen, 0u);
  bench::Options keep;
  keep.keep_wildcards = true;
  const std::string kept = bench::generate_c(t, keep, &s);
  EXPECT_NE(kept.find("MPI_ANY_SOURCE"), std::string::npos) << kept;
  EXPECT_EQ(s.wildcards_recorded + s.wildcards_chosen, 0u);
}

TEST(BenchGenPasses, DeadlockStopsGenerationAndWritesNothing) {
  const Trace t = build(figure46(kAbsent));
  const auto dir = std::filesystem::temp_directory_path() / "tracefold-bench-deadlock-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  try {
    bench::write_c(t, {}, (dir / "b.c").string());
    FAIL() << "generated a benchmark for a trace that deadlocks";
  } catch (const DeadlockError& e) {
    // The node as `tracefold print` shows it: number, operation, call site.
    const std::string at =
        "rank 1 at node #" + std::to_string(e.blocked()[0].node) + " (MPI_Recv at app+0x20) waits";
    EXPECT_NE(std::string(e.what()).find(at), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST(BenchGenPasses, CollectivesFromTwoLinesBecomeOneStatement) {
  // Rank 0 reaches the barrier from site 0, the others from site 1.
  const Trace t = build({{make_event("MPI_Barrier", 0)},
                         {make_event("MPI_Barrier", 1)},
                         {make_event("MPI_Barrier", 1)}});
  ASSERT_TRUE(needs_alignment(t));
  bench::Summary s;
  const std::string c = bench::generate_c(t, {}, &s);
  EXPECT_EQ(s.collectives_merged, 1u);
  // The trace's barriers only: the program's own start-up barrier goes
  // through PMPI_Barrier.
  std::size_t calls = 0;
  for (std::size_t at = c.find("MPI_Barrier("); at != std::string::npos;
       at = c.find("MPI_Barrier(", at + 1))
    if (at == 0 || c[at - 1] != 'P') ++calls;
  EXPECT_EQ(calls, 1u) << c;
}

}  // namespace
}  // namespace tracefold

// ------------------------------------------------------------ threads

namespace tracefold {
namespace {

// A trace with threads from raw logs, one per rank: `thread T` lines switch
// streams (docs/format.md "The thread dimension"), peers are world ranks,
// call sites app+0x10 .. app+0x40 are sites 1 .. 4.
Trace build_threads(const std::vector<std::string>& ranks) {
  std::vector<Trace> parts;
  const std::string size = std::to_string(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    parts.push_back(fold_log(
        parse_raw_log("rank " + std::to_string(r) + " size " + size +
                          "\nsite 1 app+0x10\nsite 2 app+0x20\nsite 3 app+0x30\nsite 4 app+0x40\n" +
                          ranks[r] + "thread-order 0 1\n",
                      "rank " + std::to_string(r))));
  return reduce_traces(std::move(parts));
}

constexpr const char* kBarrier = "MPI_Barrier site=1 comm=0\n";
constexpr const char* kSendTo0 = "MPI_Send site=3 peer=0 tag=5 count=1 dsize=8 comm=0\n";

// Thread 1 of rank 0 receives twice from anyone, its statuses naming
// `first` and then `second`; thread 1 of ranks 1 and 2 sends it one
// message each. Thread 0 of every rank calls a barrier.
Trace thread_one_wildcards(int first, int second) {
  const auto recv = [](int src) {
    return "MPI_Recv site=2 peer=any tag=5 count=1 dsize=8 comm=0 src=" + std::to_string(src) +
           "\n";
  };
  const std::string senders = std::string("thread 0\n") + kBarrier + "thread 1\n" + kSendTo0;
  return build_threads(
      {std::string("thread 0\n") + kBarrier + "thread 1\n" + recv(first) + recv(second), senders,
       senders});
}

TEST(BenchPassesThreads, WildcardsOfThreadOneResolveFromTheirRecordedMatches) {
  Trace t = thread_one_wildcards(2, 1);
  ASSERT_EQ(t.threads, 2);
  ASSERT_TRUE(has_wildcards(t));
  const WildcardReport rep = resolve_wildcards(t);
  EXPECT_EQ(rep.recorded, 2u);
  EXPECT_EQ(rep.chosen, 0u);
  EXPECT_FALSE(has_wildcards(t));
  // Location 3 is thread 1 of rank 0.
  EXPECT_EQ(peers_of(t, 3, "MPI_Recv"), (std::vector<int64_t>{2, 1}));
  for (const Event& e : expand_rank(t, 3)) EXPECT_EQ(e.find(kSrc), nullptr);
  Trace back = parse_trace(format_trace(t));
  EXPECT_FALSE(diff_traces(t, back).has_value());
}

TEST(BenchPassesThreads, DeadlockOnThreadOneNamesRankAndThread) {
  // Both statuses name rank 2, which sends once: the second receive
  // waits forever, and rank 1's message is left over.
  Trace t = thread_one_wildcards(2, 2);
  try {
    resolve_wildcards(t);
    FAIL() << "no deadlock reported";
  } catch (const DeadlockError& e) {
    ASSERT_EQ(e.blocked().size(), 1u);
    EXPECT_EQ(e.blocked()[0].rank, 0);
    EXPECT_EQ(e.blocked()[0].op, "MPI_Recv");
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0 thread 1 at node"), std::string::npos) << what;
    EXPECT_NE(what.find("unreceived: rank 1 -> rank 0"), std::string::npos) << what;
  }
}

TEST(BenchPassesThreads, AnotherThreadsRequestsAreRefusedNamingTheThread) {
  // Thread 1 of rank 0 posts a wildcard receive that thread 0 completes.
  Trace t =
      build_threads({"thread 1\nMPI_Irecv site=2 peer=any tag=5 count=1 dsize=8 comm=0\n"
                     "thread 0\nMPI_Wait site=4 links=[1] lthreads=[1] src=1\n",
                     std::string("thread 0\n") + kSendTo0 + "thread 1\n" + kBarrier});
  try {
    resolve_wildcards(t);
    FAIL() << "no error";
  } catch (const PassError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0 thread 0 at node"), std::string::npos) << what;
    EXPECT_NE(what.find("requests thread 1 made"), std::string::npos) << what;
  }
}

TEST(BenchPassesThreads, BarriersOfThreadOneFromTwoLinesBecomeOne) {
  // Thread 1 of rank 0 reaches the barrier from site 2, of rank 1 from
  // site 3; thread 0 makes no collective.
  Trace t = build_threads({"thread 0\nMPI_Init site=1\nthread 1\nMPI_Barrier site=2 comm=0\n",
                           "thread 0\nMPI_Init site=1\nthread 1\nMPI_Barrier site=3 comm=0\n"});
  const Trace before = t;
  ASSERT_TRUE(needs_alignment(t));
  const AlignReport rep = align_collectives(t);
  EXPECT_EQ(rep.merged, 1u);
  EXPECT_FALSE(needs_alignment(t));
  std::size_t barriers = 0;
  for (const Node& n : t.nodes)
    if (OpTable::name(n.key.op) == "MPI_Barrier") ++barriers;
  EXPECT_EQ(barriers, 1u);
  DiffOptions no_sites;
  no_sites.ignore_callsites = true;
  EXPECT_FALSE(diff_traces(before, t, no_sites).has_value());
}

TEST(BenchPassesThreads, ThreadsSharingACommunicatorsCollectivesAreRefused) {
  // Thread 0's barriers need aligning, and thread 1 of every rank calls
  // barriers on the same communicator: which of a rank's threads came
  // first is not in the trace.
  Trace t = build_threads(
      {std::string("thread 0\n") + kBarrier + "thread 1\n" + "MPI_Barrier site=4 comm=0\n",
       "thread 0\nMPI_Barrier site=2 comm=0\nthread 1\n"
       "MPI_Barrier site=4 comm=0\n"});
  try {
    align_collectives(t);
    FAIL() << "no error";
  } catch (const PassError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0: threads 0 and 1 both call collectives on communicator 0"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace tracefold
