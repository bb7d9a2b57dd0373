#include "tracefold/ranklist.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace tracefold {
// Readable gtest failure output (found by ADL).
void PrintTo(const Ranklist& r, std::ostream* os) {
  *os << r.to_string();
}
}  // namespace tracefold

namespace {

using tracefold::Ranklist;
using tracefold::RanklistParseError;
using Dims = std::vector<std::pair<int32_t, int32_t>>;

constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

// Ranks of the sub-block rows [r0, r1) x cols [c0, c1) of a row-major grid of
// width w, stepping rows by rs and columns by cs.
std::vector<int32_t> block2d(int w, int r0, int r1, int c0, int c1, int rs = 1, int cs = 1) {
  std::vector<int32_t> out;
  for (int r = r0; r < r1; r += rs)
    for (int c = c0; c < c1; c += cs) out.push_back(r * w + c);
  return out;
}

// Sub-block [lo_k, hi_k) with steps st_k of a row-major grid of shape (.., h, w).
std::vector<int32_t> block3d(int h, int w, const int lo[3], const int hi[3], const int st[3]) {
  std::vector<int32_t> out;
  for (int z = lo[0]; z < hi[0]; z += st[0])
    for (int y = lo[1]; y < hi[1]; y += st[1])
      for (int x = lo[2]; x < hi[2]; x += st[2]) out.push_back((z * h + y) * w + x);
  return out;
}

std::size_t section_size(const Ranklist::Section& s) {
  std::size_t n = 1;
  for (const auto& d : s.dims) n *= static_cast<std::size_t>(d.first);
  return n;
}

std::string expect_parse_error(const std::string& text) {
  try {
    Ranklist::parse(text);
  } catch (const RanklistParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no RanklistParseError for \"" << text << "\"";
  return {};
}

TEST(Ranklist, EmptySet) {
  Ranklist r;
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.size(), 0u);
  EXPECT_EQ(r.to_string(), "<>");
  EXPECT_TRUE(r.sections().empty());
  EXPECT_TRUE(Ranklist::parse("<>").empty());
  EXPECT_TRUE(Ranklist::parse("  < >\n").empty());
  EXPECT_EQ(Ranklist::range(7, 0), r);
  EXPECT_TRUE(Ranklist::from_ranks({}).empty());
}

TEST(Ranklist, BasicForms) {
  EXPECT_EQ(Ranklist::single(5).to_string(), "<0 5>");
  EXPECT_EQ(Ranklist::range(1, 3).to_string(), "<1 1 3 1>");
  EXPECT_EQ(Ranklist::from_ranks({15, 5, 10}).to_string(), "<1 5 3 5>");
  EXPECT_EQ(Ranklist::from_ranks({0, 1}).to_string(), "<1 0 2 1>");
  EXPECT_EQ(Ranklist::from_ranks({0, 2}).to_string(), "<1 0 2 2>");
}

TEST(Ranklist, GridInterior5x5) {
  const Ranklist r = Ranklist::from_ranks(block2d(5, 1, 4, 1, 4));
  EXPECT_EQ(r.to_vector(), (std::vector<int32_t>{6, 7, 8, 11, 12, 13, 16, 17, 18}));
  EXPECT_EQ(r.to_string(), "<2 6 3 5 3 1>");
  ASSERT_EQ(r.sections().size(), 1u);
  EXPECT_EQ(r.sections()[0], (Ranklist::Section{6, {{3, 5}, {3, 1}}}));
}

TEST(Ranklist, GridMinusLeftColumn) {
  EXPECT_EQ(Ranklist::from_ranks(block2d(5, 0, 5, 1, 5)).to_string(), "<2 1 5 5 4 1>");
}

TEST(Ranklist, AllSixteen) {
  Ranklist r;
  for (int32_t i = 15; i >= 0; --i) r.insert(i);
  EXPECT_EQ(r.to_string(), "<1 0 16 1>");
  EXPECT_EQ(r.intervals().size(), 1u);
}

TEST(Ranklist, LeftEdge5x5) {
  EXPECT_EQ(Ranklist::from_ranks({5, 10, 15}).to_string(), "<1 5 3 5>");
}

TEST(Ranklist, Corners5x5RoundTrip) {
  const Ranklist r = Ranklist::from_ranks({24, 0, 20, 4});
  const std::string s = r.to_string();
  EXPECT_EQ(Ranklist::parse(s), r) << s;
  EXPECT_EQ(Ranklist::parse(s).to_vector(), (std::vector<int32_t>{0, 4, 20, 24}));
}

TEST(Ranklist, GridInteriorIsAlwaysOneSection) {
  for (int n = 3; n <= 40; ++n) {
    const Ranklist r = Ranklist::from_ranks(block2d(n, 1, n - 1, 1, n - 1));
    const auto secs = r.sections();
    ASSERT_EQ(secs.size(), 1u) << "N=" << n << " " << r.to_string();
    EXPECT_EQ(secs[0].start, n + 1);
    if (n > 3) {
      EXPECT_EQ(secs[0].dims, (Dims{{n - 2, n}, {n - 2, 1}})) << "N=" << n;
    }
    EXPECT_EQ(Ranklist::parse(r.to_string()), r);
  }
}

TEST(Ranklist, BlockInterior3DIsOneSection) {
  for (int n = 4; n <= 16; ++n) {
    const int lo[3] = {1, 1, 1}, hi[3] = {n - 1, n - 1, n - 1}, st[3] = {1, 1, 1};
    const Ranklist r = Ranklist::from_ranks(block3d(n, n, lo, hi, st));
    const auto secs = r.sections();
    ASSERT_EQ(secs.size(), 1u) << "N=" << n << " " << r.to_string();
    EXPECT_EQ(secs[0].start, n * n + n + 1);
    EXPECT_EQ(secs[0].dims, (Dims{{n - 2, n * n}, {n - 2, n}, {n - 2, 1}})) << "N=" << n;
  }
}

TEST(Ranklist, InsertMergesIntervals) {
  Ranklist r;
  r.insert(5);
  r.insert(7);
  r.insert(5);
  EXPECT_EQ(r.intervals(), (Dims{{5, 5}, {7, 7}}));
  r.insert(6);
  EXPECT_EQ(r.intervals(), (Dims{{5, 7}}));
  r.insert(4);
  r.insert(8);
  r.insert(0);
  EXPECT_EQ(r.intervals(), (Dims{{0, 0}, {4, 8}}));
  EXPECT_EQ(r.size(), 6u);
  EXPECT_THROW(r.insert(-1), std::invalid_argument);
  EXPECT_THROW(Ranklist::single(-3), std::invalid_argument);
  EXPECT_THROW(Ranklist::range(-1, 2), std::invalid_argument);
  EXPECT_THROW(Ranklist::range(kMax, 2), std::invalid_argument);
  EXPECT_THROW(Ranklist::from_ranks({3, -1}), std::invalid_argument);
}

TEST(Ranklist, UnionContainsSizeFirstLast) {
  Ranklist a = Ranklist::range(10, 5);  // 10..14
  const Ranklist b = Ranklist::from_ranks({3, 15, 20});
  const Ranklist u = a.united(b);
  EXPECT_EQ(u.intervals(), (Dims{{3, 3}, {10, 15}, {20, 20}}));
  EXPECT_EQ(u.size(), 8u);
  EXPECT_EQ(u.first(), 3);
  EXPECT_EQ(u.last(), 20);
  EXPECT_TRUE(u.contains(3));
  EXPECT_TRUE(u.contains(12));
  EXPECT_TRUE(u.contains(15));
  EXPECT_FALSE(u.contains(16));
  EXPECT_FALSE(u.contains(0));
  EXPECT_FALSE(u.contains(21));
  EXPECT_EQ(a.size(), 5u);  // united() leaves the operand alone
  a.unite(b).unite(Ranklist::range(16, 4));
  EXPECT_EQ(a.intervals(), (Dims{{3, 3}, {10, 20}}));
  EXPECT_EQ(a.size(), 12u);
  a.unite(a);
  EXPECT_EQ(a.size(), 12u);
  Ranklist e;
  e.unite(b);
  EXPECT_EQ(e, b);
}

TEST(Ranklist, Intersects) {
  const Ranklist a = Ranklist::from_ranks({1, 2, 3, 10});
  EXPECT_TRUE(a.intersects(Ranklist::single(10)));
  EXPECT_TRUE(a.intersects(Ranklist::range(3, 5)));
  EXPECT_FALSE(a.intersects(Ranklist::range(4, 6)));
  EXPECT_FALSE(a.intersects(Ranklist()));
  EXPECT_FALSE(Ranklist().intersects(a));
  EXPECT_TRUE(a.intersects(a));
}

TEST(Ranklist, Ordering) {
  const auto R = [](std::vector<int32_t> v) { return Ranklist::from_ranks(std::move(v)); };
  EXPECT_LT(R({}), R({0}));
  EXPECT_LT(R({1, 2}), R({1, 3}));
  EXPECT_LT(R({1, 2}), R({1, 2, 3}));  // proper prefix first
  EXPECT_GT(R({1, 5}), R({1, 2, 3}));
  EXPECT_LT(R({1, 2, 3, 4}), R({1, 2, 3, 5}));
  EXPECT_LT(R({0, 1, 2, 3, 9}), R({0, 1, 2, 3, 10}));
  EXPECT_LT(R({0, 1, 2, 5, 6}), R({0, 1, 2, 5, 7}));  // equal across interval splits
  EXPECT_GT(R({0, 1, 2, 3, 4, 5}), R({0, 1, 2, 3, 4}));
  EXPECT_EQ(R({4, 5, 6}) <=> R({6, 5, 4}), std::strong_ordering::equal);
  EXPECT_EQ(R({2}) <=> R({1, 2}), std::strong_ordering::greater);
}

TEST(Ranklist, FromSections) {
  using S = Ranklist::Section;
  // Overlapping, zero and negative strides, and degenerate dims are fine.
  const Ranklist r = Ranklist::from_sections(
      {S{0, {{3, 1}}}, S{2, {{2, 1}}}, S{9, {{1000000, 0}}}, S{20, {{3, -2}, {2, 1}}}});
  EXPECT_EQ(r.to_vector(), (std::vector<int32_t>{0, 1, 2, 3, 9, 16, 17, 18, 19, 20, 21}));
  EXPECT_TRUE(Ranklist::from_sections({S{5, {{0, 1}}}}).empty());
  EXPECT_THROW(Ranklist::from_sections({S{-1, {}}}), std::invalid_argument);
  EXPECT_THROW(Ranklist::from_sections({S{1, {{-2, 1}}}}), std::invalid_argument);
  EXPECT_THROW(Ranklist::from_sections({S{1, {{3, -1}}}}), std::invalid_argument);
  EXPECT_THROW(Ranklist::from_sections({S{kMax, {{2, 1}}}}), std::invalid_argument);
}

TEST(Ranklist, ParseAcceptsNonCanonicalInput) {
  EXPECT_EQ(Ranklist::parse("<1 0 3 1> <1 2 3 1>"), Ranklist::range(0, 5));
  EXPECT_EQ(Ranklist::parse("<0 7><0 7>\t< 1  3 2 2 >\n"), Ranklist::from_ranks({3, 5, 7}));
  EXPECT_EQ(Ranklist::parse("<2 10 2 -10 3 1>"), Ranklist::from_ranks({0, 1, 2, 10, 11, 12}));
  EXPECT_EQ(Ranklist::parse("<0 2147483647>").last(), kMax);
}

TEST(Ranklist, ParseErrors) {
  std::string m = expect_parse_error("<2 6 3>");
  EXPECT_NE(m.find("offset 6"), std::string::npos) << m;
  EXPECT_NE(m.find("stride"), std::string::npos) << m;
  m = expect_parse_error("<1 a 2 1>");
  EXPECT_NE(m.find("offset 3"), std::string::npos) << m;
  EXPECT_NE(m.find("start"), std::string::npos) << m;
  m = expect_parse_error("<0 -1>");
  EXPECT_NE(m.find("offset 3"), std::string::npos) << m;
  m = expect_parse_error("2 6 3 5 3 1");
  EXPECT_NE(m.find("offset 0"), std::string::npos) << m;
  EXPECT_NE(m.find("'<'"), std::string::npos) << m;

  const struct {
    const char* text;
    std::size_t offset;
  } cases[] = {
      {"", 0},
      {"   ", 3},
      {"<0 5", 4},       // missing '>'
      {"<0 5 6>", 5},    // too many numbers
      {"<1 0 0 1>", 5},  // count must be positive
      {"<0 5> x", 6},
      {"<0 5> <>", 7},  // "<>" must stand alone
      {"<> <0 5>", 3},
      {"<1 1a 2 1>", 4},
      {"<0 2147483648>", 3},  // out of int32 range
      {"<1 0 2 -1>", 0},      // contains rank -1
      {"<1 2147483647 2 1>", 0},
      {"<99 0>", 1},  // dimension count too large
  };
  for (const auto& c : cases) {
    try {
      Ranklist::parse(c.text);
      ADD_FAILURE() << "no error for \"" << c.text << "\"";
    } catch (const RanklistParseError& e) {
      EXPECT_EQ(e.offset(), c.offset) << c.text << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("offset " + std::to_string(c.offset)), std::string::npos)
          << e.what();
    }
  }
}

