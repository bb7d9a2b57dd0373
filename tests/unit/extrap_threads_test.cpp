// Extrapolation of traces with threads (docs/extrapolate.md "Threads"):
// each thread class is extrapolated across rank counts with the thread
// count kept, and core's projection of a thread class onto the ranks
// (thread_streams.hpp) round-trips.
#include <gtest/gtest.h>

#include "tracefold/expand.hpp"
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/thread_streams.hpp"

namespace tracefold {
namespace {

// Rank `r` of a ring of `size`: thread 0 calls Init, an Allreduce and
// Finalize; threads 1 .. threads-1 each send `steps` times to the same
// thread of the next rank and receive from the previous one, tag = the
// thread.
std::string rank_log(int r, int size, int threads, int steps) {
  std::string s = "rank " + std::to_string(r) + " size " + std::to_string(size) + "\n";
  s += "site 1 app+0x10\nsite 2 app+0x20\nsite 3 app+0x30\nsite 4 app+0x40\n";
  s += "MPI_Init site=1\n";
  for (int i = 0; i < steps; ++i)
    for (int t = threads - 1; t >= 1; --t) {
      s += "thread " + std::to_string(t) + "\n";
      s += "MPI_Sendrecv site=2 peer=" + std::to_string((r + 1) % size) +
           " tag=" + std::to_string(t) +
           " count=4 dsize=8 rpeer=" + std::to_string((r + size - 1) % size) +
           " rtag=" + std::to_string(t) + " rcount=4 rdsize=8 comm=0\n";
    }
  s += "thread 0\nMPI_Allreduce site=3 count=1 dsize=8 comm=0\nMPI_Finalize site=4\n";
  s += "thread-order";
  for (int t = 0; t < threads; ++t) s += " " + std::to_string(t);
  return s + "\n";
}

Trace ring(int size, int threads, int steps) {
  std::vector<Trace> parts;
  for (int r = 0; r < size; ++r)
    parts.push_back(fold_log(parse_raw_log(rank_log(r, size, threads, steps), "rank")));
  return reduce_traces(std::move(parts));
}

// One location's calls as text: operation, call site and fields.
std::vector<std::string> calls(const Trace& t, int32_t location) {
  std::vector<std::string> out;
  RankIterator it(t, location);
  Event ev;
  while (it.next(ev)) {
    std::string s = OpTable::name(ev.op) + " " + SiteTable::format(t.sites.at(ev.site));
    for (const FieldValue& f : ev.fields) {
      s += " " + FieldTable::name(f.field) + "=" + std::to_string(f.scalar);
      for (int64_t v : f.list) s += "," + std::to_string(v);
    }
    out.push_back(s);
  }
  return out;
}

void expect_same_calls(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.world_size, b.world_size);
  ASSERT_EQ(a.threads, b.threads);
  for (int32_t l = 0; l < a.locations(); ++l) {
    SCOPED_TRACE(a.location_name(l));
    EXPECT_EQ(calls(a, l), calls(b, l));
  }
}

}  // namespace

TEST(ExtrapThreads, ThreadStreamsRoundTrip) {
  const Trace t = ring(5, 3, 4);
  ASSERT_EQ(t.threads, 3);
  Trace back;
  back.world_size = t.world_size;
  for (int32_t k = 0; k < t.threads; ++k) {
    const Trace s = thread_stream(t, k);
    EXPECT_EQ(s.threads, 1);
    EXPECT_EQ(s.ranks(), Ranklist::range(0, 5));
    // Thread k of rank 2 is rank 2 of the stream.
    EXPECT_EQ(calls(s, 2), calls(t, k * 5 + 2));
    append_thread_stream(back, s, k);
  }
  expect_same_calls(back, t);
}

TEST(ExtrapThreads, ThreadStreamKeepsTheHeader) {
  Trace t = ring(4, 3, 2);
  t.lossy = "histogram threshold 0.1";
  t.symtab.modules["app"] = Module{"app", "/bin/app", "ab12", 0};
  const Trace s = thread_stream(t, 2);
  EXPECT_EQ(s.world_size, 4);
  EXPECT_EQ(s.lossy, t.lossy);
  EXPECT_EQ(s.symtab.modules, t.symtab.modules);
  EXPECT_EQ(s.comms, t.comms);
  EXPECT_EQ(s.sites.size(), t.sites.size());
}

TEST(ExtrapThreads, EachThreadClassScalesWithTheThreadCountKept) {
  std::vector<extrap::ExtrapInput> in;
  for (int p : {3, 4, 5}) in.push_back({"ring-" + std::to_string(p), ring(p, 3, 4)});
  extrap::ExtrapOptions o;
  o.ranks = 9;
  const extrap::ExtrapResult r = extrap::extrapolate(in, o);
  EXPECT_EQ(r.trace.threads, 3);
  expect_same_calls(r.trace, ring(9, 3, 4));
}

TEST(ExtrapThreads, DifferentThreadCountsAreRefused) {
  std::vector<extrap::ExtrapInput> in = {{"a", ring(3, 3, 2)}, {"b", ring(4, 2, 2)}};
  extrap::ExtrapOptions o;
  o.ranks = 6;
  try {
    extrap::extrapolate(in, o);
    FAIL() << "extrapolated inputs of 3 and 2 threads";
  } catch (const extrap::ExtrapError& e) {
    EXPECT_NE(std::string(e.what()).find("b has 2 threads per rank calling MPI and a has 3"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace tracefold
