// Merging folded memory traces (fold.hpp's merge_memory_traces): the tables
// a trace keeps survive its encodings, and merging the folds of two halves
// of a run's logs gives the fold of all of them, each log numbering its
// contexts and modules in an order of its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "fold.hpp"
#include "raw_format.h"
#include "tracefold/trace_io.hpp"

namespace fs = std::filesystem;
namespace mt = tracefold::memtrace;

namespace {

using Stream = std::vector<mt::MemRef>;
using Path = std::vector<std::uint64_t>;

struct Log {
  std::vector<Path> contexts;  // by id - 1, every prefix listed before
  std::vector<std::pair<std::uint64_t, std::string>> modules;  // by id - 1
  std::vector<std::pair<std::uint64_t, std::uint64_t>> text;   // by id - 1; none if empty
  std::vector<Stream> threads;

  std::uint32_t ctx(const Path& p) {
    for (std::size_t i = 0; i < contexts.size(); i++)
      if (contexts[i] == p) return static_cast<std::uint32_t>(i + 1);
    for (std::size_t n = 1; n < p.size(); n++) ctx(Path(p.begin(), p.begin() + n));
    contexts.push_back(p);
    return static_cast<std::uint32_t>(contexts.size());
  }
  std::uint32_t mod(const std::string& name) {
    for (std::size_t i = 0; i < modules.size(); i++)
      if (modules[i].second == name) return static_cast<std::uint32_t>(i + 1);
    ADD_FAILURE() << "no module " << name;
    return 0;
  }
};

template <class T>
void put(std::ofstream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

void write_log(const fs::path& dir, const Log& log) {
  fs::create_directories(dir);
  for (std::size_t t = 0; t < log.threads.size(); t++) {
    std::ofstream out(dir / ("thread-" + std::to_string(t) + ".bin"), std::ios::binary);
    TfmRawHeader h{};
    std::memcpy(h.magic, TFM_RAW_MAGIC, 8);
    h.version = TFM_RAW_VERSION;
    h.record_size = sizeof(TfmRawRecord);
    h.thread = static_cast<std::uint32_t>(t);
    put(out, h);
    for (const mt::MemRef& m : log.threads[t]) {
      TfmRawRecord r{};
      r.iaddr = m.iaddr;
      r.daddr = m.daddr;
      r.context = m.context;
      r.size = m.size;
      r.flags = static_cast<std::uint8_t>((m.store ? TFM_RAW_STORE : 0u) |
                                          unsigned(m.kind) << TFM_RAW_KIND_SHIFT);
      r.region = m.region;
      r.ordinal = m.ordinal;
      r.owner = m.owner;
      r.offset = m.offset;
      put(out, r);
    }
  }
  const auto table = [](std::ofstream& out, const char* magic, std::uint32_t version,
                        std::uint32_t rsize, std::size_t n) {
    TfmCtxHeader h{};
    std::memcpy(h.magic, magic, 8);
    h.version = version;
    h.record_size = rsize;
    h.count = static_cast<std::uint32_t>(n);
    put(out, h);
  };
  std::ofstream ctx(dir / "contexts.bin", std::ios::binary);
  table(ctx, TFM_CTX_MAGIC, TFM_CTX_VERSION, sizeof(TfmCtxRecord), log.contexts.size());
  for (std::size_t i = 0; i < log.contexts.size(); i++) {
    const Path& p = log.contexts[i];
    std::uint32_t parent = 0;
    for (std::size_t j = 0; j < i; j++)
      if (log.contexts[j] == Path(p.begin(), p.end() - 1))
        parent = static_cast<std::uint32_t>(j + 1);
    put(ctx, TfmCtxRecord{static_cast<std::uint32_t>(i + 1), parent, p.back()});
  }
  std::ofstream mod(dir / "modules.bin", std::ios::binary);
  table(mod, TFM_MOD_MAGIC, TFM_MOD_VERSION, sizeof(TfmModRecord), log.modules.size());
  for (std::size_t i = 0; i < log.modules.size(); i++) {
    const auto& [base, name] = log.modules[i];
    const auto [lo, hi] =
        i < log.text.size() ? log.text[i] : std::pair<std::uint64_t, std::uint64_t>{};
    put(mod, TfmModRecord{static_cast<std::uint32_t>(i + 1),
                          static_cast<std::uint32_t>(name.size()), base, lo, hi});
    mod.write(name.data(), static_cast<std::streamsize>(name.size()));
  }
}

const Path kMain{0x401000}, kSweepA{0x401000, 0x401100}, kSweepB{0x401000, 0x401200},
    kLate{0x401000, 0x401300}, kAlloc{0x402000}, kUnused{0x403000};

// Rank r of a halo-like run: its own junk contexts first (MPI_Init's), its
// contexts and modules in an order of its own, ranks 2 and 3 taking a path
// ranks 0 and 1 never take, and rank 0 listing a path only rank 1 uses
// and, last, one nobody uses.
Log rank_log(int r, const std::string& app = "/bin/app", std::uint64_t app_base = 0x400000) {
  Log log;
  for (int k = 0; k < 3 * r; k++) log.ctx({0x500000 + 16u * static_cast<std::uint64_t>(k)});
  if (r == 0) log.ctx(kUnused);
  for (const Path& p : r % 2 ? std::vector<Path>{kAlloc, kSweepB, kSweepA, kMain}
                             : std::vector<Path>{kMain, kSweepA, kSweepB, kAlloc})
    log.ctx(p);
  if (r == 0) log.ctx({0x404000});  // its highest id, never used
  log.modules = {{app_base, app}, {0x4a00000, "/lib/libm.so.6"}};
  if (r % 2) std::swap(log.modules[0], log.modules[1]);
  if (r == 3) log.modules.push_back({0x4c00000, "/lib/libx.so"});
  const auto ref = [&](std::uint64_t iaddr, const Path& ctx, mt::AddrKind kind,
                       std::uint32_t region, std::int64_t off, bool store) {
    mt::MemRef m;
    m.iaddr = iaddr;
    m.size = 8;
    m.store = store;
    m.context = log.ctx(ctx);
    m.kind = kind;
    m.region = region;
    m.offset = off;
    m.daddr = (kind == mt::AddrKind::Heap ? 0x5200000 + 0x40 * std::uint64_t(r) : 0x600000) +
              static_cast<std::uint64_t>(off);
    return m;
  };
  Stream main, worker;
  for (int i = 0; i < 16; i++)
    main.push_back(ref(0x401010, kMain, mt::AddrKind::Static, log.mod(app), 8 * i, true));
  main.push_back(ref(0x401020, kMain, mt::AddrKind::Heap, log.ctx(kAlloc), 0, false));
  if (r == 1) main.push_back(ref(0x401030, kUnused, mt::AddrKind::Other, 0, 0x7000, false));
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) {
      worker.push_back(
          ref(0x401110, kSweepA, mt::AddrKind::Heap, log.ctx(kAlloc), 64 * i + 8 * j, false));
      worker.push_back(
          ref(0x401210, kSweepB, mt::AddrKind::Static, log.mod("/lib/libm.so.6"), 8 * j, false));
    }
  if (r >= 2) worker.push_back(ref(0x401310, kLate, mt::AddrKind::Stack, 0, -16, true));
  if (r == 3)
    worker.push_back(ref(0x401320, kLate, mt::AddrKind::Static, log.mod("/lib/libx.so"), 0, false));
  log.threads = {main, worker};
  return log;
}

class MemMerge : public ::testing::Test {
 protected:
  fs::path dir =
      fs::temp_directory_path() /
      ("tf_memmerge_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void TearDown() override { fs::remove_all(dir); }
  fs::path log(int r, const Log& l) {
    const fs::path d = dir / ("rank" + std::to_string(r));
    write_log(d, l);
    return d;
  }
  // Through the compact form, as the command line reads a trace.
  static tracefold::Trace reread(const tracefold::Trace& t) {
    return tracefold::decode_compact(tracefold::encode_compact(t));
  }
};

Stream expand(const tracefold::Trace& trace, std::uint32_t stream) {
  mt::MemStreamReader r(trace, stream);
  Stream out;
  mt::MemRef buf[64];
  while (std::size_t n = r.next_batch(buf, 64)) out.insert(out.end(), buf, buf + n);
  return out;
}

std::string hex_path(const Path& p) {
  std::string out;
  for (std::uint64_t a : p) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(a));
    out += (out.empty() ? "" : ">") + std::string(buf);
  }
  return out;
}

