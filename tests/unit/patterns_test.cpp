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

namespace tracefold::patterns {
namespace {

// Seed 004's Figure 5: four processes, sends (S) and receives (R) with the
// partner's number, in functions that serve as contexts. The figure's
// drawing is not in the seed's text; these sequences are reconstructed
// from what the text gives: P1's bi-gram table (S2S3 at 1, 7 and 9 with
// the one at 7 ending its function, S3R2 at 2 and 10, R2R3 at 3 and 11,
// 1-based), its 3-grams S2S3R2 and S3R2R3 at 1 and 9, the per-process
// results below, and the global edges 1->2, 1->3, 2->1, 3->1, 3->4 (every
// send of one process is a receive of its partner: P1 sends 3 times to P2
// and P3 and receives 3 times from each; P3 sends twice to P4).
struct Rank {
  std::vector<Symbol> events;
  std::vector<uint32_t> context;
};
Symbol S(int peer) {
  return static_cast<Symbol>(100 + peer);
}
Symbol R(int peer) {
  return static_cast<Symbol>(200 + peer);
}
Rank in_contexts(std::vector<std::vector<Symbol>> runs) {
  Rank r;
  for (uint32_t c = 0; c < runs.size(); ++c)
    for (Symbol s : runs[c]) {
      r.events.push_back(s);
      r.context.push_back(c);
    }
  return r;
}

TEST(PatternsProcess, SeedFigure5PerProcessPatterns) {
  const Rank p1 = in_contexts({{S(2), S(3), R(2), R(3)},    // F1
                               {R(3), R(2), S(2), S(3)},    // F2
                               {S(2), S(3), R(2), R(3)}});  // F3
  const Rank p2 = in_contexts({{S(1), R(1)}, {S(1), R(1)}, {R(1), S(1)}});
  const Rank p3 = in_contexts({{R(1), S(4), S(1)}, {R(1), S(4), S(1)}, {S(1), R(1)}});
  const Rank p4 = in_contexts({{R(3)}, {R(3)}});

  auto one = [](const Rank& r) { return process_patterns(r.events, r.context); };
  const auto r1 = one(p1);
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_EQ(r1[0].symbols, (std::vector<Symbol>{S(2), S(3), R(2), R(3)}));
  EXPECT_EQ(r1[0].positions, (std::vector<std::size_t>{0, 8}));
  const auto r2 = one(p2);
  ASSERT_EQ(r2.size(), 1u);
  EXPECT_EQ(r2[0].symbols, (std::vector<Symbol>{S(1), R(1)}));
  EXPECT_EQ(r2[0].positions, (std::vector<std::size_t>{0, 2}));
  const auto r3 = one(p3);
  ASSERT_EQ(r3.size(), 1u);
  EXPECT_EQ(r3[0].symbols, (std::vector<Symbol>{R(1), S(4), S(1)}));
  EXPECT_EQ(r3[0].positions, (std::vector<std::size_t>{0, 3}));
  EXPECT_TRUE(one(p4).empty());
}

// No pattern crosses from one context run into the next: F's "ab" and G's
// "c" alternate, so without contexts "abc" is the repeat, with them "ab".
TEST(PatternsProcess, ContextRunsBoundPatterns) {
  const Rank r = in_contexts({{'a', 'b'}, {'c'}, {'a', 'b'}, {'c'}});
  const auto with = process_patterns(r.events, r.context);
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(with[0].symbols, (std::vector<Symbol>{'a', 'b'}));
  const std::vector<uint32_t> one_run(r.events.size(), 7);
  const auto without = process_patterns(r.events, one_run);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_EQ(without[0].symbols, (std::vector<Symbol>{'a', 'b', 'c'}));
}

// A shorter repeat is kept only where two of its occurrences lie outside
// every longer one kept: the nested case that cost the seed its precision.
TEST(PatternsProcess, NestedRepeatsKeptOnlyWhereFree) {
  // "ab" occurs inside both "xaby" and once more on its own twice.
  const Rank r = in_contexts({{'x', 'a', 'b', 'y'}, {'x', 'a', 'b', 'y'}, {'a', 'b'}, {'a', 'b'}});
  const auto p = process_patterns(r.events, r.context);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].symbols, (std::vector<Symbol>{'x', 'a', 'b', 'y'}));
  EXPECT_EQ(p[1].symbols, (std::vector<Symbol>{'a', 'b'}));
  EXPECT_EQ(p[1].positions, (std::vector<std::size_t>{8, 10}));
  // Once free only: not kept.
  const Rank once = in_contexts({{'x', 'a', 'b', 'y'}, {'x', 'a', 'b', 'y'}, {'a', 'b'}});
  EXPECT_EQ(process_patterns(once.events, once.context).size(), 1u);
  EXPECT_THROW(process_patterns(once.events, std::vector<uint32_t>{0}), std::invalid_argument);
}

