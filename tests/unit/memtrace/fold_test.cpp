// Folding of memory-reference streams (fold.hpp): expansion gives back each
// thread's exact stream, and loops fold to a size that does not grow with
// their trip counts, rectangular or not.
#include "fold.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "tracefold/trace_io.hpp"

namespace mt = tracefold::memtrace;

namespace {

using Stream = std::vector<mt::MemRef>;

mt::MemRef ref(std::uint64_t iaddr, std::int64_t offset, bool store = false,
               mt::AddrKind kind = mt::AddrKind::Static, std::uint32_t owner = 0) {
  mt::MemRef m;
  m.iaddr = iaddr;
  m.size = 8;
  m.store = store;
  m.kind = kind;
  m.region = 1;
  m.owner = owner;
  m.offset = offset;
  m.daddr = 0x400000 + static_cast<std::uint64_t>(offset);
  return m;
}

tracefold::Trace fold(const std::vector<Stream>& threads, std::uint32_t per_log = 0) {
  tracefold::SiteTable sites;
  std::vector<tracefold::Trace> traces;
  std::vector<std::vector<mt::SiteOrigin>> origins;
  for (std::size_t t = 0; t < threads.size(); t++) {
    mt::ThreadFolder f(static_cast<std::uint32_t>(t), sites);
    f.append(threads[t].data(), threads[t].size());
    traces.push_back(f.finish(static_cast<std::uint32_t>(threads.size())));
    origins.push_back(f.origins());
  }
  return mt::merge_threads(std::move(traces), origins, per_log);
}

Stream expand(const tracefold::Trace& trace, std::uint32_t thread) {
  mt::MemStreamReader r(trace, thread);
  Stream out;
  mt::MemRef buf[7];  // a small batch: runs continue across batches
  while (std::size_t n = r.next_batch(buf, 7)) out.insert(out.end(), buf, buf + n);
  return out;
}

// Folds, checks the round trip through the compact form, returns its size.
std::size_t check_lossless(const std::vector<Stream>& threads, std::uint32_t per_log = 0) {
  const tracefold::Trace trace = fold(threads, per_log);
  EXPECT_TRUE(mt::is_memory_trace(trace));
  const std::string bytes = tracefold::encode_compact(trace);
  const tracefold::Trace back = tracefold::decode_compact(bytes);
  for (std::size_t t = 0; t < threads.size(); t++) {
    const Stream got = expand(back, static_cast<std::uint32_t>(t));
    EXPECT_EQ(got.size(), threads[t].size()) << "thread " << t;
    for (std::size_t i = 0; i < std::min(got.size(), threads[t].size()); i++)
      if (!(got[i] == threads[t][i])) {
        ADD_FAILURE() << "thread " << t << " reference " << i << " differs";
        break;
      }
  }
  return bytes.size();
}

Stream vadd(long n, std::int64_t base = 0) {
  Stream s;
  for (long i = 0; i < n; i++) {
    s.push_back(ref(0x401000, base + 8 * i));
    s.push_back(ref(0x401004, base + 0x100000 + 8 * i));
    s.push_back(ref(0x401008, base + 0x200000 + 8 * i, true));
  }
  return s;
}

Stream triangular(long n) {
  Stream s;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < i; j++) {
      s.push_back(ref(0x402000, 8 * (j * 512 + i)));
      s.push_back(ref(0x402004, 8 * (i * 512 + j), true));
    }
  return s;
}

Stream varying(long n) {
  Stream s;
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < i % 7 + 1; j++) s.push_back(ref(0x403000, 8 * (i + j)));
    s.push_back(ref(0x403010, 0x10000 + 8 * i, true));
  }
  return s;
}

Stream irregular(long n) {
  Stream s;
  unsigned long seed = 1;
  for (long i = 0; i < n; i++) {
    seed = seed * 6364136223846793005UL + 1442695040888963407UL;
    s.push_back(ref(0x404000 + (seed >> 60) * 4, static_cast<std::int64_t>(seed >> 40)));
  }
  return s;
}

TEST(MemFold, VaddLosslessAndConstant) {
  const std::size_t small = check_lossless({vadd(1000)});
  const std::size_t large = check_lossless({vadd(100000)});
  EXPECT_LE(large, small + small / 20);
}

TEST(MemFold, TriangularIndependentOfN) {
  const std::size_t small = check_lossless({triangular(40)});
  const std::size_t large = check_lossless({triangular(160)});
  EXPECT_LE(large, small + small / 20);
}

TEST(MemFold, VaryingTripsIndependentOfN) {
  // N a multiple of the trip counts' period (7): a partial period at the
  // end would add its own few values.
  const std::size_t small = check_lossless({varying(700)});
  const std::size_t large = check_lossless({varying(7000)});
  EXPECT_LE(large, small + small / 20);
}

