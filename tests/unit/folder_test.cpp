#include "tracefold/folder.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using testing::make_event;
using testing::make_sites;

std::vector<Event> expand_single(const Folder& f, std::size_t nsites) {
  CommTable comms;
  comms.define_world(1);
  return expand_rank(f.finish(1, make_sites(nsites), comms), 0);
}

// Seed 000, Figure 5.1: iteration-specific events fold into one 2-iteration
// loop E1(4,2) E2(1,1 0) E3(1,0 1) E4.
// The two iterations share 2 of their 3 calls (similarity 2/3), below the
// default threshold of 0.8, so the example asks for approximate matching at
// the paper's looser setting.
TEST(Folder, Figure51IterationSpecificEvents) {
  FoldOptions loose;
  loose.min_similarity = 0.6;
  Folder f(0, loose);
  std::vector<Event> in;
  for (int i = 0; i < 2; ++i) {
    in.push_back(make_event("MPI_Barrier", 0));
    if (i == 0) in.push_back(make_event("MPI_Isend", 1, {{"peer", 0}}));
    if (i == 1) in.push_back(make_event("MPI_Irecv", 2, {{"peer", 0}}));
    in.push_back(make_event("MPI_Barrier", 3));
  }
  for (auto& e : in) f.append(e);
  CommTable comms;
  comms.define_world(1);
  Trace t = f.finish(1, make_sites(4), comms);
  ASSERT_EQ(t.nodes.size(), 4u);
  ASSERT_EQ(t.nodes[0].loops.size(), 1u);
  EXPECT_EQ(t.nodes[0].loops[0].members.to_string(), "4 @ <0 0>");
  EXPECT_EQ(t.nodes[0].loops[0].iters.to_string(), "2 @ <0 0>");
  EXPECT_EQ(t.nodes[1].count.to_string(), "1 0 @ <0 0>");
  EXPECT_EQ(t.nodes[2].count.to_string(), "0 1 @ <0 0>");
  EXPECT_EQ(t.nodes[3].count.to_string(), "1*2 @ <0 0>");
  auto out = expand_rank(t, 0);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_TRUE(out[i].same_call(in[i])) << i;
}

// Seed 000, Figure 5.2: an outer loop whose inner trip count varies must fold
// to a trace whose size does not grow with the number of outer iterations.
std::size_t figure52_size(int steps, std::string* structure = nullptr) {
  Folder f(0);
  for (int i = 0; i < steps; ++i) {
    f.append(make_event("MPI_Allreduce", 0, {{"count", 1}}));
    const int n = 1 + i % 3;
    for (int j = 0; j < n; ++j) {
      f.append(make_event("MPI_Isend", 1, {{"peer", 0}}));
      f.append(make_event("MPI_Irecv", 2, {{"peer", 0}}));
      f.append(make_event("MPI_Waitall", 3));
    }
  }
  if (structure) *structure = f.structure();
  CommTable comms;
  comms.define_world(1);
  return format_trace(f.finish(1, make_sites(4), comms)).size();
}

TEST(Folder, Figure52TrailingIterationsFoldToConstantSize) {
  std::string s100, s1000;
  const std::size_t a = figure52_size(100, &s100);
  const std::size_t b = figure52_size(1000, &s1000);
  EXPECT_EQ(s100.substr(0, 1), "[") << s100;
  EXPECT_LE(b, a + a / 20) << s100 << "\n" << s1000;
}

TEST(Folder, ExpandsExactlyForFigure52) {
  Folder f(0);
  std::vector<Event> in;
  for (int i = 0; i < 50; ++i) {
    in.push_back(make_event("MPI_Allreduce", 0, {{"count", i % 4}}));
    const int n = 1 + (i * 7) % 5;
    for (int j = 0; j < n; ++j) {
      in.push_back(make_event("MPI_Isend", 1, {{"peer", 0}, {"tag", j}}));
      in.push_back(make_event("MPI_Irecv", 2, {{"peer", 0}}));
      in.push_back(make_event("MPI_Waitall", 3));
    }
  }
  for (auto& e : in) f.append(e);
  auto out = expand_single(f, 4);
  ASSERT_EQ(out.size(), in.size()) << f.structure();
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(out[i].same_call(in[i])) << i;
}

}  // namespace
}  // namespace tracefold
