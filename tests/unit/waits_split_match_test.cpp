// Message matching split by receiver (src/analysis/waits/split_match.hpp):
// blocks of ranks that see only their own events, their sends routed to
// the block of each receiver, give match_wait_input's messages and counts,
// whatever the blocks' sizes.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "tracefold/value_seq.hpp"
#include "tracefold/waits.hpp"
#include "waits/split_match.hpp"

namespace tracefold {
namespace {

using waits_detail::BlockMessages;
using waits_detail::SendDescriptor;

struct Recording {
  Trace trace;
  WaitInput in;
  explicit Recording(int32_t n) {
    trace.world_size = n;
    trace.comms.define_world(n);
    trace.sites = testing::make_sites(8);
    in.ranks.resize(std::size_t(n));
  }
  Event& add(int32_t r, const std::string& op,
             std::vector<std::pair<std::string, int64_t>> f = {}) {
    auto& evs = in.ranks[std::size_t(r)];
    const int64_t t = int64_t(evs.size()) * 100;
    return testing::add_timed(evs, op, 0, t, t + 10, std::move(f));
  }
};

// Five ranks: nonblocking messages completed by Waitall, blocking ones in
// another tag order than sent, a Sendrecv ring, a wildcard receive, a
// send nobody receives, a receive nobody sends to and MPI_PROC_NULL.
Recording five_ranks() {
  Recording t(5);
  for (int32_t r = 0; r < 5; ++r) {
    const int64_t right = (r + 1) % 5, left = (r + 4) % 5;
    t.add(r, "MPI_Irecv", {{"peer", left}, {"tag", 7}, {"comm", 0}, {"req", 1}});
    t.add(r, "MPI_Isend",
          {{"peer", right}, {"tag", 7}, {"comm", 0}, {"req", 2}, {"count", 4}, {"dsize", 8}});
    t.add(r, "MPI_Waitall", {{"req", 2}}).set_list(FieldTable::links(), {2, 1});
    t.add(r, "MPI_Sendrecv",
          {{"peer", right},
           {"tag", 3},
           {"rpeer", left},
           {"rtag", 3},
           {"comm", 0},
           {"count", 1},
           {"dsize", 4}});
    t.add(r, "MPI_Send", {{"peer", kNull}, {"tag", 1}, {"comm", 0}});
  }
  t.add(0, "MPI_Send", {{"peer", 4}, {"tag", 1}, {"comm", 0}});
  t.add(0, "MPI_Send", {{"peer", 4}, {"tag", 2}, {"comm", 0}});
  t.add(4, "MPI_Recv", {{"peer", 0}, {"tag", 2}, {"comm", 0}});
  t.add(4, "MPI_Recv", {{"peer", 0}, {"tag", 1}, {"comm", 0}});
  t.add(2, "MPI_Send", {{"peer", 3}, {"tag", 9}, {"comm", 0}});
  t.add(3, "MPI_Recv", {{"peer", kAny}, {"tag", 9}, {"comm", 0}, {"src", 2}, {"mtag", 9}});
  t.add(1, "MPI_Send", {{"peer", 2}, {"tag", 5}, {"comm", 0}});  // never received
  t.add(2, "MPI_Recv", {{"peer", 0}, {"tag", 6}, {"comm", 0}});  // never sent
  return t;
}

// Where block q of k starts: contiguous blocks, of unequal sizes when k
// does not divide n.
int32_t block_start(int32_t n, int32_t q, int32_t k) {
  return int32_t(int64_t(n) * q / k);
}

// The matching of `t` split into k blocks, each seeing only its own ranks'
// events, concatenated in block order.
MatchResult split(const Recording& t, int32_t k) {
  const int32_t n = t.trace.world_size;
  std::vector<BlockMessages> blocks;
  for (int32_t q = 0; q < k; ++q) {
    WaitInput own;
    own.ranks.resize(std::size_t(n));
    const int32_t first = block_start(n, q, k), last = block_start(n, q + 1, k);
    for (int32_t r = first; r < last; ++r) own.ranks[std::size_t(r)] = t.in.ranks[std::size_t(r)];
    blocks.push_back(waits_detail::block_messages(t.trace, own, first, last));
  }
  MatchResult all;
  for (int32_t q = 0; q < k; ++q) {
    const int32_t first = block_start(n, q, k), last = block_start(n, q + 1, k);
    std::vector<SendDescriptor> to_me;
    for (const BlockMessages& b : blocks)
      for (const SendDescriptor& s : b.sends)
        if (s.receiver >= first && s.receiver < last) to_me.push_back(s);
    BlockMessages& b = blocks[std::size_t(q)];
    MatchResult m =
        waits_detail::match_block(std::move(to_me), std::move(b.recvs), b.unmatched_recvs);
    all.messages.insert(all.messages.end(), m.messages.begin(), m.messages.end());
    all.unmatched_sends += m.unmatched_sends;
    all.unmatched_recvs += m.unmatched_recvs;
  }
  return all;
}

void expect_same(const MatchResult& a, const MatchResult& b, int32_t k) {
  SCOPED_TRACE("blocks: " + std::to_string(k));
  EXPECT_EQ(a.unmatched_sends, b.unmatched_sends);
  EXPECT_EQ(a.unmatched_recvs, b.unmatched_recvs);
  ASSERT_EQ(a.messages.size(), b.messages.size());
  for (std::size_t i = 0; i < a.messages.size(); ++i) {
    const Message &x = a.messages[i], &y = b.messages[i];
    SCOPED_TRACE("message " + std::to_string(i));
    EXPECT_EQ(
        std::tie(x.sender, x.receiver, x.sender_stream, x.receiver_stream, x.comm, x.tag, x.bytes,
                 x.send_event, x.recv_event, x.recv_complete_event, x.send_complete_event),
        std::tie(y.sender, y.receiver, y.sender_stream, y.receiver_stream, y.comm, y.tag, y.bytes,
                 y.send_event, y.recv_event, y.recv_complete_event, y.send_complete_event));
  }
}

TEST(WaitsSplitMatch, BlocksOfAnySizeGiveTheWholeMatch) {
  Recording t = five_ranks();
  const MatchResult whole = match_wait_input(t.trace, t.in);
  // The fixture exercises what it claims to: completions found, a wildcard
  // resolved, one send and one receive left over.
  ASSERT_EQ(whole.messages.size(), 13u);
  EXPECT_EQ(whole.unmatched_sends, 1u);
  EXPECT_EQ(whole.unmatched_recvs, 1u);
  EXPECT_EQ(whole.messages[0].recv_event, 0u);
  EXPECT_EQ(whole.messages[0].recv_complete_event, 2u);
  EXPECT_EQ(whole.messages[0].send_complete_event, 2u);
  // 2 and 3 blocks do not divide 5 ranks: blocks of unequal sizes.
  for (int32_t k = 1; k <= 5; ++k) expect_same(split(t, k), whole, k);
}

}  // namespace
}  // namespace tracefold
