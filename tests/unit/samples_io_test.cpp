#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "source_dir.hpp"
#include "tracefold/samples.hpp"

namespace fs = std::filesystem;
using namespace tracefold;

namespace {

fs::path temp_file(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tf-samples-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A rank with two modules, a small context tree and samples on two threads.
RankSamples example(std::size_t n) {
  RankSamples s;
  s.rank = 1;
  s.world_size = 4;
  s.period_ns = 1000000;
  s.clock = SampleClock::kWall;
  s.modules.push_back({"app", "/bin/app", "abcdef", 0x400000});
  s.modules.push_back({"libm.so.6", "/lib/libm.so.6", "", 0});
  s.contexts.push_back({});              // root
  s.contexts.push_back({0, 0, 0x1234});  // 1: main
  s.contexts.push_back({1, 0, 0x2000});  // 2: main > work
  s.contexts.push_back({2, 1, 0x99});    // 3: main > work > sin
  s.contexts.push_back({1, 0, 0x3000});  // 4: main > other
  std::mt19937_64 rng(3);
  int64_t t[2] = {5000000000, 5000000300};
  uint64_t ev = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Sample x;
    x.thread = static_cast<uint32_t>(rng() % 2);
    t[x.thread] += 1000000 + static_cast<int64_t>(rng() % 20000);
    x.time_ns = t[x.thread];
    x.in_mpi = rng() % 5 == 0;
    x.context = x.in_mpi ? 0 : static_cast<uint32_t>(1 + rng() % 4);
    ev += rng() % 3;
    x.mpi_event = ev;
    x.lca_depth = x.in_mpi ? 0 : static_cast<uint16_t>(rng() % (s.depth(x.context) + 1));
    s.samples.push_back(x);
  }
  s.dropped = 7;
  s.taken = n + 7;
  s.handler_median_ns = 1800;
  s.handler_p99_ns = 9000;
  return s;
}

void expect_same(const RankSamples& a, const RankSamples& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.period_ns, b.period_ns);
  EXPECT_EQ(a.clock, b.clock);
  EXPECT_EQ(a.modules, b.modules);
  ASSERT_EQ(a.contexts.size(), b.contexts.size());
  for (std::size_t i = 0; i < a.contexts.size(); ++i) {
    EXPECT_EQ(a.contexts[i].parent, b.contexts[i].parent) << i;
    EXPECT_EQ(a.contexts[i].module, b.contexts[i].module) << i;
    EXPECT_EQ(a.contexts[i].offset, b.contexts[i].offset) << i;
  }
  ASSERT_EQ(a.samples.size(), b.samples.size());
  for (std::size_t i = 0; i < a.samples.size(); ++i) {
    const Sample &x = a.samples[i], &y = b.samples[i];
    EXPECT_EQ(x.time_ns, y.time_ns) << i;
    EXPECT_EQ(x.context, y.context) << i;
    EXPECT_EQ(x.thread, y.thread) << i;
    EXPECT_EQ(x.mpi_event, y.mpi_event) << i;
    EXPECT_EQ(x.lca_depth, y.lca_depth) << i;
    EXPECT_EQ(x.in_mpi, y.in_mpi) << i;
  }
}

}  // namespace

TEST(SamplesIo, PathNamesTheRank) {
  EXPECT_EQ(samples_path("run.timeline", 3), "run.timeline/samples-3.tfs");
}

