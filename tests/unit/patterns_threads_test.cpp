// Patterns per thread class (src/analysis/patterns/threads.cpp): a trace
// whose threads keep to channels of their own splits into one trace of one
// thread per rank per thread index, each analysed alone; a channel two
// threads of a rank use -- also through a wildcard -- is named and refused.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "tracefold/patterns.hpp"
#include "tracefold/thread_streams.hpp"

namespace tracefold::patterns {
namespace {

using testing::fold_ranks;
using testing::make_event;

constexpr int32_t kRanks = 4;
constexpr int kSteps = 4;

// Thread 0 of every rank: a token passed round the ring on tag 1.
std::vector<std::vector<Event>> ring_thread() {
  std::vector<std::vector<Event>> ranks(kRanks);
  for (int32_t r = 0; r < kRanks; ++r)
    for (int s = 0; s < kSteps; ++s) {
      const int64_t next = (r + 1) % kRanks, prev = (r + kRanks - 1) % kRanks;
      Event send = make_event("MPI_Send", 1, {{"peer", next}, {"tag", 1}});
      Event recv = make_event("MPI_Recv", 2, {{"peer", prev}, {"tag", 1}});
      if (r == 0) {
        ranks[0].push_back(send);
        ranks[0].push_back(recv);
      } else {
        ranks[r].push_back(recv);
        ranks[r].push_back(send);
      }
    }
  return ranks;
}

// Thread 1: a periodic 1-D halo on `tag`, its receives from `source` when
// that is given (kAny: a wildcard), else from the neighbours.
std::vector<std::vector<Event>> halo_thread(int64_t tag, std::optional<int64_t> source = {}) {
  std::vector<std::vector<Event>> ranks(kRanks);
  for (int32_t r = 0; r < kRanks; ++r)
    for (int s = 0; s < kSteps; ++s) {
      const int64_t left = (r + kRanks - 1) % kRanks, right = (r + 1) % kRanks;
      for (int64_t from : {left, right})
        ranks[r].push_back(
            make_event("MPI_Recv", 3, {{"peer", source.value_or(from)}, {"tag", tag}}));
      for (int64_t to : {left, right})
        ranks[r].push_back(make_event("MPI_Send", 4, {{"peer", to}, {"tag", tag}}));
    }
  return ranks;
}

Trace two_threads(const std::vector<std::vector<Event>>& t0,
                  const std::vector<std::vector<Event>>& t1) {
  CommTable comms;
  comms.define_world(kRanks);
  Trace t;
  t.world_size = kRanks;
  append_thread_stream(t, fold_ranks(t0, comms), 0);
  append_thread_stream(t, fold_ranks(t1, comms), 1);
  return t;
}

std::string global_shape(const Trace& stream) {
  Options o;
  o.context = ContextMode::kNone;
  const Result r = find_process_patterns(stream, o, [](SiteId) { return std::string("main"); });
  if (r.global.size() != 1) return std::to_string(r.global.size()) + " global patterns";
  return r.global.front().shape.name;
}

TEST(PatternsThreads, OwnChannelsAnalysedPerThreadClass) {
  const Trace t = two_threads(ring_thread(), halo_thread(2));
  ASSERT_EQ(t.threads, 2);
  EXPECT_FALSE(shared_channel(t));
  const std::vector<Trace> classes = thread_classes(t);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].threads, 1);
  EXPECT_EQ(global_shape(classes[0]), "ring");
  EXPECT_EQ(global_shape(classes[1]), "1-D halo");
}

TEST(PatternsThreads, SharedChannelNamedAndRefused) {
  const Trace t = two_threads(ring_thread(), halo_thread(1));
  const auto s = shared_channel(t);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank, 0);
  EXPECT_EQ(s->threads[0], 0);
  EXPECT_EQ(s->threads[1], 1);
  EXPECT_EQ(s->comm, 0);
  EXPECT_EQ(s->tag, 1);
  try {
    thread_classes(t);
    FAIL() << "threads sharing a channel should be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(s->describe()), std::string::npos) << e.what();
  }
}

TEST(PatternsThreads, WildcardSourceSharesWithEveryPeer) {
  // Thread 1's receives take any source on the ring's tag: one of them may
  // take the token.
  const auto s = shared_channel(two_threads(ring_thread(), halo_thread(1, kAny)));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->tag, 1);
  EXPECT_NE(s->describe().find("threads 0 and 1 both use communicator 0"), std::string::npos)
      << s->describe();
}

TEST(PatternsThreads, OneThreadIsItsOwnClass) {
  CommTable comms;
  comms.define_world(kRanks);
  const Trace t = fold_ranks(ring_thread(), comms);
  EXPECT_FALSE(shared_channel(t));
  ASSERT_EQ(thread_classes(t).size(), 1u);
  EXPECT_EQ(global_shape(thread_classes(t)[0]), "ring");
}

}  // namespace
}  // namespace tracefold::patterns