TEST(Ranklist, ExtremeRanks) {
  Ranklist all = Ranklist::range(0, kMax);
  all.insert(kMax);
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kMax) + 1);
  EXPECT_EQ(Ranklist::parse(all.to_string()), all);
  const Ranklist top = Ranklist::from_ranks({kMax, kMax - 1, kMax - 5});
  EXPECT_EQ(Ranklist::parse(top.to_string()), top);
  int count = 0;
  top.for_each([&](int32_t) { ++count; });
  EXPECT_EQ(count, 3);
  EXPECT_GT(Ranklist::single(kMax - 1), top);  // kMax-1 > kMax-5
  EXPECT_LT(Ranklist::single(kMax - 5), top);  // proper prefix
}

TEST(Ranklist, SectionsScaleToLargeInputs) {
  // 200k isolated points in irregular steps plus a large 2-D block; this would
  // time out with a quadratic algorithm.
  std::mt19937 rng(7);
  std::vector<int32_t> v;
  int32_t x = 0;
  for (int i = 0; i < 200000; ++i) v.push_back(x += 2 + static_cast<int32_t>(rng() % 3));
  const Ranklist sparse = Ranklist::from_ranks(v);
  EXPECT_EQ(Ranklist::parse(sparse.to_string()), sparse);
  const Ranklist block = Ranklist::from_ranks(block2d(1000, 1, 999, 1, 999));
  EXPECT_EQ(block.to_string(), "<2 1001 998 1000 998 1>");
}

