// The general path keeps a merged event's timing samples raw while it has
// no timing records and few samples (an inner loop's body item, merged
// again one nesting level up), and adds them to histograms only when
// settled: the records must be those that adding every sample gives.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "folder_impl.hpp"

namespace tracefold::folding {
namespace {

Item fresh_event(EventKey pred, int64_t compute, int64_t comm) {
  Item it;
  it.key = EventKey{2, 7}.packed();
  it.first = it.last = it.key;
  it.reps.push_back(1);
  it.raw_timing = compute >= 0 || comm >= 0;
  it.raw_pred = pred;
  it.raw_compute = compute;
  it.raw_comm = comm;
  return it;
}

TEST(FolderTiming, MergedSamplesStayRawAndSettleAsAdded) {
  const int32_t rank = 3;
  const EventKey preds[] = {EventKey{1, 1}, EventKey{2, 7}, EventKey{4, 2}};
  std::mt19937 rng(95);
  for (int trial = 0; trial < 300; ++trial) {
    // Up to past kMaxRawSamples, so that some merges settle midway.
    const std::size_t n = 2 + rng() % 80;
    std::vector<Item> items;
    Item direct;  // every sample added to histograms at once
    for (std::size_t i = 0; i < n; ++i) {
      const EventKey pred = preds[rng() % 3];
      const int64_t compute = rng() % 5 == 0 ? -1 : static_cast<int64_t>(rng() % 100000);
      const int64_t comm = rng() % 7 == 0 ? -1 : static_cast<int64_t>(rng() % 3000);
      items.push_back(fresh_event(pred, compute, comm));
      if (compute >= 0 || comm >= 0) add_raw_timing(direct, pred, compute, comm, rank);
    }
    // Merged in a random tree: iterations into loops, loops into outer ones.
    while (items.size() > 1) {
      const std::size_t i = rng() % (items.size() - 1);
      const std::size_t j = i + 1 + rng() % (items.size() - 1 - i);
      merge_item_timings(items[i], items[j], rank);
      items.erase(items.begin() + static_cast<std::ptrdiff_t>(j));
    }
    Item& b = items.front();
    if (n <= 8) {
      EXPECT_TRUE(b.timings.empty()) << "trial " << trial << ": " << n << " samples";
    }
    settle_timing(b, rank);
    ASSERT_EQ(b.timings.size(), direct.timings.size()) << "trial " << trial;
    for (std::size_t k = 0; k < b.timings.size(); ++k) {
      EXPECT_EQ(b.timings[k].pred, direct.timings[k].pred) << "trial " << trial;
      EXPECT_EQ(b.timings[k].compute, direct.timings[k].compute) << "trial " << trial;
      EXPECT_EQ(b.timings[k].comm, direct.timings[k].comm) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace tracefold::folding
