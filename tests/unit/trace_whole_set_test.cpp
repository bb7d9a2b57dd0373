// The whole-set shorthand `*` of text format version 2: what it stands for,
// where the writer uses it, version-1 files, and the versions read.
#include "tracefold/trace_io.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "sample_traces.hpp"
#include "stencil.hpp"
#include "test_util.hpp"
#include "tracefold/analysis_basic.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/merge.hpp"

namespace tracefold {
namespace {

using testing::expands_to;
using testing::format_error_line;
using testing::line_of;
using testing::make_event;
using testing::make_sites;
using testing::split_lines;
using testing::Stencil;
using testing::StencilKind;

// ------------------------------------- whole-set shorthand (format version 2)

TEST(Elastic, WholeSetShorthandStandsForTheGivenSet) {
  const Ranklist workers = Ranklist::range(1, 15);  // <1 1 15 1>
  Elastic el;
  el.entries().push_back({ValueSeq::repeated(3, 4), Ranklist::single(0)});
  el.entries().push_back({ValueSeq::repeated(7, 2), workers});
  // Without a set every ranklist is written out; with one, only the entry of
  // exactly that set becomes "*".
  EXPECT_EQ(el.to_string(), "3*4 @ <0 0> ; 7*2 @ <1 1 15 1>");
  EXPECT_EQ(el.to_string(&workers), "3*4 @ <0 0> ; 7*2 @ *");
  const Ranklist all = Ranklist::range(0, 16);
  EXPECT_EQ(el.to_string(&all), el.to_string());
  const Ranklist empty;
  EXPECT_EQ(el.to_string(&empty), el.to_string());

  const Elastic back = Elastic::parse("3*4 @ <0 0> ; 7*2 @  * ", &workers);
  ASSERT_EQ(back.entries().size(), 2u);
  EXPECT_EQ(back.entries()[1].ranks, workers);
  EXPECT_EQ(back.entries()[1].values.to_string(), "7*2");
  EXPECT_EQ(back.to_string(), el.to_string());
  // The explicit form still reads, with or without a set.
  EXPECT_EQ(Elastic::parse(el.to_string(), &workers).to_string(&workers), "3*4 @ <0 0> ; 7*2 @ *");
  EXPECT_EQ(Elastic::parse(el.to_string()).to_string(), el.to_string());

  // "*" without a set to stand for, "*" mixed into a ranklist, and "*"
  // overlapping another entry are errors.
  EXPECT_THROW(Elastic::parse("7*2 @ *"), std::invalid_argument);
  EXPECT_THROW(Elastic::parse("7*2 @ * <0 0>", &workers), std::invalid_argument);
  EXPECT_THROW(Elastic::parse("7*2 @ ** ", &workers), std::invalid_argument);
  EXPECT_THROW(Elastic::parse("3 @ <0 1> ; 7*2 @ *", &workers), std::invalid_argument);
  EXPECT_THROW(Elastic::parse("7*2 @ *", &empty), std::invalid_argument);
  try {
    Elastic::parse("7*2 @ *");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("'*'"), std::string::npos) << ex.what();
  }
}

// Rank 0 sends to workers 1..5, each worker receives once (worker 1 a longer
// message) and joins a barrier on the workers' communicator 5. Communicator 6
// is a duplicate of the world.
Trace master_worker_trace() {
  constexpr int32_t kWorld = 6;
  std::vector<Trace> parts;
  for (int32_t r = 0; r < kWorld; ++r) {
    CommTable comms;
    comms.define_world(kWorld);
    comms.define(6, CommGroup{{0, 1, 2, 3, 4, 5}});
    if (r > 0) comms.define(5, CommGroup{{1, 2, 3, 4, 5}});
    Folder f(r);
    f.append(make_event("MPI_Init", 0));
    for (int32_t w = 1; w < kWorld; ++w) {
      Event e;
      if (r == 0)
        e = make_event("MPI_Send", 1, {{"peer", w}, {"tag", 7}, {"count", 10}});
      else if (r == w)
        e = make_event("MPI_Recv", 2, {{"peer", 0}, {"tag", 7}, {"count", r == 1 ? 20 : 10}});
      else
        continue;
      encode_relative(e, r, comms);
      f.append(e);
    }
    if (r > 0) f.append(make_event("MPI_Barrier", 3, {{"comm", 5}}));
    f.append(make_event("MPI_Finalize", 4));
    parts.push_back(f.finish(kWorld, make_sites(5), comms));
  }
  return reduce_traces(std::move(parts));
}

// master_worker_trace() as format version 1 writes it: every ranklist explicit.
const char* const kMasterWorkerV1 = R"(tracefold-trace 1
world 6
lossy -
sites 5
site 0 app+0x10
site 1 app+0x20
site 2 app+0x30
site 3 app+0x40
site 4 app+0x50
comms 3
comm 0 members <1 0 6 1>
comm 5 members <1 1 5 1>
comm 6 members <1 0 6 1>
nodes 5
node 0 MPI_Init site=0 ranks=<1 0 6 1>
  count 1 @ <1 0 6 1>
node 1 MPI_Send site=1 ranks=<0 0>
  loop 0 members 1 @ <0 0>
  loop 0 iters 5 @ <0 0>
  count 1*5 @ <0 0>
  field peer 1 2 3 4 5 @ <0 0>
  field tag 7*5 @ <0 0>
  field count 10*5 @ <0 0>
node 2 MPI_Recv site=2 ranks=<1 1 5 1>
  count 1 @ <1 1 5 1>
  field peer 5 @ <0 1> ; 4 @ <0 2> ; 3 @ <0 3> ; 2 @ <0 4> ; 1 @ <0 5>
  field tag 7 @ <1 1 5 1>
  field count 20 @ <0 1> ; 10 @ <1 2 4 1>
node 3 MPI_Barrier site=3 ranks=<1 1 5 1>
  count 1 @ <1 1 5 1>
  field comm 5 @ <1 1 5 1>
node 4 MPI_Finalize site=4 ranks=<1 0 6 1>
  count 1 @ <1 0 6 1>
end
)";