// --- Randomized property test ------------------------------------------------

std::vector<int32_t> random_ranks(std::mt19937& rng, int kind) {
  auto uni = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  switch (kind) {
    case 0: {  // sparse random
      std::vector<int32_t> v;
      const int range = uni(1, 500), n = uni(0, 60);
      for (int i = 0; i < n; ++i) v.push_back(uni(0, range - 1));
      return v;
    }
    case 1: {  // 2-D sub-block of a random grid, possibly strided
      const int w = uni(1, 30), h = uni(1, 30);
      const int r0 = uni(0, h - 1), r1 = uni(r0 + 1, h), c0 = uni(0, w - 1), c1 = uni(c0 + 1, w);
      return block2d(w, r0, r1, c0, c1, uni(1, 3), uni(1, 3));
    }
    case 2: {  // 3-D sub-block of a random grid, possibly strided
      const int d = uni(1, 12), h = uni(1, 12), w = uni(1, 12);
      const int dims[3] = {d, h, w};
      int lo[3], hi[3], st[3];
      for (int k = 0; k < 3; ++k) {
        lo[k] = uni(0, dims[k] - 1);
        hi[k] = uni(lo[k] + 1, dims[k]);
        st[k] = uni(0, 2) == 0 ? uni(2, 3) : 1;
      }
      return block3d(h, w, lo, hi, st);
    }
    case 3: {  // strided progression
      std::vector<int32_t> v;
      const int start = uni(0, 1000), stride = uni(1, 40), n = uni(1, 50);
      for (int i = 0; i < n; ++i) v.push_back(start + i * stride);
      return v;
    }
    case 4: {  // dense random: produces runs
      std::vector<int32_t> v;
      const int range = uni(1, 400), pct = uni(10, 95);
      for (int r = 0; r < range; ++r)
        if (uni(0, 99) < pct) v.push_back(r);
      return v;
    }
    default: {  // union of several structured/random sets
      std::vector<int32_t> v;
      const int parts = uni(2, 5);
      for (int p = 0; p < parts; ++p) {
        auto part = random_ranks(rng, uni(0, 4));
        v.insert(v.end(), part.begin(), part.end());
      }
      return v;
    }
  }
}

