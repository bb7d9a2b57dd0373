// The cache simulator of `tracefold memreplay` against miss counts worked
// out by hand, and the interleaving of thread streams.
#include "cache_sim.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <list>
#include <random>

#include "interleave.hpp"
#include "raw_format.h"

namespace mt = tracefold::memtrace;
namespace fs = std::filesystem;

namespace {

mt::CacheGeometry geom(const std::string& spec) {
  return mt::parse_cache_spec(spec).at(0);
}

// Misses of `passes` sweeps over `count` 8-byte accesses `stride` bytes apart.
int sweep_misses(mt::Cache& c, std::uint64_t stride, int count, int passes) {
  int misses = 0;
  for (int p = 0; p < passes; p++)
    for (int i = 0; i < count; i++) misses += c.access(stride * i, 8);
  return misses;
}

// 128-byte caches of 32-byte lines: direct-mapped = 4 sets, 2-way = 2 sets.
TEST(CacheSim, StridedSweepDirectMapped) {
  // Stride 32, 4 elements: lines 0-3 in sets 0-3: 4 cold misses, then hits.
  mt::Cache a(geom("D=128:1:32"));
  EXPECT_EQ(sweep_misses(a, 32, 4, 2), 4);
  // Stride 32, 8 elements: line i+4 evicts line i (same set) before it
  // comes back: every access of both passes misses.
  mt::Cache b(geom("D=128:1:32"));
  EXPECT_EQ(sweep_misses(b, 32, 8, 2), 16);
  // Stride 64, 4 elements: lines 0, 2, 4, 6 fall in sets 0, 2, 0, 2: half
  // the sets unused, all 8 accesses miss although 4 lines would fit.
  mt::Cache c(geom("D=128:1:32"));
  EXPECT_EQ(sweep_misses(c, 64, 4, 2), 8);
  // Stride 16 (two accesses per line), 8 elements: lines 0-3, 4 misses then
  // 12 hits.
  mt::Cache d(geom("D=128:1:32"));
  EXPECT_EQ(sweep_misses(d, 16, 8, 2), 4);
}

TEST(CacheSim, StridedSweepTwoWay) {
  // Stride 64, 4 elements: lines 0, 2, 4, 6 all in set 0 of 2 ways; the
  // sweep of 4 lines through 2 ways evicts each line before its reuse.
  mt::Cache a(geom("D=128:2:32"));
  EXPECT_EQ(sweep_misses(a, 64, 4, 2), 8);
  // Stride 128, 2 elements, 3 passes: lines 0 and 4 share set 0 and both
  // fit in its 2 ways: 2 misses.
  mt::Cache b(geom("D=128:2:32"));
  EXPECT_EQ(sweep_misses(b, 128, 2, 3), 2);
  // The same pair on the direct-mapped cache (set 0 of 4) thrashes: 6 misses.
  mt::Cache c(geom("D=128:1:32"));
  EXPECT_EQ(sweep_misses(c, 128, 2, 3), 6);
  // Stride 32, 8 elements over 2 sets x 2 ways: lines 0-7, 4 per set,
  // cyclic: all 16 miss; a forward then backward sweep reuses the 2 most
  // recent lines of each set at the turn: 8 + 4 misses.
  mt::Cache d(geom("D=128:2:32"));
  EXPECT_EQ(sweep_misses(d, 32, 8, 2), 16);
  mt::Cache e(geom("D=128:2:32"));
  int m = sweep_misses(e, 32, 8, 1);
  for (int i = 7; i >= 0; i--) m += e.access(32 * i, 8);
  EXPECT_EQ(m, 12);
}

TEST(CacheSim, LruEvictsTheLeastRecentlyUsed) {
  // One set of 2 ways (64 bytes, 32-byte lines): A=0, B=32, C=64.
  mt::Cache c(geom("D=64:2:32"));
  EXPECT_TRUE(c.access(0, 8));   // A: miss
  EXPECT_TRUE(c.access(32, 8));  // B: miss, set = B A
  EXPECT_FALSE(c.access(0, 8));  // A: hit, set = A B
  EXPECT_EQ(c.set_lines(0), (std::vector<std::uint64_t>{0, 1}));
  EXPECT_TRUE(c.access(64, 8));  // C: miss, evicts B (least recent), not A
  EXPECT_EQ(c.set_lines(0), (std::vector<std::uint64_t>{2, 0}));
  EXPECT_FALSE(c.access(0, 8));  // A still there
  EXPECT_TRUE(c.access(32, 8));  // B was evicted; now evicts C
  EXPECT_EQ(c.set_lines(0), (std::vector<std::uint64_t>{1, 0}));
  // 4 ways: a hit in the middle moves only that line to the front.
  mt::Cache d(geom("D=128:4:32"));
  for (std::uint64_t l : {0, 1, 2, 3}) d.access(32 * l, 1);
  EXPECT_EQ(d.set_lines(0), (std::vector<std::uint64_t>{3, 2, 1, 0}));
  d.access(32 * 1, 1);
  EXPECT_EQ(d.set_lines(0), (std::vector<std::uint64_t>{1, 3, 2, 0}));
  d.access(32 * 4, 1);  // evicts line 0
  EXPECT_EQ(d.set_lines(0), (std::vector<std::uint64_t>{4, 1, 3, 2}));
}

// The simulator against the textbook model (each set a list of lines, most
// recent first, a hit moved to the front, a miss dropping the back) on
// random accesses that crowd a few sets, for several associativities:
// every access's outcome and, at the end, every set's order must agree.
TEST(CacheSim, AgreesWithAListPerSetOnRandomAccesses) {
  for (const char* spec : {"D=256:1:16", "D=512:2:16", "D=1K:4:32", "D=4K:8:64", "D=8K:16:64"}) {
    const mt::CacheGeometry g = geom(spec);
    mt::Cache c(g);
    std::vector<std::list<std::uint64_t>> model(g.sets());
    std::mt19937_64 rng(42);
    // Lines from a range a few times the cache's, so that hits and misses
    // both happen in every set.
    std::uniform_int_distribution<std::uint64_t> pick(0, 3 * g.size / g.line);
    for (int i = 0; i < 20000; i++) {
      const std::uint64_t line = pick(rng);
      auto& set = model[line % g.sets()];
      auto it = std::find(set.begin(), set.end(), line);
      const bool miss = it == set.end();
      if (!miss) set.erase(it);
      set.push_front(line);
      if (set.size() > g.assoc) set.pop_back();
      ASSERT_EQ(c.access(line * g.line, 1), miss) << spec << ", access " << i;
    }
    for (std::uint64_t s = 0; s < g.sets(); s++) {
      std::vector<std::uint64_t> want(model[s].begin(), model[s].end());
      want.resize(g.assoc, mt::Cache::kEmpty);
      EXPECT_EQ(c.set_lines(s), want) << spec << ", set " << s;
    }
  }
}

TEST(CacheSim, StraddlingAccessTouchesBothLines) {
  mt::Cache c(geom("D=128:1:16"));
  EXPECT_TRUE(c.access(12, 8));   // bytes 12-19: lines 0 and 1, both cold
  EXPECT_FALSE(c.access(16, 4));  // line 1 was filled by the straddling access
  EXPECT_FALSE(c.access(0, 4));   // and line 0
  EXPECT_TRUE(c.access(30, 4));   // line 1 present, line 2 not: a miss
  EXPECT_FALSE(c.access(32, 1));
  EXPECT_TRUE(c.access(64, 40));  // 40 bytes from 64: lines 4, 5, 6
  EXPECT_FALSE(c.access(96, 8));
}

TEST(CacheSim, HierarchyLooksUpALevelOnlyOnAMiss) {
  // L1 direct-mapped 64 B (4 sets of 16 B), L2 2-way 256 B (8 sets).
  auto levels = mt::parse_cache_spec("L1=64:1:16,L2=256:2:16");
  mt::CacheHierarchy h(levels, 1);
  EXPECT_EQ(h.access(0, 0, 8), 2u);   // cold: memory
  EXPECT_EQ(h.access(0, 0, 8), 0u);   // L1 hit
  EXPECT_EQ(h.access(0, 64, 8), 2u);  // line 4: L1 set 0 (evicts line 0), L2 set 4
  EXPECT_EQ(h.access(0, 0, 8), 1u);   // line 0: gone from L1, still in L2
  EXPECT_EQ(h.access(0, 64, 8), 1u);  // and back: line 4 from L2
}

TEST(CacheSim, PrivateAndSharedLevels) {
  auto levels = mt::parse_cache_spec("L1=64:1:16,L2=256:2:16");
  mt::CacheHierarchy shared(levels, 2, 0);
  EXPECT_EQ(shared.access(0, 0, 8), 2u);
  EXPECT_EQ(shared.access(1, 0, 8), 0u);  // thread 0 brought it into the shared L1
  mt::CacheHierarchy priv(levels, 2, 1);
  EXPECT_EQ(priv.access(0, 0, 8), 2u);
  EXPECT_EQ(priv.access(1, 0, 8), 1u);  // own L1 cold, shared L2 holds it
  EXPECT_EQ(priv.access(1, 0, 8), 0u);
  EXPECT_THROW(mt::CacheHierarchy(levels, 2, 3), mt::CacheSpecError);
}

// The message of the CacheSpecError that parsing `spec` throws ("" if none).
std::string spec_error(const std::string& spec) {
  try {
    mt::parse_cache_spec(spec);
  } catch (const mt::CacheSpecError& e) {
    return e.what();
  }
  return "";
}

TEST(CacheSim, ParsesSpecs) {
  auto l = mt::parse_cache_spec("L1=32K:8:64,L2=1M:16:64,L3=48M:12:64");
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].name, "L1");
  EXPECT_EQ(l[0].size, 32768u);
  EXPECT_EQ(l[0].assoc, 8u);
  EXPECT_EQ(l[0].line, 64u);
  EXPECT_EQ(l[0].sets(), 64u);
  EXPECT_EQ(l[1].sets(), 1024u);
  EXPECT_EQ(l[2].sets(), 65536u);  // 48 MiB / (12 x 64): a power of two
  EXPECT_EQ(l[0].describe(), "L1 32 KiB, 8-way, 64-byte lines, 64 sets");
}