TEST(SamplesIo, RoundTripsThroughAFile) {
  const fs::path p = temp_file("rt.tfs");
  const RankSamples want = example(20000);
  write_samples_file(p.string(), want);
  const RankSamples got = read_samples_file(p.string());
  expect_same(want, got);
  EXPECT_TRUE(got.has_trailer);
  EXPECT_EQ(got.taken, 20007u);
  EXPECT_EQ(got.dropped, 7u);
  EXPECT_EQ(got.handler_median_ns, 1800);
  EXPECT_EQ(got.handler_p99_ns, 9000);
  EXPECT_EQ(got.source, p.string());
  // The context table is amortised: a few bytes per sample, even with the
  // random times and contexts here that zstd cannot squeeze.
  EXPECT_LT(fs::file_size(p), 20000u * 6);
  EXPECT_EQ(got.depth(3), 3u);
  EXPECT_EQ(got.path(3), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_TRUE(got.path(0).empty());
}

// The sampler lowered thread 1's rate twice and thread 0's once: each
// change reads back with its thread, time and period, and period_at gives
// every sample the period it was taken at.
TEST(SamplesIo, PeriodChangesRoundTripAndWeighTheirThreadsSamples) {
  const fs::path p = temp_file("periods.tfs");
  RankSamples want = example(2000);
  const int64_t t1 = want.samples[500].time_ns, t2 = want.samples[1500].time_ns;
  const int64_t t0 = want.samples[1000].time_ns;
  want.periods = {{1, t1, 2000000}, {0, t0, 2000000}, {1, t2, 4000000}};
  write_samples_file(p.string(), want);
  const RankSamples got = read_samples_file(p.string());
  expect_same(want, got);
  ASSERT_EQ(got.periods.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got.periods[i].thread, want.periods[i].thread) << i;
    EXPECT_EQ(got.periods[i].time_ns, want.periods[i].time_ns) << i;
    EXPECT_EQ(got.periods[i].period_ns, want.periods[i].period_ns) << i;
  }
  EXPECT_EQ(got.period_at(1, t1 - 1), 1000000);
  EXPECT_EQ(got.period_at(1, t1), 2000000);
  EXPECT_EQ(got.period_at(0, t1), 1000000);
  EXPECT_EQ(got.period_at(0, t0), 2000000);
  EXPECT_EQ(got.period_at(1, t2 + 1), 4000000);
  EXPECT_EQ(got.period_at(7, t2), 1000000);
}

TEST(SamplesIo, StreamingWriterInterleavesContextsAndSamples) {
  const fs::path p = temp_file("stream.tfs");
  SamplesWriter w;
  w.open(p.string(), 0, 1, 250000, SampleClock::kCpu, 0, 128);  // tiny blocks
  const uint32_t m = w.add_module({"a.out", "/x/a.out", "", 0});
  EXPECT_EQ(m, 0u);
  uint32_t parent = 0;
  for (int i = 0; i < 500; ++i) {
    const uint32_t c = w.add_context(parent, m, static_cast<uint64_t>(i) * 16);
    EXPECT_EQ(c, static_cast<uint32_t>(i + 1));
    Sample s;
    s.time_ns = 1000 + i;
    s.context = c;
    s.mpi_event = static_cast<uint64_t>(i / 10);
    s.lca_depth = static_cast<uint16_t>(i);
    w.add_sample(s);
    parent = c;
  }
  w.add_dropped(2);
  w.close(-1, -1);
  EXPECT_TRUE(w.error().empty());
  const RankSamples got = read_samples_file(p.string());
  EXPECT_EQ(got.clock, SampleClock::kCpu);
  ASSERT_EQ(got.samples.size(), 500u);
  EXPECT_EQ(got.depth(got.samples.back().context), 500u);
  EXPECT_EQ(got.samples.back().lca_depth, 499);
  EXPECT_EQ(got.taken, 502u);
  EXPECT_EQ(got.handler_median_ns, -1);
}

TEST(SamplesIo, SizeBoundDropsLaterSamples) {
  const fs::path p = temp_file("bound.tfs");
  SamplesWriter w;
  w.open(p.string(), 0, 1, 1000000, SampleClock::kWall, 2000, 256);
  const uint32_t m = w.add_module({"a.out", "", "", 0});
  std::mt19937_64 rng(1);
  for (int i = 0; i < 5000; ++i) {
    Sample s;
    s.time_ns = static_cast<int64_t>(rng() >> 20);  // incompressible
    s.context = w.add_context(0, m, rng() >> 30);
    w.add_sample(s);
  }
  w.close(10, 20);
  EXPECT_TRUE(w.over_budget());
  EXPECT_LE(fs::file_size(p), 2000u);
  const RankSamples got = read_samples_file(p.string());
  EXPECT_TRUE(got.has_trailer);
  EXPECT_GT(got.samples.size(), 0u);
  EXPECT_EQ(got.samples.size() + got.dropped, 5000u);
}