TEST_F(MemMerge, TablesRoundTripInBothForms) {
  mt::MemTables t;
  t.modules = {{}, {1, 0x400000, "/bin/app"}, {2, 0x4a00000, "/lib/lib m.so"}};
  // Code extents and the module count are what the text form once could
  // not read back (they were not hex).
  t.modules[1].text_lo = 0x401000;
  t.modules[1].text_hi = 0x4a2f3c;
  t.contexts = {{3, "401000"}, {7, "401000>401100"}, {0xffffffffu, "overflow"}, {9, "?9"}};
  t.first_log_contexts = 170000;
  t.first_log_modules = 27;
  t.log_streams = {3, 3, 2};
  tracefold::Trace trace;
  trace.world_size = 1;
  mt::set_mem_tables(trace, t);
  for (const tracefold::Trace& back :
       {reread(trace), tracefold::parse_trace(tracefold::format_trace(trace))}) {
    const auto got = mt::mem_tables(back);
    ASSERT_TRUE(got);
    ASSERT_EQ(got->modules.size(), 3u);
    for (std::size_t i = 1; i < 3; i++) {
      EXPECT_EQ(got->modules[i].name, t.modules[i].name);
      EXPECT_EQ(got->modules[i].base, t.modules[i].base);
      EXPECT_EQ(got->modules[i].text_lo, t.modules[i].text_lo);
      EXPECT_EQ(got->modules[i].text_hi, t.modules[i].text_hi);
    }
    EXPECT_EQ(got->contexts, t.contexts);
    EXPECT_EQ(got->first_log_contexts, 170000u);
    EXPECT_EQ(got->first_log_modules, 27u);
    EXPECT_EQ(got->log_streams, t.log_streams);
  }
  EXPECT_FALSE(mt::mem_tables(tracefold::Trace{}));
}

