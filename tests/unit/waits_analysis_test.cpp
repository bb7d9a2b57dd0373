// Wait-state analysis (tracefold/waits.hpp) on hand-made timelines whose
// waiting times are known to the nanosecond.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "test_util.hpp"
#include "tracefold/cube4.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/timeline_io.hpp"
#include "tracefold/waits.hpp"

namespace tracefold {
namespace {

using testing::make_event;

struct Timelines {
  Trace trace;
  WaitInput in;
  explicit Timelines(int32_t n) {
    trace.world_size = n;
    trace.comms.define_world(n);
    trace.sites = testing::make_sites(8);
    in.ranks.resize(std::size_t(n));
  }
  Event& add(int32_t r, const std::string& op, SiteId site, int64_t start, int64_t end,
             std::vector<std::pair<std::string, int64_t>> fields = {}) {
    return testing::add_timed(in.ranks[std::size_t(r)], op, site, start, end, std::move(fields));
  }
  WaitReport run() { return analyze_waits(trace, in); }
};

double cell(const WaitReport& r, WaitPattern p, int32_t rank) {
  double s = 0;
  for (const auto& [key, v] : r.severity)
    if (std::get<0>(key) == int32_t(p) && std::get<2>(key) == rank) s += v;
  return s;
}

std::string top_label(const WaitReport& r, WaitPattern p, int32_t rank) {
  int32_t best = -1;
  double v = 0;
  for (const auto& [key, s] : r.severity)
    if (std::get<0>(key) == int32_t(p) && std::get<2>(key) == rank && s > v) {
      v = s;
      best = std::get<1>(key);
    }
  return best < 0 ? "" : r.callpaths[std::size_t(best)].label;
}

TEST(WaitsAnalysis, LateSenderAndWrongOrder) {
  Timelines t(2);
  // Rank 1 asks for tag 2 first; tag 1 was sent at 100, tag 2 only at 1000.
  t.add(0, "MPI_Send", 0, 100, 110, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  t.add(0, "MPI_Send", 0, 1000, 1010, {{"peer", 1}, {"tag", 2}, {"comm", 0}});
  t.add(0, "MPI_Send", 0, 5000, 5010, {{"peer", 1}, {"tag", 3}, {"comm", 0}});
  t.add(1, "MPI_Recv", 1, 0, 1020, {{"peer", 0}, {"tag", 2}, {"comm", 0}});
  t.add(1, "MPI_Recv", 2, 1020, 1030, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Recv", 3, 2000, 5020, {{"peer", 0}, {"tag", 3}, {"comm", 0}});
  const WaitReport r = t.run();
  EXPECT_EQ(r.messages, 3u);
  // 1000 ns waiting for tag 2 (wrong order) + 3000 ns for tag 3 (plain).
  EXPECT_NEAR(cell(r, WaitPattern::kLateSender, 1), 4000e-9, 1e-12);
  EXPECT_NEAR(cell(r, WaitPattern::kWrongOrder, 1), 1000e-9, 1e-12);
  EXPECT_EQ(cell(r, WaitPattern::kLateSender, 0), 0);
  EXPECT_EQ(cell(r, WaitPattern::kLateReceiver, 0), 0);
  EXPECT_EQ(top_label(r, WaitPattern::kWrongOrder, 1).rfind("MPI_Recv at app+0x20", 0), 0u);
  // All the Late Sender of the tag-2 receive is Wrong Order: nothing left
  // exclusively; the tag-3 receive's is all plain Late Sender.
  for (std::size_t cp = 0; cp < r.callpaths.size(); ++cp) {
    const std::string& label = r.callpaths[cp].label;
    const double ex = r.exclusive(int32_t(WaitPattern::kLateSender), int32_t(cp), 1);
    if (label.rfind("MPI_Recv at app+0x20", 0) == 0) {
      EXPECT_NEAR(ex, 0, 1e-12);
    }
    if (label.rfind("MPI_Recv at app+0x40", 0) == 0) {
      EXPECT_NEAR(ex, 3000e-9, 1e-12);
    }
  }
}

TEST(WaitsAnalysis, LateSenderOnWaitallGoesToTheIrecv) {
  Timelines t(2);
  t.add(0, "MPI_Send", 0, 700, 710, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Irecv", 4, 0, 10, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  Event& w = t.add(1, "MPI_Waitall", 5, 10, 800, {{"req", 1}});
  w.set_list(FieldTable::links(), {1});
  const WaitReport r = t.run();
  EXPECT_NEAR(cell(r, WaitPattern::kLateSender, 1), 690e-9, 1e-12);
  EXPECT_EQ(top_label(r, WaitPattern::kLateSender, 1).rfind("MPI_Irecv", 0), 0u);
}

TEST(WaitsAnalysis, LateReceiverOnSsend) {
  Timelines t(2);
  t.add(0, "MPI_Init", 7, 0, 0);
  t.add(1, "MPI_Init", 7, 0, 0);
  t.add(0, "MPI_Ssend", 0, 0, 600, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Recv", 1, 500, 610, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  const WaitReport r = t.run();
  EXPECT_NEAR(cell(r, WaitPattern::kLateReceiver, 0), 500e-9, 1e-12);
  EXPECT_EQ(cell(r, WaitPattern::kLateSender, 1), 0);
  // The delay that made rank 0 wait is rank 1's 500 ns before its receive.
  double cost = 0;
  for (const auto& [key, v] : r.delay_costs) {
    EXPECT_EQ(key.second, 1);
    EXPECT_TRUE(r.callpaths[std::size_t(key.first)].computation);
    cost += v;
  }
  EXPECT_NEAR(cost, 500e-9, 1e-12);
}

// Each kind of send once, its receive posted late: 500 ns into a blocking
// send, after an eager send returned, 390 ns into the MPI_Wait or the
// MPI_Waitall of an Isend, 400 ns into a Bsend.
Timelines late_posted_receives() {
  Timelines t(2);
  auto p2p = [](int64_t peer, int64_t tag) {
    return std::vector<std::pair<std::string, int64_t>>{{"peer", peer}, {"tag", tag}, {"comm", 0}};
  };
  t.add(0, "MPI_Send", 0, 0, 600, p2p(1, 1));
  t.add(0, "MPI_Send", 1, 1000, 1010, p2p(1, 2));
  t.add(0, "MPI_Isend", 2, 2000, 2010, p2p(1, 3));
  t.add(0, "MPI_Wait", 3, 2010, 2600).set_list(FieldTable::links(), {1});
  t.add(0, "MPI_Isend", 4, 3000, 3010, p2p(1, 4));
  t.add(0, "MPI_Waitall", 5, 3010, 3600, {{"req", 1}}).set_list(FieldTable::links(), {1});
  t.add(0, "MPI_Bsend", 6, 4000, 4600, p2p(1, 5));
  t.add(1, "MPI_Recv", 0, 500, 610, p2p(0, 1));
  t.add(1, "MPI_Recv", 1, 1500, 1510, p2p(0, 2));
  t.add(1, "MPI_Recv", 2, 2400, 2610, p2p(0, 3));
  t.add(1, "MPI_Recv", 3, 3400, 3610, p2p(0, 4));
  t.add(1, "MPI_Recv", 4, 4400, 4610, p2p(0, 5));
  return t;
}

double late_receiver_at(const WaitReport& r, const std::string& label_prefix) {
  double s = 0;
  for (const auto& [key, v] : r.severity)
    if (std::get<0>(key) == int32_t(WaitPattern::kLateReceiver) &&
        r.callpaths[std::size_t(std::get<1>(key))].label.rfind(label_prefix, 0) == 0)
      s += v;
  return s;
}

TEST(WaitsAnalysis, LateReceiverByScalascasRule) {
  Timelines t = late_posted_receives();
  const WaitReport r = t.run();
  EXPECT_EQ(r.messages, 5u);
  // The blocking send and the Isend's single MPI_Wait, from their enter to
  // the receive's post; not the send that returned before the post, the
  // Waitall or the Bsend.
  EXPECT_NEAR(late_receiver_at(r, "MPI_Send at app+0x10"), 500e-9, 1e-12);
  EXPECT_NEAR(late_receiver_at(r, "MPI_Isend at app+0x30"), 390e-9, 1e-12);
  EXPECT_NEAR(cell(r, WaitPattern::kLateReceiver, 0), 890e-9, 1e-12);
  EXPECT_EQ(cell(r, WaitPattern::kLateReceiver, 1), 0);
  for (const std::string& note : r.notes) EXPECT_EQ(note.find("Late Receiver"), std::string::npos);
}

TEST(WaitsAnalysis, LateReceiverByProtocol) {
  Timelines t = late_posted_receives();
  WaitOptions o;
  o.late_receiver = LateReceiverRule::kProtocol;
  // No synchronous send and nothing rendezvous-sized: nothing.
  EXPECT_EQ(cell(analyze_waits(t.trace, t.in, o), WaitPattern::kLateReceiver, 0), 0);
  // Every message rendezvous-sized: every send, each at most its call's
  // length (the eager one its whole 10 ns), the Waitall's and Bsend's too.
  o.rendezvous_bytes = 0;
  const WaitReport r = analyze_waits(t.trace, t.in, o);
  EXPECT_NEAR(late_receiver_at(r, "MPI_Send at app+0x20"), 10e-9, 1e-12);
  EXPECT_NEAR(late_receiver_at(r, "MPI_Isend at app+0x50"), 390e-9, 1e-12);
  EXPECT_NEAR(cell(r, WaitPattern::kLateReceiver, 0), (500 + 10 + 390 + 390 + 400) * 1e-9, 1e-12);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes.back(),
            "Late Receiver by protocol (--late-receiver protocol): synchronous sends and messages "
            "of at least 0 bytes");
}

TEST(WaitsAnalysis, LateReceiverRuleNames) {
  EXPECT_EQ(late_receiver_rules().at("scalasca"), LateReceiverRule::kScalasca);
  EXPECT_EQ(late_receiver_rules().at("protocol"), LateReceiverRule::kProtocol);
  EXPECT_EQ(WaitOptions{}.late_receiver, LateReceiverRule::kScalasca);
}

TEST(WaitsAnalysis, BarrierWaitAndCompletion) {
  Timelines t(3);
  t.add(0, "MPI_Barrier", 0, 0, 510, {{"comm", 0}});
  t.add(1, "MPI_Barrier", 0, 100, 520, {{"comm", 0}});
  t.add(2, "MPI_Barrier", 0, 500, 505, {{"comm", 0}});
  const WaitReport r = t.run();
  EXPECT_EQ(r.collectives, 1u);
  EXPECT_NEAR(cell(r, WaitPattern::kWaitBarrier, 0), 500e-9, 1e-12);
  EXPECT_NEAR(cell(r, WaitPattern::kWaitBarrier, 1), 400e-9, 1e-12);
  EXPECT_EQ(cell(r, WaitPattern::kWaitBarrier, 2), 0);
  EXPECT_NEAR(cell(r, WaitPattern::kBarrierCompletion, 0), 5e-9, 1e-12);
  EXPECT_NEAR(cell(r, WaitPattern::kBarrierCompletion, 1), 15e-9, 1e-12);
  EXPECT_EQ(cell(r, WaitPattern::kBarrierCompletion, 2), 0);
  // Rank 2 came last: the critical path runs through its computation.
  double on_2 = 0;
  for (const auto& [key, v] : r.critical_path)
    if (key.second == 2) on_2 += v;
  EXPECT_NEAR(on_2, 5e-9, 1e-12);  // its barrier call; nothing before it was recorded
}

TEST(WaitsAnalysis, RootedCollectivesAndScan) {
  Timelines t(3);
  // Bcast from root 1 entering at 300; Reduce to root 0 entering first;
  // Scan entered at 900, 700, 800.
  t.add(0, "MPI_Bcast", 0, 0, 310, {{"comm", 0}, {"root", 1}, {"count", 1}});
  t.add(1, "MPI_Bcast", 0, 300, 305, {{"comm", 0}, {"root", 1}, {"count", 1}});
  t.add(2, "MPI_Bcast", 0, 100, 320, {{"comm", 0}, {"root", 1}, {"count", 1}});
  t.add(0, "MPI_Reduce", 1, 400, 600, {{"comm", 0}, {"root", 0}, {"count", 1}});
  t.add(1, "MPI_Reduce", 1, 550, 560, {{"comm", 0}, {"root", 0}, {"count", 1}});
  t.add(2, "MPI_Reduce", 1, 500, 510, {{"comm", 0}, {"root", 0}, {"count", 1}});
  t.add(0, "MPI_Scan", 2, 900, 1000, {{"comm", 0}, {"count", 1}});
  t.add(1, "MPI_Scan", 2, 700, 1000, {{"comm", 0}, {"count", 1}});
  t.add(2, "MPI_Scan", 2, 800, 1000, {{"comm", 0}, {"count", 1}});
  const WaitReport r = t.run();
  EXPECT_EQ(r.collectives, 3u);
  EXPECT_NEAR(cell(r, WaitPattern::kLateBroadcast, 0), 300e-9, 1e-12);
  EXPECT_EQ(cell(r, WaitPattern::kLateBroadcast, 1), 0);
  EXPECT_NEAR(cell(r, WaitPattern::kLateBroadcast, 2), 200e-9, 1e-12);
  EXPECT_NEAR(cell(r, WaitPattern::kEarlyReduce, 0), 100e-9, 1e-12);  // until rank 2 came
  EXPECT_EQ(cell(r, WaitPattern::kEarlyReduce, 1) + cell(r, WaitPattern::kEarlyReduce, 2), 0);
  EXPECT_EQ(cell(r, WaitPattern::kEarlyScan, 0), 0);
  EXPECT_NEAR(cell(r, WaitPattern::kEarlyScan, 1), 200e-9, 1e-12);
  EXPECT_NEAR(cell(r, WaitPattern::kEarlyScan, 2), 100e-9, 1e-12);
}

TEST(WaitsAnalysis, IncompleteCollectiveIsSkippedAndSaid) {
  Timelines t(2);
  t.add(0, "MPI_Allreduce", 0, 0, 100, {{"comm", 0}, {"count", 1}});
  const WaitReport r = t.run();
  EXPECT_EQ(r.collectives, 0u);
  EXPECT_EQ(r.incomplete_collectives, 1u);
  EXPECT_EQ(cell(r, WaitPattern::kWaitNxN, 0), 0);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("miss a member"), std::string::npos);
}

// A two-rank Late Sender written as real timeline files; rank 1's clock
// runs `skew` ns ahead of rank 0's, and its files say so (the offsets the
// recorder measures against rank 0).
double late_sender_with_skew(const std::filesystem::path& dir, int64_t skew) {
  CommTable comms;
  comms.define_world(2);
  const SiteTable sites = testing::make_sites(3);
  std::vector<Trace> parts;
  const std::vector<std::vector<Event>> evs = {
      {make_event("MPI_Init", 0),
       make_event("MPI_Send", 1, {{"peer", 1}, {"tag", 7}, {"comm", 0}})},
      {make_event("MPI_Init", 0),
       make_event("MPI_Recv", 2, {{"peer", 0}, {"tag", 7}, {"comm", 0}})}};
  for (int32_t r = 0; r < 2; ++r) {
    Folder f(r);
    for (Event e : evs[std::size_t(r)]) {
      e.set(FieldTable::intern("count", FieldKind::kScalar), 1);
      e.set(FieldTable::intern("dsize", FieldKind::kScalar), 4);
      encode_relative(e, r, comms);
      f.append(e);
    }
    parts.push_back(f.finish(2, sites, comms));
  }
  const Trace trace = reduce_traces(std::move(parts));
  std::filesystem::create_directories(dir);
  const int64_t base = 5'000'000'000;
  for (int32_t r = 0; r < 2; ++r) {
    const int64_t local = r == 1 ? skew : 0;  // rank 1's clock reads `skew` more
    TimelineWriter w;
    w.open((dir / ("rank-" + std::to_string(r) + ".tft")).string(), r, 2, base + local, 0);
    w.set_start_offset(-local, base + local);
    w.add(*OpTable::find("MPI_Init"), base + local, base + local + 10);
    if (r == 0)
      w.add(*OpTable::find("MPI_Send"), base + 1000, base + 1010);
    else
      w.add(*OpTable::find("MPI_Recv"), base + local + 100, base + local + 1020);
    w.close(-local, base + local + 2000);
  }
  const WaitReport rep = analyze_waits(trace, load_wait_input(trace, dir.string()));
  return cell(rep, WaitPattern::kLateSender, 1);
}

// Rank 0 computes 1000 ns before it sends; rank 1 waits for it and
// forwards at once; rank 2 waits for rank 1. Rank 1 did nothing in excess:
// rank 2's wait was passed on through rank 1's wait, so it is rank 0's
// computation's propagated cost, and rank 1's wait its direct cost.
TEST(WaitsAnalysis, PropagatedDelayCostReachesTheFirstLateRank) {
  Timelines t(3);
  for (int32_t r = 0; r < 3; ++r) t.add(r, "MPI_Init", 7, 0, 0);
  t.add(0, "MPI_Send", 0, 1000, 1010, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Recv", 1, 0, 1000, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Send", 2, 1000, 1010, {{"peer", 2}, {"tag", 1}, {"comm", 0}});
  t.add(2, "MPI_Recv", 3, 0, 1010, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  const WaitReport r = t.run();
  EXPECT_NEAR(cell(r, WaitPattern::kLateSender, 1), 1000e-9, 1e-12);
  EXPECT_NEAR(cell(r, WaitPattern::kLateSender, 2), 1000e-9, 1e-12);
  auto only_rank0_computation = [&](const std::map<std::pair<int32_t, int32_t>, double>& m) {
    double sum = 0;
    for (const auto& [key, v] : m) {
      EXPECT_EQ(key.second, 0) << r.callpaths[std::size_t(key.first)].label;
      EXPECT_EQ(r.callpaths[std::size_t(key.first)].label.rfind("computation before MPI_Send", 0),
                0u);
      sum += v;
    }
    return sum;
  };
  EXPECT_NEAR(only_rank0_computation(r.delay_costs), 1000e-9, 1e-12);
  EXPECT_NEAR(only_rank0_computation(r.propagated_costs), 1000e-9, 1e-12);
  for (const std::string& n : r.notes) EXPECT_EQ(n.find("no cause"), std::string::npos) << n;
}

// The chain above, but rank 2's receive seems to end (900) before rank
// 1's send began (1000), as unrepaired clocks can make it: its wait (900
// ns, clamped to the call) ends before rank 1's, yet it must pass its share
// on through rank 1's wait first — the order the parallel backward replay's
// messages impose, not the order of the waits' end times.
TEST(WaitsAnalysis, PropagationFollowsTheWaitsNotTheirEndTimes) {
  Timelines t(3);
  for (int32_t r = 0; r < 3; ++r) t.add(r, "MPI_Init", 7, 0, 0);
  t.add(0, "MPI_Send", 0, 1000, 1010, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Recv", 1, 0, 1000, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Send", 2, 1000, 1010, {{"peer", 2}, {"tag", 1}, {"comm", 0}});
  t.add(2, "MPI_Recv", 3, 0, 900, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  const WaitReport r = t.run();
  EXPECT_NEAR(cell(r, WaitPattern::kLateSender, 2), 900e-9, 1e-12);
  double direct = 0, propagated = 0;
  for (const auto& [key, v] : r.delay_costs) direct += key.second == 0 ? v : 0;
  for (const auto& [key, v] : r.propagated_costs) propagated += key.second == 0 ? v : 0;
  EXPECT_NEAR(direct, 1000e-9, 1e-12);
  EXPECT_NEAR(propagated, 900e-9, 1e-12);
}

// Rank 0 starts an Iallreduce at once and waits in MPI_Wait until rank 1
// starts its own at 990: Wait at N x N of 980 ns, at the Iallreduce, and
// the Wait's time is collective time there, not point-to-point.
TEST(WaitsAnalysis, NonblockingCollectiveWaitsInItsWait) {
  Timelines t(2);
  for (int32_t r = 0; r < 2; ++r) t.add(r, "MPI_Init", 7, 0, 0);
  t.add(0, "MPI_Iallreduce", 0, 0, 10, {{"comm", 0}, {"count", 1}});
  Event& w0 = t.add(0, "MPI_Wait", 1, 10, 1000);
  w0.set_list(FieldTable::links(), {1});
  t.add(1, "MPI_Iallreduce", 0, 990, 1000, {{"comm", 0}, {"count", 1}});
  Event& w1 = t.add(1, "MPI_Wait", 1, 1000, 1010);
  w1.set_list(FieldTable::links(), {1});
  const WaitReport r = t.run();
  EXPECT_EQ(r.collectives, 1u);
  EXPECT_NEAR(cell(r, WaitPattern::kWaitNxN, 0), 980e-9, 1e-12);
  EXPECT_EQ(cell(r, WaitPattern::kWaitNxN, 1), 0);
  EXPECT_EQ(cell(r, WaitPattern::kNxNCompletion, 0), 0);
  EXPECT_EQ(top_label(r, WaitPattern::kWaitNxN, 0).rfind("MPI_Iallreduce", 0), 0u);
  EXPECT_NEAR(cell(r, WaitPattern::kCollective, 0), 1000e-9, 1e-12);
  EXPECT_EQ(cell(r, WaitPattern::kPointToPoint, 0), 0);
  // Rank 1's 990 ns before its Iallreduce made rank 0 wait.
  double cost = 0;
  for (const auto& [key, v] : r.delay_costs) {
    EXPECT_EQ(key.second, 1);
    cost += v;
  }
  EXPECT_NEAR(cost, 980e-9, 1e-12);
}

TEST(WaitsAnalysis, ClockOffsetOfOneRankIsCorrected) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tracefold-waits-" + std::to_string(::getpid()));
  const double same = late_sender_with_skew(dir / "same", 0);
  const double ahead = late_sender_with_skew(dir / "ahead", 3'000'000'000);
  const double behind = late_sender_with_skew(dir / "behind", -40'000);
  std::filesystem::remove_all(dir);
  EXPECT_NEAR(same, 900e-9, 1e-12);
  EXPECT_NEAR(ahead, same, 1e-12);
  EXPECT_NEAR(behind, same, 1e-12);
}

TEST(WaitsAnalysis, MissingTimelineSaysRecordWithTimeline) {
  Trace t;
  t.world_size = 1;
  try {
    load_wait_input(t, "/nonexistent/x.tf.timeline");
    FAIL() << "no error";
  } catch (const WaitsError& e) {
    EXPECT_NE(std::string(e.what()).find("record --timeline"), std::string::npos) << e.what();
  }
}

// A --sample-only run whose rank 0 event log ends after its first send,
// while its timeline goes on to a second send (at 3000 ns) and
// MPI_Finalize. Rank 1 is analysed up to where rank 0's parameters end:
// its first receive (a Late Sender of 900 ns) is kept, the second, which
// waited for the send nothing describes, is left out rather than counted
// as an unmatched receive.
TEST(WaitsAnalysis, CutEventLogIsAnalysedUpToWhereItEnds) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tracefold-cut-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Trace tables;
  tables.world_size = 2;
  tables.comms.define_world(2);
  tables.sites = testing::make_sites(4);
  auto send = [](int64_t tag) {
    return make_event("MPI_Send", 1, {{"peer", 1}, {"tag", tag}, {"comm", 0}});
  };
  auto recv = [](int64_t tag) {
    return make_event("MPI_Recv", 2, {{"peer", 0}, {"tag", tag}, {"comm", 0}});
  };
  std::vector<std::vector<Event>> events = {
      {make_event("MPI_Init", 0), send(1)},
      {make_event("MPI_Init", 0), recv(1), recv(2), make_event("MPI_Finalize", 3)}};
  const std::vector<std::vector<std::tuple<const char*, int64_t, int64_t>>> times = {
      {{"MPI_Init", 0, 10},
       {"MPI_Send", 1000, 1010},
       {"MPI_Send", 3000, 3010},
       {"MPI_Finalize", 3100, 3200}},
      {{"MPI_Init", 0, 10},
       {"MPI_Recv", 100, 1020},
       {"MPI_Recv", 1100, 3020},
       {"MPI_Finalize", 3100, 3200}}};
  for (int32_t r = 0; r < 2; ++r) {
    TimelineWriter w;
    w.open((dir / ("rank-" + std::to_string(r) + ".tft")).string(), r, 2, 0, 0);
    w.set_start_offset(0, 0);
    for (const auto& [op, enter, exit] : times[std::size_t(r)])
      w.add(*OpTable::find(op), enter, exit);
    w.close(0, 4000);
  }
  const WaitInput in = load_wait_input(tables, std::move(events), dir.string());
  std::filesystem::remove_all(dir);
  EXPECT_EQ(in.cut_rank, 0);
  EXPECT_EQ(in.cut_ns, 3000);
  EXPECT_EQ(in.unlogged, (std::vector<uint64_t>{2, 0}));
  EXPECT_EQ(in.after_cut, (std::vector<uint64_t>{0, 2}));
  ASSERT_EQ(in.ranks[1].size(), 2u);
  const WaitReport rep = analyze_waits(tables, in);
  EXPECT_EQ(rep.unmatched_recvs, 0u);
  EXPECT_DOUBLE_EQ(cell(rep, WaitPattern::kLateSender, 1), 900e-9);
}

// Rank 0's timeline reached its size bound after its first send: its
// second send has no time, so rank 1's receive of it (which waited for it)
// and everything later are left out, not analysed as an unmatched receive
// whose waiting would read as transfer.
TEST(WaitsAnalysis, CutTimelineIsAnalysedUpToWhereItEnds) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tracefold-tcut-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Trace tables;
  tables.world_size = 2;
  tables.comms.define_world(2);
  tables.sites = testing::make_sites(4);
  auto send = [](int64_t tag) {
    return make_event("MPI_Send", 1, {{"peer", 1}, {"tag", tag}, {"comm", 0}});
  };
  auto recv = [](int64_t tag) {
    return make_event("MPI_Recv", 2, {{"peer", 0}, {"tag", tag}, {"comm", 0}});
  };
  std::vector<std::vector<Event>> events = {
      {make_event("MPI_Init", 0), send(1), send(2), make_event("MPI_Finalize", 3)},
      {make_event("MPI_Init", 0), recv(1), recv(2), make_event("MPI_Finalize", 3)}};
  const std::vector<std::vector<std::tuple<const char*, int64_t, int64_t>>> times = {
      {{"MPI_Init", 0, 10}, {"MPI_Send", 1000, 1010}},
      {{"MPI_Init", 0, 10},
       {"MPI_Recv", 100, 1005},
       {"MPI_Recv", 1100, 3020},
       {"MPI_Finalize", 3100, 3200}}};
  for (int32_t r = 0; r < 2; ++r) {
    TimelineWriter w;
    w.open((dir / ("rank-" + std::to_string(r) + ".tft")).string(), r, 2, 0, 0);
    w.set_start_offset(0, 0);
    for (const auto& [op, enter, exit] : times[std::size_t(r)])
      w.add(*OpTable::find(op), enter, exit);
    w.close(0, 4000);
  }
  const WaitInput in = load_wait_input(tables, std::move(events), dir.string());
  std::filesystem::remove_all(dir);
  EXPECT_EQ(in.dropped, 2u);
  EXPECT_EQ(in.untimed, (std::vector<uint64_t>{2, 0}));
  EXPECT_TRUE(in.unlogged.empty());
  EXPECT_EQ(in.cut_rank, 0);
  EXPECT_TRUE(in.cut_by_timeline);
  EXPECT_EQ(in.cut_ns, 1010);
  EXPECT_EQ(in.after_cut, (std::vector<uint64_t>{0, 2}));
  ASSERT_EQ(in.ranks[1].size(), 2u);
  const WaitReport rep = analyze_waits(tables, in);
  EXPECT_EQ(rep.unmatched_recvs, 0u);
  EXPECT_DOUBLE_EQ(cell(rep, WaitPattern::kLateSender, 1), 900e-9);
  ASSERT_FALSE(rep.notes.empty());
  EXPECT_NE(rep.notes[0].find("where rank 0's timeline ends"), std::string::npos) << rep.notes[0];
  EXPECT_NE(rep.notes[0].find("2 later timed calls left out (of rank 1)"), std::string::npos)
      << rep.notes[0];
}

TEST(WaitsAnalysis, ControlledLogicalClockRepairsAReceiveBeforeItsSend) {
  Timelines t(2);
  t.add(0, "MPI_Send", 0, 1000, 1010, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Recv", 1, 100, 500, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  t.add(1, "MPI_Barrier", 2, 600, 700, {{"comm", 0}});
  EXPECT_EQ(repair_clock_condition(t.trace, t.in), 1u);
  const auto& r1 = t.in.ranks[1];
  EXPECT_EQ(r1[0].end_ns, 1000);    // ends as its send begins
  EXPECT_EQ(r1[0].start_ns, 600);   // its duration kept
  EXPECT_EQ(r1[1].start_ns, 1100);  // the gap after it kept
  EXPECT_EQ(r1[1].end_ns, 1200);
  EXPECT_EQ(repair_clock_condition(t.trace, t.in), 0u);  // nothing left
}

// The match is made once without copying the events: it lends them to the
// matcher, gives them back intact, and the analysis takes it instead of
// matching again.
TEST(WaitsAnalysis, MatchedOnceOnTheEventsThemselves) {
  Timelines t(2);
  t.add(0, "MPI_Send", 0, 100, 110, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  t.add(0, "MPI_Send", 0, 1000, 1010, {{"peer", 1}, {"tag", 2}, {"comm", 0}});
  t.add(1, "MPI_Recv", 1, 0, 1020, {{"peer", 0}, {"tag", 2}, {"comm", 0}});
  t.add(1, "MPI_Recv", 2, 1020, 1030, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  const WaitInput before = t.in;
  const MatchResult m = match_wait_input(t.trace, t.in);
  ASSERT_EQ(m.messages.size(), 2u);
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(t.in.ranks[r][k].ev.op, before.ranks[r][k].ev.op);
      EXPECT_EQ(t.in.ranks[r][k].ev.fields, before.ranks[r][k].ev.fields);
    }
  EXPECT_EQ(m.messages[0].recv_event, 0u);
  EXPECT_EQ(m.messages[0].send_event, 1u);  // tag 2
  WaitOptions wo;
  wo.matched = &m;
  const WaitReport own = t.run(), given = analyze_waits(t.trace, t.in, wo);
  EXPECT_EQ(given.messages, own.messages);
  EXPECT_EQ(given.severity, own.severity);
  // The analysis reads the match it is given, not its own.
  const MatchResult none;
  wo.matched = &none;
  EXPECT_EQ(analyze_waits(t.trace, t.in, wo).messages, 0u);
}

TEST(WaitsAnalysis, CubeProfileHoldsExclusiveValues) {
  Timelines t(2);
  t.add(0, "MPI_Send", 0, 100, 110, {{"peer", 1}, {"tag", 1}, {"comm", 0}});
  t.add(0, "MPI_Send", 0, 1000, 1010, {{"peer", 1}, {"tag", 2}, {"comm", 0}});
  t.add(1, "MPI_Recv", 1, 0, 1020, {{"peer", 0}, {"tag", 2}, {"comm", 0}});
  t.add(1, "MPI_Recv", 2, 1020, 1030, {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  const WaitReport r = t.run();
  std::vector<int32_t> leaf;
  const Cube4Profile cube = wait_cube(r, &leaf);
  ASSERT_EQ(leaf.size(), r.callpaths.size());
  ASSERT_EQ(cube.metrics.size(), r.patterns.size() + 3);
  EXPECT_EQ(cube.metrics[std::size_t(WaitPattern::kWrongOrder)].uniq_name, "wrong_order");
  EXPECT_EQ(cube.metrics[std::size_t(WaitPattern::kWrongOrder)].parent,
            int32_t(WaitPattern::kLateSender));
  EXPECT_EQ(cube.rank_node.size(), 2u);
  int32_t recv2 = -1;
  for (std::size_t c = 0; c < r.callpaths.size(); ++c)
    if (r.callpaths[c].label.rfind("MPI_Recv at app+0x20", 0) == 0) recv2 = int32_t(c);
  ASSERT_GE(recv2, 0);
  // The call tree: the MPI call is a leaf below its frame, which the
  // computation before it shares.
  const Cube4Cnode& call = cube.cnodes[std::size_t(leaf[std::size_t(recv2)])];
  EXPECT_EQ(cube.regions[std::size_t(call.region)].name, "MPI_Recv");
  ASSERT_GE(call.parent, 0);
  EXPECT_EQ(cube.regions[std::size_t(cube.cnodes[std::size_t(call.parent)].region)].name,
            "app+0x20");
  int32_t below_frame = 0;
  for (const Cube4Cnode& n : cube.cnodes) below_frame += n.parent == call.parent;
  EXPECT_EQ(below_frame, 2);  // MPI_Recv and the computation before it
  recv2 = leaf[std::size_t(recv2)];
  // All of its Late Sender is Wrong Order: exclusive Late Sender is 0.
  EXPECT_NEAR(cube.value(int32_t(WaitPattern::kWrongOrder), recv2, 1), 1000e-9, 1e-12);
  EXPECT_EQ(cube.value(int32_t(WaitPattern::kLateSender), recv2, 1), 0);
  // The call itself (1020 ns) less its waiting, in point-to-point.
  EXPECT_NEAR(cube.value(int32_t(WaitPattern::kPointToPoint), recv2, 1), 20e-9, 1e-12);
  // Written and read back.
  const auto path = std::filesystem::temp_directory_path() /
                    ("tracefold-waits-" + std::to_string(::getpid()) + ".cubex");
  write_cubex(cube, path);
  const Cube4Profile back = read_cubex(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.metrics.size(), cube.metrics.size());
  double wo = 0;
  for (const auto& [key, v] : back.values)
    if (std::get<0>(key) == int32_t(WaitPattern::kWrongOrder)) wo += v;
  EXPECT_NEAR(wo, 1000e-9, 1e-12);
}

TEST(WaitsAnalysis, PatternTreeIsConsistent) {
  const auto& p = wait_patterns();
  ASSERT_EQ(p.size(), std::size_t(WaitPattern::kCount));
  EXPECT_EQ(p[0].parent, -1);
  for (std::size_t i = 1; i < p.size(); ++i) {
    EXPECT_GE(p[i].parent, 0) << p[i].id;
    EXPECT_LT(p[i].parent, int32_t(i)) << p[i].id;  // parents first
  }
  EXPECT_EQ(p[std::size_t(WaitPattern::kWrongOrder)].parent, int32_t(WaitPattern::kLateSender));
}

}  // namespace
}  // namespace tracefold
