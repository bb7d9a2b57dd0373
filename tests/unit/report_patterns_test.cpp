// The report's "Communication patterns" section: grid text, where ranks go
// in a pattern's picture, and the section's HTML for none, a failure and
// many patterns.
#include "tracefold/report_patterns.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace tracefold {

// report_patterns.cpp (declared where report.cpp calls it).
void write_report_patterns(std::ostream& out, const PatternsReport& report);

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportPatterns, ParseGrid) {
  EXPECT_EQ(parse_grid("3x2"), (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(parse_grid("2x2x2"), (std::vector<int32_t>{2, 2, 2}));
  EXPECT_EQ(parse_grid("8"), (std::vector<int32_t>{8}));
  EXPECT_TRUE(parse_grid("").empty());
  EXPECT_TRUE(parse_grid("3x").empty());
  EXPECT_TRUE(parse_grid("3x0").empty());
  EXPECT_TRUE(parse_grid("2x2, 2x2").empty());
}

TEST(ReportPatterns, LayoutOnTheGridRowMajor) {
  // 3 rows of 2, as MPI_Cart_create numbers them: rank 1 right of 0,
  // rank 2 below 0.
  const auto at = rank_layout(6, {3, 2}, 180);
  ASSERT_EQ(at.size(), 6u);
  EXPECT_GT(at[1].x, at[0].x);
  EXPECT_DOUBLE_EQ(at[1].y, at[0].y);
  EXPECT_DOUBLE_EQ(at[2].x, at[0].x);
  EXPECT_GT(at[2].y, at[0].y);
  EXPECT_DOUBLE_EQ(at[5].x, at[1].x);
  EXPECT_DOUBLE_EQ(at[5].y, at[4].y);
  for (const auto& p : at) {
    EXPECT_GT(p.x, 0);
    EXPECT_LT(p.x, 180);
    EXPECT_GT(p.y, 0);
    EXPECT_LT(p.y, 180);
  }
}

TEST(ReportPatterns, LayoutThreeDimensionsPlanesSideBySide) {
  const auto at = rank_layout(8, {2, 2, 2}, 180);
  // Plane 1 (ranks 4-7) lies right of plane 0, a column apart.
  EXPECT_GT(at[4].x, at[1].x);
  EXPECT_GT(at[4].x - at[1].x, at[1].x - at[0].x);
  EXPECT_DOUBLE_EQ(at[4].y, at[0].y);
  EXPECT_GT(at[2].y, at[0].y);
}

TEST(ReportPatterns, LayoutOnACircleWithoutAFittingGrid) {
  for (const std::vector<int32_t>& grid : {std::vector<int32_t>{}, std::vector<int32_t>{4, 2}}) {
    const auto at = rank_layout(4, grid, 100);
    ASSERT_EQ(at.size(), 4u);
    // Rank 0 on top, then clockwise: right, bottom, left.
    EXPECT_NEAR(at[0].x, 50, 1e-9);
    EXPECT_LT(at[0].y, 50);
    EXPECT_GT(at[1].x, 50);
    EXPECT_GT(at[2].y, 50);
    EXPECT_LT(at[3].x, 50);
  }
  EXPECT_TRUE(rank_layout(0, {}, 100).empty());
  EXPECT_EQ(rank_layout(1, {}, 100).size(), 1u);
}

TEST(ReportPatterns, NoPatternsIsASentence) {
  std::ostringstream out;
  write_report_patterns(out, PatternsReport{4, {}, ""});
  EXPECT_NE(out.str().find("Communication patterns"), std::string::npos);
  EXPECT_NE(out.str().find("No communication patterns"), std::string::npos);
  EXPECT_EQ(out.str().find("<table"), std::string::npos);
}

TEST(ReportPatterns, AFailureIsNoted) {
  std::ostringstream out;
  write_report_patterns(out, PatternsReport{4, {}, "out of <memory>"});
  EXPECT_NE(out.str().find("failed: out of &lt;memory&gt;"), std::string::npos);
  EXPECT_EQ(out.str().find("<table"), std::string::npos);
}

TEST(ReportPatterns, TopTenShownRestFolded) {
  PatternsReport r;
  r.world_size = 6;
  for (int i = 0; i < 12; ++i) {
    ReportPattern p;
    p.title = "2-D halo";
    p.params = {{"grid", "3x2"}};
    p.grid = {3, 2};
    for (int32_t k = 0; k < 6; ++k) p.ranks.insert(k);
    p.edges = {{0, 1}, {1, 0}};
    p.messages = 4;
    p.bytes = 2048;
    r.patterns.push_back(p);
  }
  std::ostringstream out;
  write_report_patterns(out, r);
  const std::string s = out.str();
  EXPECT_EQ(count(s, "<tr class=\"pattern\">"), 10u);
  EXPECT_EQ(count(s, "<tr class=\"pattern more\">"), 2u);
  EXPECT_EQ(count(s, "<svg"), 12u);
  EXPECT_EQ(count(s, "<circle class=\"rank\""), 12u * 6);
  EXPECT_NE(s.find("Show 2 more patterns"), std::string::npos);
  EXPECT_NE(s.find("0\u20135"), std::string::npos);
  EXPECT_NE(s.find("512 B"), std::string::npos);
}

TEST(ReportPatterns, ArrowsAreCapped) {
  PatternsReport r;
  r.world_size = 64;
  ReportPattern p;
  p.title = "irregular neighbourhood";
  for (int32_t a = 0; a < 64; ++a)
    for (int32_t d = 1; d <= 5; ++d) p.edges.emplace_back(a, (a + d) % 64);
  r.patterns.push_back(p);
  std::ostringstream out;
  write_report_patterns(out, r);
  EXPECT_EQ(count(out.str(), "<line class=\"edge\""), 256u);
  EXPECT_NE(out.str().find("256 of 320 edges drawn"), std::string::npos);
}

TEST(ReportPatterns, ThreadClassesGetAColumn) {
  // Two thread classes, as patterns_for_report() hands them over: the
  // halo of the second threads has the more bytes and comes first.
  PatternsReport r;
  r.world_size = 4;
  r.threads = 2;
  for (int32_t thread : {1, 0}) {
    ReportPattern p;
    p.thread = thread;
    p.title = thread ? "1-D halo" : "ring";
    for (int32_t k = 0; k < 4; ++k) p.ranks.insert(k);
    p.edges = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
    p.messages = thread ? 32 : 16;
    p.bytes = p.messages * 4;
    r.patterns.push_back(p);
  }
  std::ostringstream out;
  write_report_patterns(out, r);
  const std::string s = out.str();
  EXPECT_NE(s.find("2 threads per rank calling MPI"), std::string::npos);
  EXPECT_EQ(count(s, ">thread</th>"), 1u);
  const std::size_t halo = s.find(
      "<td class=\"num pattern-thread\">1</td><td><b "
      "class=\"pattern-title\">1-D halo</b>");
  const std::size_t ring =
      s.find("<td class=\"num pattern-thread\">0</td><td><b class=\"pattern-title\">ring</b>");
  ASSERT_NE(halo, std::string::npos);
  ASSERT_NE(ring, std::string::npos);
  EXPECT_LT(halo, ring);
  // The rows have as many cells as the header has columns.
  EXPECT_EQ(count(s, "<th>") + count(s, "<th title"), 10u);
  EXPECT_EQ(count(s, "<td"), 2u * 10);

  // Without threads, neither the column nor the note.
  r.threads = 1;
  std::ostringstream plain;
  write_report_patterns(plain, r);
  EXPECT_EQ(plain.str().find("pattern-thread"), std::string::npos);
  EXPECT_EQ(plain.str().find(">thread</th>"), std::string::npos);
  EXPECT_EQ(plain.str().find("threads per rank"), std::string::npos);
  EXPECT_EQ(count(plain.str(), "<th>") + count(plain.str(), "<th title"), 9u);
  EXPECT_EQ(count(plain.str(), "<td"), 2u * 9);

  // A failed analysis (two threads of a rank on one channel) says why,
  // without the note on the classes it did not analyse.
  r.threads = 2;
  r.patterns.clear();
  r.error = "patterns per thread class need each channel on one thread of a rank";
  std::ostringstream failed;
  write_report_patterns(failed, r);
  EXPECT_NE(failed.str().find("failed: patterns per thread class"), std::string::npos);
  EXPECT_EQ(failed.str().find("threads per rank calling MPI"), std::string::npos);
}

}  // namespace
}  // namespace tracefold
