// The first level of memory-trace folding (fold.hpp): where a run of
// strided references starts and ends, that each run reaches core's folder
// as one compound event, and that where the caller's buffers end changes
// nothing.
#include <gtest/gtest.h>

#include "fold.hpp"
#include "tracefold/trace_io.hpp"

namespace mt = tracefold::memtrace;

namespace {

using Stream = std::vector<mt::MemRef>;

mt::MemRef at(std::uint64_t iaddr, std::int64_t offset) {
  mt::MemRef m;
  m.iaddr = iaddr;
  m.size = 8;
  m.kind = mt::AddrKind::Static;
  m.region = 1;
  m.offset = offset;
  m.daddr = 0x600000 + static_cast<std::uint64_t>(offset);
  return m;
}

// `n` references of one site from `first`, `stride` apart.
void strided(Stream& s, std::uint64_t iaddr, std::int64_t first, std::int64_t stride, int n) {
  for (int i = 0; i < n; i++) s.push_back(at(iaddr, first + stride * i));
}

struct Folded {
  mt::MemFoldStats stats;
  std::string bytes;  // the compact form
};

// Folds `s` handed over `chunk` references at a time (0: all at once) and
// checks that the trace expands to `s` exactly.
Folded fold(const Stream& s, std::size_t chunk = 0) {
  tracefold::SiteTable sites;
  mt::ThreadFolder f(0, sites);
  if (chunk == 0) chunk = s.size() + 1;
  for (std::size_t i = 0; i < s.size(); i += chunk)
    f.append(s.data() + i, std::min(chunk, s.size() - i));
  std::vector<tracefold::Trace> traces;
  traces.push_back(f.finish(1));
  const tracefold::Trace folded = mt::merge_threads(std::move(traces), {f.origins()});
  const std::string bytes = tracefold::encode_compact(folded);
  // Expanded from the compact form: the free offsets' lists go through it.
  const tracefold::Trace trace = tracefold::decode_compact(bytes);
  mt::MemStreamReader r(trace, 0);
  Stream back;
  mt::MemRef buf[5];
  while (std::size_t n = r.next_batch(buf, 5)) back.insert(back.end(), buf, buf + n);
  EXPECT_EQ(back.size(), s.size());
  for (std::size_t i = 0; i < std::min(back.size(), s.size()); i++)
    if (!(back[i] == s[i])) {
      ADD_FAILURE() << "reference " << i << " differs";
      break;
    }
  return {f.stats(), bytes};
}

// What the tests compare of the first level's work: runs found, references
// inside them and events handed on.
struct Counts {
  std::uint64_t runs = 0, in_runs = 0, events = 0;
  bool operator==(const Counts&) const = default;
};

Counts counts(const Folded& f) {
  return {f.stats.runs, f.stats.in_runs, f.stats.events};
}

// Printed by gtest when a comparison fails.
void PrintTo(const Counts& c, std::ostream* os) {
  *os << "{runs " << c.runs << ", in_runs " << c.in_runs << ", events " << c.events << "}";
}

TEST(MemRuns, StrideChangeEndsTheRun) {
  Stream s;
  strided(s, 0x401000, 0, 8, 10);
  strided(s, 0x401000, 88, 16, 10);                // 80 would have continued the first
  EXPECT_EQ(counts(fold(s)), (Counts{2, 20, 2}));  // one compound event a run
}

TEST(MemRuns, SiteChangeEndsTheRun) {
  // The offsets go on by the same stride, the instruction is another.
  Stream s;
  strided(s, 0x401000, 0, 8, 10);
  strided(s, 0x401004, 80, 8, 10);
  EXPECT_EQ(counts(fold(s)), (Counts{2, 20, 2}));
}

TEST(MemRuns, OneReferenceIsNoRunTwoAre) {
  Stream one;
  strided(one, 0x401000, 0, 8, 1);
  EXPECT_EQ(fold(one).stats.runs, 0u);
  EXPECT_EQ(fold(one).stats.events, 1u);
  Stream two;
  strided(two, 0x401000, 0, 8, 2);
  EXPECT_EQ(fold(two).stats.runs, 1u);
  // A lone reference between two runs of one site stays single.
  Stream s;
  strided(s, 0x401000, 0, 8, 10);
  strided(s, 0x401008, 0x1000, 8, 1);
  strided(s, 0x401000, 80, 8, 10);
  EXPECT_EQ(counts(fold(s)), (Counts{2, 20, 3}));
}

TEST(MemRuns, InterleavedBodyIsOneRun) {
  // c[i] = a[i] + b[i]: three sites, each its own stride, one event.
  Stream s;
  for (int i = 0; i < 100; i++) {
    s.push_back(at(0x401000, 8 * i));
    s.push_back(at(0x401004, 0x10000 + 4 * i));
    s.push_back(at(0x401008, 0x20000 - 8 * i));
  }
  EXPECT_EQ(counts(fold(s)), (Counts{1, 300, 1}));
}

// An index that never moves by the same amount twice in a row (its
// differences modulo 1009 grow by a constant), as data-driven ones rarely do.
std::int64_t col(std::int64_t k) {
  return (k * k * 7919 + 31 * k) % 1009;
}

// y += a[k] * x[col[k]] over `n` k from `first`: the load of x follows data.
void gather(Stream& s, int first, int n) {
  for (int k = first; k < first + n; k++) {
    s.push_back(at(0x402000, 8 * k));
    s.push_back(at(0x402004, 0x10000 + 8 * col(k)));
  }
}

TEST(MemRuns, IrregularPositionRidesAlong) {
  // The strided load ahead of it keeps the run: one event for all nine
  // iterations, x's offsets in it.
  Stream s;
  gather(s, 0, 9);
  strided(s, 0x402008, 0x20000, 8, 1);
  EXPECT_EQ(counts(fold(s)), (Counts{1, 18, 2}));
}

TEST(MemRuns, IrregularPositionFirstEndsTheRun) {
  // Nothing strided ahead of it: the third iteration ends each run, as a
  // new row of a nested loop does.
  Stream s;
  for (int k = 0; k < 9; k++) {
    s.push_back(at(0x402004, 0x10000 + 8 * col(k)));
    s.push_back(at(0x402000, 8 * k));
  }
  const Folded f = fold(s);
  EXPECT_GE(f.stats.runs, 3u);
  EXPECT_LE(f.stats.in_runs, 18u);
}

TEST(MemRuns, IrregularRunsAreBounded) {
  // A run holding a list of offsets ends at 4,096 iterations.
  Stream s;
  gather(s, 0, 5000);
  const Folded f = fold(s);
  EXPECT_EQ(f.stats.runs, 2u);
  EXPECT_EQ(f.stats.in_runs, 10000u);
}

// A CSR sparse product's references over `rows` rows of 1 to 8 non-zeros
// (from a fixed generator): rowptr[i] and rowptr[i + 1], then col[k], x[col[k]]
// and val[k] per non-zero, then y[i]. Every seventh row also loads one col
// entry it does not use (unless `stray` is false), so that a known body's
// first reference is seen without the rest.
Stream csr(int rows, bool stray = true) {
  Stream s;
  std::uint64_t seed = 12345;
  int k = 0;
  for (int i = 0; i < rows; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const int nz = static_cast<int>((seed >> 33) % 8) + 1;
    s.push_back(at(0x403000, 8 * i));
    s.push_back(at(0x403004, 8 * i + 8));
    for (int j = 0; j < nz; j++, k++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      s.push_back(at(0x403008, 0x100000 + 8 * k));
      s.push_back(at(0x40300c, 0x200000 + 8 * static_cast<std::int64_t>((seed >> 33) % rows)));
      s.push_back(at(0x403010, 0x300000 + 8 * k));
    }
    if (stray && i % 7 == 6) s.push_back(at(0x403008, 0x100000 + 8 * k));
    s.push_back(at(0x403018, 0x400000 + 8 * i));
  }
  return s;
}

TEST(MemRuns, RowsOfAnyLengthAreOneRunEach) {
  // Once the row's body has been seen with its free position, every later
  // row is one run of it, one trip included: the folder gets the same
  // events per row whatever the row lengths, so the folded structure does
  // not grow with the number of rows (only the lists of values do).
  std::size_t nodes[2] = {0, 0};
  int at_rows[2] = {300, 3000};
  for (int t = 0; t < 2; t++) {
    const Stream s = csr(at_rows[t]);
    const Folded f = fold(s);
    EXPECT_GE(f.stats.runs, static_cast<std::uint64_t>(at_rows[t] - 2));
    // rowptr twice, the run, y; the unused col entry every seventh row.
    EXPECT_LE(f.stats.events, static_cast<std::uint64_t>(4 * at_rows[t] + at_rows[t] / 7 + 16));
    nodes[t] = tracefold::decode_compact(f.bytes).nodes.size();
    for (std::size_t chunk : {1, 3, 7})
      EXPECT_EQ(fold(s, chunk).bytes, f.bytes) << "buffers of " << chunk;
  }
  EXPECT_EQ(nodes[0], nodes[1]);
}

TEST(MemRuns, RowLoopIsOneEvent) {
  // The loop over rows (rowptr twice, the row's run with its free
  // position, y) reaches core's folder as one memloop event whatever the
  // number of rows, not four events a row; the stream comes back exactly
  // (fold checks it), wherever the buffers end.
  for (int rows : {300, 3000}) {
    const Stream s = csr(rows, false);
    const Folded f = fold(s);
    EXPECT_LE(f.stats.events, 16u) << rows << " rows";
    for (std::size_t chunk : {1, 7})
      EXPECT_EQ(fold(s, chunk).bytes, f.bytes) << "buffers of " << chunk;
  }
  // A stray load every seventh row ends the loop there: one loop event per
  // stretch between them, not one a row.
  const Folded f = fold(csr(3000));
  EXPECT_LE(f.stats.events, 3000u / 7 * 6 + 16);
}

TEST(MemRuns, BufferEndsChangeNothing) {
  // Runs of bodies of one and of three sites, ending mid-iteration, with
  // single references between: every way of cutting the stream into
  // buffers (a run split at every place) folds to the same bytes.
  Stream s;
  for (int rep = 0; rep < 3; rep++) {
    strided(s, 0x401000, 64 * rep, 8, 7);
    for (int i = 0; i < 5; i++) {
      s.push_back(at(0x401010, 0x1000 + 8 * i));
      s.push_back(at(0x401014, 0x2000 + 16 * i));
      if (i != 4) s.push_back(at(0x401018, 0x3000 + 8 * i));
    }
    strided(s, 0x401020, 0x4000 + rep, 0, 1);
    gather(s, 10 * rep, 4 + rep);
  }
  const Folded whole = fold(s);
  EXPECT_GE(whole.stats.runs, 6u);
  for (std::size_t chunk : {1, 2, 3, 4, 7, 11}) {
    const Folded cut = fold(s, chunk);
    EXPECT_EQ(counts(cut), counts(whole)) << "buffers of " << chunk;
    EXPECT_EQ(cut.bytes, whole.bytes) << "buffers of " << chunk;
  }
}

}  // namespace