TEST(SamplesIo, FileWithoutTrailerIsReadToItsLastCompleteBlock) {
  const fs::path p = temp_file("cut.tfs");
  const RankSamples want = example(3000);
  SamplesWriter w;
  w.open(p.string(), want.rank, want.world_size, want.period_ns, want.clock, 0, 512);
  for (const Module& m : want.modules) w.add_module(m);
  for (std::size_t c = 1; c < want.contexts.size(); ++c)
    w.add_context(want.contexts[c].parent, want.contexts[c].module, want.contexts[c].offset);
  for (const Sample& s : want.samples) w.add_sample(s);
  w.close(1, 2);
  const std::vector<uint8_t> bytes = read_bytes(p);
  std::size_t prev = SIZE_MAX;
  // Cut at many places: never an error, never more samples than written,
  // and the count only grows with the length.
  for (std::size_t len = 22; len + 44 < bytes.size(); len += 97) {
    const RankSamples got = parse_samples(std::span(bytes.data(), len), "cut.tfs");
    EXPECT_FALSE(got.has_trailer);
    EXPECT_LE(got.samples.size(), want.samples.size());
    if (prev != SIZE_MAX) {
      EXPECT_GE(got.samples.size(), prev);
    }
    prev = got.samples.size();
    for (std::size_t i = 0; i < got.samples.size(); ++i)
      ASSERT_EQ(got.samples[i].time_ns, want.samples[i].time_ns);
  }
  EXPECT_GT(prev, 2000u);
}

namespace {

// A rank as the sampler writes it: sampler thread 1 never calls MPI,
// thread 2 makes its first call after thread 3 (streams 2 and 1), and the
// trace writes stream 1 as its thread 2 and stream 2 as its thread 1
// (`numbers`). Thread 2's thread record comes after its first samples, as
// when the sampler learns its stream only at its first call.
void write_threaded(const fs::path& p, const std::vector<int32_t>& numbers) {
  SamplesWriter w;
  w.open(p.string(), 3, 4, 1000000, SampleClock::kWall, 0, 64);
  const uint32_t m = w.add_module({"a.out", "", "", 0});
  const uint32_t c = w.add_context(0, m, 0x10);
  w.add_thread(0, 0);
  for (uint32_t i = 0; i < 40; ++i) {
    Sample s;
    s.time_ns = 1000000 + i * 1000;
    s.thread = i % 4;
    s.context = c;
    s.in_mpi = s.thread == 2 && i > 20;
    if (s.in_mpi) s.context = 0;
    if (i == 8) w.add_period(1, s.time_ns, 2000000);
    if (i == 10) w.add_thread(3, 1);
    if (i == 21) w.add_thread(2, 2);
    w.add_sample(s);
  }
  w.close(1, 2, numbers);
  ASSERT_TRUE(w.error().empty()) << w.error();
}

// Sampler thread -> the thread the reader gives: 0 -> 0, 2 -> stream 2,
// 3 -> stream 1, 1 (no MPI) -> after the threads that called MPI.
std::map<uint32_t, uint32_t> thread_names(const RankSamples& got) {
  std::map<uint32_t, uint32_t> out;
  for (std::size_t i = 0; i < got.samples.size(); ++i) {
    const auto [it, fresh] = out.emplace(i % 4, got.samples[i].thread);
    EXPECT_EQ(it->second, got.samples[i].thread) << "sample " << i;
  }
  return out;
}

}  // namespace

