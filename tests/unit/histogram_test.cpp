#include "tracefold/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "random_program.hpp"

namespace tracefold {
namespace {

using testing::Rng;

TEST(Histogram, BinOfIsLogarithmic) {
  EXPECT_EQ(Histogram::bin_of(0), 0);
  EXPECT_EQ(Histogram::bin_of(1), 0);
  EXPECT_EQ(Histogram::bin_of(2), 1);
  EXPECT_EQ(Histogram::bin_of(3), 1);
  EXPECT_EQ(Histogram::bin_of(4), 2);
  EXPECT_EQ(Histogram::bin_of(7), 2);
  EXPECT_EQ(Histogram::bin_of(8), 3);
  EXPECT_EQ(Histogram::bin_of(1023), 9);
  EXPECT_EQ(Histogram::bin_of(1024), 10);
  EXPECT_EQ(Histogram::bin_of(1'000'000'000), 29);
  EXPECT_EQ(Histogram::bin_of(std::numeric_limits<int64_t>::max()), 62);
  EXPECT_EQ(Histogram::bin_of(-1), 0);
  EXPECT_EQ(Histogram::bin_of(std::numeric_limits<int64_t>::min()), 0);
  // Every bin b >= 1 is exactly [2^b, 2^(b+1)).
  for (int b = 1; b < 63; ++b) {
    const int64_t lo = int64_t{1} << b;
    EXPECT_EQ(Histogram::bin_of(lo), b);
    EXPECT_EQ(Histogram::bin_of(lo - 1), b - 1);
    EXPECT_LT(Histogram::bin_of(lo), Histogram::kBins);
  }
}

TEST(Histogram, EmptyHistogram) {
  Histogram h;
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.sum(), 0);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_TRUE(h.bins().empty());
  EXPECT_EQ(h.to_string(), "n=0");
  EXPECT_EQ(Histogram::parse("n=0"), h);
}

TEST(Histogram, AddKeepsPerBinAndOverallStatistics) {
  Histogram h;
  h.add(3, 4);
  h.add(10, 2);
  h.add(2, 7);
  h.add(12, 1);
  EXPECT_FALSE(h.empty());
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.sum(), 27);
  EXPECT_DOUBLE_EQ(h.mean(), 27.0 / 4);
  EXPECT_EQ(h.min(), 2);
  EXPECT_EQ(h.min_rank(), 7);
  EXPECT_EQ(h.max(), 12);
  EXPECT_EQ(h.max_rank(), 1);
  ASSERT_EQ(h.bins().size(), 2u);
  EXPECT_EQ(h.bins()[0], (Histogram::Bin{1, 2, 2, 3, 5}));
  EXPECT_EQ(h.bins()[1], (Histogram::Bin{3, 2, 10, 12, 22}));
  EXPECT_EQ(h.to_string(), "n=4 sum=27 min=2@7 max=12@1 bins=1:2:2:3:5,3:2:10:12:22");
}

TEST(Histogram, NegativeValuesAreClampedToZero) {
  Histogram h;
  h.add(-5, 3);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.sum(), 0);
  ASSERT_EQ(h.bins().size(), 1u);
  EXPECT_EQ(h.bins()[0], (Histogram::Bin{0, 1, 0, 0, 0}));
}

// Ties on the overall min or max keep the lowest rank, whatever the order
// in which values arrive or histograms merge.
TEST(Histogram, TiesKeepTheLowestRank) {
  Histogram a;
  a.add(5, 3);
  a.add(5, 1);
  a.add(5, 2);
  EXPECT_EQ(a.min_rank(), 1);
  EXPECT_EQ(a.max_rank(), 1);

  Histogram b;
  b.add(5, 1);
  b.add(5, 3);
  EXPECT_EQ(b.min_rank(), 1);
  EXPECT_EQ(b.max_rank(), 1);

  Histogram lo, hi;
  lo.add(4, 9);
  lo.add(8, 9);
  hi.add(4, 2);
  hi.add(8, 6);
  Histogram m1 = lo;
  m1.merge(hi);
  Histogram m2 = hi;
  m2.merge(lo);
  EXPECT_EQ(m1.min_rank(), 2);
  EXPECT_EQ(m1.max_rank(), 6);
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(m1.to_string(), "n=4 sum=24 min=4@2 max=8@6 bins=2:2:4:4:8,3:2:8:8:16");
}

TEST(Histogram, MergeWithEmpty) {
  Histogram h;
  h.add(100, 0);
  Histogram e;
  Histogram a = h;
  a.merge(e);
  EXPECT_EQ(a, h);
  e.merge(h);
  EXPECT_EQ(e, h);
  Histogram z, z2;
  z.merge(z2);
  EXPECT_TRUE(z.empty());
  EXPECT_EQ(z, Histogram{});
}

TEST(Histogram, MergeCombinesBins) {
  Histogram a, b;
  a.add(1, 0);   // bin 0
  a.add(40, 0);  // bin 5
  b.add(0, 1);   // bin 0
  b.add(17, 1);  // bin 4
  b.add(63, 1);  // bin 5
  a.merge(b);
  ASSERT_EQ(a.bins().size(), 3u);
  EXPECT_EQ(a.bins()[0], (Histogram::Bin{0, 2, 0, 1, 1}));
  EXPECT_EQ(a.bins()[1], (Histogram::Bin{4, 1, 17, 17, 17}));
  EXPECT_EQ(a.bins()[2], (Histogram::Bin{5, 2, 40, 63, 103}));
  EXPECT_EQ(a.count(), 5u);
  EXPECT_EQ(a.sum(), 121);
  EXPECT_EQ(a.min(), 0);
  EXPECT_EQ(a.min_rank(), 1);
  EXPECT_EQ(a.max(), 63);
  EXPECT_EQ(a.max_rank(), 1);
}

// Merging partial histograms gives exactly the histogram of all values,
// however they are split and in whatever order the parts are merged.
TEST(Histogram, MergeEqualsAddingEverything) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng rng(seed);
    std::vector<std::pair<int64_t, int32_t>> values;
    const auto n = rng.below(60);
    for (uint64_t i = 0; i < n; ++i) {
      int64_t v;
      switch (rng.below(4)) {
        case 0:
          v = static_cast<int64_t>(rng.below(4));
          break;  // many ties
        case 1:
          v = static_cast<int64_t>(rng.below(1'000'000));
          break;
        case 2:
          v = static_cast<int64_t>(rng.next() >> 14);
          break;  // large, sums stay in range
        default:
          v = -static_cast<int64_t>(rng.below(10));
          break;  // clamped
      }
      values.emplace_back(v, static_cast<int32_t>(rng.below(16)));
    }
    Histogram all;
    for (auto [v, r] : values) all.add(v, r);
    // Split into up to 4 parts, merge in a shuffled order.
    std::vector<Histogram> parts(1 + rng.below(4));
    for (auto [v, r] : values) parts[rng.below(parts.size())].add(v, r);
    Histogram merged;
    while (!parts.empty()) {
      const auto k = rng.below(parts.size());
      merged.merge(parts[k]);
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(k));
    }
    ASSERT_EQ(merged, all) << "seed " << seed << "\n"
                           << merged.to_string() << "\n"
                           << all.to_string();
    // Reversed insertion order: same histogram.
    Histogram rev;
    for (auto it = values.rbegin(); it != values.rend(); ++it) rev.add(it->first, it->second);
    ASSERT_EQ(rev, all) << "seed " << seed;
    // Bin invariants.
    uint64_t count = 0;
    int64_t sum = 0;
    int last = -1;
    for (const auto& b : all.bins()) {
      EXPECT_GT(static_cast<int>(b.index), last);
      last = b.index;
      EXPECT_GT(b.count, 0u);
      EXPECT_LE(b.min, b.max);
      EXPECT_EQ(Histogram::bin_of(b.min), b.index);
      EXPECT_EQ(Histogram::bin_of(b.max), b.index);
      count += b.count;
      sum += b.sum;
    }
    EXPECT_EQ(count, all.count());
    EXPECT_EQ(sum, all.sum());
    // Text round trip.
    ASSERT_EQ(Histogram::parse(all.to_string()), all) << all.to_string();
    ASSERT_EQ(Histogram::parse(all.to_string()).to_string(), all.to_string());
  }
}