TEST(CacheSim, RefusesMalformedSpecsNamingThePart) {
  EXPECT_EQ(spec_error("L1=32K:8:64,L2=1M:16:48"),
            "--cache: 'L2=1M:16:48': line size 48 is not a power of two");
  EXPECT_EQ(spec_error("L1=96K:8:64"),
            "--cache: 'L1=96K:8:64': 192 sets (size / (associativity x line size)) is not a "
            "power of two");
  EXPECT_EQ(spec_error("L1=1000:8:64"),
            "--cache: 'L1=1000:8:64': size 1000 is not a multiple of associativity x line size "
            "(512 bytes)");
  EXPECT_NE(spec_error("L1=32K:8").find("'L1=32K:8': expected SIZE:ASSOC:LINE"), std::string::npos);
  EXPECT_NE(spec_error("32K:8:64").find("expected NAME=SIZE:ASSOC:LINE"), std::string::npos);
  EXPECT_NE(spec_error("L1=32X:8:64").find("size '32X': unknown suffix"), std::string::npos);
  EXPECT_NE(spec_error("L1=32K:0:64").find("associativity must not be 0"), std::string::npos);
  EXPECT_NE(spec_error("L1=32K:8:64,").find("'': expected NAME="), std::string::npos);
  EXPECT_NE(spec_error("L1=32K:8:64,L1=1M:16:64").find("appears twice"), std::string::npos);
  // A size the simulator could not hold tags for (8 TiB of them) is refused.
  EXPECT_NE(spec_error("L1=1024G:1:1").find("more than the simulator's"), std::string::npos)
      << spec_error("L1=1024G:1:1");
  EXPECT_EQ(spec_error(""),
            "--cache: '': empty; e.g. L1=32K:8:64,L2=1M:16:64 "
            "(size:associativity:line)");
}

