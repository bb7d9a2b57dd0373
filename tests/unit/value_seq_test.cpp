#include "tracefold/value_seq.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "random_program.hpp"

namespace tracefold {
namespace {

using testing::Rng;
using V = std::vector<int64_t>;

ValueSeq from(const V& values) {
  ValueSeq s;
  for (int64_t v : values) s.push_back(v);
  return s;
}

V repeat(const V& pattern, int n) {
  V out;
  for (int i = 0; i < n; ++i) out.insert(out.end(), pattern.begin(), pattern.end());
  return out;
}

int64_t model_sum(const V& v) {
  int64_t s = 0;
  for (int64_t x : v)
    if (!is_sentinel(x)) s += x;
  return s;
}

/// Everything a sequence promises about its values, checked against a model.
void expect_matches(const ValueSeq& s, const V& model, const std::string& where) {
  ASSERT_EQ(s.size(), model.size()) << where << " " << s.to_string();
  ASSERT_EQ(s.empty(), model.empty()) << where;
  ASSERT_EQ(s.to_vector(), model) << where << " " << s.to_string();
  if (!model.empty()) {
    ASSERT_EQ(s.back(), model.back()) << where << " " << s.to_string();
  }
  ASSERT_EQ(s.sum(), model_sum(model)) << where;
  // The runs expand to the same values.
  V from_runs;
  for (const auto& r : s.runs()) {
    ASSERT_FALSE(r.pattern.empty()) << where;
    ASSERT_GE(r.reps, 1u) << where;
    for (uint64_t k = 0; k < r.reps; ++k)
      from_runs.insert(from_runs.end(), r.pattern.begin(), r.pattern.end());
  }
  ASSERT_EQ(from_runs, model) << where << " " << s.to_string();
  ASSERT_EQ(s.run_count(), s.runs().size()) << where;
  // for_each_run walks the same runs in place (the compact writer's reader).
  std::vector<ValueSeq::Run> walked;
  s.for_each_run([&](const int64_t* p, std::size_t len, uint64_t reps) {
    walked.push_back({V(p, p + len), reps});
  });
  ASSERT_EQ(walked, s.runs()) << where << " " << s.to_string();
  // Text round trip: same representation, same text.
  const std::string text = s.to_string();
  ValueSeq back = ValueSeq::parse(text);
  ASSERT_TRUE(back.same_representation(s)) << where << " " << text << " -> " << back.to_string();
  ASSERT_TRUE(back.equals(s)) << where << " " << text;
  ASSERT_EQ(back.to_string(), text) << where;
  ASSERT_TRUE(s.equals(from(model))) << where;
}

// ------------------------------------------------------------ basic values

TEST(ValueSeqValue, FormatAndParseSentinels) {
  EXPECT_EQ(format_value(kAbsent), "_");
  EXPECT_EQ(format_value(kAny), "any");
  EXPECT_EQ(format_value(kNull), "null");
  EXPECT_EQ(format_value(kUndefined), "undef");
  EXPECT_EQ(format_value(-17), "-17");
  EXPECT_EQ(format_value(0), "0");
  for (int64_t v : {kAbsent, kAny, kNull, kUndefined, int64_t{0}, int64_t{-1}, int64_t{42},
                    std::numeric_limits<int64_t>::max(), kUndefined + 1}) {
    int64_t out = 12345;
    ASSERT_TRUE(parse_value(format_value(v), out)) << format_value(v);
    EXPECT_EQ(out, v);
  }
  int64_t out = 0;
  EXPECT_FALSE(parse_value("", out));
  EXPECT_FALSE(parse_value("x", out));
  EXPECT_FALSE(parse_value("1x", out));
  EXPECT_FALSE(parse_value(" 1", out));
  EXPECT_FALSE(parse_value("99999999999999999999", out));
  // A sentinel's numeric spelling is not a number.
  EXPECT_FALSE(parse_value(std::to_string(kAbsent), out));
  EXPECT_FALSE(parse_value(std::to_string(kUndefined), out));
  EXPECT_TRUE(is_sentinel(kUndefined));
  EXPECT_FALSE(is_sentinel(kUndefined + 1));
}

// -------------------------------------------------------- representations

TEST(ValueSeq, EmptySequence) {
  ValueSeq s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.to_string(), "~");
  EXPECT_EQ(s.sum(), 0);
  EXPECT_EQ(s.run_count(), 0u);
  EXPECT_TRUE(s.runs().empty());
  EXPECT_TRUE(s.cursor().done());
  EXPECT_TRUE(ValueSeq::parse("~").empty());
  EXPECT_TRUE(ValueSeq::parse("~").same_representation(s));
  EXPECT_TRUE(ValueSeq::repeated(3, 0).empty());
}

TEST(ValueSeq, ConstantRunsStayOneRun) {
  ValueSeq s;
  for (int i = 0; i < 1000; ++i) s.push_back(7);
  EXPECT_EQ(s.to_string(), "7*1000");
  EXPECT_EQ(s.run_count(), 1u);
  EXPECT_EQ(s.sum(), 7000);
  s.append_repeated(7, 1'000'000'000);
  EXPECT_EQ(s.to_string(), "7*1000001000");
  EXPECT_EQ(s.size(), 1'000'001'000u);
  EXPECT_EQ(ValueSeq::repeated(-2, 5).to_string(), "-2*5");
  EXPECT_EQ(ValueSeq::repeated(kAbsent, 3).to_string(), "_*3");
  EXPECT_EQ(ValueSeq::repeated(kAbsent, 3).sum(), 0);
  EXPECT_EQ(from({4}).to_string(), "4");
  // Two different constants: two runs.
  ValueSeq two = ValueSeq::repeated(1, 5);
  two.append_repeated(2, 5);
  EXPECT_EQ(two.to_string(), "1*5 2*5");
  expect_matches(two, V{1, 1, 1, 1, 1, 2, 2, 2, 2, 2}, "two constants");
}

TEST(ValueSeq, PeriodicSequencesFold) {
  {
    ValueSeq s = from(repeat({2, 2, 1}, 100));
    EXPECT_EQ(s.to_string(), "(2 2 1)*100");
    EXPECT_EQ(s.run_count(), 1u);
    expect_matches(s, repeat({2, 2, 1}, 100), "2 2 1");
  }
  for (int n : {2, 3, 10, 57}) {
    ValueSeq s = from(repeat({1, 2, 3}, n));
    EXPECT_EQ(s.to_string(), "(1 2 3)*" + std::to_string(n));
    expect_matches(s, repeat({1, 2, 3}, n), "1 2 3");
  }
  {
    ValueSeq s = from(repeat({0, 1}, 500));
    EXPECT_EQ(s.to_string(), "(0 1)*500");
  }
  {
    ValueSeq s = from(repeat({5, 6, 7, 8}, 30));
    EXPECT_EQ(s.to_string(), "(5 6 7 8)*30");
  }
  // A prefix before the periodic part stays literal.
  {
    V v{9, 8};
    V tail = repeat({1, 2, 3}, 20);
    v.insert(v.end(), tail.begin(), tail.end());
    ValueSeq s = from(v);
    EXPECT_EQ(s.to_string(), "9 8 (1 2 3)*20");
    expect_matches(s, v, "prefix");
  }
  // A trailing partial repetition shows as literal values after the run.
  {
    V v = repeat({1, 2, 3}, 4);
    v.push_back(1);
    v.push_back(2);
    ValueSeq s = from(v);
    EXPECT_EQ(s.to_string(), "(1 2 3)*4 1 2");
    EXPECT_EQ(s.back(), 2);
    expect_matches(s, v, "partial");
  }
  // Sentinels fold like numbers.
  {
    ValueSeq s = from(repeat({kAny, 3}, 10));
    EXPECT_EQ(s.to_string(), "(any 3)*10");
    EXPECT_EQ(s.sum(), 30);
  }
}

// Run-level periodicity: `0 0 0 1 1 1` repeated is two runs repeated. (At
// most 3 runs: a rotation of the pattern may leave a head and a tail.) The
// folder tries this (`fold_run_tail`), and it works when the runs are short
// (`(0 0 1 1 2 2)*N`), but a run that grows to 3+ repetitions value by value
// never triggers the check, so the sequence stays `0*3 1*3 0*3 1*3 ...` and
// grows with N.
TEST(ValueSeq, RepeatedGroupsOfLongRunsFold) {
  {
    ValueSeq s = from(repeat({0, 0, 1, 1, 2, 2}, 100));
    EXPECT_LE(s.run_count(), 3u) << s.to_string().substr(0, 120);
  }
  {
    const V v = repeat({0, 0, 0, 1, 1, 1}, 100);
    ValueSeq s = from(v);
    EXPECT_LE(s.run_count(), 3u) << s.to_string().substr(0, 120);
    expect_matches(s, v, "0 0 0 1 1 1");
  }
  {
    // The same values built the way the folder pads and extends histories.
    ValueSeq s;
    for (int i = 0; i < 50; ++i) {
      s.append_repeated(0, 3);
      s.append_repeated(1, 3);
      s.append_repeated(2, 3);
    }
    EXPECT_LE(s.run_count(), 3u) << s.to_string().substr(0, 120);
  }
  {
    // A loop trip count that is 1 on the first inner pass and 4 afterwards.
    ValueSeq s = from(repeat({1, 4, 4, 4}, 100));
    EXPECT_LE(s.run_count(), 3u) << s.to_string().substr(0, 120);
  }
}

// Every primitive pattern of up to 6 values over {0, 1, 2}, pushed 60 and
// 120 times: the representation must not grow with the repetitions (a few
// runs of head and tail around the periodic run are fine).
TEST(ValueSeq, EveryShortPeriodicPatternFolds) {
  int failures = 0, total = 0;
  std::string examples;
  for (int len = 1; len <= 6; ++len) {
    int count = 1;
    for (int k = 0; k < len; ++k) count *= 3;
    for (int code = 0; code < count; ++code) {
      V p;
      for (int k = 0, c = code; k < len; ++k, c /= 3) p.push_back(c % 3);
      bool primitive = true;
      for (int d = 1; d < len && primitive; ++d) {
        if (len % d) continue;
        bool periodic = true;
        for (int k = d; k < len && periodic; ++k)
          periodic = p[static_cast<std::size_t>(k)] == p[static_cast<std::size_t>(k - d)];
        primitive = !periodic;
      }
      if (!primitive) continue;
      ++total;
      const ValueSeq a = from(repeat(p, 60)), b = from(repeat(p, 120));
      if (b.run_count() > a.run_count() || b.run_count() > 8) {
        if (++failures <= 5) {
          examples += "\n  (";
          for (int64_t x : p) examples += std::to_string(x) + " ";
          examples +=
              ")*120 -> " + std::to_string(b.run_count()) + " runs: " + b.to_string().substr(0, 60);
        }
      }
    }
  }
  EXPECT_EQ(failures, 0) << failures << " of " << total << " patterns do not fold, e.g."
                         << examples;
}

// Regular nested values (a list length followed by its elements, loop trip
// counts of a triangular loop, ...) stay small as they grow.
TEST(ValueSeq, NestedRegularValuesStayCompact) {
  V v;
  for (int i = 0; i < 200; ++i) {
    v.push_back(2);
    v.push_back(2);
    v.push_back(1);
    v.push_back(1);
    v.push_back(1);
  }
  ValueSeq s = from(v);
  EXPECT_LE(s.run_count(), 3u) << s.to_string();
  expect_matches(s, v, "2 2 1 1 1");
}

TEST(ValueSeq, AppendJoinsSequences) {
  ValueSeq a = from(repeat({1, 2, 3}, 10));
  ValueSeq b = from(repeat({1, 2, 3}, 10));
  a.append(b);
  EXPECT_EQ(a.to_string(), "(1 2 3)*20");
  expect_matches(a, repeat({1, 2, 3}, 20), "append periodic");

  ValueSeq c = ValueSeq::repeated(5, 100);
  c.append(ValueSeq::repeated(5, 50));
  EXPECT_EQ(c.to_string(), "5*150");

  ValueSeq d = from({1, 2});
  d.append(ValueSeq{});
  EXPECT_EQ(d.to_string(), "1 2");
  ValueSeq e;
  e.append(d);
  EXPECT_TRUE(e.equals(d));
  // Appending a sequence ending in a partial repetition.
  V pv = repeat({4, 5}, 6);
  pv.push_back(4);
  ValueSeq f = from({9});
  f.append(from(pv));
  V fv{9};
  fv.insert(fv.end(), pv.begin(), pv.end());
  expect_matches(f, fv, "append partial");
}

TEST(ValueSeq, PrependRepeatedPadsInFront) {
  ValueSeq s = ValueSeq::repeated(1, 3);
  s.prepend_repeated(0, 5);
  EXPECT_EQ(s.to_string(), "0*5 1*3");
  expect_matches(s, V{0, 0, 0, 0, 0, 1, 1, 1}, "prepend");
  s.prepend_repeated(0, 0);
  EXPECT_EQ(s.size(), 8u);
  ValueSeq p = from(repeat({1, 0}, 4));
  p.prepend_repeated(0, 2);
  expect_matches(p, V{0, 0, 1, 0, 1, 0, 1, 0, 1, 0}, "prepend periodic");
  ValueSeq e;
  e.prepend_repeated(3, 2);
  EXPECT_EQ(e.to_string(), "3*2");
}

TEST(ValueSeq, PopBackAndSetBack) {
  V v = repeat({1, 2, 3}, 3);
  ValueSeq s = from(v);
  while (!v.empty()) {
    s.pop_back();
    v.pop_back();
    expect_matches(s, v, "pop " + std::to_string(v.size()));
  }
  ValueSeq c = ValueSeq::repeated(4, 3);
  c.set_back(5);
  EXPECT_EQ(c.to_string(), "4*2 5");
  c.set_back(4);
  EXPECT_EQ(c.to_string(), "4*3");
  ValueSeq r = from(repeat({1, 2}, 5));
  r.set_back(7);
  expect_matches(r, V{1, 2, 1, 2, 1, 2, 1, 2, 1, 7}, "set_back periodic");
  r.set_back(2);
  expect_matches(r, repeat({1, 2}, 5), "set_back restores");
  // Whatever the representation after the edit, continuing the pattern
  // keeps it compact.
  for (int i = 0; i < 50; ++i) {
    r.push_back(1);
    r.push_back(2);
  }
  EXPECT_LE(r.run_count(), 2u) << r.to_string();
  expect_matches(r, repeat({1, 2}, 55), "continued");
  // A loop counter being incremented in place (as the folder does).
  ValueSeq counter = from({3, 3, 3});
  for (int i = 0; i < 10; ++i) counter.set_back(counter.back() + 1);
  expect_matches(counter, V{3, 3, 13}, "counter");
  // A one-value sequence is set in place: the same representation as pop
  // then push, so later pushes fold alike.
  for (const int64_t first : {int64_t{2}, kAbsent}) {
    ValueSeq in_place = ValueSeq::repeated(first, 1), by_hand = ValueSeq::repeated(first, 1);
    in_place.set_back(9);
    by_hand.pop_back();
    by_hand.push_back(9);
    EXPECT_TRUE(in_place.same_representation(by_hand)) << in_place.to_string();
    for (const int64_t v : {9, 9, 4, 9}) {
      in_place.push_back(v);
      by_hand.push_back(v);
    }
    EXPECT_TRUE(in_place.same_representation(by_hand)) << in_place.to_string();
    EXPECT_EQ(in_place.to_string(), "9*3 4 9");
  }
}

TEST(ValueSeq, EqualsIgnoresRepresentation) {
  ValueSeq folded = from(repeat({1, 2, 3}, 2));
  ValueSeq literal = ValueSeq::parse("1 2 3 1 2 3");
  EXPECT_EQ(folded.to_string(), "(1 2 3)*2");
  EXPECT_EQ(literal.to_string(), "1 2 3 1 2 3");
  EXPECT_TRUE(folded.equals(literal));
  EXPECT_TRUE(literal.equals(folded));
  EXPECT_FALSE(folded.same_representation(literal));
  EXPECT_FALSE(folded.equals(from({1, 2, 3, 1, 2, 4})));
  EXPECT_FALSE(folded.equals(from({1, 2, 3, 1, 2})));
  EXPECT_FALSE(ValueSeq::repeated(1, 3).equals(ValueSeq::repeated(2, 3)));
  EXPECT_TRUE(ValueSeq::parse("5*3").equals(from({5, 5, 5})));
  EXPECT_TRUE(ValueSeq::parse("5*3").same_representation(from({5, 5, 5})));
  ValueSeq h = from({1, 2, 3});
  h.make_histogram();
  EXPECT_FALSE(h.equals(from({1, 2, 3}))) << "lossy flag differs";
}

TEST(ValueSeq, ParseAcceptsAllForms) {
  expect_matches(ValueSeq::parse("1 2 3"), V{1, 2, 3}, "literals");
  expect_matches(ValueSeq::parse("4*3 (1 2)*2 9"), V{4, 4, 4, 1, 2, 1, 2, 9}, "mixed");
  expect_matches(ValueSeq::parse("_*2 any null undef -5"),
                 V{kAbsent, kAbsent, kAny, kNull, kUndefined, -5}, "sentinels");
  EXPECT_EQ(ValueSeq::parse("  1   2 ").to_vector(), (V{1, 2}));
  EXPECT_EQ(ValueSeq::parse("(1 2)*3").size(), 6u);
}

// Offsets in messages let a user find the problem in a long trace line.
TEST(ValueSeq, ParseErrorsNameTheOffset) {
  // The offset is where the bad token starts; for a token that is well
  // formed but out of range (a repeat count of 1, a histogram value out of
  // order) the position just after it is accepted too.
  struct Case {
    const char* text;
    std::size_t lo, hi;
  };
  const Case cases[] = {
      {"", 0, 0},         {"   ", 3, 3},      {"1 2 x", 4, 4},     {"(1 2", 4, 4},
      {"(1 2)3", 5, 5},   {"()*2", 2, 2},     {"1*0", 2, 2},       {"1*1", 2, 3},
      {"(1 2)*1", 6, 7},  {"1*", 2, 2},       {"1*x", 2, 2},       {"hist(2:1 1:1)", 9, 10},
      {"hist(1:1", 8, 8}, {"hist(1)", 6, 6},  {"hist(1:0)", 7, 7}, {"1 2) 3", 3, 3},
      {"1 -", 2, 2},      {"(1 2)**2", 6, 6},
  };
  for (const Case& c : cases) {
    try {
      ValueSeq s = ValueSeq::parse(c.text);
      ADD_FAILURE() << "'" << c.text << "' parsed as " << s.to_string();
    } catch (const ValueSeqParseError& ex) {
      const std::string what = ex.what();
      const auto at = what.rfind("offset ");
      ASSERT_NE(at, std::string::npos) << "'" << c.text << "': " << what;
      const auto offset = std::stoul(what.substr(at + 7));
      EXPECT_GE(offset, c.lo) << "'" << c.text << "': " << what;
      EXPECT_LE(offset, c.hi) << "'" << c.text << "': " << what;
    }
  }
}

// ------------------------------------------------------------ lossy mode

TEST(ValueSeqHistogram, KeepsCountsNotOrder) {
  ValueSeq s = from({3, 1, 3, 2, 3, kNull});
  s.make_histogram();
  EXPECT_TRUE(s.is_histogram());
  EXPECT_EQ(s.size(), 6u);
  EXPECT_EQ(s.to_string(), "hist(null:1 1:1 2:1 3:3)");
  EXPECT_EQ(s.to_vector(), (V{kNull, 1, 2, 3, 3, 3}));
  EXPECT_EQ(s.sum(), 12);
  s.push_back(2);
  s.append_repeated(10, 4);
  s.append_repeated(1, 1);
  EXPECT_EQ(s.to_string(), "hist(null:1 1:2 2:2 3:3 10:4)");
  ValueSeq back = ValueSeq::parse(s.to_string());
  EXPECT_TRUE(back.is_histogram());
  EXPECT_TRUE(back.same_representation(s));
  EXPECT_TRUE(back.equals(s));
  s.make_histogram();  // idempotent
  EXPECT_EQ(s.to_string(), "hist(null:1 1:2 2:2 3:3 10:4)");

  ValueSeq empty;
  empty.make_histogram();
  EXPECT_EQ(empty.to_string(), "hist()");
  EXPECT_TRUE(ValueSeq::parse("hist()").is_histogram());
  EXPECT_TRUE(ValueSeq::parse("hist()").empty());

  // Appending an ordered sequence to a histogram (or the reverse) is lossy too.
  ValueSeq a = from({5, 4});
  ValueSeq h = from({4});
  h.make_histogram();
  a.append(h);
  EXPECT_TRUE(a.is_histogram());
  EXPECT_EQ(a.to_string(), "hist(4:2 5:1)");
  ValueSeq p = from({7, 7});
  p.make_histogram();
  p.prepend_repeated(0, 3);
  EXPECT_TRUE(p.is_histogram());
  EXPECT_EQ(p.to_string(), "hist(0:3 7:2)");
}

// Random operations on a histogram sequence against a multiset model.
TEST(ValueSeqHistogram, RandomOperationsMatchMultiset) {
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Rng rng(seed * 7919 + 3);
    ValueSeq s = from({static_cast<int64_t>(rng.below(5))});
    std::map<int64_t, uint64_t> model{{s.back(), 1}};
    s.make_histogram();
    for (int step = 0; step < 60; ++step) {
      const int64_t v = static_cast<int64_t>(rng.below(8)) - 2;
      const uint64_t n = rng.below(6);
      switch (rng.below(3)) {
        case 0:
          s.push_back(v);
          model[v] += 1;
          break;
        case 1:
          s.append_repeated(v, n);
          if (n) model[v] += n;
          break;
        default: {
          ValueSeq o = ValueSeq::repeated(v, n);
          o.push_back(v + 1);
          s.append(o);
          if (n) model[v] += n;
          model[v + 1] += 1;
        }
      }
      V want;
      for (auto [value, count] : model) want.insert(want.end(), count, value);
      ASSERT_TRUE(s.is_histogram());
      ASSERT_EQ(s.to_vector(), want) << "seed " << seed << " step " << step << " " << s.to_string();
      ASSERT_EQ(s.size(), want.size());
      ASSERT_EQ(s.sum(), model_sum(want));
      ASSERT_TRUE(ValueSeq::parse(s.to_string()).same_representation(s)) << s.to_string();
    }
  }
}

// ----------------------------------------------------- randomized model

// Values drawn so that periodic stretches are common (that is where folding
// happens) but arbitrary noise is interleaved.
V random_chunk(Rng& rng) {
  V out;
  switch (rng.below(4)) {
    case 0: {  // one value
      out.push_back(static_cast<int64_t>(rng.below(4)));
      break;
    }
    case 1: {  // a short pattern repeated
      V pattern;
      const auto len = 1 + rng.below(5);
      for (uint64_t i = 0; i < len; ++i) pattern.push_back(static_cast<int64_t>(rng.below(3)));
      out = repeat(pattern, static_cast<int>(1 + rng.below(6)));
      break;
    }
    case 2: {  // a long constant run
      out.assign(1 + rng.below(20), static_cast<int64_t>(rng.below(3)));
      break;
    }
    default: {  // noise, including sentinels
      static const int64_t kPool[] = {kAbsent, kAny, kNull, kUndefined, -1, 1000, 7};
      for (uint64_t i = 0, n = 1 + rng.below(3); i < n; ++i) out.push_back(kPool[rng.below(7)]);
    }
  }
  return out;
}

TEST(ValueSeq, RandomOperationsMatchVectorModel) {
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Rng rng(seed);
    ValueSeq s;
    V model;
    std::string ops;  // history, for the failure message
    const int steps = static_cast<int>(20 + rng.below(120));
    for (int step = 0; step < steps; ++step) {
      const uint64_t roll = rng.below(100);
      if (roll < 35) {
        for (int64_t v : random_chunk(rng)) {
          s.push_back(v);
          model.push_back(v);
        }
        ops += " push";
      } else if (roll < 50) {
        const int64_t v = static_cast<int64_t>(rng.below(3));
        const uint64_t n = rng.below(12);
        s.append_repeated(v, n);
        model.insert(model.end(), n, v);
        ops += " rep(" + std::to_string(v) + "," + std::to_string(n) + ")";
      } else if (roll < 62) {
        ValueSeq other;
        V ov;
        for (int k = 0, n = static_cast<int>(rng.below(4)); k < n; ++k)
          for (int64_t v : random_chunk(rng)) {
            other.push_back(v);
            ov.push_back(v);
          }
        s.append(other);
        model.insert(model.end(), ov.begin(), ov.end());
        ops += " append[" + other.to_string() + "]";
      } else if (roll < 68) {
        const int64_t v = static_cast<int64_t>(rng.below(2));
        const uint64_t n = rng.below(5);
        s.prepend_repeated(v, n);
        model.insert(model.begin(), n, v);
        ops += " prep(" + std::to_string(v) + "," + std::to_string(n) + ")";
      } else if (roll < 82) {
        if (!model.empty()) {
          s.pop_back();
          model.pop_back();
          ops += " pop";
        }
      } else if (roll < 97) {
        if (!model.empty()) {
          // Often the folder's pattern: bump the last value.
          const int64_t v = rng.percent(50) ? model.back() + 1 : static_cast<int64_t>(rng.below(3));
          s.set_back(v);
          model.back() = v;
          ops += " set(" + std::to_string(v) + ")";
        }
      } else {
        // Parse round trip mid-stream: later operations act on the parsed copy.
        s = ValueSeq::parse(s.to_string());
        ops += " reparse";
      }
      ASSERT_NO_FATAL_FAILURE(expect_matches(
          s, model, "seed " + std::to_string(seed) + " step " + std::to_string(step) + ":" + ops));
      if (::testing::Test::HasFailure()) return;
    }
    // Folding actually happened for periodic input: no more runs than values.
    EXPECT_LE(s.run_count(), std::max<std::size_t>(1, model.size()));
  }
}

// append pushes the values of short runs one by one (the folder merges
// an iteration's values into a loop's this way): the same representation,
// including when they continue or break off the repetition of the last run.
TEST(ValueSeq, AppendOfShortRunsIsValueByValue) {
  int compared = 0;
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    Rng rng(seed);
    ValueSeq s;
    for (int step = 0, n = static_cast<int>(rng.below(12)); step < n; ++step) {
      if (rng.percent(70)) {
        for (int64_t v : random_chunk(rng)) s.push_back(v);
      } else {
        s.append_repeated(static_cast<int64_t>(rng.below(3)), rng.below(6));
      }
    }
    ValueSeq other;
    for (int k = 0, n = 1 + static_cast<int>(rng.below(3)); k < n; ++k)
      for (int64_t v : random_chunk(rng)) other.push_back(v);
    // One value repeated is appended as such (append_repeated), not value
    // by value.
    const auto runs = other.runs();
    bool short_runs = !(runs.size() == 1 && runs[0].pattern.size() == 1);
    for (const auto& r : runs) short_runs &= r.reps == 1 || r.reps * r.pattern.size() <= 8;
    if (!short_runs) continue;
    ValueSeq pushed = s;
    for (int64_t v : other.to_vector()) pushed.push_back(v);
    ValueSeq appended = s;
    appended.append(other);
    ASSERT_TRUE(appended.same_representation(pushed))
        << "seed " << seed << ": " << s.to_string() << " + " << other.to_string() << " -> "
        << appended.to_string() << ", pushed " << pushed.to_string();
    ++compared;
  }
  EXPECT_GT(compared, 1000);
  // An iteration completing the last run's repetition, and one that breaks
  // off half way.
  ValueSeq loop = from(repeat({3, 1, 4}, 5));
  loop.append(from({3, 1, 4}));
  EXPECT_EQ(loop.to_string(), "(3 1 4)*6");
  loop.append(from({3, 1, 5}));
  EXPECT_EQ(loop.to_string(), "(3 1 4)*6 3 1 5");
  // A literal that repeats as a whole becomes a run, or joins the run before.
  EXPECT_EQ(from({7, 8, 7, 8}).to_string(), "(7 8)*2");
  EXPECT_EQ(from({7, 8, 7, 8, 7, 8, 7, 8, 7}).to_string(), "(7 8)*4 7");
  EXPECT_EQ(from({2, 2, 5, 5, 9, 5, 5}).to_string(), "2*2 5*2 9 5*2");
}