TEST(SamplesIo, ThreadsAreNamedAsInTheTrace) {
  const fs::path p = temp_file("threads.tfs");
  write_threaded(p, {0, 2, 1});
  const RankSamples got = read_samples_file(p.string());
  EXPECT_TRUE(got.threads_named);
  EXPECT_EQ(got.trace_threads, 3u);
  EXPECT_EQ(thread_names(got), (std::map<uint32_t, uint32_t>{{0, 0}, {1, 3}, {2, 1}, {3, 2}}));
  // The MPI samples are stream 2's, the trace's thread 1: location 1 * 4 + 3.
  for (const Sample& s : got.samples)
    if (s.in_mpi) {
      EXPECT_EQ(got.location(s.thread), 7) << s.time_ns;
    }
  EXPECT_EQ(got.location(0), 3);
  EXPECT_EQ(got.location(2), 11);
  EXPECT_EQ(got.location(3), -1);  // never called MPI
  // The period change of sampler thread 1 follows it.
  ASSERT_EQ(got.periods.size(), 1u);
  EXPECT_EQ(got.periods[0].thread, 3u);
  EXPECT_EQ(got.period_at(3, got.samples.back().time_ns), 2000000);

  // Written again (write_samples_file), the names stay.
  const fs::path q = temp_file("threads-again.tfs");
  write_samples_file(q.string(), got);
  const RankSamples again = read_samples_file(q.string());
  EXPECT_EQ(again.trace_threads, 3u);
  expect_same(got, again);
  ASSERT_EQ(again.periods.size(), 1u);
  EXPECT_EQ(again.periods[0].thread, 3u);
}

// A run that died writes no trailer: threads keep their first-call
// numbers, those of the timeline's records without its trailer.
TEST(SamplesIo, FileWithoutTrailerNamesThreadsByFirstCall) {
  const fs::path p = temp_file("threads-cut.tfs");
  write_threaded(p, {0, 2, 1});
  const std::vector<uint8_t> bytes = read_bytes(p);
  // Without the trailer mark and trailer: 4 + 4 * 8 + 4 + 3 * 4 bytes.
  const RankSamples got = parse_samples(std::span(bytes.data(), bytes.size() - 52), "cut.tfs");
  ASSERT_FALSE(got.has_trailer);
  EXPECT_EQ(got.trace_threads, 3u);
  EXPECT_EQ(thread_names(got), (std::map<uint32_t, uint32_t>{{0, 0}, {1, 3}, {2, 2}, {3, 1}}));
}

// tests/data/samples-v2.tfs: rank 1 of `record --sample=1ms -- mpirun -np 2
// app_sample_work 1 3000000`, written by the version 2 writer. Its thread
// numbers are the sampler's: 0 is the MPI_Init thread, the trace's thread
// 0; thread 1 (the computing thread) has no known place in the trace.
TEST(SamplesIo, Version2FileStillReads) {
  const RankSamples got = read_samples_file(
      (fs::path(TRACEFOLD_SOURCE_DIR) / "tests" / "data" / "samples-v2.tfs").string());
  EXPECT_FALSE(got.threads_named);
  EXPECT_TRUE(got.has_trailer);
  EXPECT_EQ(got.rank, 1);
  EXPECT_EQ(got.world_size, 2);
  EXPECT_EQ(got.period_ns, 1000000);
  EXPECT_EQ(got.taken, 143u);
  ASSERT_EQ(got.samples.size(), 143u);
  std::map<uint32_t, std::size_t> per_thread;
  std::size_t in_mpi = 0;
  for (const Sample& s : got.samples) {
    ++per_thread[s.thread];
    in_mpi += s.in_mpi;
  }
  EXPECT_EQ(per_thread, (std::map<uint32_t, std::size_t>{{0, 111}, {1, 32}}));
  EXPECT_EQ(in_mpi, 50u);
  EXPECT_EQ(got.location(0), 1);
  EXPECT_EQ(got.location(1), -1);
}