// Interleaving: streams written through raw_format.h's structs (the
// reader's own tests check the byte layout).
class Interleave : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tf_meminter_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Thread t's stream of n loads at daddr t * 1000 + i.
  fs::path stream(std::uint32_t t, int n) {
    fs::path p = dir_ / ("thread-" + std::to_string(t) + ".bin");
    std::ofstream f(p, std::ios::binary);
    TfmRawHeader h{};
    std::memcpy(h.magic, TFM_RAW_MAGIC, 8);
    h.version = TFM_RAW_VERSION;
    h.record_size = sizeof(TfmRawRecord);
    h.thread = t;
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    for (int i = 0; i < n; i++) {
      TfmRawRecord r{};
      r.iaddr = 0x1000;
      r.daddr = t * 1000 + i;
      r.size = 8;
      f.write(reinterpret_cast<const char*>(&r), sizeof r);
    }
    return p;
  }
  // "t:i" of every reference in the interleaved order.
  std::string order(std::uint64_t quantum) {
    mt::InterleavedReader in(mt::raw_stream_files(dir_), quantum);
    std::string out;
    std::uint32_t t;
    mt::MemRef m;
    while (in.next(t, m)) out += std::to_string(t) + ":" + std::to_string(m.daddr % 1000) + " ";
    return out;
  }
  // The same through next_batch, `n` references at most at a time.
  std::string batch_order(std::uint64_t quantum, std::size_t n) {
    mt::InterleavedReader in(mt::raw_stream_files(dir_), quantum);
    std::string out;
    std::uint32_t t;
    std::vector<mt::MemRef> b(n);
    while (std::size_t got = in.next_batch(t, b.data(), n))
      for (std::size_t i = 0; i < got; i++)
        out += std::to_string(t) + ":" + std::to_string(b[i].daddr % 1000) + " ";
    return out;
  }
  fs::path dir_;
};

