#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "source_dir.hpp"
#include "tracefold/timeline_io.hpp"

namespace fs = std::filesystem;
using namespace tracefold;

namespace {

fs::path temp_file(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tf-timeline-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST(TimelineIo, RoundTripsRecordsAcrossBlocks) {
  const fs::path p = temp_file("rt.tft");
  std::mt19937_64 rng(7);
  std::vector<TimelineRecord> want;
  TimelineWriter w;
  w.open(p.string(), 3, 8, 1000, 0, 256);  // tiny blocks: many of them
  w.set_start_offset(-42, 1500);
  int64_t t = 1000;
  for (int i = 0; i < 5000; ++i) {
    TimelineRecord r;
    r.op = static_cast<OpId>(rng() % OpTable::size());
    r.enter_ns = t + static_cast<int64_t>(rng() % 100000);
    r.exit_ns = r.enter_ns + static_cast<int64_t>(rng() % 5000);
    t = r.exit_ns;
    w.add(r.op, r.enter_ns, r.exit_ns);
    want.push_back(r);
  }
  w.close(58, 9000000);
  EXPECT_EQ(w.recorded(), 5000u);
  EXPECT_EQ(w.dropped(), 0u);
  EXPECT_TRUE(w.error().empty());
  const RankTimelineFile f = read_timeline_file(p.string());
  EXPECT_EQ(f.rank, 3);
  EXPECT_EQ(f.world_size, 8);
  ASSERT_TRUE(f.has_trailer);
  ASSERT_EQ(f.records.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(f.records[i].op, want[i].op) << i;
    EXPECT_EQ(f.records[i].enter_ns, want[i].enter_ns) << i;
    EXPECT_EQ(f.records[i].exit_ns, want[i].exit_ns) << i;
  }
  // Offsets: -42 at local 1500, +58 at local 9000000, linear in between.
  EXPECT_EQ(f.to_global(1500), 1458);
  EXPECT_EQ(f.to_global(9000000), 9000058);
  EXPECT_NEAR(static_cast<double>(f.to_global(4500750)), 4500750.0 + 8.0, 1.0);
  // Far fewer than the 3 x 8 bytes a naive record would take.
  EXPECT_LT(fs::file_size(p), 5000u * 8);
}

TEST(TimelineIo, BudgetDropsWholeBlocksAndStillWritesAValidFile) {
  const fs::path p = temp_file("budget.tft");
  TimelineWriter w;
  w.open(p.string(), 0, 2, 0, 2000, 128);
  int64_t t = 0;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 20000; ++i) {
    const int64_t enter = t + static_cast<int64_t>(rng() % 1000000);
    w.add(1, enter, enter + 17);
    t = enter + 17;
  }
  w.close(0, t);
  EXPECT_TRUE(w.over_budget());
  EXPECT_GT(w.dropped(), 0u);
  EXPECT_EQ(w.recorded() + w.dropped(), 20000u);
  EXPECT_LE(fs::file_size(p), 2000u);
  const RankTimelineFile f = read_timeline_file(p.string());
  EXPECT_TRUE(f.has_trailer);
  EXPECT_EQ(f.records.size(), w.recorded());
  EXPECT_EQ(f.dropped, w.dropped());
}

TEST(TimelineIo, FileWithoutTrailerReadsUpToItsLastCompleteBlock) {
  const fs::path p = temp_file("partial.tft");
  {
    TimelineWriter w;
    w.open(p.string(), 1, 2, 0, 0, 64);
    for (int i = 0; i < 100; ++i) w.add(2, i * 10, i * 10 + 5);
    w.flush();
    // No close(): the process died. Cut the file inside its last block too.
  }
  const auto size = fs::file_size(p);
  fs::resize_file(p, size - 3);
  const RankTimelineFile f = read_timeline_file(p.string());
  EXPECT_FALSE(f.has_trailer);
  EXPECT_GT(f.records.size(), 0u);
  EXPECT_LT(f.records.size(), 100u);
  for (std::size_t i = 0; i < f.records.size(); ++i)
    EXPECT_EQ(f.records[i].enter_ns, int64_t(i) * 10);
}

TEST(TimelineIo, BadFilesGiveErrorsNamingThem) {
  const fs::path p = temp_file("bad.tft");
  std::ofstream(p) << "not a timeline";
  try {
    read_timeline_file(p.string());
    FAIL() << "no error";
  } catch (const TimelineError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.tft: not a tracefold timeline file"),
              std::string::npos);
  }
  EXPECT_THROW(read_timeline_file(temp_file("missing.tft").string()), TimelineError);
}

TEST(TimelineIo, RecordsNameTheirThreadInTheTracesNumbering) {
  // Streams numbered by first call (0, 1, 2) that the trace writes as
  // threads 0, 2, 1: the reader gives the trace's numbers.
  const fs::path p = temp_file("threads.tft");
  TimelineWriter w;
  w.open(p.string(), 1, 2, 1000, 0);
  w.add(4, 1010, 1015, 0);
  w.add(5, 1012, 1400, 1);
  w.add(6, 1013, 1020, 2);
  w.add(7, 1401, 1405, 1);
  w.close(0, 2000, -1, {0, 2, 1});
  const RankTimelineFile f = read_timeline_file(p.string());
  EXPECT_EQ(f.version, 3);
  EXPECT_TRUE(f.has_threads());
  ASSERT_EQ(f.records.size(), 4u);
  EXPECT_EQ(f.records[1].thread, 2);
  EXPECT_EQ(f.records[2].thread, 1);
  const std::vector<TimelineRecord> two = f.thread_records(2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].op, 5);
  EXPECT_EQ(two[0].enter_ns, 1012);
  EXPECT_EQ(two[0].exit_ns, 1400);
  EXPECT_EQ(two[1].op, 7);
  EXPECT_EQ(two[1].enter_ns, 1401);
  ASSERT_EQ(f.thread_records(1).size(), 1u);
  EXPECT_EQ(f.thread_records(1)[0].exit_ns, 1020);
}

TEST(TimelineIo, VersionTwoFilesStillReadAsOneThread) {
  // Written by the version 2 writer (see ClockSync.VersionOneTimelinesAreStillRead
  // for its contents): no thread per record.
  const RankTimelineFile f = read_timeline_file(
      (fs::path(TRACEFOLD_SOURCE_DIR) / "tests" / "data" / "timeline-v2.tft").string());
  EXPECT_EQ(f.version, 2);
  EXPECT_FALSE(f.has_threads());
  ASSERT_TRUE(f.has_trailer);
  EXPECT_EQ(f.start_round_trip_ns, 7);
  EXPECT_EQ(f.end_round_trip_ns, 9);
  ASSERT_EQ(f.records.size(), 2u);
  EXPECT_EQ(f.records[0].op, 4);
  EXPECT_EQ(f.records[0].enter_ns, 1010);
  EXPECT_EQ(f.records[0].exit_ns, 1015);
  EXPECT_EQ(f.records[1].op, 60);
  EXPECT_EQ(f.records[1].enter_ns, 1018);
  EXPECT_EQ(f.records[1].exit_ns, 1025);
  EXPECT_EQ(f.thread_records(0).size(), 2u);
  EXPECT_TRUE(f.thread_records(1).empty());
}
