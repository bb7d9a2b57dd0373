#include "handle_queues.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>

namespace tracefold::record {
namespace {

struct Info {
  uint64_t event = 0;
};

using Queues = HandleQueues<uint32_t, Info>;

TEST(HandleQueues, KeepsRepeatsOfOneHandleOldestFirst) {
  Queues q;
  q.push(7, {1});
  q.push(7, {2});
  q.push(9, {3});
  ASSERT_NE(q.find(7, 0), nullptr);
  EXPECT_EQ(q.find(7, 0)->event, 1u);
  EXPECT_EQ(q.find(7, 1)->event, 2u);
  EXPECT_EQ(q.find(7, 2), nullptr);
  q.pop_oldest(7);
  EXPECT_EQ(q.find(7, 0)->event, 2u);
  q.pop_oldest(7);
  EXPECT_EQ(q.find(7, 0), nullptr);
  EXPECT_EQ(q.oldest(9)->event, 3u);
  q.pop_oldest(12345);  // unknown handles are ignored
  EXPECT_EQ(q.find(0, 0), nullptr);
}

// Random pushes and completions against a plain map of deques: catches
// broken probe chains after deletions and growth.
TEST(HandleQueues, MatchesAMapOfQueuesUnderRandomUse) {
  std::mt19937 rng(42);
  for (uint32_t handles : {4u, 60u, 3000u}) {
    Queues q;
    std::map<uint32_t, std::deque<uint64_t>> ref;
    uint64_t next = 0;
    for (int step = 0; step < 40000; ++step) {
      const uint32_t h = 1 + rng() % handles;
      if (rng() % 2) {
        q.push(h, {++next});
        ref[h].push_back(next);
      } else {
        q.pop_oldest(h);
        auto it = ref.find(h);
        if (it != ref.end()) {
          it->second.pop_front();
          if (it->second.empty()) ref.erase(it);
        }
      }
      if (step % 97 == 0) {
        for (uint32_t k = 1; k <= handles; ++k) {
          auto it = ref.find(k);
          const std::size_t n = it == ref.end() ? 0 : it->second.size();
          for (std::size_t i = 0; i <= n; ++i) {
            const Info* got = q.find(k, i);
            if (i == n) {
              ASSERT_EQ(got, nullptr) << "handle " << k << " step " << step;
            } else {
              ASSERT_NE(got, nullptr) << "handle " << k << " step " << step;
              ASSERT_EQ(got->event, it->second[i]);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tracefold::record