TEST_F(Interleave, RoundRobinTurnsSkippingEndedThreads) {
  stream(0, 5);
  stream(1, 2);
  stream(2, 0);
  stream(3, 3);
  EXPECT_EQ(order(2), "0:0 0:1 1:0 1:1 3:0 3:1 0:2 0:3 3:2 0:4 ");
  EXPECT_EQ(order(1), "0:0 1:0 3:0 0:1 1:1 3:1 0:2 3:2 0:3 0:4 ");
  EXPECT_EQ(order(0), "0:0 0:1 0:2 0:3 0:4 1:0 1:1 3:0 3:1 3:2 ");
  for (std::uint64_t q : {0, 1, 2, 3, 7})
    for (std::size_t n : {1, 2, 3, 64}) EXPECT_EQ(batch_order(q, n), order(q)) << q << " " << n;
  mt::InterleavedReader in(mt::raw_stream_files(dir_), 1);
  EXPECT_EQ(in.threads(), 4u);
  EXPECT_EQ(in.records(), 10u);
}

TEST_F(Interleave, RefusesAStreamNamedForAnotherThread) {
  stream(0, 1);
  fs::rename(stream(1, 1), dir_ / "x");
  stream(2, 1);
  fs::rename(dir_ / "thread-2.bin", dir_ / "thread-1.bin");  // header says 2
  try {
    mt::InterleavedReader in(mt::raw_stream_files(dir_), 1);
    FAIL() << "no error";
  } catch (const mt::RawFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("thread-1.bin: header says thread 2"), std::string::npos)
        << e.what();
  }
}

}  // namespace
