// Clock offset estimation and the linear correction of timelines, and the
// timeline format's clock samples (version 2, version 1 still read).

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "source_dir.hpp"
#include "tracefold/clock_sync.hpp"
#include "tracefold/timeline_io.hpp"

namespace tracefold {
namespace {

namespace fs = std::filesystem;

TEST(ClockSync, EstimatorKeepsTheShortestRoundTrip) {
  OffsetEstimator e;
  EXPECT_TRUE(e.empty());
  EXPECT_THROW(e.best(), std::logic_error);
  e.add_round(1000, 5000, 1100);  // rtt 100: offset 5000 - 1050
  e.add_round(2000, 6000, 2020);  // rtt 20: offset 6000 - 2010
  e.add_round(3000, 9000, 3050);  // rtt 50: ignored
  e.add_round(4000, 0, 3990);     // a clock that went back: ignored
  const ClockSample s = e.best();
  EXPECT_EQ(s.round_trip_ns, 20);
  EXPECT_EQ(s.local_ns, 2010);
  EXPECT_EQ(s.offset_ns, 3990);
  // Midpoints of huge times do not overflow.
  OffsetEstimator big;
  big.add_round(INT64_MAX - 11, INT64_MAX - 1, INT64_MAX - 1);
  EXPECT_EQ(big.best().local_ns, INT64_MAX - 6);
  EXPECT_EQ(big.best().offset_ns, 5);
}

TEST(ClockSync, ConstantOffsetIsRemovedExactly) {
  const ClockMap m({-123456789, 1000, 40}, {-123456789, 9000000000, 60});
  EXPECT_EQ(m.to_global(5000), 5000 - 123456789);
  EXPECT_EQ(m.to_global(INT64_MAX / 2), INT64_MAX / 2 - 123456789);
  EXPECT_EQ(m.drift_ppm(), 0.0);
  EXPECT_EQ(m.max_abs_offset(), 123456789);
  EXPECT_EQ(m.uncertainty_ns(), 30);
  EXPECT_FALSE(m.is_identity());
  EXPECT_TRUE(ClockMap().is_identity());
  EXPECT_EQ(ClockMap().to_global(77), 77);
}

TEST(ClockSync, DriftIsInterpolatedAndExtrapolatedLinearly) {
  // -1000 ns at local 0, +1000 ns at local 2 s: 1 ppm.
  const ClockMap m({-1000, 0, 10}, {1000, 2000000000, 10});
  EXPECT_NEAR(m.drift_ppm(), 1.0, 1e-12);
  EXPECT_EQ(m.to_global(0), -1000);
  EXPECT_EQ(m.to_global(1000000000), 1000000000);
  EXPECT_EQ(m.to_global(2000000000), 2000001000);
  EXPECT_EQ(m.to_global(4000000000), 4000003000);  // beyond the last sample
  EXPECT_EQ(m.to_global(-2000000000), -2000003000);
  // Samples at the same instant carry no rate: the first offset holds.
  const ClockMap same({5, 100, 1}, {9, 100, 1});
  EXPECT_EQ(same.to_global(1000), 1005);
  // One sample: a constant offset.
  EXPECT_EQ(ClockMap(ClockSample{7, 0, 0}).to_global(10), 17);
}

TEST(ClockSync, OverflowIsReportedNotWrapped) {
  const ClockMap m({int64_t{1} << 62, 0, 0}, {-(int64_t{1} << 62), 1, 0});
  EXPECT_FALSE(m.to_global(1000).has_value());
  EXPECT_FALSE(ClockMap(ClockSample{10, 0, 0}).to_global(INT64_MAX - 5).has_value());
}

// A rank whose clock runs `ppm` fast from `offset` against rank 0's,
// measured by ping-pongs with random one-way delays: after correction
// every time is within the reported error bound of the true one.
TEST(ClockSync, SimulatedPingPongCorrectsOffsetAndDrift) {
  const double ppm = 37.0;
  const int64_t offset = 4'000'000'000;  // the rank's clock is 4 s ahead
  auto local_of = [&](int64_t global) {
    return global + offset + static_cast<int64_t>(std::llround(global * ppm * 1e-6));
  };
  std::mt19937_64 rng(3);
  auto sample_at = [&](int64_t global) {
    OffsetEstimator e;
    for (int k = 0; k < 8; ++k) {
      const int64_t there = 2000 + static_cast<int64_t>(rng() % 3000);
      const int64_t back = 2000 + static_cast<int64_t>(rng() % 3000);
      e.add_round(local_of(global), global + there, local_of(global + there + back));
      global += there + back + 10000;
    }
    return e.best();
  };
  const ClockMap m(sample_at(1'000'000), sample_at(30'000'000'000));
  ASSERT_GT(m.uncertainty_ns(), 0);
  EXPECT_NEAR(m.drift_ppm(), -ppm, 0.5);
  for (int64_t g : {int64_t{5'000'000}, int64_t{12'345'678'901}, int64_t{29'999'000'000}}) {
    const int64_t corrected = *m.to_global(local_of(g));
    EXPECT_LE(std::llabs(corrected - g), m.uncertainty_ns()) << g;
  }
  ClockCorrection c;
  c.add(ClockMap());
  c.add(m);
  EXPECT_EQ(c.ranks, 1);
  EXPECT_TRUE(c.applied());
  EXPECT_GE(c.max_offset_ns, 3'999'000'000);
  EXPECT_NEAR(c.max_drift_ppm, ppm, 0.5);
  EXPECT_NE(c.describe().find("1 rank corrected by up to 4 s"), std::string::npos) << c.describe();
  EXPECT_EQ(ClockCorrection().describe(), "clocks: no correction needed");
  // A rank of unknown error makes the bound unknown.
  c.add(ClockMap({5, 0, -1}, {5, 10, -1}));
  EXPECT_EQ(c.uncertainty_ns, -1);
  EXPECT_NE(c.describe().find("error unknown"), std::string::npos) << c.describe();
}

TEST(ClockSync, TimelineFilesKeepBothSamplesWithTheirRoundTrips) {
  const fs::path p =
      fs::temp_directory_path() / ("tracefold-clock-" + std::to_string(::getpid()) + ".tft");
  TimelineWriter w;
  w.open(p.string(), 1, 2, 1000, 0);
  w.set_start_offset(-500, 1200, 300);
  w.add(1, 2000, 2500);
  w.close(-300, 2001200, 500);
  const RankTimelineFile f = read_timeline_file(p.string());
  fs::remove(p);
  EXPECT_EQ(f.version, 3);
  EXPECT_EQ(f.start_round_trip_ns, 300);
  EXPECT_EQ(f.end_round_trip_ns, 500);
  const ClockMap m = f.clock();
  EXPECT_EQ(m.uncertainty_ns(), 250);
  EXPECT_NEAR(m.drift_ppm(), 100.0, 1e-9);       // 200 ns over 2 ms
  EXPECT_EQ(f.to_global(2000), 2000 - 500 + 0);  // 800 ns after the start: +0.08 ns
  EXPECT_EQ(f.to_global(1001200), 1001200 - 400);
}

TEST(ClockSync, VersionOneTimelinesAreStillRead) {
  // A version 2 file (tests/data/timeline-v2.tft, written by that writer:
  // rank 0 of 2, base 1000, start sample -50 at 100 round trip 7, calls 4 at
  // 1010-1015 and 60 at 1018-1025, end sample -40 at 900000 round trip 9)
  // rewritten in the version 1 layout (docs/format.md): no round trip after
  // the start sample (header byte 37) nor after the end sample (trailer
  // byte 20), version byte 1.
  std::vector<uint8_t> v2;
  {
    std::ifstream in(fs::path(TRACEFOLD_SOURCE_DIR) / "tests" / "data" / "timeline-v2.tft",
                     std::ios::binary);
    v2.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_EQ(v2[4], 2);
  std::vector<uint8_t> v1(v2.begin(), v2.begin() + 37);
  v1[4] = 1;
  const std::size_t trailer = v2.size() - 44;
  v1.insert(v1.end(), v2.begin() + 45, v2.begin() + static_cast<std::ptrdiff_t>(trailer) + 20);
  v1.insert(v1.end(), v2.begin() + static_cast<std::ptrdiff_t>(trailer) + 28, v2.end());
  ASSERT_EQ(v1.size(), v2.size() - 16);
  const RankTimelineFile f = parse_timeline(v1, "old.tft");
  EXPECT_EQ(f.version, 1);
  ASSERT_TRUE(f.has_trailer);
  EXPECT_EQ(f.start_offset_ns, -50);
  EXPECT_EQ(f.end_offset_ns, -40);
  EXPECT_EQ(f.start_round_trip_ns, -1);
  EXPECT_EQ(f.end_round_trip_ns, -1);
  ASSERT_EQ(f.records.size(), 2u);
  EXPECT_EQ(f.records[1].enter_ns, 1018);
  EXPECT_EQ(f.clock().uncertainty_ns(), -1);
  EXPECT_EQ(f.to_global(100), 50);
  EXPECT_EQ(f.to_global(900000), 899960);
  // The version 2 original keeps its round trips.
  const RankTimelineFile g = parse_timeline(v2, "new.tft");
  EXPECT_EQ(g.start_round_trip_ns, 7);
  EXPECT_EQ(g.end_round_trip_ns, 9);
  // A version this reader does not know is refused by number.
  v2[4] = 4;
  try {
    parse_timeline(v2, "future.tft");
    FAIL() << "version 4 accepted";
  } catch (const TimelineError& ex) {
    EXPECT_NE(std::string(ex.what()).find("version 4"), std::string::npos) << ex.what();
  }
}

}  // namespace
}  // namespace tracefold
