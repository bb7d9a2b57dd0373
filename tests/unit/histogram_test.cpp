#include "tracefold/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
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
  // Log bins 0, 4 and 5 are three: at span 2, 0-1 and 4-5.
  EXPECT_EQ(a.span(), 2);
  ASSERT_EQ(a.bins().size(), 2u);
  EXPECT_EQ(a.bins()[0], (Histogram::Bin{0, 2, 0, 1, 1}));
  EXPECT_EQ(a.bins()[1], (Histogram::Bin{4, 3, 17, 63, 120}));
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
      EXPECT_EQ(b.index % all.span(), 0);
      EXPECT_EQ(Histogram::bin_of(b.min) / all.span() * all.span(), b.index);
      EXPECT_EQ(Histogram::bin_of(b.max) / all.span() * all.span(), b.index);
      count += b.count;
      sum += b.sum;
    }
    EXPECT_EQ(count, all.count());
    EXPECT_EQ(sum, all.sum());
    EXPECT_LE(all.bins().size(), static_cast<std::size_t>(Histogram::kMaxBins));
    // The span is the narrowest that fits: one step narrower needs more bins.
    if (all.span() > 1) {
      std::set<int> narrower;
      for (auto [v, r] : values) narrower.insert(Histogram::bin_of(v) / (all.span() / 2));
      EXPECT_GT(narrower.size(), static_cast<std::size_t>(Histogram::kMaxBins)) << "seed " << seed;
    }
    // Text round trip.
    ASSERT_EQ(Histogram::parse(all.to_string()), all) << all.to_string();
    ASSERT_EQ(Histogram::parse(all.to_string()).to_string(), all.to_string());
  }
}

