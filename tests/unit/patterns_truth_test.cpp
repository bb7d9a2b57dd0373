// The truth file of `tracefold patterns --truth` and the evaluation: a file
// read into its patterns and singletons, bad files rejected with their name
// and line, the one-to-one matching (overlap, context, ties) and the
// figures when a pattern is missed, spurious or misnamed, and the coverage
// with and without listed singletons.
#include <gtest/gtest.h>

#include <sstream>

#include "tracefold/patterns_truth.hpp"

namespace tracefold::patterns {
namespace {

Truth parse(const std::string& text, const std::string& file = "t.truth") {
  std::istringstream in(text);
  return parse_truth(in, file);
}

const char* const kTwo = R"(# a halo and a reduction tree
pattern halo
  context exchange
  ranks 0-3
  occurrences 4
  shape 2-D halo
  param grid = 2x2
  param periodic = none
  role 0-3: send(+1) recv(-1)

pattern tree
  context main
  ranks 0–3
  shape binomial tree
  param root = 0

singleton setup
  context main
  ranks 0,1-3
  event bcast
  count 1
)";

TEST(PatternsTruth, ReadsPatternsAndSingletons) {
  const Truth t = parse(kTwo);
  EXPECT_EQ(t.file, "t.truth");
  ASSERT_EQ(t.patterns.size(), 2u);
  const TruthPattern& h = t.patterns[0];
  EXPECT_EQ(h.id, "halo");
  EXPECT_EQ(h.line, 2u);
  EXPECT_EQ(h.context, "exchange");
  EXPECT_EQ(h.ranks, Ranklist::range(0, 4));
  EXPECT_EQ(h.occurrences, 4u);
  EXPECT_EQ(h.shape, "2-D halo");
  ASSERT_EQ(h.params.size(), 2u);
  EXPECT_EQ(h.params[0], std::make_pair(std::string("grid"), std::string("2x2")));
  EXPECT_EQ(h.params[1], std::make_pair(std::string("periodic"), std::string("none")));
  ASSERT_EQ(h.roles.size(), 1u);
  EXPECT_EQ(h.roles[0].events, (std::vector<std::string>{"recv(-1)", "send(+1)"}));
  // The en dash the listing prints is a range too.
  EXPECT_EQ(t.patterns[1].ranks, Ranklist::range(0, 4));
  EXPECT_FALSE(t.patterns[1].occurrences);
  ASSERT_EQ(t.singletons.size(), 1u);
  EXPECT_EQ(t.singletons[0].ranks, Ranklist::range(0, 4));
  EXPECT_EQ(t.singletons[0].event, "bcast");
  EXPECT_EQ(t.singletons[0].count, 1u);
}

TEST(PatternsTruth, RankRanges) {
  EXPECT_EQ(parse_rank_ranges("5"), Ranklist::single(5));
  EXPECT_EQ(parse_rank_ranges("0-2, 4"), Ranklist::from_ranks({0, 1, 2, 4}));
  // A range is an interval, not a list of its ranks.
  EXPECT_EQ(parse_rank_ranges("0-1000000000").size(), 1000000001u);
  EXPECT_THROW(parse_rank_ranges("3-1"), std::invalid_argument);
  EXPECT_THROW(parse_rank_ranges("1,,2"), std::invalid_argument);
  EXPECT_THROW(parse_rank_ranges("-1"), std::invalid_argument);
  EXPECT_THROW(parse_rank_ranges("a"), std::invalid_argument);
}

// The message of parsing `text`, which must fail.
std::string error_of(const std::string& text) {
  try {
    parse(text, "bad.truth");
  } catch (const TruthError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return "";
}

TEST(PatternsTruth, BadInputNamesFileAndLine) {
  EXPECT_EQ(error_of("pattern a\n ranks 0-3\n shape ring\n colour blue\n"),
            "bad.truth:4: unknown keyword 'colour' in pattern 'a' (context, ranks, occurrences, "
            "shape, param, role)");
  EXPECT_EQ(error_of("# x\nranks 0-3\n"),
            "bad.truth:2: 'ranks' before the first 'pattern' or 'singleton' line");
  EXPECT_EQ(error_of("pattern a\n ranks 0-x\n shape ring\n").rfind("bad.truth:2: bad ranks: ", 0),
            0u);
  EXPECT_EQ(error_of("pattern a\n ranks 0-3\n shape ring\n param grid 2x2\n"),
            "bad.truth:4: 'param' needs NAME = VALUE");
  EXPECT_EQ(error_of("pattern a\n ranks 0-3\n occurrences many\n shape ring\n"),
            "bad.truth:3: occurrences 'many' is not a count");
  // A block that lacks a line is blamed on its first line.
  EXPECT_EQ(error_of("\npattern a\n shape ring\npattern b\n ranks 0\n shape ring\n"),
            "bad.truth:2: pattern 'a' has no 'ranks' line");
  EXPECT_EQ(error_of("pattern a\n ranks 0-3\n"), "bad.truth:1: pattern 'a' has no 'shape' line");
  EXPECT_EQ(error_of("pattern a\n ranks 0\n shape ring\npattern a\n ranks 1\n shape ring\n"),
            "bad.truth:4: id 'a' used twice");
  EXPECT_EQ(error_of("pattern a\n ranks 0\n ranks 1\n shape ring\n"),
            "bad.truth:3: 'ranks' given twice for pattern 'a'");
  EXPECT_EQ(error_of("singleton s\n ranks 0\n shape ring\n"),
            "bad.truth:3: unknown keyword 'shape' in singleton 's' (context, ranks, event, count)");
  try {
    parse("pattern a\n ranks 0\n shape ring\n role 0 send(+1)\n", "r.truth");
    FAIL() << "a role without a colon was accepted";
  } catch (const TruthError& e) {
    EXPECT_EQ(e.file(), "r.truth");
    EXPECT_EQ(e.line(), 4u);
  }
}

Reported reported(std::string id, Ranklist ranks, std::string context, std::string shape,
                  std::vector<std::pair<std::string, std::string>> params = {}) {
  Reported r;
  r.id = std::move(id);
  r.ranks = std::move(ranks);
  r.contexts = {std::move(context)};
  r.shape = std::move(shape);
  r.params = std::move(params);
  return r;
}

// The two patterns of kTwo as the analysis would report them, both right.
std::vector<Reported> both_right() {
  Reported halo = reported("G1", Ranklist::range(0, 4), "exchange", "2-D halo",
                           {{"grid", "2x2"}, {"periodic", "none"}, {"neighbours", "5-point"}});
  halo.occurrences = 4;
  halo.roles = {{Ranklist::range(0, 4), {"recv(-1)", "send(+1)"}}};
  return {halo, reported("G2", Ranklist::range(0, 4), "main", "binomial tree", {{"root", "0"}})};
}

TEST(PatternsTruth, AllFoundAndNamed) {
  const Truth t = parse(kTwo);
  const Evaluation e = evaluate(t, both_right(), {}, {}, PeerMode::kRelative);
  ASSERT_EQ(e.pairs.size(), 2u);
  EXPECT_EQ(e.pairs[0].reported, 0u);
  EXPECT_EQ(e.pairs[1].reported, 1u);
  EXPECT_DOUBLE_EQ(e.precision, 1.0);
  EXPECT_DOUBLE_EQ(e.recall, 1.0);
  EXPECT_DOUBLE_EQ(e.naming, 1.0);
  EXPECT_EQ(e.pairs[0].occurrences_agree, true);
  EXPECT_EQ(e.pairs[0].roles_agree, true);
  EXPECT_FALSE(e.pairs[1].occurrences_agree);
}

TEST(PatternsTruth, MissingPatternLowersRecall) {
  std::vector<Reported> rep = both_right();
  rep.pop_back();
  const Evaluation e = evaluate(parse(kTwo), rep, {}, {}, PeerMode::kRelative);
  EXPECT_DOUBLE_EQ(e.precision, 1.0);
  EXPECT_DOUBLE_EQ(e.recall, 0.5);
  EXPECT_EQ(e.missed, std::vector<std::size_t>{1});
}

TEST(PatternsTruth, ExtraPatternLowersPrecision) {
  std::vector<Reported> rep = both_right();
  // Same ranks, but a context no truth pattern names: unmatched.
  rep.push_back(reported("G3", Ranklist::range(0, 4), "solve", "ring"));
  // A pattern on too few of the ranks: overlap 1/4, below kMinOverlap.
  rep.push_back(reported("G4", Ranklist::single(2), "main", "binomial tree"));
  const Evaluation e = evaluate(parse(kTwo), rep, {}, {}, PeerMode::kRelative);
  EXPECT_DOUBLE_EQ(e.precision, 0.5);
  EXPECT_DOUBLE_EQ(e.recall, 1.0);
  EXPECT_EQ(e.spurious, (std::vector<std::size_t>{2, 3}));
}

TEST(PatternsTruth, MisnamedPatternIsMatchedButNotNamed) {
  std::vector<Reported> rep = both_right();
  rep[0].params[0].second = "4x1";
  rep[1].shape = "linear tree";
  const Evaluation e = evaluate(parse(kTwo), rep, {}, {}, PeerMode::kRelative);
  EXPECT_DOUBLE_EQ(e.recall, 1.0);
  EXPECT_DOUBLE_EQ(e.naming, 0.0);
  EXPECT_EQ(e.pairs[0].naming_errors, std::vector<std::string>{"grid 4x1, expected 2x2"});
  EXPECT_EQ(e.pairs[1].naming_errors,
            std::vector<std::string>{"shape linear tree, expected binomial tree"});
}

TEST(PatternsTruth, GreedyByOverlapThenTruthThenReportedOrder) {
  const Truth t = parse(
      "pattern a\n context f\n ranks 0-3\n shape ring\n"
      "pattern b\n context f\n ranks 0-3\n shape ring\n");
  // G1 overlaps both by 3/4, G2 both exactly: G2 goes to a (the first truth
  // of the best overlap), then G1 to b.
  std::vector<Reported> rep = {reported("G1", Ranklist::range(0, 3), "f", "ring"),
                               reported("G2", Ranklist::range(0, 4), "f", "ring"),
                               reported("G3", Ranklist::range(0, 4), "f", "ring")};
  const Evaluation e = evaluate(t, rep, {}, {}, PeerMode::kRelative);
  ASSERT_EQ(e.pairs.size(), 2u);
  EXPECT_EQ(e.pairs[0].reported, 1u);  // a = G2
  EXPECT_EQ(e.pairs[1].reported, 2u);  // b = G3 (exact beats G1's 3/4)
  EXPECT_EQ(e.spurious, std::vector<std::size_t>{0});
  EXPECT_NEAR(e.precision, 2.0 / 3.0, 1e-12);
}

TEST(PatternsTruth, EqualOverlapGoesToTheBetterNamed) {
  // One pattern reported twice, the first time with a wrong parameter: the
  // truth's counterpart is the second, and the first is spurious.
  const Truth t = parse("pattern a\n ranks 0-3\n shape ring\n param distance = 1\n");
  const std::vector<Reported> rep = {
      reported("G1", Ranklist::range(0, 4), "main", "ring", {{"distance", "2"}}),
      reported("G2", Ranklist::range(0, 4), "main", "ring", {{"distance", "1"}})};
  const Evaluation e = evaluate(t, rep, {}, {}, PeerMode::kRelative);
  ASSERT_EQ(e.pairs.size(), 1u);
  EXPECT_EQ(e.pairs[0].reported, 1u);
  EXPECT_TRUE(e.pairs[0].named);
  EXPECT_DOUBLE_EQ(e.precision, 0.5);
  EXPECT_EQ(e.spurious, std::vector<std::size_t>{0});
}

TEST(PatternsTruth, CoverageCountsListedSingles) {
  Alphabet a;
  SymbolKey bcast;
  bcast.family = OpFamily::kBcast;
  const Symbol s = a.intern(bcast);
  Result::Cover c;
  c.events = 20;
  c.in_one = 16;
  c.singles.push_back({Ranklist::range(0, 4), "main", s, 1});
  const Truth none = parse("pattern a\n ranks 0-3\n shape ring\n");
  Evaluation e = evaluate(none, {}, c, a, PeerMode::kRelative);
  EXPECT_DOUBLE_EQ(e.coverage, 0.8);
  EXPECT_EQ(e.unlisted_singles, 4u);
  e = evaluate(parse(kTwo), {}, c, a, PeerMode::kRelative);
  EXPECT_DOUBLE_EQ(e.coverage, 1.0);
  EXPECT_EQ(e.listed_singles, 4u);
  // A singleton's count caps what it covers per rank.
  c.singles.back().count = 2;
  c.in_one = 12;
  e = evaluate(parse(kTwo), {}, c, a, PeerMode::kRelative);
  EXPECT_EQ(e.listed_singles, 4u);
  EXPECT_EQ(e.unlisted_singles, 4u);
  EXPECT_DOUBLE_EQ(e.coverage, 0.8);
  ASSERT_EQ(e.unlisted.size(), 1u);
  EXPECT_EQ(e.unlisted[0].ranks, Ranklist::range(0, 4));
  EXPECT_EQ(e.unlisted[0].event, "bcast");
  EXPECT_EQ(e.unlisted[0].count, 1u);
  EXPECT_EQ(short_event(a, s, PeerMode::kRelative), "bcast");
}

}  // namespace
}  // namespace tracefold::patterns