// A loop of k steps in one context run is a repeat of k - 1 steps that
// occurs twice, overlapping: its iterations are k whatever k is (ssor_wave's
// sweeps per iteration followed the step count when they were taken as 2).
TEST(PatternsProcess, IterationsOfOverlappingOccurrences) {
  for (std::size_t steps : {2u, 3u, 4u, 7u}) {
    std::string text;
    for (std::size_t i = 0; i < steps; ++i) text += "abcd";
    const std::vector<Symbol> s = symbols(text);
    const auto p = process_patterns(s, std::vector<uint32_t>(s.size(), 0));
    ASSERT_EQ(p.size(), 1u) << steps;
    EXPECT_EQ(iterations(p[0]), steps) << steps;
  }
  // Occurrences apart count one each, and a run of one symbol is a loop.
  const Rank apart = in_contexts({{'a', 'b', 'c'}, {'x'}, {'a', 'b', 'c'}, {'y'}, {'a', 'b', 'c'}});
  const auto p = process_patterns(apart.events, apart.context);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(iterations(p[0]), 3u);
  const std::vector<Symbol> run = symbols("aaaaaa");
  const auto r = process_patterns(run, std::vector<uint32_t>(run.size(), 0));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(iterations(r[0]), 6u);
  // "aba" in "ababa": overlapping by a distance that leaves a part over.
  EXPECT_EQ(iterations(ProcessPattern{symbols("aba"), {0, 2}, {}}), 2u);
}

}  // namespace
}  // namespace tracefold::patterns

namespace tracefold::patterns {
namespace {

// Marks each event with the per-process pattern whose occurrence covers it.
RankEvents rank_events(int32_t rank, const std::vector<Symbol>& symbols,
                       const std::vector<uint32_t>& contexts) {
  RankEvents r;
  r.rank = rank;
  r.pattern_of.assign(symbols.size(), -1);
  const std::vector<ProcessPattern> found = process_patterns(symbols, contexts);
  for (std::size_t p = 0; p < found.size(); ++p)
    for (std::size_t at : found[p].positions)
      for (std::size_t k = at; k < at + found[p].symbols.size(); ++k)
        if (r.pattern_of[k] < 0) r.pattern_of[k] = static_cast<int32_t>(p);
  for (Symbol s : symbols) {
    Message m;
    m.kind = s >= 200 ? Message::Kind::kRecv : Message::Kind::kSend;
    m.peer = static_cast<int64_t>(s % 100) - 1;  // the seed's P1..P4 are ranks 0..3
    m.tag = 0;
    r.events.push_back(m);
  }
  return r;
}

// Seed 004's Figure 5/6: the four processes of the per-process test
// assemble into one global pattern whose edges are 1->2, 1->3, 2->1, 3->1
// and 3->4 (the seed's numbering; ranks 0..3 here), P4's receives (no
// pattern of their own) joining it through P3's sends.
TEST(PatternsGlobal, SeedFigure6OneGlobalPattern) {
  const std::vector<std::vector<std::vector<Symbol>>> runs = {
      {{S(2), S(3), R(2), R(3)}, {R(3), R(2), S(2), S(3)}, {S(2), S(3), R(2), R(3)}},
      {{S(1), R(1)}, {S(1), R(1)}, {R(1), S(1)}},
      {{R(1), S(4), S(1)}, {R(1), S(4), S(1)}, {S(1), R(1)}},
      {{R(3)}, {R(3)}}};
  std::vector<RankEvents> ranks;
  for (int32_t r = 0; r < 4; ++r) {
    const Rank in = in_contexts(runs[static_cast<std::size_t>(r)]);
    ranks.push_back(rank_events(r, in.events, in.context));
  }
  const std::vector<GlobalPattern> g = assemble(ranks);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].patterns, (std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {1, 0}, {2, 0}}));
  EXPECT_EQ(g[0].edges,
            (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {0, 2}, {1, 0}, {2, 0}, {2, 3}}));
  EXPECT_EQ(g[0].messages, 14u);  // 3 + 3 + 3 + 3 + 2
  EXPECT_EQ(g[0].loose_events, 28u - 4u * 2 - 2u * 2 - 3u * 2);
}

// A Sendrecv is a send and a receive: two ranks that only call
// MPI_Sendrecv with each other form one pattern with both edges.
TEST(PatternsGlobal, SendrecvMatchesBothWays) {
  auto rank = [](int32_t me, int32_t other) {
    RankEvents r;
    r.rank = me;
    for (int i = 0; i < 3; ++i) {
      Message m;
      m.kind = Message::Kind::kSendrecv;
      m.peer = other;
      m.tag = 4;
      m.rpeer = other;
      m.rtag = 4;
      r.events.push_back(m);
      r.pattern_of.push_back(0);
    }
    return r;
  };
  const std::vector<RankEvents> ranks = {rank(0, 1), rank(1, 0)};
  const std::vector<GlobalPattern> g = assemble(ranks);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].edges, (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(g[0].messages, 6u);
}

// Two rings that never exchange a message stay two patterns; a receive
// whose source is unknown matches nothing.
TEST(PatternsGlobal, UnconnectedPatternsStayApart) {
  auto ring = [](int32_t rank, int32_t to, int32_t from) {
    RankEvents r;
    r.rank = rank;
    for (int i = 0; i < 4; ++i) {
      r.events.push_back({Message::Kind::kSend, to, 0, 5});
      r.events.push_back({Message::Kind::kRecv, from, 0, 5});
      r.pattern_of.push_back(0);
      r.pattern_of.push_back(0);
    }
    return r;
  };
  std::vector<RankEvents> ranks = {ring(0, 1, 1), ring(1, 0, 0), ring(2, 3, 3), ring(3, 2, 2)};
  ranks[3].events.push_back({Message::Kind::kRecv, kAny, 0, 5});
  ranks[3].pattern_of.push_back(-1);
  const std::vector<GlobalPattern> g = assemble(ranks);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].edges, (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(g[1].edges, (std::vector<std::pair<int32_t, int32_t>>{{2, 3}, {3, 2}}));
  EXPECT_EQ(g[1].loose_events, 0u);  // the wildcard receive joined nothing
  ranks[0].pattern_of.pop_back();
  EXPECT_THROW(assemble(ranks), std::invalid_argument);
}

}  // namespace
}  // namespace tracefold::patterns
