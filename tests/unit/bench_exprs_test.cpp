// Rank predicates and peer expressions of generated benchmarks.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>

#include "exprs.hpp"

using tracefold::Ranklist;
using namespace tracefold::benchgen;

namespace {

Ranklist world(int n) {
  return Ranklist::range(0, n);
}

// Evaluates the C predicates this builder makes (ints, + - * / %, ==, !=,
// <, <=, >=, &&, ||, !, parentheses) for one rank: the test checks the
// meaning, not only the spelling.
struct Eval {
  const std::string& s;
  std::size_t i = 0;
  long rank;
  void ws() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  bool eat(const char* t) {
    ws();
    const std::size_t n = std::strlen(t);
    if (s.compare(i, n, t) == 0) {
      i += n;
      return true;
    }
    return false;
  }
  long primary() {
    ws();
    if (eat("!")) return !primary();
    if (eat("(")) {
      long v = lor();
      EXPECT_TRUE(eat(")"));
      return v;
    }
    if (s.compare(i, 4, "rank") == 0) {
      i += 4;
      return rank;
    }
    long v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      v = v * 10 + (s[i++] - '0');
    return v;
  }
  long mul() {
    long v = primary();
    for (;;) {
      if (eat("%"))
        v %= primary();
      else if (eat("/"))
        v /= primary();
      else if (eat("*"))
        v *= primary();
      else
        return v;
    }
  }
  long add() {
    long v = mul();
    for (;;) {
      if (eat("+"))
        v += mul();
      else if (eat("-"))
        v -= mul();
      else
        return v;
    }
  }
  long cmp() {
    long v = add();
    if (eat("==")) return v == add();
    if (eat("!=")) return v != add();
    if (eat(">=")) return v >= add();
    if (eat("<=")) return v <= add();
    if (eat("<")) return v < add();
    return v;
  }
  long land() {
    long v = cmp();
    while (eat("&&")) v = cmp() && v;
    return v;
  }
  long lor() {
    long v = land();
    while (eat("||")) v = land() || v;
    return v;
  }
};

bool holds(const std::string& pred, long rank) {
  Eval e{pred, 0, rank};
  const long v = e.lor();
  e.ws();
  EXPECT_EQ(e.i, pred.size()) << pred;
  return v != 0;
}

void expect_exact(const Ranklist& set, const Ranklist& universe, int n) {
  const std::string p = rank_predicate(set, universe, n);
  for (int r = 0; r < n; ++r)
    if (universe.contains(r)) {
      EXPECT_EQ(holds(p, r), set.contains(r)) << p << " at rank " << r;
    }
}

}  // namespace

TEST(BenchExprs, ReadablePredicates) {
  EXPECT_EQ(rank_predicate(world(8), world(8), 8), "1");
  EXPECT_EQ(rank_predicate(Ranklist::parse("<1 3 4 4>"), world(16), 16), "rank % 4 == 3");
  EXPECT_EQ(rank_predicate(Ranklist::parse("<1 7 3 4>"), world(16), 16),
            "rank % 4 == 3 && rank >= 7");
  EXPECT_EQ(rank_predicate(Ranklist::range(1, 7), world(8), 8), "rank >= 1");
  EXPECT_EQ(rank_predicate(Ranklist::parse("<1 0 3 1> <1 4 4 1>"), world(8), 8), "rank != 3");
  EXPECT_EQ(rank_predicate(Ranklist::single(0), world(8), 8), "rank == 0");
  // Within a universe of the odd ranks, "all odd ranks" is always true.
  EXPECT_EQ(rank_predicate(Ranklist::parse("<1 1 4 2>"), Ranklist::parse("<1 1 4 2>"), 8), "1");
}

TEST(BenchExprs, PredicatesMeanTheirRanklists) {
  for (const char* text : {"<1 3 4 4>", "<2 6 3 5 3 1>", "<0 5>", "<1 1 3 1>", "<1 0 4 3> <0 11>",
                           "<2 1 2 8 3 2>", "<1 2 5 1> <1 9 2 3>"})
    expect_exact(Ranklist::parse(text), world(20), 20);
  expect_exact(Ranklist::parse("<1 1 3 2>"), Ranklist::parse("<1 0 10 2>"), 20);
}

TEST(BenchExprs, PeerArithmetic) {
  EXPECT_EQ(peer_expression(0, 8), "rank");
  EXPECT_EQ(peer_expression(1, 8), "(rank + 1) % size");
  EXPECT_EQ(peer_expression(7, 8), "(rank + size - 1) % size");
  EXPECT_EQ(peer_expression(3, 0, {}, "crank", "csize"), "(crank + 3) % csize");
  EXPECT_EQ(peer_expression(1, 8, ExprSyntax::conceptual()), "(t + 1) mod num_tasks");
}