// The same trace in format version 2.
const char* const kMasterWorkerV2 = R"(tracefold-trace 2
world 6
lossy -
sites 5
site 0 app+0x10
site 1 app+0x20
site 2 app+0x30
site 3 app+0x40
site 4 app+0x50
comms 3
comm 0 members *
comm 5 members <1 1 5 1>
comm 6 members *
nodes 5
node 0 MPI_Init site=0 ranks=*
  count 1 @ *
node 1 MPI_Send site=1 ranks=<0 0>
  loop 0 members 1 @ *
  loop 0 iters 5 @ *
  count 1*5 @ *
  field peer 1 2 3 4 5 @ *
  field tag 7*5 @ *
  field count 10*5 @ *
node 2 MPI_Recv site=2 ranks=<1 1 5 1>
  count 1 @ *
  field peer 5 @ <0 1> ; 4 @ <0 2> ; 3 @ <0 3> ; 2 @ <0 4> ; 1 @ <0 5>
  field tag 7 @ *
  field count 20 @ <0 1> ; 10 @ <1 2 4 1>
node 3 MPI_Barrier site=3 ranks=<1 1 5 1>
  count 1 @ *
  field comm 5 @ *
node 4 MPI_Finalize site=4 ranks=*
  count 1 @ *
end
)";

// Every elastic value of a trace, as (what, value).
std::vector<std::pair<std::string, const Elastic*>> elastics(const Node& n) {
  std::vector<std::pair<std::string, const Elastic*>> out;
  for (std::size_t l = 0; l < n.loops.size(); ++l) {
    out.emplace_back("loop members", &n.loops[l].members);
    out.emplace_back("loop iters", &n.loops[l].iters);
  }
  out.emplace_back("count", &n.count);
  for (const auto& [f, el] : n.fields) out.emplace_back(FieldTable::name(f), &el);
  return out;
}