TEST(SamplesIo, CorruptInputIsNamed) {
  const fs::path p = temp_file("bad.tfs");
  write_samples_file(p.string(), example(100));
  const std::vector<uint8_t> good = read_bytes(p);
  auto error_of = [](std::vector<uint8_t> bytes) -> std::string {
    try {
      parse_samples(bytes, "f.tfs");
    } catch (const SamplesError& e) {
      return e.what();
    }
    return "";
  };
  std::vector<uint8_t> b = good;
  b[0] = 'X';
  EXPECT_NE(error_of(b).find("f.tfs: not a tracefold samples file (bad magic)"), std::string::npos)
      << error_of(b);
  b = good;
  b[4] = 9;
  EXPECT_NE(error_of(b).find("version 9"), std::string::npos);
  EXPECT_NE(error_of({good.begin(), good.begin() + 10}).find("truncated header"),
            std::string::npos);
  b = good;
  b[21] = 5;  // clock
  EXPECT_NE(error_of(b).find("clock 5"), std::string::npos);
  // A block's frame damaged.
  b = good;
  b[22 + 12 + 6] ^= 0xFF;
  EXPECT_NE(error_of(b).find("f.tfs: byte 22"), std::string::npos) << error_of(b);
  // The trailer's count disagrees.
  b = good;
  b[b.size() - 40] ^= 1;  // taken, before the thread count and thread 0's number
  EXPECT_NE(error_of(b).find("trailer says"), std::string::npos) << error_of(b);

  // Contexts that refer to what is not there.
  const fs::path q = temp_file("badref.tfs");
  auto write_with = [&](auto&& body) {
    SamplesWriter w;
    w.open(q.string(), 0, 1, 1000000, SampleClock::kWall, 0);
    body(w);
    w.close(-1, -1);
    try {
      read_samples_file(q.string());
    } catch (const SamplesError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = write_with([](SamplesWriter& w) { w.add_context(0, 0, 1); });
  EXPECT_NE(e.find(q.string() + ": byte 22: record 0 of the block: context 1 refers to unknown "
                                "module 0 (0 known)"),
            std::string::npos)
      << e;
  e = write_with([](SamplesWriter& w) {
    w.add_module({"m", "", "", 0});
    w.add_context(5, 0, 1);
  });
  EXPECT_NE(e.find("refers to unknown parent 5"), std::string::npos) << e;
  e = write_with([](SamplesWriter& w) {
    Sample s;
    s.context = 3;
    w.add_sample(s);
  });
  EXPECT_NE(e.find("sample refers to unknown context 3"), std::string::npos) << e;
  e = write_with([](SamplesWriter& w) {
    Sample s;
    s.lca_depth = 2;
    w.add_sample(s);
  });
  EXPECT_NE(e.find("LCA depth 2 deeper"), std::string::npos) << e;
  EXPECT_NE(std::string(error_of({})).find("truncated header"), std::string::npos);

  // Thread records and the trailer's thread numbers that cannot be.
  auto closed_with = [&](auto&& body, const std::vector<int32_t>& numbers) {
    SamplesWriter w;
    w.open(q.string(), 0, 1, 1000000, SampleClock::kWall, 0);
    body(w);
    w.close(-1, -1, numbers);
    try {
      read_samples_file(q.string());
    } catch (const SamplesError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto none = [](SamplesWriter&) {};
  e = closed_with(none, {0, 2});
  EXPECT_NE(e.find("trailer maps a thread to 2 of 2"), std::string::npos) << e;
  e = closed_with(none, {1, 1});
  EXPECT_NE(e.find("trailer maps a thread to 1 of 2"), std::string::npos) << e;
  e = closed_with(none, {1, 0});
  EXPECT_NE(e.find("trailer moves thread 0"), std::string::npos) << e;
  e = closed_with(none, {});
  EXPECT_NE(e.find("trailer names 0 threads"), std::string::npos) << e;
  e = closed_with([](SamplesWriter& w) { w.add_thread(1, 3); }, {0, 1});
  EXPECT_NE(e.find("thread 1 is stream 3, but the trailer names 2 streams"), std::string::npos)
      << e;
  e = closed_with(
      [](SamplesWriter& w) {
        w.add_thread(1, 1);
        w.add_thread(2, 1);
      },
      {0, 1});
  EXPECT_NE(e.find("two threads are stream 1"), std::string::npos) << e;
  e = closed_with(
      [](SamplesWriter& w) {
        w.add_thread(1, 1);
        w.add_thread(1, 0);
      },
      {0, 1});
  EXPECT_NE(e.find("a second thread record for thread 1"), std::string::npos) << e;
}

TEST(SamplesIo, MissingFileIsNamed) {
  try {
    read_samples_file("/nonexistent/samples-0.tfs");
    FAIL();
  } catch (const SamplesError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/samples-0.tfs: cannot open");
  }
}
