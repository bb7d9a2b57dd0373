// The thread dimension (docs/format.md "The thread dimension"): locations
// t * world + r, the text and compact forms that hold them, raw logs with
// `thread` lines, and traces of one thread per rank written as before.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/trace_links.hpp"
#include "source_dir.hpp"
#include "tracefold/analysis_basic.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Rank `r` of `size`: thread 0 calls Init and Finalize; threads 1 and 2
// each do `steps` Sendrecvs with the same thread of the partner, tag = the
// thread.
std::string rank_log(int r, int size, int steps) {
  std::string s = "rank " + std::to_string(r) + " size " + std::to_string(size) + "\n";
  s += "site 1 app+0x10\nsite 2 app+0x20\nsite 3 app+0x30\n";
  s += "MPI_Init site=1\n";
  for (int i = 0; i < steps; ++i) {
    for (int t : {2, 1}) {
      s += "thread " + std::to_string(t) + "\n";
      s += "MPI_Sendrecv site=2 peer=" + std::to_string(r ^ 1) + " tag=" + std::to_string(t) +
           " count=4 dsize=8 rpeer=" + std::to_string(r ^ 1) + " rtag=" + std::to_string(t) +
           " rcount=4 rdsize=8 comm=0\n";
    }
  }
  s += "thread 0\nMPI_Finalize site=3\n";
  s += "thread-order 0 1 2\n";  // the log's numbers are the trace's
  return s;
}

Trace fold_ranks(int size, int steps) {
  std::vector<Trace> parts;
  for (int r = 0; r < size; ++r)
    parts.push_back(fold_log(parse_raw_log(rank_log(r, size, steps), "rank")));
  return reduce_traces(std::move(parts));
}

TEST(TraceThreads, LocationsAreThreadMajor) {
  const Trace t = fold_ranks(4, 5);
  EXPECT_EQ(t.world_size, 4);
  EXPECT_EQ(t.threads, 3);
  EXPECT_TRUE(t.has_thread_dimension());
  EXPECT_EQ(t.location_name(9), "rank 1 thread 2");
  // Thread 1 of rank 2 is location 1 * 4 + 2: its own Sendrecvs, tag 1.
  RankIterator it(t, 6);
  Event ev;
  int n = 0;
  while (it.next(ev)) {
    EXPECT_EQ(OpTable::name(ev.op), "MPI_Sendrecv");
    EXPECT_EQ(ev.get(*FieldTable::find("tag")), 1);
    ++n;
  }
  EXPECT_EQ(n, 5);
  // Thread 0 is the rank itself: Init and Finalize.
  RankIterator main_thread(t, 2);
  n = 0;
  while (main_thread.next(ev)) ++n;
  EXPECT_EQ(n, 2);
  EXPECT_THROW(RankIterator(t, 12), std::out_of_range);
}

TEST(TraceThreads, SizeConstantInRanksAndSteps) {
  // Alike threads fold across ranks as alike ranks do.
  const Trace small = fold_ranks(4, 10), large = fold_ranks(8, 200);
  EXPECT_EQ(small.nodes.size(), large.nodes.size());
  const std::string a = encode_compact(small), b = encode_compact(large);
  EXPECT_LT(b.size(), a.size() + 16) << "8 ranks x 200 steps vs 4 x 10";
}

TEST(TraceThreads, TextAndCompactRoundTrip) {
  Trace t = fold_ranks(4, 3);
  t.omp = Elastic::of(ValueSeq::repeated(1, 1), 5);
  const std::string text = format_trace(t);
  EXPECT_EQ(text.rfind("tracefold-trace 6\nworld 4\nthreads 3\nomp ", 0), 0u) << text;
  const Trace back = parse_trace(text, "t");
  EXPECT_EQ(format_trace(back), text);
  EXPECT_EQ(back.threads, 3);
  const std::string compact = encode_compact(t);
  EXPECT_EQ(compact[4], Trace::kCompactVersion);
  const Trace cback = decode_compact(compact, "t.tf");
  EXPECT_EQ(format_trace(cback), text);
  EXPECT_FALSE(diff_traces(t, cback).has_value());
  // A node's locations outside threads x ranks are refused.
  std::string bad = text;
  bad.replace(bad.find("threads 3"), 9, "threads 2");
  EXPECT_THROW(parse_trace(bad, "bad"), std::exception);
}

TEST(TraceThreads, RawLogThreadOrderRenumbers) {
  std::string log = rank_log(0, 2, 2);
  log.replace(log.find("thread-order 0 1 2"), 18, "thread-order 0 2 1");
  const RawLog parsed = parse_raw_log(log, "r0");
  EXPECT_EQ(parsed.threads, 3);
  // Log thread 2 (tag 2) is the trace's thread 1.
  const auto events = parsed.thread_events(1);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].get(*FieldTable::find("tag")), 2);
}

TEST(TraceThreads, DiffComparesThreads) {
  const Trace a = fold_ranks(2, 3);
  Trace b = fold_ranks(2, 3);
  EXPECT_FALSE(diff_traces(a, b).has_value());
  b.threads = 4;
  const auto d = diff_traces(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field, "threads per rank");
}

// Traces written by main's compact writer before the thread dimension
// (tests/data/compact-v7, `tracefold convert` of compact-v6's files): read
// as they were and written back byte for byte.
TEST(TraceThreads, SingleThreadTracesUnchanged) {
  const fs::path data = fs::path(TRACEFOLD_SOURCE_DIR) / "tests" / "data";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(data / "compact-v7")) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".v7.tf")) continue;
    ++files;
    const std::string v7 = read_bytes(entry.path());
    const Trace t = load_trace(entry.path());
    EXPECT_EQ(t.threads, 1) << name;
    EXPECT_FALSE(t.has_thread_dimension()) << name;
    const std::string text =
        read_bytes(data / "compact-v6" / (name.substr(0, name.size() - 6) + ".trace"));
    // A trace with derived links is written shorter (version 9), else as
    // it was, byte for byte.
    if (links_form::has_derivable(t)) {
      EXPECT_LT(encode_compact(t).size(), v7.size()) << name;
      EXPECT_EQ(format_trace(t), format_trace(parse_trace(text))) << name;
    } else {
      EXPECT_EQ(encode_compact(t), v7) << name;
      EXPECT_EQ(format_trace(t), text) << name;
    }
    EXPECT_EQ(render_trace(t).find("threads"), std::string::npos) << name;
  }
  EXPECT_EQ(files, 10);
}

}  // namespace
}  // namespace tracefold