// Compact traces written before the build-id fields held hex digits only.
TEST_F(MemMerge, TablesOfOlderTracesStillRead) {
  mt::MemTables t;
  t.modules = {{}, {1, 0x400000, "/bin/app"}};
  t.log_streams = {1};
  tracefold::Trace trace;
  trace.world_size = 1;
  mt::set_mem_tables(trace, t);
  trace.symtab.modules["memmod1"].build_id = "text+1000-2a3f";
  trace.symtab.modules["memctx"].build_id = "modules=12";
  const auto got = mt::mem_tables(trace);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->modules[1].text_lo, 0x401000u);
  EXPECT_EQ(got->modules[1].text_hi, 0x402a3fu);
  EXPECT_EQ(got->first_log_modules, 12u);
  trace.symtab.modules["memmod1"].build_id = "text+10002a3f";
  EXPECT_THROW(mt::mem_tables(trace), std::runtime_error);
}

TEST_F(MemMerge, HalvesGiveTheFoldOfAllLogs) {
  std::vector<Log> logs;
  std::vector<fs::path> dirs;
  for (int r = 0; r < 4; r++) {
    logs.push_back(rank_log(r));
    dirs.push_back(log(r, logs.back()));
  }
  const tracefold::Trace whole = mt::fold_raw_logs(dirs);
  const tracefold::Trace merged =
      mt::merge_memory_traces({reread(mt::fold_raw_logs({dirs[0], dirs[1]})),
                               reread(mt::fold_raw_logs({dirs[2], dirs[3]}))},
                              {"a.tf", "b.tf"});
  EXPECT_TRUE(tracefold::encode_compact(merged) == tracefold::encode_compact(whole))
      << "the merge differs from the fold of all logs";
  // A first trace with no context beyond its log's own.
  EXPECT_TRUE(tracefold::encode_compact(
                  mt::merge_memory_traces({reread(mt::fold_raw_logs({dirs[0]})),
                                           reread(mt::fold_raw_logs({dirs[1], dirs[2], dirs[3]}))},
                                          {"a.tf", "b.tf"})) == tracefold::encode_compact(whole))
      << "one log, then three";
  // Every reference names the call path and file its own log named.
  const auto tables = mt::mem_tables(merged);
  ASSERT_TRUE(tables);
  EXPECT_EQ(tables->log_streams, (std::vector<std::uint32_t>{2, 2, 2, 2}));
  for (std::uint32_t s = 0; s < 8; s++) {
    const Log& l = logs[s / 2];
    const Stream& want = l.threads[s % 2];
    const Stream got = expand(merged, s);
    ASSERT_EQ(got.size(), want.size()) << "stream " << s;
    const auto path = [&](std::uint32_t c) {
      return c == 0 ? std::string("root") : tables->contexts.at(c);
    };
    for (std::size_t i = 0; i < got.size(); i++) {
      const mt::MemRef& a = got[i];
      const mt::MemRef& b = want[i];
      EXPECT_EQ(path(a.context), b.context ? hex_path(l.contexts[b.context - 1]) : "root")
          << "stream " << s << " reference " << i;
      if (a.kind == mt::AddrKind::Heap) {
        EXPECT_EQ(path(a.region), hex_path(l.contexts[b.region - 1]));
      }
      if (a.kind == mt::AddrKind::Static) {
        EXPECT_EQ(tables->modules.at(a.region).name, l.modules[b.region - 1].second);
      }
      EXPECT_EQ(a.offset, b.offset);
      EXPECT_EQ(a.daddr, b.daddr);
    }
  }
  // The same run merged with itself: the fold of its logs twice over.
  const tracefold::Trace half = reread(mt::fold_raw_logs({dirs[1], dirs[2]}));
  EXPECT_TRUE(tracefold::encode_compact(mt::merge_memory_traces({half, half}, {"x", "y"})) ==
              tracefold::encode_compact(mt::fold_raw_logs({dirs[1], dirs[2], dirs[1], dirs[2]})))
      << "a run merged with itself";
}

