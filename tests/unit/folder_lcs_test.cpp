// The folder's bit-parallel longest common subsequence against the plain
// dynamic-programming table, on sequences that cross word boundaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "folder_impl.hpp"

namespace tracefold {
namespace {

std::size_t table_lcs(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<std::size_t> t((a.size() + 1) * (b.size() + 1), 0);
  const std::size_t w = b.size() + 1;
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      t[i * w + j] = a[i] == b[j] ? t[(i + 1) * w + j + 1] + 1
                                  : std::max(t[(i + 1) * w + j], t[i * w + j + 1]);
  return t[0];
}

TEST(FolderLcs, AgreesWithTheTableAcrossWordBoundaries) {
  std::mt19937_64 rng(7);
  folding::LcsScratch scratch;
  const std::size_t lengths[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 200, 512};
  int checked = 0;
  for (const std::size_t n : lengths)
    for (const std::size_t m : lengths)
      for (const uint64_t alphabet : {1ull, 2ull, 5ull, 40ull}) {
        std::vector<uint64_t> a(n), b(m);
        // Keys like the folder's: large, packed op/site values.
        for (auto& x : a) x = 0x9e3779b97f4a7c15ull * (rng() % alphabet + 1);
        for (auto& x : b) x = 0x9e3779b97f4a7c15ull * (rng() % alphabet + 1);
        ASSERT_EQ(folding::lcs_length(a, b, scratch), table_lcs(a, b))
            << "n=" << n << " m=" << m << " alphabet=" << alphabet;
        ++checked;
      }
  EXPECT_EQ(checked, 11 * 11 * 4);
}

TEST(FolderLcs, CarriesRunAcrossWords) {
  // b all one symbol over three words, a the same symbol: every position
  // matches, so each step's addition carries through the whole row.
  folding::LcsScratch scratch;
  const std::vector<uint64_t> b(150, 42), a(100, 42);
  EXPECT_EQ(folding::lcs_length(a, b, scratch), 100u);
  EXPECT_EQ(folding::lcs_length(b, a, scratch), 100u);
  const std::vector<uint64_t> c(150, 43);
  EXPECT_EQ(folding::lcs_length(a, c, scratch), 0u);
}

TEST(FolderLcs, GrowingSideAgreesWithTheTable) {
  // The re-test's use: one side stays, the other grows a call at a time,
  // and now and then either changes (a fold in the stretch, another loop).
  std::mt19937_64 rng(11);
  folding::GrowingLcs growing;
  const auto key = [&](uint64_t alphabet) {
    return 0x9e3779b97f4a7c15ull * (rng() % alphabet + 1);
  };
  std::vector<uint64_t> a, b;
  int checked = 0;
  for (int round = 0; round < 40; ++round) {
    const uint64_t alphabet = round % 3 == 0 ? 3 : 12;
    if (round % 8 == 0) {
      a.resize(1 + rng() % 150);
      for (auto& x : a) x = key(alphabet);
    }
    if (round % 4 == 0) {
      b.clear();
    } else if (round % 4 == 1) {
      b[rng() % b.size()] = key(alphabet);  // an earlier call differs: start over
    } else if (round % 4 == 2) {
      a[rng() % a.size()] ^= 1;  // another loop of as many calls, b as it was
    }
    for (int step = 0; step < 70; ++step) {
      b.push_back(key(alphabet));
      ASSERT_EQ(growing.length(a, b), table_lcs(a, b))
          << "round " << round << " step " << step << " |a|=" << a.size() << " |b|=" << b.size();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 40 * 70);
}

}  // namespace
}  // namespace tracefold
