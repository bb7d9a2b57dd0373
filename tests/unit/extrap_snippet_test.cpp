// The snippet filter of lossy extrapolation: parsing, and the FSM's
// decisions on a synthetic trace (which events it keeps and drops per rank).
#include <gtest/gtest.h>

#include "tracefold/expand.hpp"
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/snippet.hpp"
#include "tracefold/trace_io.hpp"

using namespace tracefold;
using namespace tracefold::extrap;

TEST(ExtrapSnippet, Parses) {
  const Snippet s =
      parse_snippet("# halo\nMPI_Send tag=7 count=4\n\nMPI_Recv  # any tag\n", "h.snip");
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events[0].op, *OpTable::find("MPI_Send"));
  ASSERT_EQ(s.events[0].fields.size(), 2u);
  EXPECT_EQ(s.events[0].fields[0].second, 7);
  EXPECT_EQ(s.events[1].line, 4);
  EXPECT_TRUE(s.events[1].fields.empty());
}

TEST(ExtrapSnippet, BadLinesNamed) {
  auto message = [](const std::string& text) {
    try {
      parse_snippet(text, "x.snip");
    } catch (const ExtrapError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message("MPI_Send\nMPI_Snd\n"),
            "x.snip:2: 'MPI_Snd' is no MPI operation tracefold knows");
  EXPECT_NE(message("MPI_Send tag\n").find("x.snip:1: 'tag': expected field=value"),
            std::string::npos);
  EXPECT_NE(message("MPI_Send peer=1\n").find("x.snip:1: field peer depends on the rank"),
            std::string::npos);
  EXPECT_NE(message("MPI_Send nosuchfield=1\n").find("x.snip:1: 'nosuchfield' is no"),
            std::string::npos);
  EXPECT_EQ(message("# nothing\n"), "x.snip: the snippet holds no event");
}

namespace {

// Two ranks: each sends (tag 7) to the other and receives (tag 7), then an
// Allreduce; rank 0 also sends a tag-9 message between the two.
Trace two_ranks() {
  const std::string f = "  field count 1 @ *\n  field dtype 9 @ *\n  field dsize 8 @ *\n";
  return parse_trace(
      "tracefold-trace 2\nworld 2\nlossy -\nsites 4\nsite 0 app+0x10\nsite 1 app+0x20\n"
      "site 2 app+0x30\nsite 3 app+0x40\ncomms 1\ncomm 0 members *\nnodes 4\n"
      "node 0 MPI_Send site=0 ranks=*\n  count 1 @ *\n  field peer 1 @ *\n  field tag 7 @ *\n" +
          f +
          "node 1 MPI_Send site=1 ranks=<0 0>\n  count 1 @ <0 0>\n  field peer 1 @ <0 0>\n"
          "  field tag 9 @ <0 0>\n  field count 1 @ <0 0>\n  field dtype 9 @ <0 0>\n"
          "  field dsize 8 @ <0 0>\n"
          "node 2 MPI_Recv site=2 ranks=*\n  count 1 @ *\n  field peer 1 @ *\n  field tag 7 @ *\n" +
          f +
          "node 3 MPI_Allreduce site=3 ranks=*\n  count 1 @ *\n  field count 1 @ *\n"
          "  field dtype 9 @ *\n  field dsize 8 @ *\n  field redop 3 @ *\nend\n",
      "two.tf");
}

}  // namespace

// Rank 1 matches the snippet whole. On rank 0 the tag-9 send breaks the
// match under way: the pending send is dropped with it, and the receive
// that follows starts no match; the Allreduce is kept (a collective).
TEST(ExtrapSnippet, KeepsMatchesAndCollectives) {
  const Snippet s = parse_snippet("MPI_Send tag=7\nMPI_Recv tag=7\n", "sr.snip");
  FilterReport rep;
  const Trace out = filter_trace(two_ranks(), s, "two.tf", rep);
  EXPECT_EQ(rep.kept, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(rep.dropped, (std::vector<uint64_t>{3, 0}));
  EXPECT_EQ(out.lossy, "snippet filter sr.snip");
  const auto r0 = expand_rank(out, 0), r1 = expand_rank(out, 1);
  ASSERT_EQ(r0.size(), 1u);
  EXPECT_EQ(OpTable::name(r0[0].op), "MPI_Allreduce");
  ASSERT_EQ(r1.size(), 3u);
  EXPECT_EQ(OpTable::name(r1[0].op), "MPI_Send");
  EXPECT_EQ(r1[0].get(FieldTable::peer()), 0);
  EXPECT_EQ(OpTable::name(r1[1].op), "MPI_Recv");
}