// The parts of a grid that extrapolation names at a million ranks keep a
// few runs, not one interval per row: a column of 1024x1024, the interior,
// the two wrap-around columns together, a face of 128x128x64.
// Ranklist::sections() as it was written before it chained sections while
// reading the intervals: the canonical form must not change (traces are
// compared byte for byte), so the two are compared on every set below.
std::vector<Ranklist::Section> reference_sections(const Ranklist& r) {
  using Section = Ranklist::Section;
  std::vector<Section> out, level;
  std::vector<int32_t> isolated;
  for (const auto& [lo, hi] : r.intervals()) {
    if (lo == hi) {
      isolated.push_back(lo);
      continue;
    }
    int64_t len = static_cast<int64_t>(hi) - lo + 1;
    if (len > kMax) {
      len = kMax;
      isolated.push_back(hi);
    }
    level.push_back(Section{lo, {{static_cast<int32_t>(len), 1}}});
  }
  for (std::size_t i = 0; i < isolated.size();) {
    if (i + 1 == isolated.size()) {
      out.push_back(Section{isolated[i], {}});
      break;
    }
    const int32_t diff = isolated[i + 1] - isolated[i];
    std::size_t j = i + 1;
    while (j + 1 < isolated.size() && isolated[j + 1] - isolated[j] == diff) ++j;
    level.push_back(Section{isolated[i], {{static_cast<int32_t>(j - i + 1), diff}}});
    i = j + 1;
  }
  while (!level.empty()) {
    std::sort(level.begin(), level.end(), [](const Section& a, const Section& b) {
      return a.dims != b.dims ? a.dims < b.dims : a.start < b.start;
    });
    std::vector<Section> next;
    for (std::size_t i = 0; i < level.size();) {
      std::size_t j = i;
      int32_t diff = 0;
      if (i + 1 < level.size() && level[i + 1].dims == level[i].dims) {
        diff = level[i + 1].start - level[i].start;
        j = i + 1;
        while (j + 1 < level.size() && level[j + 1].dims == level[j].dims &&
               level[j + 1].start - level[j].start == diff)
          ++j;
      }
      if (j == i) {
        out.push_back(level[i]);
      } else {
        Section merged{level[i].start, {{static_cast<int32_t>(j - i + 1), diff}}};
        merged.dims.insert(merged.dims.end(), level[i].dims.begin(), level[i].dims.end());
        next.push_back(merged);
      }
      i = j + 1;
    }
    level = std::move(next);
  }
  std::sort(out.begin(), out.end(), [](const Section& a, const Section& b) {
    return a.start != b.start ? a.start < b.start : a.dims < b.dims;
  });
  return out;
}