TEST(TraceIoWholeSet, AllRanksOfTheWorldAndOfANodeAreWrittenStar) {
  // Periodic stencil with row and column communicators: every node is run by
  // all 9 ranks and every value is shared by all of them.
  const Stencil s{.side = 3, .steps = 5, .kind = StencilKind::kPeriodicComms};
  const Trace t = reduce_traces(s.fold_all());
  const std::string text = format_trace(t);
  const auto lines = split_lines(text);
  EXPECT_EQ(text.find("<1 0 9 1>"), std::string::npos) << text;
  int node_lines = 0, elastic_lines = 0, row_comms = 0;
  for (const std::string& l : lines) {
    if (l.rfind("node ", 0) == 0) {
      ++node_lines;
      EXPECT_TRUE(l.ends_with(" ranks=*")) << l;
    } else if (l.rfind("  loop ", 0) == 0 || l.rfind("  count ", 0) == 0 ||
               l.rfind("  field ", 0) == 0) {
      ++elastic_lines;
      EXPECT_TRUE(l.ends_with(" @ *")) << l;
      EXPECT_EQ(l.find(';'), std::string::npos) << l;
    } else if (l.rfind("comm 1 members ", 0) == 0) {
      // Rows are not the whole world: written out.
      ++row_comms;
      EXPECT_EQ(l.find('*'), std::string::npos) << l;
    }
  }
  EXPECT_EQ(node_lines, 10);
  EXPECT_GT(elastic_lines, 40);
  EXPECT_EQ(row_comms, 3);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "comm 0 members *"), 1);

  const Trace back = parse_trace(text, "stencil");
  EXPECT_EQ(format_trace(back), text);
  EXPECT_FALSE(diff_traces(t, back).has_value());
  EXPECT_EQ(back.comms, t.comms);
  EXPECT_EQ(back.comms.all().at(0).at(0).members, Ranklist::range(0, 9).to_vector());
  ASSERT_EQ(back.nodes.size(), t.nodes.size());
  for (std::size_t i = 0; i < back.nodes.size(); ++i) {
    EXPECT_EQ(back.nodes[i].ranks, Ranklist::range(0, 9)) << "node " << i;
    for (const auto& [what, el] : elastics(back.nodes[i])) {
      ASSERT_EQ(el->entries().size(), 1u) << "node " << i << " " << what;
      EXPECT_EQ(el->entries()[0].ranks, Ranklist::range(0, 9)) << "node " << i << " " << what;
    }
  }
  for (int32_t r = 0; r < s.size(); ++r)
    EXPECT_TRUE(expands_to(back, r, s.events(r), Stencil::sites()));
}

TEST(TraceIoWholeSet, ANodeOfSomeRanksUsesStarForItsOwnRanks) {
  const Trace t = master_worker_trace();
  const std::string text = format_trace(t);
  EXPECT_EQ(text, kMasterWorkerV2);
  const Trace back = parse_trace(text, "master-worker");
  EXPECT_EQ(format_trace(back), text);
  EXPECT_FALSE(diff_traces(t, back).has_value());
  EXPECT_EQ(back.comms, t.comms);
  ASSERT_EQ(back.nodes.size(), 5u);
  // The workers' receive: "@ *" is ranks 1..5, not the world.
  const Node& recv = back.nodes[2];
  EXPECT_EQ(recv.ranks, Ranklist::range(1, 5));
  ASSERT_EQ(recv.count.entries().size(), 1u);
  EXPECT_EQ(recv.count.entries()[0].ranks, Ranklist::range(1, 5));
  const Elastic* tag = recv.field(FieldTable::intern("tag", FieldKind::kScalar));
  ASSERT_NE(tag, nullptr);
  ASSERT_EQ(tag->entries().size(), 1u);
  EXPECT_EQ(tag->entries()[0].ranks, Ranklist::range(1, 5));
  EXPECT_EQ(tag->for_rank(0), nullptr);
  // Rank 0's send loop: "@ *" is rank 0 alone.
  ASSERT_EQ(back.nodes[1].loops.size(), 1u);
  EXPECT_EQ(back.nodes[1].loops[0].iters.entries().at(0).ranks, Ranklist::single(0));
  // Each rank still expands to its events.
  for (int32_t r = 0; r < 6; ++r) {
    const std::vector<Event> got = expand_rank(back, r);
    ASSERT_EQ(got.size(), r == 0 ? 7u : 4u) << "rank " << r;
    if (r > 0) {
      EXPECT_EQ(got[1].op, *OpTable::find("MPI_Recv"));
      EXPECT_EQ(got[1].get(FieldTable::intern("count", FieldKind::kScalar)), r == 1 ? 20 : 10);
    }
  }
}

