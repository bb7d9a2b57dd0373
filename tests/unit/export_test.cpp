// Message matching, the communication matrix, the synthesized timeline and
// the matrix/PNG writers, on small handmade traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "test_util.hpp"
#include "tracefold/export.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/timeline.hpp"

namespace tracefold {
namespace {

using testing::make_event;

Event with_links(Event e, std::vector<int64_t> links) {
  e.set_list(FieldTable::links(), std::move(links));
  return e;
}

CommTable world(int32_t n) {
  CommTable c;
  c.define_world(n);
  return c;
}

// A trace from raw-log texts, one per rank, folded and merged.
Trace trace_of(const std::vector<std::string>& logs) {
  Trace t;
  for (std::size_t r = 0; r < logs.size(); ++r) {
    Trace one = fold_log(parse_raw_log(logs[r], "rank-" + std::to_string(r) + ".txt"));
    t = r == 0 ? one : merge_traces(t, one);
  }
  canonicalize_sites(t);
  return t;
}

TEST(MatchMessages, FifoPerTagNotPerOrderOfSends) {
  // Rank 0 sends tag 1, then tag 2, then tag 1; rank 1 receives tag 2 first.
  std::vector<std::vector<Event>> ranks(2);
  ranks[0] = {make_event("MPI_Send", 0, {{"peer", 1}, {"tag", 1}, {"count", 1}, {"dsize", 8}}),
              make_event("MPI_Send", 0, {{"peer", 1}, {"tag", 2}, {"count", 2}, {"dsize", 8}}),
              make_event("MPI_Send", 0, {{"peer", 1}, {"tag", 1}, {"count", 3}, {"dsize", 8}})};
  ranks[1] = {make_event("MPI_Recv", 1, {{"peer", 0}, {"tag", 2}}),
              make_event("MPI_Recv", 1, {{"peer", 0}, {"tag", 1}}),
              make_event("MPI_Recv", 1, {{"peer", 0}, {"tag", 1}})};
  const MatchResult m = match_messages(world(2), ranks);
  ASSERT_EQ(m.messages.size(), 3u);
  EXPECT_EQ(m.unmatched_sends, 0u);
  EXPECT_EQ(m.unmatched_recvs, 0u);
  EXPECT_EQ(m.messages[0].send_event, 1u);  // tag 2
  EXPECT_EQ(m.messages[0].bytes, 16u);
  EXPECT_EQ(m.messages[1].send_event, 0u);  // first tag 1
  EXPECT_EQ(m.messages[2].send_event, 2u);  // second tag 1
  EXPECT_EQ(m.messages[2].recv_event, 2u);
  EXPECT_EQ(m.messages[2].bytes, 24u);
}

TEST(MatchMessages, WildcardsUseTheMatchedSourceAndTag) {
  std::vector<std::vector<Event>> ranks(3);
  ranks[1] = {make_event("MPI_Send", 0, {{"peer", 0}, {"tag", 5}})};
  ranks[2] = {make_event("MPI_Send", 0, {{"peer", 0}, {"tag", 6}})};
  // ANY_SOURCE/ANY_TAG receives: rank 2's message arrived first.
  ranks[0] = {make_event("MPI_Recv", 1, {{"peer", kAny}, {"tag", kAny}, {"src", 2}, {"mtag", 6}}),
              make_event("MPI_Recv", 1, {{"peer", kAny}, {"tag", 5}, {"src", 1}})};
  const MatchResult m = match_messages(world(3), ranks);
  ASSERT_EQ(m.messages.size(), 2u);
  EXPECT_EQ(m.messages[0].sender, 2);
  EXPECT_EQ(m.messages[0].tag, 6);
  EXPECT_EQ(m.messages[1].sender, 1);
  EXPECT_EQ(m.unmatched_recvs, 0u);
}

TEST(MatchMessages, IrecvCompletesAtItsWaitAndProcNullIsNoMessage) {
  std::vector<std::vector<Event>> ranks(2);
  ranks[0] = {make_event("MPI_Isend", 0, {{"peer", 1}, {"tag", 0}, {"count", 4}, {"dsize", 4}}),
              make_event("MPI_Isend", 0, {{"peer", kNull}, {"tag", 0}}),
              with_links(make_event("MPI_Waitall", 1, {{"req", 2}}), {2, 1})};
  ranks[1] = {make_event("MPI_Irecv", 2, {{"peer", 0}, {"tag", 0}}),
              make_event("MPI_Irecv", 2, {{"peer", kNull}, {"tag", 0}}),
              make_event("MPI_Barrier", 3),
              with_links(make_event("MPI_Wait", 4), {2}),  // the first Irecv
              with_links(make_event("MPI_Wait", 4), {1})};
  const MatchResult m = match_messages(world(2), ranks);
  ASSERT_EQ(m.messages.size(), 1u);
  EXPECT_EQ(m.messages[0].send_event, 0u);
  EXPECT_EQ(m.messages[0].send_complete_event, 2u);
  EXPECT_EQ(m.messages[0].recv_event, 0u);
  EXPECT_EQ(m.messages[0].recv_complete_event, 3u);
  EXPECT_EQ(m.messages[0].bytes, 16u);
  EXPECT_EQ(m.unmatched_sends, 0u);
  EXPECT_EQ(m.unmatched_recvs, 0u);
}

TEST(MatchMessages, WildcardIrecvResolvedByItsWaitStatus) {
  std::vector<std::vector<Event>> ranks(3);
  ranks[2] = {make_event("MPI_Send", 0, {{"peer", 0}, {"tag", 3}})};
  ranks[0] = {make_event("MPI_Irecv", 1, {{"peer", kAny}, {"tag", 3}}),
              with_links(make_event("MPI_Wait", 2, {{"src", 2}}), {1})};
  const MatchResult m = match_messages(world(3), ranks);
  ASSERT_EQ(m.messages.size(), 1u);
  EXPECT_EQ(m.messages[0].sender, 2);
  EXPECT_EQ(m.messages[0].recv_complete_event, 1u);
}

// Wildcard Irecvs completed by multi-request calls: each takes its entry of
// srcs/mtags (one per wildcard receive among the requests, in array order).
TEST(MatchMessages, WildcardIrecvsResolvedByWaitallAndWaitsomeLists) {
  const FieldId srcs = FieldTable::intern("srcs", FieldKind::kList);
  const FieldId mtags = FieldTable::intern("mtags", FieldKind::kList);
  std::vector<std::vector<Event>> ranks(4);
  ranks[1] = {make_event("MPI_Send", 0, {{"peer", 0}, {"tag", 5}}),
              make_event("MPI_Send", 0, {{"peer", 0}, {"tag", 8}})};
  ranks[2] = {make_event("MPI_Send", 0, {{"peer", 0}, {"tag", 6}}),
              make_event("MPI_Send", 0, {{"peer", 0}, {"tag", 9}})};
  ranks[3] = {make_event("MPI_Send", 0, {{"peer", 0}, {"tag", 7}})};
  // Waitall of [Irecv(any, any), Irecv(3, 7), Irecv(2, any)]: rank 1 with
  // tag 5 and rank 2 with tag 6, in that array order.
  Event waitall = with_links(make_event("MPI_Waitall", 3), {3, 2, 1});
  waitall.set_list(srcs, {1, 2});
  waitall.set_list(mtags, {5, 6});
  // Then two wildcard Irecvs completed by Waitsome one at a time: the first
  // call completes only the second request (undef entry for the first).
  Event some1 = with_links(make_event("MPI_Waitsome", 5, {{"outcount", 1}}), {2, 1});
  some1.set_list(srcs, {kUndefined, 2});
  some1.set_list(mtags, {kUndefined, 9});
  // The second Irecv's handle is null by now: one live wildcard receive.
  Event some2 = with_links(make_event("MPI_Waitsome", 5, {{"outcount", 1}}), {2, kNull});
  some2.set_list(srcs, {1});
  some2.set_list(mtags, {8});
  ranks[0] = {make_event("MPI_Irecv", 1, {{"peer", kAny}, {"tag", kAny}}),
              make_event("MPI_Irecv", 1, {{"peer", 3}, {"tag", 7}}),
              make_event("MPI_Irecv", 2, {{"peer", 2}, {"tag", kAny}}), waitall,
              make_event("MPI_Irecv", 4, {{"peer", kAny}, {"tag", kAny}}),
              make_event("MPI_Irecv", 4, {{"peer", kAny}, {"tag", kAny}}),
              // A Testsome that found nothing: no srcs (all entries undef).
              with_links(make_event("MPI_Testsome", 6, {{"outcount", 0}}), {2, 1}), some1, some2};
  const MatchResult m = match_messages(world(4), ranks);
  EXPECT_EQ(m.unmatched_recvs, 0u);
  EXPECT_EQ(m.unmatched_sends, 0u);
  ASSERT_EQ(m.messages.size(), 5u);
  std::map<std::size_t, std::tuple<int32_t, int64_t, std::size_t>> by_recv;
  for (const Message& msg : m.messages)
    if (msg.receiver == 0) by_recv[msg.recv_event] = {msg.sender, msg.tag, msg.recv_complete_event};
  EXPECT_EQ(by_recv[0], std::make_tuple(1, int64_t{5}, std::size_t{3}));
  EXPECT_EQ(by_recv[1], std::make_tuple(3, int64_t{7}, std::size_t{3}));
  EXPECT_EQ(by_recv[2], std::make_tuple(2, int64_t{6}, std::size_t{3}));
  EXPECT_EQ(by_recv[4], std::make_tuple(1, int64_t{8}, std::size_t{8}))
      << "completed by the second Waitsome, not the calls that named it before";
  EXPECT_EQ(by_recv[5], std::make_tuple(2, int64_t{9}, std::size_t{7}));
}

TEST(MatchMessages, UnmatchedAndCommunicatorsKeptApart) {
  CommTable comms = world(4);
  // Communicator 1: world ranks 3 and 1, in that order (3 is rank 0 in it).
  comms.define(1, CommGroup{{3, 1}});
  std::vector<std::vector<Event>> ranks(4);
  ranks[3] = {make_event("MPI_Send", 0, {{"peer", 1}, {"tag", 0}, {"comm", 1}}),  // to world rank 1
              make_event("MPI_Send", 0, {{"peer", 1}, {"tag", 0}})};  // to world rank 1, world comm
  ranks[1] = {
      make_event("MPI_Recv", 1, {{"peer", 0}, {"tag", 0}, {"comm", 1}}),  // from world rank 3
      make_event("MPI_Recv", 1, {{"peer", 0}, {"tag", 0}})};              // from world rank 0: none
  const MatchResult m = match_messages(comms, ranks);
  ASSERT_EQ(m.messages.size(), 1u);
  EXPECT_EQ(m.messages[0].sender, 3);
  EXPECT_EQ(m.messages[0].receiver, 1);
  EXPECT_EQ(m.messages[0].comm, 1);
  EXPECT_EQ(m.unmatched_sends, 1u);
  EXPECT_EQ(m.unmatched_recvs, 1u);
  EXPECT_EQ(world_peer(comms, 1, 1, 0), 3);
  EXPECT_EQ(world_peer(comms, 1, 1, 2), -1);
  EXPECT_EQ(world_peer(comms, 0, 1, kNull), -1);
}

TEST(MatchMessages, SendrecvIsASendAndAReceive) {
  // A two-rank exchange with Sendrecv on both sides.
  std::vector<std::vector<Event>> ranks(2);
  ranks[0] = {make_event("MPI_Sendrecv", 0, {{"peer", 1}, {"tag", 1}, {"rpeer", 1}, {"rtag", 2}})};
  ranks[1] = {make_event("MPI_Sendrecv", 0, {{"peer", 0}, {"tag", 2}, {"rpeer", 0}, {"rtag", 1}})};
  const MatchResult m = match_messages(world(2), ranks);
  EXPECT_EQ(m.messages.size(), 2u);
  EXPECT_EQ(m.unmatched_sends + m.unmatched_recvs, 0u);
}

TEST(MatchMessages, ThreadsSharingATagFollowTheNotedOrder) {
  // Rank 0's thread 1 sends first, then its thread 0 (others=1); rank 1's
  // thread 0 receives first, then its thread 1 (others=1): crossed.
  const auto timeline = [](int32_t rank, int32_t thread, std::vector<Event> evs) {
    RankTimeline t;
    t.rank = rank;
    t.thread = thread;
    for (Event& e : evs) t.events.push_back(TimedEvent{std::move(e)});
    return t;
  };
  const std::vector<RankTimeline> streams = {
      timeline(0, 0,
               {make_event("MPI_Send", 0,
                           {{"peer", 1}, {"tag", 7}, {"count", 4}, {"dsize", 4}, {"others", 1}})}),
      timeline(1, 0, {make_event("MPI_Recv", 1, {{"peer", 0}, {"tag", 7}})}),
      timeline(0, 1,
               {make_event("MPI_Send", 0, {{"peer", 1}, {"tag", 7}, {"count", 8}, {"dsize", 4}})}),
      timeline(1, 1, {make_event("MPI_Recv", 1, {{"peer", 0}, {"tag", 7}, {"others", 1}})})};
  const MatchResult m = match_messages(world(2), streams);
  ASSERT_EQ(m.messages.size(), 2u);
  EXPECT_EQ(m.messages[0].receiver_stream, 1u);
  EXPECT_EQ(m.messages[0].sender_stream, 2u);  // thread 1's 8 ints
  EXPECT_EQ(m.messages[0].bytes, 32u);
  EXPECT_EQ(m.messages[1].receiver_stream, 3u);
  EXPECT_EQ(m.messages[1].sender_stream, 0u);
  EXPECT_EQ(m.messages[1].bytes, 16u);
}

const char* const kLog0 =
    "rank 0 size 3\nsite 1 a+0x10\nsite 2 a+0x20\nsite 3 a+0x30\n"
    "MPI_Send site=1 peer=1 tag=0 count=10 dsize=4 compute_ns=100 comm_ns=50\n"
    "MPI_Send site=1 peer=1 tag=0 count=10 dsize=4 compute_ns=100 comm_ns=50\n"
    "MPI_Send site=1 peer=null tag=0 count=10 dsize=4 compute_ns=100 comm_ns=50\n"
    "MPI_Bcast site=3 count=2 dsize=8 root=0\n";
const char* const kLog1 =
    "rank 1 size 3\nsite 2 a+0x20\nsite 3 a+0x30\n"
    "MPI_Recv site=2 peer=0 tag=0 count=10 dsize=4 compute_ns=10 comm_ns=500\n"
    "MPI_Recv site=2 peer=0 tag=0 count=10 dsize=4 compute_ns=10 comm_ns=500\n"
    "MPI_Sendrecv site=3 peer=2 tag=1 count=3 dsize=8 rpeer=2 rtag=1 rcount=3 rdsize=8\n"
    "MPI_Bcast site=3 count=2 dsize=8 root=0\n";
const char* const kLog2 =
    "rank 2 size 3\nsite 3 a+0x30\n"
    "MPI_Sendrecv site=3 peer=1 tag=1 count=5 dsize=8 rpeer=1 rtag=1 rcount=3 rdsize=8\n"
    "MPI_Bcast site=3 count=2 dsize=8 root=0\n";

TEST(CommMatrix, PointToPointSendsAtTheSender) {
  const Trace t = trace_of({kLog0, kLog1, kLog2});
  const CommMatrix m = comm_matrix(t);
  ASSERT_EQ(m.size, 3);
  EXPECT_EQ(m.msgs(0, 1), 2u);
  EXPECT_EQ(m.byte(0, 1), 80u);
  EXPECT_EQ(m.msgs(1, 2), 1u);
  EXPECT_EQ(m.byte(1, 2), 24u);
  EXPECT_EQ(m.msgs(2, 1), 1u);
  EXPECT_EQ(m.byte(2, 1), 40u);
  // Receives, PROC_NULL sends and the Bcast are not counted.
  uint64_t total = 0;
  for (uint64_t v : m.messages) total += v;
  EXPECT_EQ(total, 4u);
  EXPECT_EQ(m.msgs(1, 0), 0u);
  EXPECT_EQ(m.msgs(0, 0), 0u);
  EXPECT_EQ(m.msgs(0, 2), 0u);

  std::ostringstream csv;
  write_matrix_csv(csv, m);
  EXPECT_EQ(csv.str(), "sender,receiver,messages,bytes\n0,1,2,80\n1,2,1,24\n2,1,1,40\n");
  std::ostringstream svg;
  write_matrix_svg(svg, m, "t <test>");
  EXPECT_NE(svg.str().find("t &lt;test&gt;"), std::string::npos);
  EXPECT_NE(
      svg.str().find("data-sender=\"2\" data-receiver=\"1\" data-messages=\"1\" data-bytes=\"40\""),
      std::string::npos);
  EXPECT_EQ(svg.str().find("data-sender=\"1\" data-receiver=\"0\""), std::string::npos);
}

TEST(Timeline, MeansBackToBackAndNominalCalls) {
  const Trace t = trace_of({kLog0, kLog1, kLog2});
  const auto tl = synthesize_timeline(t);
  ASSERT_EQ(tl.size(), 3u);
  ASSERT_EQ(tl[0].events.size(), 4u);
  // Rank 0: (100 + 50) three times, then the untimed Bcast (nominal).
  EXPECT_EQ(tl[0].events[0].compute_start_ns, 0);
  EXPECT_EQ(tl[0].events[0].start_ns, 100);
  EXPECT_EQ(tl[0].events[0].end_ns, 150);
  EXPECT_EQ(tl[0].events[2].end_ns, 450);
  EXPECT_FALSE(tl[0].events[3].timed);
  EXPECT_EQ(tl[0].events[3].end_ns, 450 + kNominalCallNs);
  EXPECT_EQ(tl[0].compute_ns, 300);
  EXPECT_EQ(tl[0].comm_ns, 150);
  EXPECT_EQ(tl[1].comm_ns, 1000);
  for (const auto& r : tl)
    for (std::size_t i = 1; i < r.events.size(); ++i)
      EXPECT_GE(r.events[i].compute_start_ns, r.events[i - 1].end_ns);
  const MatchResult m = match_messages(t.comms, tl);
  EXPECT_EQ(m.messages.size(), 4u);
  EXPECT_EQ(m.unmatched_sends + m.unmatched_recvs, 0u);
}

TEST(Perfetto, OneSlicePerCallAndOneFlowPerMessage) {
  const Trace t = trace_of({kLog0, kLog1, kLog2});
  std::ostringstream out;
  const ExportSummary s = write_perfetto(out, t, "unit", synthesized_timeline(t));
  EXPECT_EQ(s.slices, 10u);
  EXPECT_EQ(s.messages, 4u);
  const std::string j = out.str();
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t p = j.find(needle); p != std::string::npos; p = j.find(needle, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"ph\":\"s\""), 4u);
  EXPECT_EQ(count("\"ph\":\"f\",\"bp\":\"e\""), 4u);
  EXPECT_EQ(count("\"cat\":\"collective\""), 3u);
  EXPECT_EQ(count("\"name\":\"compute\""), 5u);  // ranks 0 and 1 have compute times
  EXPECT_NE(j.find("\"timeline\":\"synthesized from folded trace means\""), std::string::npos);
  EXPECT_NE(j.find("\"name\":\"MPI_Send [site 0] 40 B\""), std::string::npos);
  EXPECT_NE(j.find("\"peer\":\"null\""), std::string::npos);
}

TEST(MatrixPng, ValidSignatureAndSize) {
  CommMatrix m;
  m.size = 3;
  m.messages = {0, 1, 0, 0, 0, 2, 0, 0, 0};
  m.bytes = {0, 8, 0, 0, 0, 800, 0, 0, 0};
  const auto path = std::filesystem::temp_directory_path() / "tracefold_export_test.png";
  write_matrix_png(path, m, 10);
  std::ifstream f(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  ASSERT_GT(data.size(), 33u);
  EXPECT_EQ(data.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(data.substr(12, 4), "IHDR");
  // 3 cells of 10 pixels plus the closing grid line.
  EXPECT_EQ(static_cast<unsigned char>(data[19]), 31);
  EXPECT_EQ(static_cast<unsigned char>(data[23]), 31);
  EXPECT_EQ(data.substr(data.size() - 8, 4), "IEND");
}

TEST(HeatColour, EndsOfTheScale) {
  EXPECT_EQ(heat_colour(0.0), "#ffffcc");
  EXPECT_EQ(heat_colour(1.0), "#800026");
  EXPECT_EQ(heat_colour(2.0), "#800026");
}

// A completion's `lthreads` entry names another thread that made the
// request: its `links` entry counts back in that thread's requests, so it
// must not complete one of the caller's own.
TEST(FindCompletions, AnotherThreadsRequestIsNotTheCallersOwn) {
  const FieldId lthreads = FieldTable::intern("lthreads", FieldKind::kList);
  Event foreign = with_links(make_event("MPI_Wait", 3), {2});
  foreign.set_list(lthreads, {1});
  Event mixed = with_links(make_event("MPI_Waitall", 4), {1, 2});
  mixed.set_list(lthreads, {kNull, 1});
  const std::vector<Event> evs = {make_event("MPI_Irecv", 1, {{"peer", 0}, {"tag", 0}}),
                                  make_event("MPI_Irecv", 2, {{"peer", 0}, {"tag", 1}}), foreign,
                                  mixed, with_links(make_event("MPI_Wait", 3), {2})};
  const RequestCompletions c = find_completions(evs);
  EXPECT_EQ(c.done[0], 4u);  // not by event 2 nor 3, which name thread 1's
  EXPECT_EQ(c.done[1], 3u);  // the Waitall's own entry
}

}  // namespace
}  // namespace tracefold