// Same operations, same representation: the output bytes are deterministic.
TEST(ValueSeq, SameOperationsGiveSameRepresentation) {
  for (uint64_t seed = 0; seed < 100; ++seed) {
    ValueSeq a, b;
    for (int pass = 0; pass < 2; ++pass) {
      Rng rng(seed);
      ValueSeq& s = pass == 0 ? a : b;
      for (int step = 0; step < 80; ++step) {
        for (int64_t v : random_chunk(rng)) s.push_back(v);
        if (rng.percent(20) && !s.empty()) s.set_back(static_cast<int64_t>(rng.below(3)));
      }
    }
    EXPECT_TRUE(a.same_representation(b)) << seed;
    EXPECT_EQ(a.to_string(), b.to_string()) << seed;
  }
}

TEST(ValueSeq, CursorWalksWithoutExpanding) {
  ValueSeq s = ValueSeq::repeated(1, 1'000'000'000'000ull);
  s.push_back(2);
  ValueSeq::Cursor c = s.cursor();
  for (int i = 0; i < 5; ++i) {
    ASSERT_FALSE(c.done());
    EXPECT_EQ(c.next(), 1);
  }
  EXPECT_LT(s.memory_bytes(), 1024u);
  EXPECT_EQ(s.size(), 1'000'000'000'001ull);
  EXPECT_EQ(s.back(), 2);
  EXPECT_EQ(s.to_string(), "1*1000000000000 2");
}