TEST(MemFold, IrregularLossless) {
  check_lossless({irregular(3000)});
  check_lossless({Stream{}});
}

TEST(MemFold, ThreadsLossless) {
  // Stack accesses name their owner: stored relative to the thread.
  std::vector<Stream> threads;
  for (std::uint32_t t = 0; t < 4; t++) {
    Stream s = vadd(500, 0x1000 * t);
    for (int i = 0; i < 10; i++) s.push_back(ref(0x405000, -8 * i, true, mt::AddrKind::Stack, t));
    threads.push_back(s);
  }
  check_lossless(threads);
}

std::vector<Stream> slices(std::uint32_t threads) {
  std::vector<Stream> out;
  for (std::uint32_t t = 0; t < threads; t++) out.push_back(vadd(500, 0x1000 * t));
  return out;
}

TEST(MemFold, LinearBasesMergeAcrossThreads) {
  // Each thread its own slice: one entry for all threads, not one each.
  const std::size_t two = check_lossless(slices(2));
  const std::size_t eight = check_lossless(slices(8));
  EXPECT_LE(eight, two + two / 20);
}

TEST(MemFold, BrokenRunsStayExact) {
  // Strides that change mid-run, a run cut mid-iteration, a body site
  // whose ordinal changes: each must end the run exactly there.
  Stream s;
  for (int i = 0; i < 50; i++) s.push_back(ref(0x406000, i < 20 ? 8 * i : 16 * i));
  for (int i = 0; i < 31; i++) {
    s.push_back(ref(0x406004, 8 * i));
    if (i != 30) s.push_back(ref(0x406008, 4 * i));
  }
  for (int i = 0; i < 10; i++) {
    mt::MemRef m = ref(0x40600c, 8 * i);
    m.ordinal = i < 5 ? 0 : 1;
    s.push_back(m);
  }
  check_lossless({s});
}

TEST(MemFold, RunEndingInsideARepeatedSite) {
  // An inner loop of two trips (s s) in an outer one (then t), and at the
  // end a new site between one site's references: every run must end and
  // start in order around it.
  Stream s;
  for (int i = 0; i < 10; i++) {
    s.push_back(ref(0x407000, 16 * i));
    s.push_back(ref(0x407000, 16 * i + 8));
    s.push_back(ref(0x407008, 0x1000 + 8 * i, true));
  }
  s.push_back(ref(0x407000, 160));
  s.push_back(ref(0x407000, 168));
  s.push_back(ref(0x407010, 0x2000));
  s.push_back(ref(0x407000, 176));
  check_lossless({s});
}

}  // namespace

// P ranks (logs) of 2 threads, each thread sweeping its half of a heap block
// that every rank allocates at an address of its own (not linear in the
// rank), the first and last rank writing a boundary row more: one stream
// node and one residual per stream at most, so the trace hardly grows with
// P, and every stream expands exactly.
std::vector<Stream> halo_ranks(int ranks) {
  std::vector<Stream> out;
  for (int r = 0; r < ranks; r++) {
    const std::uint64_t block = 0x5260000 + 0x130 * static_cast<std::uint64_t>((r * 7) % 5);
    const auto heap = [block](std::uint64_t iaddr, std::int64_t off, bool store) {
      mt::MemRef m = ref(iaddr, off, store, mt::AddrKind::Heap);
      m.region = 42;
      m.daddr = block + static_cast<std::uint64_t>(off);
      return m;
    };
    Stream main;
    if (r == 0 || r == ranks - 1)
      for (int j = 0; j < 32; j++)
        main.push_back(heap(0x401100, (r == 0 ? 0 : 9 * 256) + 8 * j, true));
    out.push_back(main);
    for (int t = 0; t < 2; t++) {
      Stream w;
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 32; j++) {
          const std::int64_t at = 256 * (1 + 4 * t + i) + 8 * j;
          w.push_back(heap(0x401200, at - 256, false));
          w.push_back(heap(0x401204, at + 256, false));
          w.push_back(heap(0x401208, at, true));
        }
      out.push_back(w);
    }
  }
  return out;
}

TEST(MemFold, RanksMergeAcrossLogs) {
  const std::size_t two = check_lossless(halo_ranks(2), 3);
  const std::size_t eight = check_lossless(halo_ranks(8), 3);
  EXPECT_EQ(fold(halo_ranks(2), 3).nodes.size(), fold(halo_ranks(8), 3).nodes.size());
  // Each added rank costs its heap shift (a value and a ranklist), nothing
  // per site or per thread.
  EXPECT_LE(eight, two + 6 * 8) << two << " B for 2 ranks, " << eight << " B for 8";
}