TEST(Ranklist, SectionsAsBefore) {
  const std::vector<std::string> cases = {
      "<>",
      "<0 0>",
      "<0 2147483647>",
      "<1 0 2147483647 1> <0 2147483647>",
      "<1 5 2147483641 1>",
      "<1 1 2147483646 1>",
      "<1 0 1024 1024> <1 1023 1024 1024>",
      "<2 1025 1022 1024 1022 1> <1 0 1024 1024>",
      "<2 16512 62 16384 126 128>",
      "<1 0 5 3> <1 20 4 2> <1 1 2 7> <2 100 3 10 2 1> <2 200 2 10 3 1> <0 300>",
      "<2 0 4 10 3 1> <2 5 4 10 2 1> <1 50 3 1> <1 60 3 1> <0 70> <0 72> <0 74>"};
  for (const auto& text : cases) {
    const Ranklist r = Ranklist::parse(text);
    EXPECT_EQ(r.sections(), reference_sections(r)) << text;
  }
  std::mt19937 rng(14);
  for (int round = 0; round < 300; ++round) {
    // Unions of a few regular sections: runs of equal lengths interleaved.
    std::vector<Ranklist::Section> secs;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) {
      Ranklist::Section s{static_cast<int32_t>(rng() % 200), {}};
      const int dims = static_cast<int>(rng() % 3);
      for (int d = 0; d < dims; ++d)
        s.dims.emplace_back(1 + static_cast<int32_t>(rng() % 6),
                            1 + static_cast<int32_t>(rng() % (d == dims - 1 ? 3 : 40)));
      secs.push_back(s);
    }
    const Ranklist r = Ranklist::from_sections(secs);
    EXPECT_EQ(r.sections(), reference_sections(r)) << r.to_string();
  }
}

