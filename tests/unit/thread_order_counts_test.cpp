// The recorder's per-key call counts of the thread order
// (src/record/thread_order_counts.hpp): a cache in front of a map must
// count exactly as the map alone would.
#include "thread_order_counts.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace tracefold::record {
namespace {

// More keys than the cache has slots, used in a random order: every hit,
// miss and eviction path. For each word, 40 keys that differ in it alone:
// more than the slots, so some of them share a slot whatever the hash.
TEST(ThreadOrder, CountsMatchAPlainMap) {
  std::vector<OrderKey> keys;
  for (std::size_t w = 0; w < 4; ++w)
    for (int64_t v = -1; v < 39; ++v) {
      OrderKey k{1, 0, 3, 7};
      k[w] = v;
      keys.push_back(k);
    }
  OrderCounts counts;
  std::map<OrderKey, uint64_t> want;
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, keys.size() - 1);
  for (int i = 0; i < 20000; ++i) {
    // Runs of one key, as a loop makes, between random jumps.
    const OrderKey& k = keys[pick(rng)];
    for (int n = i % 3; n >= 0; --n) {
      const uint64_t before = counts[k]++;
      ASSERT_EQ(before, want[k]++) << "call " << i;
    }
  }
  EXPECT_EQ(counts.map(), want);
}

TEST(ThreadOrder, CountsOfKeysOneWordApart) {
  OrderCounts counts;
  const OrderKey base{1, 2, 3, 4};
  counts[base] = 10;
  for (std::size_t w = 0; w < base.size(); ++w) {
    OrderKey k = base;
    ++k[w];
    EXPECT_EQ(counts[k], 0u) << "word " << w;
    counts[k] = w + 1;
  }
  EXPECT_EQ(counts[base], 10u);
  EXPECT_EQ(counts.map().size(), 5u);
}

// share_thread_order copies a thread's counts into the rank's: the copy
// must count on its own, not through the source's cached addresses.
TEST(ThreadOrder, CopiedCountsAreTheirOwn) {
  OrderCounts first;
  const OrderKey k{0, 0, 1, 5};
  first[k] = 3;
  OrderCounts rank;
  rank[k] = 99;  // a cached address the copy must drop
  rank = first;
  ++rank[k];
  EXPECT_EQ(rank[k], 4u);
  EXPECT_EQ(first[k], 3u);
  OrderCounts copied(first);
  copied[k] += 10;
  EXPECT_EQ(first[k], 3u);
  EXPECT_EQ(copied.map().at(k), 13u);
}

}  // namespace
}  // namespace tracefold::record