// value_hash depends on the values only: the same values pushed one by one,
// appended as runs or parsed from text hash alike, and sequences that
// differ in one value, in order or in length hash apart.
TEST(ValueSeq, ValueHashFollowsValuesNotRepresentation) {
  std::vector<int64_t> v;
  for (int i = 0; i < 300; ++i) v.push_back(i % 7 == 3 ? 5 : (i / 10) % 3);
  ValueSeq pushed;
  for (int64_t x : v) pushed.push_back(x);
  ValueSeq appended;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    appended.append_repeated(v[i], j - i);
    i = j;
  }
  ASSERT_TRUE(pushed.equals(appended));
  EXPECT_EQ(pushed.value_hash(), appended.value_hash());
  EXPECT_EQ(pushed.value_hash(), ValueSeq::parse(pushed.to_string()).value_hash());
  auto other = v;
  other[150] += 1;
  ValueSeq changed;
  for (int64_t x : other) changed.push_back(x);
  EXPECT_NE(pushed.value_hash(), changed.value_hash());
  ValueSeq longer = pushed;
  longer.push_back(0);
  EXPECT_NE(pushed.value_hash(), longer.value_hash());
  EXPECT_NE(ValueSeq::parse("1 2").value_hash(), ValueSeq::parse("2 1").value_hash());
  EXPECT_EQ(ValueSeq::repeated(4, 1'000'000'000'000).value_hash(),
            ValueSeq::parse("4*999999999999 4").value_hash());
  EXPECT_NE(ValueSeq::repeated(4, 3).value_hash(), ValueSeq::parse("4 4").value_hash());
  ValueSeq hist = pushed;
  hist.make_histogram();
  EXPECT_NE(hist.value_hash(), pushed.value_hash());
}

}  // namespace
}  // namespace tracefold
