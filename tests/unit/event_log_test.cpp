#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tracefold/event_log.hpp"

namespace fs = std::filesystem;
using namespace tracefold;

namespace {

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path() / ("tf-eventlog-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

Event call(const char* op, SiteId site, int64_t peer, std::vector<int64_t> links = {}) {
  Event ev;
  ev.op = *OpTable::find(op);
  ev.site = site;
  ev.set(FieldTable::peer(), peer);
  ev.set(FieldTable::comm(), 0);
  if (!links.empty()) ev.set_list(FieldTable::links(), std::move(links));
  // The rest of what the operation requires (the reader refuses an event
  // without it, as every reader does).
  for (const FieldId f : required_fields(ev.op)) {
    if (ev.find(f)) continue;
    if (FieldTable::kind(f) == FieldKind::kList)
      ev.set_list(f, {1});
    else
      ev.set(f, 1);
  }
  return ev;
}

// A loop of a few calls, repeated: most events are written as repeats.
std::vector<Event> loop(int steps) {
  std::vector<Event> evs;
  for (int s = 0; s < steps; ++s) {
    evs.push_back(call("MPI_Isend", 0, 1));
    evs.push_back(call("MPI_Irecv", 1, s % 2 ? 3 : 1));
    evs.push_back(call("MPI_Waitall", 2, kAbsent, {2, 1}));
  }
  return evs;
}

void write(const std::string& path, const std::vector<Event>& evs, uint64_t max_bytes = 0) {
  EventLogWriter w;
  w.open(path, 2, 4, max_bytes, 256);
  w.add_module({"app", "/bin/app", "abcdef", 0x400000});
  w.add_site(CallSite{{{"app", 0x10}}});
  w.add_site(CallSite{{{"app", 0x20}, {"app", 0x30}}});
  w.add_site(CallSite{{{"app", 0x40}}});
  w.add_comm(7, CommGroup{{0, 2}});
  for (const Event& ev : evs) w.add_event(ev);
  w.close();
  ASSERT_EQ(w.error(), "");
}

}  // namespace

TEST(EventLog, RoundTripWithRepeats) {
  const std::string path = (temp_dir() / "events-2.tfe").string();
  const std::vector<Event> evs = loop(200);
  write(path, evs);
  const RankEventLog log = read_event_log_file(path);
  EXPECT_EQ(log.rank, 2);
  EXPECT_EQ(log.world_size, 4);
  EXPECT_TRUE(log.has_trailer);
  ASSERT_EQ(log.events.size(), evs.size());
  for (std::size_t i = 0; i < evs.size(); ++i) {
    EXPECT_EQ(log.events[i].op, evs[i].op) << i;
    EXPECT_EQ(log.events[i].site, evs[i].site) << i;
    EXPECT_EQ(log.events[i].fields, evs[i].fields) << i;
  }
  ASSERT_EQ(log.sites.size(), 3u);
  EXPECT_EQ(log.sites[1].frames.size(), 2u);
  ASSERT_EQ(log.modules.size(), 1u);
  EXPECT_EQ(log.modules[0].build_id, "abcdef");
  EXPECT_EQ(log.comms.rank_in(7, 2), 1);
  // 600 calls of 3 distinct (and 1 alternating) kinds: far smaller than
  // 600 full records.
  EXPECT_LT(fs::file_size(path), 600u);
}

TEST(EventLog, CutFileReadsUpToItsLastBlock) {
  const std::string path = (temp_dir() / "events-cut.tfe").string();
  write(path, loop(300));
  std::vector<char> bytes(fs::file_size(path));
  std::ifstream(path, std::ios::binary).read(bytes.data(), std::streamsize(bytes.size()));
  bytes.resize(bytes.size() * 2 / 3);
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  const RankEventLog log = read_event_log_file(path);
  EXPECT_FALSE(log.has_trailer);
  EXPECT_GT(log.events.size(), 0u);
  EXPECT_LT(log.events.size(), 900u);
}

TEST(EventLog, CorruptInputIsNamed) {
  const std::string path = (temp_dir() / "events-bad.tfe").string();
  write(path, loop(1));
  std::vector<uint8_t> data(fs::file_size(path));
  std::ifstream(path, std::ios::binary)
      .read(reinterpret_cast<char*>(data.data()), std::streamsize(data.size()));
  auto message = [](std::span<const uint8_t> bytes) {
    try {
      parse_event_log(bytes, "x.tfe");
    } catch (const EventLogError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({data.data(), 7}).find("x.tfe"), std::string::npos);
  data[0] = 'X';
  EXPECT_NE(message(data).find("not a tracefold event log"), std::string::npos) << message(data);
}

TEST(EventLog, EventWithoutARequiredFieldIsRefusedWithItsPlace) {
  const std::string path = (temp_dir() / "events-missing.tfe").string();
  std::vector<Event> evs = loop(2);
  Event bare;  // an MPI_Isend without the peer every send has
  bare.op = *OpTable::find("MPI_Isend");
  bare.site = 0;
  bare.set(FieldTable::comm(), 0);
  evs.push_back(bare);
  write(path, evs);
  try {
    read_event_log_file(path);
    FAIL() << "read an event without its required fields";
  } catch (const EventLogError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("byte "), std::string::npos) << m;
    EXPECT_NE(m.find(" of the block: "), std::string::npos) << m;
    EXPECT_NE(m.find("MPI_Isend needs field 'peer'"), std::string::npos) << m;
  }
}

TEST(EventLog, UnfoldedRunMergesSitesAndComms) {
  const fs::path dir = temp_dir() / "run";
  fs::create_directories(dir);
  for (int32_t r = 0; r < 2; ++r) {
    EventLogWriter w;
    w.open(event_log_path(dir.string(), r), r, 2, 0);
    // Rank 1 meets the sites in the other order.
    const CallSite a{{{"app", 0x10}}}, b{{{"app", 0x20}}};
    w.add_site(r == 0 ? a : b);
    w.add_site(r == 0 ? b : a);
    w.add_event(call("MPI_Send", 0, 1 - r));
    w.add_event(call("MPI_Recv", 1, 1 - r));
    w.close();
  }
  EXPECT_TRUE(is_unfolded_run(dir.string()));
  const UnfoldedRun run = read_unfolded_run(dir.string());
  EXPECT_EQ(run.tables.world_size, 2);
  EXPECT_TRUE(run.tables.nodes.empty());
  ASSERT_EQ(run.tables.sites.size(), 2u);
  // Rank 1's first event was at its site 0, which is rank 0's site 1.
  EXPECT_EQ(run.events[0][0].site, 0u);
  EXPECT_EQ(run.events[1][0].site, 1u);
  EXPECT_TRUE(run.cut.empty());
  fs::remove(event_log_path(dir.string(), 1));
  try {
    read_unfolded_run(dir.string());
    ADD_FAILURE() << "a missing rank was not refused";
  } catch (const EventLogError& e) {
    EXPECT_NE(std::string(e.what()).find("ranks 1 of 2"), std::string::npos) << e.what();
  }
}