TEST(Ranklist, GridPartsOfAMillionRanksStaySmall) {
  Ranklist column;
  for (int32_t y = 0; y < 1024; ++y) column.insert(5 + 1024 * y);
  EXPECT_EQ(column.size(), 1024u);
  EXPECT_EQ(column.interval_count(), 1024u);
  EXPECT_EQ(column.runs().size(), 1u);
  EXPECT_LE(column.memory_bytes(), sizeof(Ranklist::Run));
  EXPECT_EQ(column, Ranklist::parse("<1 5 1024 1024>"));
  EXPECT_EQ(column.to_string(), "<1 5 1024 1024>");
  EXPECT_EQ(column.last(), 5 + 1024 * 1023);
  EXPECT_TRUE(column.contains(5 + 1024 * 1023));
  EXPECT_TRUE(column.contains(5 + 1024 * 7));
  EXPECT_FALSE(column.contains(6 + 1024 * 7));
  EXPECT_FALSE(column.contains(5 + 1024 * 1024));
  EXPECT_FALSE(column.contains(4));

  const Ranklist interior = Ranklist::parse("<2 1025 1022 1024 1022 1>");
  EXPECT_EQ(interior.size(), 1022u * 1022u);
  EXPECT_EQ(interior.runs().size(), 1u);

  // Columns 0 and 1023 meet across rows: [1023, 1024], [2047, 2048], ...
  const Ranklist wrap =
      Ranklist::parse("<1 0 1024 1024>").united(Ranklist::parse("<1 1023 1024 1024>"));
  EXPECT_EQ(wrap.size(), 2048u);
  EXPECT_EQ(wrap.runs().size(), 3u);
  EXPECT_TRUE(wrap.intersects(column.united(Ranklist::single(1024))));
  EXPECT_FALSE(wrap.intersects(column));

  // x = 0 without its edges: one run per z plane (62 runs for 7,812 ranks).
  const Ranklist face = Ranklist::from_sections({{128 + 16384, {{62, 16384}, {126, 128}}}});
  EXPECT_EQ(face.size(), 126u * 62u);
  EXPECT_EQ(face.interval_count(), 126u * 62u);
  EXPECT_EQ(face.runs().size(), 62u);
  EXPECT_LE(face.memory_bytes(), 64 * sizeof(Ranklist::Run));
  EXPECT_EQ(face.to_string(), "<2 16512 62 16384 126 128>");
  EXPECT_GT(face, column);
  EXPECT_GT(face, Ranklist::parse("<1 16512 125 128>"));
}