// Merges whose bins the histogram already has are done in place; they must
// give what adding the values gives, also when the other side's narrower
// bins fall in one wide bin, and fall back when a bin is missing.
TEST(Histogram, MergeIntoExistingBinsEqualsAddingEverything) {
  const std::vector<std::vector<int64_t>> into_values = {
      {100, 130}, {1, 40, 1000, 70000}, {5, 6, 7}, {3000}};
  const std::vector<std::vector<int64_t>> other_values = {
      {110, 101}, {2, 65000, 900}, {4, 7}, {2900, 3100}, {120}, {1, 80000}};
  for (const auto& iv : into_values) {
    for (const auto& ov : other_values) {
      Histogram into, other, all;
      for (int64_t v : iv) into.add(v, 2);
      for (std::size_t k = 0; k < ov.size(); ++k) other.add(ov[k], static_cast<int32_t>(k));
      for (int64_t v : iv) all.add(v, 2);
      for (std::size_t k = 0; k < ov.size(); ++k) all.add(ov[k], static_cast<int32_t>(k));
      into.merge(other);
      EXPECT_EQ(into, all) << into.to_string() << "\n" << all.to_string();
    }
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
      "n=1 sum=5 min=5@0 max=5@0 span=3 bins=0:1:5:5:5",  // not a power of two
      "n=1 sum=5 min=5@0 max=5@0 span=1 bins=2:1:5:5:5",  // span 1 is written without span=
      "n=1 sum=5 min=5@0 max=5@0 span=128 bins=0:1:5:5:5",
      "n=1 sum=5 min=5@0 max=5@0 span=4 bins=2:1:5:5:5",  // index not a multiple of the span
      "n=1 sum=5 min=5@0 max=5@0 span= bins=0:1:5:5:5",
      "n=1 sum=5 min=5@0 max=5@0 bins=1:0:2:2:0,2:1:5:5:5",  // empty bin
      "n=1 sum=5 min=5@0 max=5@0 bins=0:1:5:5:5",            // 5 is not in log bin 0
      "n=1 sum=5 min=5@0 max=5@0 bins=3:1:5:5:5",            // nor in log bin 3
      "n=2 sum=9 min=4@0 max=5@0 bins=2:2:5:4:9",            // min above max
      "n=1 sum=5 min=5@0 max=5@0 span=2 bins=2:1:5:5:5,4:1:16:16:16,6:1:64:64:64",
      "n=1 sum=7 min=1@0 max=4@0 bins=0:18446744073709551615:1:1:1,2:2:4:4:8",  // wraps to n
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

TEST(Histogram, BinsWidenWhenMoreThanMaxBinsAreUsed) {
  static_assert(Histogram::kMaxBins == 2, "the expectations below assume two bins");
  Histogram h;
  h.add(1, 0);  // log bin 0
  h.add(4, 0);  // log bin 2
  EXPECT_EQ(h.span(), 1);
  ASSERT_EQ(h.bins().size(), 2u);
  // Log bin 4: three bins; pairs (0, 2, 4) still three; fours fit: 0-3, 4-7.
  h.add(16, 2);
  EXPECT_EQ(h.span(), 4);
  ASSERT_EQ(h.bins().size(), 2u);
  EXPECT_EQ(h.bins()[0], (Histogram::Bin{0, 2, 1, 4, 5}));
  EXPECT_EQ(h.bins()[1], (Histogram::Bin{4, 1, 16, 16, 16}));
  EXPECT_EQ(h.to_string(), "n=3 sum=21 min=1@0 max=16@2 span=4 bins=0:2:1:4:5,4:1:16:16:16");
  EXPECT_EQ(Histogram::parse(h.to_string()), h);
  // Log bin 62 (group 60 at span 4) makes three: at span 8, 0-7 and 56-63.
  const int64_t big = std::numeric_limits<int64_t>::max();
  h.add(big, 1);
  EXPECT_EQ(h.span(), 8);
  ASSERT_EQ(h.bins().size(), 2u);
  EXPECT_EQ(h.bins()[0], (Histogram::Bin{0, 3, 1, 16, 21}));
  EXPECT_EQ(h.bins()[1], (Histogram::Bin{56, 1, big, big, big}));
  // Log bin 20: at span 16 still three groups (0, 16, 48); at 32 two.
  h.add(1 << 20, 3);
  EXPECT_EQ(h.span(), 32);
  ASSERT_EQ(h.bins().size(), 2u);
  EXPECT_EQ(h.bins()[0], (Histogram::Bin{0, 4, 1, 1 << 20, 21 + (1 << 20)}));
  EXPECT_EQ(h.bins()[1].index, 32);
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(Histogram::parse(h.to_string()), h);
}

TEST(Histogram, MergeTakesTheWiderSpan) {
  Histogram wide, narrow;
  for (int64_t v : {1, 4, 16, 64, 256}) wide.add(v, 0);  // log bins 0, 2, 4, 6, 8
  EXPECT_EQ(wide.span(), 8);                             // 0-7 and 8-15
  narrow.add(3, 1);                                      // log bin 1
  EXPECT_EQ(narrow.span(), 1);
  Histogram a = wide, b = narrow;
  a.merge(narrow);
  b.merge(wide);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.span(), 8);
  EXPECT_EQ(a.bins()[0], (Histogram::Bin{0, 5, 1, 64, 88}));
}

// Traces written before bins were bounded keep up to 64 bins at span 1: they
// read unchanged and narrow to kMaxBins on their next merge.
TEST(Histogram, UnboundedHistogramsStillRead) {
  const std::string old =
      "n=6 sum=63 min=1@0 max=32@0 "
      "bins=0:1:1:1:1,1:1:2:2:2,2:1:4:4:4,3:1:8:8:8,4:1:16:16:16,5:1:32:32:32";
  Histogram h = Histogram::parse(old);
  EXPECT_EQ(h.bins().size(), 6u);
  EXPECT_EQ(h.to_string(), old);
  Histogram m;
  m.merge(h);
  EXPECT_EQ(m.span(), 4);
  EXPECT_EQ(m.bins().size(), 2u);
  EXPECT_EQ(m.count(), 6u);
  EXPECT_EQ(m.sum(), 63);
}

// Sampled replay draws within a bin: the draws stay in [min, max] and their
// average is the bin's mean, also for bins skewed to either end.
TEST(Histogram, DrawsWithinABinKeepItsMean) {
  const Histogram::Bin bins[] = {
      {8, 1001, 100, 1500, 100 * 1000 + 1500},  // nearly all at the bottom
      {8, 1001, 100, 1500, 1500 * 1000 + 100},  // nearly all at the top
      {8, 4, 256, 511, 256 + 300 + 400 + 511},  // spread
      {8, 2, 256, 512, 768},                    // exactly the middle
      {0, 3, 7, 7, 21},                         // a single value
  };
  for (const auto& b : bins) {
    const int n = 200000;
    double total = 0;
    for (int i = 0; i < n; ++i) {
      const int64_t v = Histogram::draw_within(b, (i + 0.5) / n);
      ASSERT_GE(v, b.min);
      ASSERT_LE(v, b.max);
      total += static_cast<double>(v);
    }
    const double mean = static_cast<double>(b.sum) / static_cast<double>(b.count);
    EXPECT_NEAR(total / n, mean, 0.01 * mean + 1) << b.min << ".." << b.max;
  }
  // Near INT64_MAX the double 2^63 is out of llround's range: the top of
  // the bin, not its bottom.
  const int64_t top = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Histogram::draw_within({32, 2, 0, top, top}, 1.0), top);
  EXPECT_EQ(Histogram::draw_within({8, 1, 100, 1500, 100}, 0.999), 100);
  EXPECT_EQ(Histogram::draw_within({8, 1, 100, 1500, 1500}, 0.001), 1500);
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
