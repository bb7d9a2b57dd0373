// Readers refuse what they cannot trust (issue 18): sizes above the limits or
// above what the file can hold, arithmetic that would overflow, nodes without
// the fields their operation requires, repeated lines, bad call-site names.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tracefold/limits.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/timeline_io.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/validate.hpp"

using namespace tracefold;

namespace {

// The error message of `f()`, or "" if it did not throw.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& ex) {
    return ex.what();
  }
  return "";
}

std::string trace_text(const std::string& nodes, int n = 1, const std::string& world = "2",
                       const std::string& site = "app+0x10") {
  return "tracefold-trace 2\nworld " + world + "\nlossy -\nsites 1\nsite 0 " + site +
         "\ncomms 0\nnodes " + std::to_string(n) + "\n" + nodes + "end\n";
}

const std::string kGatherv =
    "node 0 MPI_Gatherv site=0 ranks=*\n  count 1 @ *\n  field count 4 @ *\n"
    "  field root 0 @ *\n";

// A timeline file of 2 records, as the writer makes it.
std::vector<uint8_t> timeline_bytes(int64_t base, bool trailer, int64_t start_offset = 0,
                                    int64_t end_offset = 0, int64_t end_local = 0) {
  const std::string path = ::testing::TempDir() + "/reader-checks.tft";
  {
    TimelineWriter w;
    w.open(path, 0, 2, base, 0);
    w.set_start_offset(start_offset, 0);
    w.add(4, base + 10, base + 15);
    w.add(60, base + 18, base + 25);
    if (trailer)
      w.close(end_offset, end_local);
    else
      w.flush();
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  std::vector<uint8_t> data(4096);
  data.resize(std::fread(data.data(), 1, data.size(), f));
  std::fclose(f);
  return data;
}

}  // namespace

TEST(ReaderChecks, TraceWorldAboveTheLimitIsRefusedAtItsLine) {
  const std::string text =
      trace_text("node 0 MPI_Barrier site=0 ranks=*\n  count 3 @ *\n", 1, "10000000");
  const std::string err = error_of([&] { parse_trace(text, "big.trace"); });
  EXPECT_NE(err.find("big.trace:2: world size 10000000 is above the limit of 4194304"),
            std::string::npos)
      << err;
  // At the limit it is a trace like any other.
  EXPECT_EQ(error_of([&] {
              parse_trace(trace_text("node 0 MPI_Barrier site=0 ranks=*\n  count 3 @ *\n", 1,
                                     std::to_string(kMaxWorldSize)));
            }),
            "");
}

TEST(ReaderChecks, RawLogSizeAboveTheLimitIsRefusedBeforeAllocating) {
  const std::string err =
      error_of([] { parse_raw_log("rank 0 size 2000000000\nsite 0 app+0x10\n", "rank-0.txt"); });
  EXPECT_NE(err.find("rank-0.txt:1: size 2000000000 is above the limit"), std::string::npos) << err;
}

TEST(ReaderChecks, CompactWorldAboveTheLimitIsRefused) {
  Trace t = parse_trace(trace_text("node 0 MPI_Barrier site=0 ranks=*\n  count 3 @ *\n"));
  t.world_size = kMaxWorldSize + 1;
  t.nodes[0].ranks = Ranklist::range(0, 2);
  const std::string err = error_of([&] { decode_compact(encode_compact(t), "big.tf"); });
  EXPECT_NE(err.find("big.tf: body byte"), std::string::npos) << err;
  EXPECT_NE(err.find("world size"), std::string::npos) << err;
}

TEST(ReaderChecks, TimelineBlockDeclaring4GiBIsRefused) {
  std::vector<uint8_t> data = timeline_bytes(1000, false);
  const uint32_t huge = 0xFFFFFFFFu - 1;
  std::memcpy(data.data() + 45 + 4, &huge, 4);  // the first block's raw size
  const std::string err = error_of([&] { parse_timeline(data, "rank-0.tft"); });
  EXPECT_NE(err.find("rank-0.tft: byte 45: block of 4294967294 bytes, more than the limit"),
            std::string::npos)
      << err;
  // A size within the limit that the frame does not hold is refused too.
  const uint32_t lie = 1u << 20;
  std::memcpy(data.data() + 45 + 4, &lie, 4);
  EXPECT_NE(error_of([&] { parse_timeline(data, "t"); }).find("does not hold that many"),
            std::string::npos);
}

TEST(ReaderChecks, TimelineTimeOverflowIsAnError) {
  // Deltas added to a base time patched to near INT64_MAX overflow.
  std::vector<uint8_t> data = timeline_bytes(1000, true);
  const int64_t base = INT64_MAX - 5;
  std::memcpy(data.data() + 13, &base, 8);
  const std::string err = error_of([&] { parse_timeline(data, "rank-0.tft"); });
  EXPECT_NE(err.find("rank-0.tft: an enter time does not fit in 64-bit"), std::string::npos) << err;
}

TEST(ReaderChecks, TimelineGlobalTimeOverflowIsAnError) {
  // Offsets that drift by 2^63 over 1 ns of local time.
  const std::vector<uint8_t> data =
      timeline_bytes(1000, true, int64_t{1} << 62, -(int64_t{1} << 62), 1);
  RankTimelineFile f = parse_timeline(data, "rank-0.tft");
  ASSERT_EQ(f.records.size(), 2u);
  const std::string err = error_of([&] { f.to_global(f.records[0].enter_ns); });
  EXPECT_NE(err.find("rank-0.tft: a global time does not fit"), std::string::npos) << err;
  // In range: the same arithmetic as before.
  const RankTimelineFile ok = parse_timeline(timeline_bytes(1000, true, -50, -40, 1000), "t");
  EXPECT_EQ(ok.to_global(500), 500 - 50 + 5);
}