TEST(Ranklist, RandomizedProperties) {
  Ranklist prev;
  std::set<int32_t> prev_ref;
  for (unsigned seed = 0; seed < 600; ++seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> ranks = random_ranks(rng, static_cast<int>(seed % 6));
    const std::set<int32_t> ref(ranks.begin(), ranks.end());
    const std::vector<int32_t> ref_vec(ref.begin(), ref.end());
    SCOPED_TRACE("seed " + std::to_string(seed));

    // Build the same set four different ways.
    const Ranklist a = Ranklist::from_ranks(ranks);
    std::shuffle(ranks.begin(), ranks.end(), rng);
    Ranklist b;
    for (int32_t r : ranks) b.insert(r);
    Ranklist c;
    for (std::size_t i = 0; i < ranks.size();) {
      const std::size_t len = 1 + rng() % 7;
      const std::size_t end = std::min(ranks.size(), i + len);
      c.unite(Ranklist::from_ranks(std::vector<int32_t>(ranks.begin() + i, ranks.begin() + end)));
      i = end;
    }
    const Ranklist d = Ranklist::from_sections(a.sections());
    // In ascending order: each rank extends the last interval or follows it.
    Ranklist e;
    for (int32_t r : ref_vec) e.insert(r);

    ASSERT_EQ(a.to_vector(), ref_vec);
    EXPECT_EQ(a.size(), ref.size());
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, c);
    EXPECT_EQ(a, d);
    EXPECT_EQ(a, e);
    // One representation per set: equal sets have equal runs.
    EXPECT_EQ(a.runs(), b.runs());
    EXPECT_EQ(a.runs(), c.runs());
    EXPECT_EQ(a.runs(), e.runs());
    EXPECT_EQ(a.interval_count(), a.intervals().size());
    EXPECT_EQ(a.sections(), reference_sections(a));
    const std::string s = a.to_string();
    EXPECT_EQ(b.to_string(), s);
    EXPECT_EQ(c.to_string(), s);
    EXPECT_EQ(d.to_string(), s);
    EXPECT_EQ(Ranklist::parse(s), a) << s;

    // Sections: sorted by start, disjoint (sizes add up), counts >= 2.
    const auto secs = a.sections();
    std::size_t total = 0;
    for (std::size_t i = 0; i < secs.size(); ++i) {
      total += section_size(secs[i]);
      if (i > 0) {
        EXPECT_LT(secs[i - 1].start, secs[i].start);
      }
      for (const auto& dim : secs[i].dims) EXPECT_GE(dim.first, 2) << s;
    }
    EXPECT_EQ(total, ref.size()) << s;

    // Intervals are sorted, disjoint and non-adjacent.
    const auto& iv = a.intervals();
    for (std::size_t i = 0; i < iv.size(); ++i) {
      EXPECT_LE(iv[i].first, iv[i].second);
      if (i > 0) {
        EXPECT_GT(iv[i].first, iv[i - 1].second + 1);
      }
    }

    if (!ref.empty()) {
      EXPECT_EQ(a.first(), *ref.begin());
      EXPECT_EQ(a.last(), *ref.rbegin());
    }
    for (int32_t probe = 0; probe < 1200; probe += 7) {
      EXPECT_EQ(a.contains(probe), ref.count(probe) == 1) << probe;
    }

    // Binary operations against the previous set.
    std::set<int32_t> uref = ref;
    uref.insert(prev_ref.begin(), prev_ref.end());
    const Ranklist u = a.united(prev);
    EXPECT_EQ(u.to_vector(), std::vector<int32_t>(uref.begin(), uref.end()));
    EXPECT_EQ(u.size(), uref.size());
    const bool ref_intersects =
        std::any_of(ref.begin(), ref.end(), [&](int32_t r) { return prev_ref.count(r) == 1; });
    EXPECT_EQ(a.intersects(prev), ref_intersects);
    EXPECT_EQ(prev.intersects(a), ref_intersects);
    const std::vector<int32_t> pv(prev_ref.begin(), prev_ref.end());
    const auto expected_order = ref_vec <=> pv;
    EXPECT_EQ(a <=> prev, expected_order);
    EXPECT_EQ(prev <=> a, pv <=> ref_vec);
    EXPECT_EQ(a == prev, ref_vec == pv);

    prev = a;
    prev_ref = ref;
  }
}

}  // namespace