TEST(TraceIoWholeSet, Version1FilesReadToTheSameTrace) {
  const Trace v1 = parse_trace(kMasterWorkerV1, "v1");
  const Trace v2 = parse_trace(kMasterWorkerV2, "v2");
  EXPECT_FALSE(diff_traces(v1, v2).has_value());
  EXPECT_EQ(v1.comms, v2.comms);
  ASSERT_EQ(v1.nodes.size(), v2.nodes.size());
  for (std::size_t i = 0; i < v1.nodes.size(); ++i) {
    EXPECT_EQ(v1.nodes[i].ranks, v2.nodes[i].ranks) << "node " << i;
    const auto a = elastics(v1.nodes[i]), b = elastics(v2.nodes[i]);
    ASSERT_EQ(a.size(), b.size()) << "node " << i;
    for (std::size_t k = 0; k < a.size(); ++k)
      EXPECT_EQ(a[k].second->to_string(), b[k].second->to_string())
          << "node " << i << " " << a[k].first;
  }
  // Written again, a version-1 file becomes version 2.
  EXPECT_EQ(format_trace(v1), kMasterWorkerV2);
  // Version 2 also takes the explicit lists.
  std::string explicit_v2 = kMasterWorkerV1;
  explicit_v2.replace(0, 17, "tracefold-trace 2");
  EXPECT_EQ(format_trace(parse_trace(explicit_v2, "explicit v2")), kMasterWorkerV2);
}

TEST(TraceIoWholeSet, StarInAVersion1FileIsAnErrorAtItsLine) {
  struct Case {
    const char* from;
    const char* to;
  };
  const Case cases[] = {
      {"comm 6 members <1 0 6 1>", "comm 6 members *"},
      {"node 4 MPI_Finalize site=4 ranks=<1 0 6 1>", "node 4 MPI_Finalize site=4 ranks=*"},
      {"  field tag 7 @ <1 1 5 1>", "  field tag 7 @ *"},
      {"  loop 0 iters 5 @ <0 0>", "  loop 0 iters 5 @ *"},
      {"  field peer 5 @ <0 1> ; 4 @ <0 2> ; 3 @ <0 3> ; 2 @ <0 4> ; 1 @ <0 5>",
       "  field peer 5 @ <0 1> ; 4 @ <0 2> ; 3 @ <0 3> ; 2 @ <0 4> ; 1 @    *"},
  };
  for (const Case& c : cases) {
    std::string text = kMasterWorkerV1;
    const std::size_t at = text.find(std::string(c.from) + "\n");
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, std::strlen(c.from), c.to);
    const std::string source = std::string("v1 with '") + c.to + "'";
    auto line = format_error_line(text, source);
    EXPECT_EQ(line, line_of(text, at)) << source;
    try {
      parse_trace(text, source);
    } catch (const TraceFormatError& ex) {
      EXPECT_NE(std::string(ex.what()).find("needs format version 2"), std::string::npos)
          << ex.what();
    }
  }
}

TEST(TraceIoWholeSet, OnlyKnownTextVersionsAreRead) {
  for (const char* version : {"3", "0", "17"}) {
    std::string text = kMasterWorkerV2;
    text.replace(16, 1, version);
    const std::string source = std::string("version ") + version;
    EXPECT_EQ(format_error_line(text, source), 1u) << source;
    try {
      parse_trace(text, source);
    } catch (const TraceFormatError& ex) {
      EXPECT_NE(
          std::string(ex.what()).find(std::string("unsupported text format version ") + version +
                                      " (this tracefold reads text versions 1, 2, 5, 6, 7 and 8; "
                                      "versions 3 and 4 are the compact form only)"),
          std::string::npos)
          << ex.what();
    }
  }
}

}  // namespace
}  // namespace tracefold