TEST(Histogram, ParseRejectsMalformedText) {
  const char* bad[] = {
      "",
      "n=",
      "n=x",
      "n=0 ",
      "n=0 sum=0",
      "n=1",
      "n=1 sum=5",
      "n=1 sum=5 min=5@0 max=5@0",
      "n=1 sum=5 min=5@0 max=5@0 bins=",
      "n=1 sum=5 min=5 max=5@0 bins=2:1:5:5:5",
      "n=2 sum=5 min=5@0 max=5@0 bins=2:1:5:5:5",             // counts do not add up
      "n=2 sum=10 min=5@0 max=5@0 bins=2:1:5:5:5,2:1:5:5:5",  // repeated bin
      "n=2 sum=10 min=5@0 max=5@0 bins=3:1:5:5:5,2:1:5:5:5",  // descending bins
      "n=1 sum=5 min=5@0 max=5@0 bins=64:1:5:5:5",            // no bin 64
      "n=1 sum=5 min=5@0 max=5@0 bins=2:1:5:5",
      "n=1 sum=5 min=5@0 max=5@0 bins=2:1:5:5:5,",
      "n=1 sum=5 min=5@0 max=5@0 bins=2:1:5:5:5 x",
      "N=0",
  };
  for (const char* text : bad) {
    EXPECT_THROW(Histogram::parse(text), std::invalid_argument) << "'" << text << "'";
  }
  // The message says what was expected.
  try {
    Histogram::parse("n=1 sum=x");
    ADD_FAILURE() << "parsed";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("sum"), std::string::npos) << ex.what();
  }
}

TEST(Histogram, LargeValuesRoundTrip) {
  Histogram h;
  const int64_t big = std::numeric_limits<int64_t>::max() / 4;
  h.add(big, 33);
  h.add(big, 1);
  h.add(0, 1000000);
  EXPECT_EQ(h.max(), big);
  EXPECT_EQ(h.max_rank(), 1);
  EXPECT_EQ(h.min_rank(), 1000000);
  EXPECT_EQ(Histogram::parse(h.to_string()), h);
}

}  // namespace
}  // namespace tracefold
