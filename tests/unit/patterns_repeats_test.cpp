#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

std::vector<Symbol> symbols(const std::string& text) {
  return std::vector<Symbol>(text.begin(), text.end());
}

std::map<std::string, std::size_t> by_text(const std::string& text) {
  const std::vector<Symbol> s = symbols(text);
  std::map<std::string, std::size_t> out;
  for (const Repeat& r : maximal_repeats(s))
    out[text.substr(r.positions[0], r.length)] = r.positions.size();
  return out;
}

// The definition itself, by brute force over every substring and every pair
// of its occurrences (small strings only).
std::map<std::string, std::size_t> brute_force(const std::string& s) {
  std::map<std::string, std::size_t> out;
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t len = 1; i + len <= n; ++len) {
      const std::string w = s.substr(i, len);
      if (out.count(w)) continue;
      std::vector<std::size_t> at;
      for (std::size_t p = 0; p + len <= n; ++p)
        if (s.compare(p, len, w) == 0) at.push_back(p);
      bool maximal = false;
      for (std::size_t a = 0; a < at.size() && !maximal; ++a)
        for (std::size_t b = a + 1; b < at.size() && !maximal; ++b) {
          const int l1 = at[a] ? s[at[a] - 1] : -1, l2 = at[b] ? s[at[b] - 1] : -1;
          const int r1 = at[a] + len < n ? s[at[a] + len] : -2;
          const int r2 = at[b] + len < n ? s[at[b] + len] : -3;
          maximal = l1 != l2 && r1 != r2;
        }
      if (maximal) out[w] = at.size();
    }
  return out;
}

// Seed 004's Figure 3 (a Sweep3D-like rank, events as letters), run without
// context: the seed lists 16 maximal repeats with their occurrence counts.
// Its printed sequence has typos, so the test uses the clean string it
// stands for, ((ab)^3 (ac)^3 (bd)^3 (ad)^3)^3; the seed's list also drops an
// "ad" from the third-longest repeat (it prints abababacacacbdbdbdadad,
// which occurs 3 times only as part of the 24-symbol one below).
TEST(PatternsRepeats, SeedFigure3NonContextual) {
  const std::string unit =
      "ababab"
      "acacac"
      "bdbdbd"
      "adadad";
  const std::map<std::string, std::size_t> expect = {
      {"a", 27},    {"aba", 9},    {"ababa", 6}, {unit, 3},       {"ac", 9},  {"acac", 6},
      {"b", 18},    {"bd", 9},     {"bdbd", 6},  {"da", 11},      {"dad", 9}, {"dada", 8},
      {"dadad", 6}, {"dadada", 5}, {"d", 18},    {unit + unit, 2}};
  EXPECT_EQ(by_text(unit + unit + unit), expect);
}

TEST(PatternsRepeats, AgreesWithTheDefinition) {
  EXPECT_TRUE(by_text("").empty());
  EXPECT_TRUE(by_text("a").empty());
  EXPECT_EQ(by_text("aa"), (std::map<std::string, std::size_t>{{"a", 2}}));
  EXPECT_TRUE(by_text("abcd").empty());
  std::mt19937 rng(29);
  for (int round = 0; round < 300; ++round) {
    std::string s;
    const int len = 1 + static_cast<int>(rng() % 40);
    const int alphabet = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < len; ++i) s += static_cast<char>('a' + rng() % alphabet);
    ASSERT_EQ(by_text(s), brute_force(s)) << s;
  }
}

TEST(PatternsRepeats, LongestFirstPositionsAscending) {
  const std::vector<Symbol> s = symbols("xabcyabczabc");
  const std::vector<Repeat> r = maximal_repeats(s);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].length, 3u);
  EXPECT_EQ(r[0].positions, (std::vector<std::size_t>{1, 5, 9}));
  for (std::size_t i = 1; i < r.size(); ++i) EXPECT_LE(r[i].length, r[i - 1].length);
}

}  // namespace
}  // namespace tracefold::patterns
