// Derived completion links (docs/format.md, "Derived links"): a `links`
// list [n, n-1, ..., 1] is stored as -n in both file forms, a sweep of
// one-request lists [n], [n-1], ..., [1] as `1 -n`, and both are read back
// whole; other lists, and files that spell every list out, read as before.
#include <gtest/gtest.h>

#include <string>

#include "formats/trace_links.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/trace_level.hpp"

namespace tracefold {
namespace {

// Rank 0 completes its 3 newest requests 50 times, then [2,1], then the
// out-of-order [1,3]; rank 1 completes one request 40 times (MPI_Wait's
// [1]) and then one MPI_REQUEST_NULL.
std::string spelled_out(int version) {
  return "tracefold-trace " + std::to_string(version) +
         "\n"
         "world 2\n" +
         (version >= 6 ? "threads 1\nomp -\n" : "") +
         "lossy -\n"
         "sites 1\n"
         "site 0 app+0x10\n"
         "comms 1\n"
         "comm 0 members *\n"
         "nodes 1\n"
         "node 0 MPI_Waitall site=0 ranks=*\n"
         "  count 1*52 @ <0 0> ; 1*41 @ <0 1>\n"
         "  field req 3*50 2 2 @ <0 0> ; 1*41 @ <0 1>\n"
         "  field list links (3 3 2 1)*50 2 2 1 2 1 3 @ <0 0> ; 1*80 1 null @ <0 1>\n"
         "end\n";
}

std::vector<int64_t> links_of(const Trace& t, int32_t rank) {
  const Elastic* e = t.nodes.at(0).field(FieldTable::links());
  EXPECT_NE(e, nullptr);
  const ValueSeq* s = e ? e->for_rank(rank) : nullptr;
  EXPECT_NE(s, nullptr);
  return s ? s->to_vector() : std::vector<int64_t>{};
}

// The trace with its sequences folded as the folder folds them (value by
// value), which is what the writer shortens.
Trace folded(Trace t) {
  for (Node& n : t.nodes)
    for (auto& [f, e] : n.fields)
      for (ElasticEntry& entry : e.entries()) {
        ValueSeq s;
        for (int64_t v : entry.values.to_vector()) s.push_back(v);
        entry.values = std::move(s);
      }
  return t;
}

TEST(TraceLinks, DerivedListsAreStoredShortAndReadBackWhole) {
  const Trace old = folded(parse_trace(spelled_out(2)));
  const std::string text = format_trace(old);
  // The derived lists shrink to one value each; [1,3] and the null stay.
  EXPECT_EQ(text.rfind("tracefold-trace 7\n", 0), 0u) << text;
  EXPECT_NE(text.find("field list links -3*50 -2 2 1 3 @ <0 0> ; -1*40 1 null @ <0 1>"),
            std::string::npos)
      << text;
  const Trace back = parse_trace(text);
  EXPECT_EQ(links_of(back, 0), links_of(old, 0));
  EXPECT_EQ(links_of(back, 1), links_of(old, 1));
  // Read back and written again, the trace stores the same.
  EXPECT_EQ(format_trace(back), text);

  const std::string bytes = encode_compact(old);
  EXPECT_EQ(static_cast<int>(bytes.at(4)), links_form::kCompactVersion);
  const Trace from_compact = decode_compact(bytes, "links.tf");
  EXPECT_EQ(format_trace(from_compact), text);
  EXPECT_EQ(encode_compact(from_compact), bytes);
}

// The merge's transfer form moves lists as they are (no -n to write or
// expand on either side): the version of a trace without derived lists,
// and the same trace back.
TEST(TraceLinks, TransferFormKeepsListsAsTheyAre) {
  const Trace t = folded(parse_trace(spelled_out(2)));
  ASSERT_TRUE(links_form::has_derivable(t));
  const std::string bytes = encode_compact_transfer(t);
  EXPECT_EQ(static_cast<int>(bytes.at(4)), Trace::kCompactVersionSingleThread);
  const Trace back = decode_compact(bytes, "links.tf");
  EXPECT_EQ(links_of(back, 0), links_of(t, 0));
  EXPECT_EQ(links_of(back, 1), links_of(t, 1));
  EXPECT_EQ(format_trace(back), format_trace(t));
}

TEST(TraceLinks, OldVersionsSpellListsOutAndStillRead) {
  for (int version : {2, 5}) {
    const Trace t = parse_trace(spelled_out(version));
    const std::vector<int64_t> rank1 = links_of(t, 1);
    ASSERT_EQ(rank1.size(), 82u);
    EXPECT_EQ(rank1.front(), 1);
    EXPECT_EQ(rank1.back(), kNull);
    EXPECT_EQ(links_of(t, 0).size(), 50u * 4 + 3 + 3);
  }
}

TEST(TraceLinks, TracesWithoutDerivedListsKeepTheirVersion) {
  std::string text = spelled_out(2);
  // Only lists that are not [n, ..., 1]: nothing to derive.
  const std::string lists = "(3 3 2 1)*50 2 2 1 2 1 3 @ <0 0> ; 1*80 1 null";
  text.replace(text.find(lists), lists.size(),
               "(3 1 2 3)*50 2 1 2 2 1 3 @ <0 0> ; (1 2)*40 1 null");
  EXPECT_EQ(format_trace(parse_trace(text)), text);
  EXPECT_EQ(static_cast<int>(encode_compact(parse_trace(text)).at(4)),
            Trace::kCompactVersionSingleThread);
}

TEST(TraceLinks, AListCutShortIsAnErrorNamingTheNode) {
  std::string text = spelled_out(7);
  text.replace(text.find("(3 3 2 1)*50 2 2"), 16, "-3*50 9 1");
  try {
    parse_trace(text, "cut.trace");
    FAIL() << "read a links list cut short";
  } catch (const TraceFormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cut.trace"), std::string::npos) << what;
    EXPECT_NE(what.find("node 0"), std::string::npos) << what;
    EXPECT_NE(what.find("links"), std::string::npos) << what;
  }
}

// Rank 0 tests its 3 outstanding requests oldest first, 20 times ([3],
// [2], [1]), then stops a sweep short ([4], [3]) and tests [5]; rank 1
// sweeps [2], [1] and then waits for its newest ([1]).
std::string sweeps_spelled_out() {
  return "tracefold-trace 2\n"
         "world 2\n"
         "lossy -\n"
         "sites 1\n"
         "site 0 app+0x10\n"
         "comms 1\n"
         "comm 0 members *\n"
         "nodes 1\n"
         "node 0 MPI_Test site=0 ranks=*\n"
         "  count 1*63 @ <0 0> ; 1*3 @ <0 1>\n"
         "  field req 1*63 @ <0 0> ; 1*3 @ <0 1>\n"
         "  field list links (1 3 1 2 1 1)*20 1 4 1 3 1 5 @ <0 0> ; 1 2 1 1 1 1 @ <0 1>\n"
         "end\n";
}

TEST(TraceLinks, SweepsOfOneRequestListsAreStoredAsOnePairAndReadBackWhole) {
  const Trace old = folded(parse_trace(sweeps_spelled_out()));
  const std::string text = format_trace(old);
  EXPECT_EQ(
      text.rfind("tracefold-trace " + std::to_string(links_form::kSweepTextVersion) + "\n", 0), 0u)
      << text;
  // A whole sweep is `1 -n`; the one cut short keeps its lists.
  EXPECT_NE(text.find("field list links (1 -3)*20 1 4 1 3 1 5 @ <0 0> ; 1 -2 -1 @ <0 1>"),
            std::string::npos)
      << text;
  const Trace back = parse_trace(text);
  EXPECT_EQ(links_of(back, 0), links_of(old, 0));
  EXPECT_EQ(links_of(back, 1), links_of(old, 1));
  EXPECT_EQ(format_trace(back), text);

  const std::string bytes = encode_compact(old);
  EXPECT_EQ(static_cast<int>(bytes.at(4)), links_form::kSweepCompactVersion);
  const Trace from_compact = decode_compact(bytes, "sweeps.tf");
  EXPECT_EQ(links_of(from_compact, 0), links_of(old, 0));
  EXPECT_EQ(format_trace(from_compact), text);
  EXPECT_EQ(encode_compact(from_compact), bytes);
}

TEST(TraceLinks, ASweepIsReadOnlyFromTheSweepVersions) {
  std::string text = sweeps_spelled_out();
  text.replace(0, text.find('\n'), "tracefold-trace 7");
  text.replace(text.find("world 2\n") + 8, 0, "threads 1\nomp -\n");
  text.replace(text.find("(1 3 1 2 1 1)*20"), 16, "(1 -3)*20");
  // Version 7 knows no sweeps: `1 -3` is the list [-3], as before.
  EXPECT_EQ(links_of(parse_trace(text), 0).at(1), -3);
  text.replace(0, text.find('\n'), "tracefold-trace 8");
  EXPECT_EQ(links_of(parse_trace(text), 0), links_of(parse_trace(sweeps_spelled_out()), 0));
}

}  // namespace
}  // namespace tracefold
