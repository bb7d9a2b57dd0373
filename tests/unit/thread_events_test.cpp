#include "tracefold/thread_events.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace tracefold;

namespace {

std::vector<TimelineRecord> records_of(const std::vector<int32_t>& threads) {
  std::vector<TimelineRecord> out;
  for (int32_t t : threads) {
    TimelineRecord r;
    r.thread = t;
    out.push_back(r);
  }
  return out;
}

std::vector<uint64_t> to_vector(std::span<const uint64_t> s) {
  return {s.begin(), s.end()};
}

}  // namespace

// Threads 0, 1 and 3 (2 made no call) interleave their calls.
TEST(ThreadEvents, RankIndicesFallInTheirThreadsOwnSequence) {
  const std::vector<TimelineRecord> rec = records_of({0, 1, 1, 0, 3, 1, 0});
  const ThreadEvents te(rec);
  EXPECT_EQ(te.threads(), 4u);
  EXPECT_EQ(to_vector(te.calls(0)), (std::vector<uint64_t>{0, 3, 6}));
  EXPECT_EQ(to_vector(te.calls(1)), (std::vector<uint64_t>{1, 2, 5}));
  EXPECT_TRUE(te.calls(2).empty());
  EXPECT_EQ(to_vector(te.calls(3)), (std::vector<uint64_t>{4}));
  EXPECT_TRUE(te.calls(9).empty());
  // A call's own index is its place; another thread's index, the thread's next call.
  EXPECT_EQ(te.thread_event(1, 2), 1u);
  EXPECT_EQ(te.thread_event(1, 3), 2u);
  EXPECT_EQ(te.thread_event(1, 0), 0u);
  EXPECT_EQ(te.thread_event(0, 4), 2u);
  EXPECT_EQ(te.thread_event(3, 0), 0u);
  // After a thread's last call, and for threads without calls: none.
  EXPECT_FALSE(te.thread_event(1, 6));
  EXPECT_FALSE(te.thread_event(3, 5));
  EXPECT_FALSE(te.thread_event(2, 0));
  EXPECT_FALSE(te.thread_event(7, 0));
}

TEST(ThreadEvents, NoRecordsNoThreads) {
  const ThreadEvents te({});
  EXPECT_EQ(te.threads(), 0u);
  EXPECT_FALSE(te.thread_event(0, 0));
}
