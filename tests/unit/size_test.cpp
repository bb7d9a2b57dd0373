// Near-constant trace size (DESIGN.md contracts; seed 000, 2.2): a
// non-periodic 2D stencil has 9 communication groups however many ranks and
// time steps it runs, so its folded and merged trace must not grow with
// either, beyond the width of the numbers in it (a step or rank count of
// 10000 takes more digits than one of 100).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include "stencil.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using testing::expands_to;
using testing::for_each_elastic;
using testing::Stencil;

struct Measured {
  Trace trace;
  std::string text;
  double seconds = 0;
};

Measured fold_and_merge(const Stencil& s) {
  const auto t0 = std::chrono::steady_clock::now();
  Measured m;
  m.trace = reduce_traces(s.fold_all());
  m.text = format_trace(m.trace);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[   size   ] %4d ranks x %5d steps: %6zu bytes, %3zu nodes (%.2f s)\n", s.size(),
              s.steps, m.text.size(), m.trace.nodes.size(), m.seconds);
  return m;
}

// The text with every run of digits replaced by one '#': what is left is the
// structure (lines, loops, ranklist sections, value runs), independent of the
// magnitude of the numbers.
std::string skeleton(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] >= '0' && text[i] <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    out += text[i];
  }
  return out;
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

double ratio(std::size_t a, std::size_t b) {
  return static_cast<double>(a) / static_cast<double>(b);
}

std::set<std::string> distinct_ranklists(const Trace& t) {
  std::set<std::string> out;
  for (const Node& n : t.nodes) out.insert(n.ranks.to_string());
  for_each_elastic(t, [&](std::size_t, const std::string&, const Elastic& el) {
    for (const auto& e : el.entries()) out.insert(e.ranks.to_string());
  });
  return out;
}

// Every parameter has at most one value sequence per communication group.
void expect_bounded_groups(const Trace& t, const std::string& label) {
  std::size_t widest = 0;
  for_each_elastic(t, [&](std::size_t i, const std::string& what, const Elastic& el) {
    EXPECT_LE(el.entries().size(), 9u)
        << label << " node " << i << " " << what << ": " << el.to_string();
    widest = std::max(widest, el.entries().size());
  });
  EXPECT_GE(widest, 3u) << label << ": corners, edges and interior should differ somewhere";
}

// Ranks of every group of a side x side grid: the 4 corners, one rank of each
// edge and a few interior ones.
std::vector<int32_t> sample_ranks(int32_t side) {
  const int32_t last = side * side - 1;
  std::set<int32_t> r = {0,
                         side - 1,
                         last - side + 1,
                         last,
                         1,
                         side,
                         2 * side - 1,
                         last - 1,
                         side + 1,
                         last - side - 1,
                         (side / 2) * side + side / 2};
  return {r.begin(), r.end()};
}

constexpr double kRawTolerance = 0.10;       // decimal digits grow with log(P) and log(T)
constexpr double kSkeletonTolerance = 0.05;  // the structure must not grow at all (±5%)

TEST(Size, OpenStencilIsNearConstantInRanks) {
  std::map<int32_t, Measured> by_side;
  for (int32_t side : {4, 8, 32}) {
    Stencil s{.side = side, .steps = 100};
    by_side[side] = fold_and_merge(s);
    const Trace& t = by_side[side].trace;
    expect_bounded_groups(t, std::to_string(s.size()) + " ranks");
    EXPECT_EQ(t.nodes.size(), 10u) << s.size() << " ranks";
    for (int32_t r : sample_ranks(side))
      EXPECT_TRUE(expands_to(t, r, s.events(r), Stencil::sites()));
  }
  const Measured& base = by_side[4];
  const std::size_t base_lines = lines(base.text);
  const std::size_t base_skel = skeleton(base.text).size();
  const std::size_t base_ranklists = distinct_ranklists(base.trace).size();
  EXPECT_LE(base_ranklists, 25u) << "16 ranks";
  for (int32_t side : {8, 32}) {
    const Measured& m = by_side[side];
    const std::string label = std::to_string(side * side) + " vs 16 ranks";
    EXPECT_EQ(lines(m.text), base_lines) << label;
    EXPECT_NEAR(ratio(skeleton(m.text).size(), base_skel), 1.0, kSkeletonTolerance) << label;
    EXPECT_NEAR(ratio(m.text.size(), base.text.size()), 1.0, kRawTolerance) << label;
    EXPECT_EQ(distinct_ranklists(m.trace).size(), base_ranklists) << label;
  }
}

TEST(Size, OpenStencilIsNearConstantInSteps) {
  for (int32_t side : {4, 8}) {
    Stencil shorter{.side = side, .steps = 100};
    Stencil longer{.side = side, .steps = 10000};
    const Measured a = fold_and_merge(shorter);
    const Measured b = fold_and_merge(longer);
    const std::string label = std::to_string(shorter.size()) + " ranks, 10000 vs 100 steps";
    // Same structure exactly: only the numbers (trip counts, run lengths,
    // histogram counts and sums) differ.
    EXPECT_EQ(skeleton(b.text), skeleton(a.text)) << label;
    EXPECT_NEAR(ratio(b.text.size(), a.text.size()), 1.0, kRawTolerance) << label;
    EXPECT_EQ(distinct_ranklists(b.trace), distinct_ranklists(a.trace)) << label;
    expect_bounded_groups(b.trace, label);
    for (int32_t r : sample_ranks(side))
      EXPECT_TRUE(expands_to(b.trace, r, longer.events(r), Stencil::sites()));
  }
}

TEST(Size, CompressedTraceIsNearConstantToo) {
  Stencil small{.side = 4, .steps = 100};
  Stencil big{.side = 16, .steps = 400};
  const std::size_t a = zstd_compress(fold_and_merge(small).text).size();
  const std::size_t b = zstd_compress(fold_and_merge(big).text).size();
  std::printf("[   size   ] zstd: %zu bytes (16 ranks x 100) vs %zu bytes (256 ranks x 400)\n", a,
              b);
  EXPECT_LT(b, a * 13 / 10);
}

}  // namespace
}  // namespace tracefold