// A run whose library loaded `shift` bytes higher: its call sites, its
// instructions and its statics there all move, nothing else.
Log moved_log(std::uint64_t shift) {
  Log log;
  const std::uint64_t lib = 0x7f0000000000 + shift;
  log.modules = {{0x400000, "/bin/pie"}, {lib, "/lib/libc.so.6"}};
  log.text = {{0x401000, 0x402000}, {lib + 0x1000, lib + 0x9000}};
  // main is called from the library's start code; main calls sweep.
  const Path in_main{lib + 0x1234}, in_sweep{lib + 0x1234, 0x401050};
  const auto ref = [&](std::uint64_t iaddr, const Path& ctx, std::uint32_t mod, std::uint64_t base,
                       std::int64_t off) {
    mt::MemRef m;
    m.iaddr = iaddr;
    m.size = 8;
    m.context = log.ctx(ctx);
    m.kind = mt::AddrKind::Static;
    m.region = mod;
    m.offset = off;
    m.daddr = base + static_cast<std::uint64_t>(off);
    return m;
  };
  Stream s;
  for (int i = 0; i < 32; i++) s.push_back(ref(0x401110, in_sweep, 1, 0x400000, 0x3000 + 8 * i));
  for (int i = 0; i < 4; i++) s.push_back(ref(lib + 0x2000, in_main, 2, lib, 0xa000 + 16 * i));
  log.threads = {s};
  return log;
}

TEST_F(MemMerge, ModulesLoadedElsewhereMatchByFileAndOffset) {
  const fs::path a = log(0, moved_log(0)), b = log(1, moved_log(0x200000));
  const tracefold::Trace ta = reread(mt::fold_raw_logs({a})), tb = reread(mt::fold_raw_logs({b}));
  // Call paths name module and offset: the two runs' tables agree.
  EXPECT_EQ(mt::mem_tables(ta)->contexts, mt::mem_tables(tb)->contexts);
  EXPECT_EQ(mt::mem_tables(ta)->contexts.at(2), "2+1234>1+1050");
  const tracefold::Trace merged = mt::merge_memory_traces({ta, tb}, {"a.tf", "b.tf"});
  EXPECT_TRUE(tracefold::encode_compact(merged) ==
              tracefold::encode_compact(mt::fold_raw_logs({a, b})));
  // The second run's stream, moved to the first's layout, is the first's.
  const Stream first = expand(merged, 0), second = expand(merged, 1);
  ASSERT_EQ(first.size(), 36u);
  EXPECT_TRUE(first == second);
  EXPECT_TRUE(first == moved_log(0).threads[0]);
}