TEST(ReaderChecks, RequiredFieldsComeFromTheOperationTable) {
  for (std::size_t op = 0; op < OpTable::size(); ++op)
    for (FieldId f : required_fields(static_cast<OpId>(op)))
      EXPECT_EQ(FieldTable::kind(f),
                f == *FieldTable::find("counts") || f == *FieldTable::find("rcounts")
                    ? FieldKind::kList
                    : FieldKind::kScalar);
  const auto& gatherv = required_fields(*OpTable::find("MPI_Gatherv"));
  ASSERT_EQ(gatherv.size(), 2u);
  EXPECT_EQ(FieldTable::name(gatherv[0]), "count");
  EXPECT_EQ(FieldTable::name(gatherv[1]), "root");
  EXPECT_TRUE(required_fields(*OpTable::find("MPI_Barrier")).empty());
}

TEST(ReaderChecks, NodeWithoutARequiredFieldIsRefusedInEveryForm) {
  EXPECT_EQ(error_of([&] { parse_trace(trace_text(kGatherv)); }), "");
  std::string no_count = kGatherv;
  no_count.erase(no_count.find("  field count"), std::strlen("  field count 4 @ *\n"));
  std::string err = error_of([&] { parse_trace(trace_text(no_count), "t.trace"); });
  EXPECT_NE(err.find("t.trace:8: node 0: MPI_Gatherv needs field 'count', which is missing"),
            std::string::npos)
      << err;
  // Only some ranks have it.
  Trace part = parse_trace(trace_text(kGatherv));
  part.nodes[0].fields.front().second.entries().front().ranks = Ranklist::range(0, 1);
  err = error_of([&] { decode_compact(encode_compact(part), "t.tf"); });
  EXPECT_NE(err.find("needs field 'count' for each of its 2 ranks, it has 1"), std::string::npos)
      << err;
  // The compact form: a trace built without the field.
  Trace t = parse_trace(trace_text(kGatherv));
  t.nodes[0].fields.erase(t.nodes[0].fields.begin());
  err = error_of([&] { decode_compact(encode_compact(t), "t.tf"); });
  EXPECT_NE(err.find("t.tf: body byte"), std::string::npos) << err;
  EXPECT_NE(err.find("node 0: MPI_Gatherv needs field 'count'"), std::string::npos) << err;
  // A raw log: the event's line.
  err = error_of([] {
    parse_raw_log("rank 0 size 2\nsite 0 app+0x10\nMPI_Irecv site=0 count=1 tag=0\n", "r.txt");
  });
  EXPECT_NE(err.find("r.txt:3: MPI_Irecv needs field 'peer'"), std::string::npos) << err;
}

TEST(ReaderChecks, RepeatedLinesAreRefused) {
  const std::string err_count = error_of([] {
    parse_trace(trace_text("node 0 MPI_Barrier site=0 ranks=*\n  count 1 @ *\n  count 2 @ *\n"),
                "t");
  });
  EXPECT_NE(err_count.find("t:10: count appears twice"), std::string::npos) << err_count;
  const std::string loop =
      "node 0 MPI_Barrier site=0 ranks=*\n  loop 0 members 1 @ *\n  loop 0 iters 3 @ *\n"
      "  count 1*3 @ *\n";
  EXPECT_EQ(error_of([&] { parse_trace(trace_text(loop)); }), "");
  std::string iters = loop;
  iters.insert(iters.find("  count"), "  loop 0 iters 4 @ *\n");
  EXPECT_NE(error_of([&] {
              parse_trace(trace_text(iters), "t");
            }).find("t:11: loop 0 iters appears twice"),
            std::string::npos);
  std::string members = loop;
  members.insert(members.find("  count"), "  loop 0 members 1 @ *\n");
  EXPECT_NE(error_of([&] {
              parse_trace(trace_text(members), "t");
            }).find("t:11: loop 0 members appears twice"),
            std::string::npos);
}

TEST(ReaderChecks, CallSiteNamesMustBeValidText) {
  const std::string node = "node 0 MPI_Barrier site=0 ranks=*\n  count 1 @ *\n";
  EXPECT_EQ(error_of([&] { parse_trace(trace_text(node, 1, "2", "lib\xc3\xa9.so+0x10")); }), "");
  const std::string err =
      error_of([&] { parse_trace(trace_text(node, 1, "2", "lib\xe9.so+0x10"), "t"); });
  EXPECT_NE(err.find("t:5: site 0: module name 'lib\\xe9.so'"), std::string::npos) << err;
  EXPECT_NE(error_of([&] { parse_trace(trace_text(node, 1, "2", "a\x01p+0x10")); }), "");
  EXPECT_NE(error_of([] {
              parse_raw_log("rank 0 size 1\nsite 0 a\xffp+0x10\n", "r");
            }).find("r:2: module name"),
            std::string::npos);
  EXPECT_FALSE(valid_module_name("\xed\xa0\x80"));  // a UTF-16 surrogate
  EXPECT_FALSE(valid_module_name("\xc0\xaf"));      // overlong '/'
  EXPECT_TRUE(valid_module_name("/opt/\xe6\x97\xa5/app"));
}