TEST_F(MemMerge, RefusesOtherProgramsAndLayoutsNamingTheFile) {
  const tracefold::Trace app = mt::fold_raw_logs({log(0, rank_log(0))});
  Log other = rank_log(1, "/bin/other");
  other.modules.erase(std::find_if(other.modules.begin(), other.modules.end(),
                                   [](const auto& m) { return m.second == "/lib/libm.so.6"; }));
  for (auto& t : other.threads)
    for (auto& m : t)
      if (m.kind == mt::AddrKind::Static) m.region = 1;
  const auto message = [&](const tracefold::Trace& b) {
    try {
      mt::merge_memory_traces({app, b}, {"app.tf", "b.tf"});
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("merged");
  };
  EXPECT_NE(message(mt::fold_raw_logs({log(1, other)}))
                .find("b.tf: traced /bin/other, the first traced /bin/app"),
            std::string::npos);
  const std::string moved = message(mt::fold_raw_logs({log(2, rank_log(2, "/bin/app", 0x500000))}));
  EXPECT_NE(moved.find("b.tf: module /bin/app was loaded at 0x500000"), std::string::npos) << moved;
  tracefold::Trace bare = app;
  bare.symtab.modules.erase("memctx");
  EXPECT_NE(message(bare).find("b.tf: a memory trace without its context table"),
            std::string::npos);
  EXPECT_EQ(message(app), "merged");
}

}  // namespace

// Two runs of one program that number their contexts differently (the
// second took five other paths first) and put the heap and the main stack
// elsewhere: their canonical folds are the same bytes, their plain folds
// are not, and a canonical trace keeps every reference's path and offset.
Log moved_run(int junk, std::uint64_t heap, std::uint64_t stack) {
  Log log;
  for (int k = 0; k < junk; k++) log.ctx({0x500000 + 16u * static_cast<std::uint64_t>(k)});
  log.modules = {{0x400000, "/bin/app"}};
  const auto ref = [&](std::uint64_t iaddr, const Path& ctx, mt::AddrKind kind,
                       std::uint32_t region, std::uint64_t base, std::int64_t off) {
    mt::MemRef m;
    m.iaddr = iaddr;
    m.size = 8;
    m.context = log.ctx(ctx);
    m.kind = kind;
    m.region = region;
    m.offset = off;
    m.daddr = base + static_cast<std::uint64_t>(off);
    return m;
  };
  Stream s;
  for (int i = 0; i < 16; i++)
    s.push_back(ref(0x401110, kSweepA, mt::AddrKind::Heap, log.ctx(kAlloc), heap, 8 * i));
  for (int i = 0; i < 4; i++)
    s.push_back(ref(0x401020, kMain, mt::AddrKind::Stack, 0, stack, -16 - 8 * i));
  s.push_back(ref(0x401210, kSweepB, mt::AddrKind::Static, 1, 0x400000, 0x3000));
  log.threads = {s};
  return log;
}

TEST_F(MemMerge, CanonicalFoldsOfTwoRunsAreTheSameBytes) {
  const Log a = moved_run(0, 0x5200000, 0x1fff000400), b = moved_run(5, 0x5310000, 0x1fff000130);
  const fs::path da = log(0, a), db = log(1, b);
  mt::MemFoldOptions canonical;
  canonical.canonical = true;
  EXPECT_FALSE(tracefold::encode_compact(mt::fold_raw_logs({da})) ==
               tracefold::encode_compact(mt::fold_raw_logs({db})))
      << "the plain folds keep the runs' addresses and ids";
  const tracefold::Trace ta = mt::fold_raw_logs({da}, canonical);
  EXPECT_TRUE(tracefold::encode_compact(ta) ==
              tracefold::encode_compact(mt::fold_raw_logs({db}, canonical)))
      << "canonical folds differ";
  const auto tables = mt::mem_tables(ta);
  ASSERT_TRUE(tables);
  const Stream got = expand(ta, 0);
  ASSERT_EQ(got.size(), b.threads[0].size());
  for (std::size_t i = 0; i < got.size(); i++) {
    const mt::MemRef& want = b.threads[0][i];
    EXPECT_EQ(tables->contexts.at(got[i].context), hex_path(b.contexts[want.context - 1])) << i;
    EXPECT_EQ(got[i].offset, want.offset) << i;
    if (want.kind == mt::AddrKind::Stack) {
      EXPECT_EQ(got[i].daddr, mt::canonical_stack(0, want.offset)) << i;
    }
  }
  EXPECT_EQ(got[0].context, 1u) << "contexts numbered by first use";
}
