#include "tracefold/wildcards.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace tracefold {
namespace {

using testing::make_event;

Event completion(const char* op, std::vector<int64_t> links,
                 std::vector<std::pair<std::string, int64_t>> scalars = {}) {
  Event e = make_event(op, 0, std::move(scalars));
  e.set_list(FieldTable::links(), std::move(links));
  return e;
}

void set_lists(Event& e, std::vector<int64_t> srcs, std::vector<int64_t> mtags) {
  e.set_list(FieldTable::intern("srcs", FieldKind::kList), std::move(srcs));
  e.set_list(FieldTable::intern("mtags", FieldKind::kList), std::move(mtags));
}

using O = WildcardOutcome;

TEST(WildcardMatches, WaitallEntriesGoToTheWildcardPositionsInOrder) {
  // [wild, plain, wild, null, wild]: three entries, the middle one cancelled.
  Event e = completion("MPI_Waitall", {5, 4, 3, kNull, 1});
  set_lists(e, {2, kUndefined, 0}, {11, kUndefined, 13});
  const auto m = wildcard_matches(e, {true, false, true, false, true});
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].outcome, O::kMatched);
  EXPECT_EQ(m[0].src, 2);
  EXPECT_EQ(m[0].tag, 11);
  EXPECT_EQ(m[1].outcome, O::kNotWild);
  EXPECT_EQ(m[2].outcome, O::kNotCompleted);
  EXPECT_EQ(m[3].outcome, O::kNotWild);
  EXPECT_EQ(m[4].outcome, O::kMatched);
  EXPECT_EQ(m[4].src, 0);
  EXPECT_EQ(m[4].tag, 13);
}

TEST(WildcardMatches, WaitsomeUndefEntriesDidNotCompleteThere) {
  Event e = completion("MPI_Waitsome", {2, 1}, {{"outcount", 1}});
  set_lists(e, {kUndefined, 3}, {kUndefined, 40});
  const auto m = wildcard_matches(e, {true, true});
  EXPECT_EQ(m[0].outcome, O::kNotCompleted);
  EXPECT_EQ(m[1].outcome, O::kMatched);
  EXPECT_EQ(m[1].src, 3);
  EXPECT_EQ(m[1].tag, 40);
}

TEST(WildcardMatches, MisalignedOrMissingListsAreUnknown) {
  Event e = completion("MPI_Waitall", {2, 1});
  set_lists(e, {1}, {7});
  for (const auto& m : wildcard_matches(e, {true, true})) EXPECT_EQ(m.outcome, O::kUnknown);
  Event no_lists = completion("MPI_Testsome", {2, 1}, {{"outcount", 2}});
  const auto m = wildcard_matches(no_lists, {false, true});
  EXPECT_EQ(m[0].outcome, O::kNotWild);
  EXPECT_EQ(m[1].outcome, O::kUnknown);
  // Positions the caller does not know about are not wildcards.
  Event short_wild = completion("MPI_Waitall", {3, 2, 1});
  set_lists(short_wild, {4}, {5});
  const auto s = wildcard_matches(short_wild, {true});
  EXPECT_EQ(s[0].outcome, O::kMatched);
  EXPECT_EQ(s[2].outcome, O::kNotWild);
}

TEST(WildcardMatches, TestallWithoutFlagCompletedNothing) {
  Event e = completion("MPI_Testall", {2, 1}, {{"flag", 0}});
  for (const auto& m : wildcard_matches(e, {true, true})) EXPECT_EQ(m.outcome, O::kNotCompleted);
  Event done = completion("MPI_Testall", {2, 1}, {{"flag", 1}});
  set_lists(done, {1, 2}, {8, 9});
  const auto m = wildcard_matches(done, {true, true});
  EXPECT_EQ(m[1].outcome, O::kMatched);
  EXPECT_EQ(m[1].src, 2);
  EXPECT_EQ(m[1].tag, 9);
}

TEST(WildcardMatches, SingleRequestCompletionsUseScalarFields) {
  Event w = completion("MPI_Wait", {1}, {{"src", 3}});
  auto m = wildcard_matches(w, {true});
  EXPECT_EQ(m[0].outcome, O::kMatched);
  EXPECT_EQ(m[0].src, 3);
  EXPECT_EQ(m[0].tag, kAbsent) << "only the wildcard part is recorded";
  EXPECT_EQ(wildcard_matches(completion("MPI_Wait", {1}), {true})[0].outcome, O::kUnknown)
      << "status ignored";
  EXPECT_EQ(wildcard_matches(completion("MPI_Test", {1}, {{"flag", 0}}), {true})[0].outcome,
            O::kNotCompleted);
  EXPECT_EQ(wildcard_matches(w, {false})[0].outcome, O::kNotWild);
  // Waitany: the completed index has the match, the others did not complete.
  Event any = completion("MPI_Waitany", {3, 2, 1}, {{"index", 1}, {"mtag", 6}});
  m = wildcard_matches(any, {true, true, false});
  EXPECT_EQ(m[0].outcome, O::kNotCompleted);
  EXPECT_EQ(m[1].outcome, O::kMatched);
  EXPECT_EQ(m[1].tag, 6);
  EXPECT_EQ(m[2].outcome, O::kNotWild);
  Event none = completion("MPI_Testany", {2, 1}, {{"index", -32766}, {"flag", 1}});
  for (const auto& x : wildcard_matches(none, {true, true})) EXPECT_EQ(x.outcome, O::kNotCompleted);
}

TEST(WildcardMatches, NoLinksNoEntries) {
  EXPECT_TRUE(wildcard_matches(make_event("MPI_Waitall", 0), {true}).empty());
}

TEST(WildcardMatches, WildcardReceivesAreIrecvsAndRecvInitsWithAnySourceOrTag) {
  EXPECT_TRUE(is_wildcard_receive(make_event("MPI_Irecv", 0, {{"peer", kAny}, {"tag", 3}})));
  EXPECT_TRUE(is_wildcard_receive(make_event("MPI_Irecv", 0, {{"peer", 1}, {"tag", kAny}})));
  EXPECT_TRUE(is_wildcard_receive(make_event("MPI_Recv_init", 0, {{"peer", kAny}, {"tag", 1}})));
  EXPECT_FALSE(is_wildcard_receive(make_event("MPI_Irecv", 0, {{"peer", 1}, {"tag", 3}})));
  EXPECT_FALSE(is_wildcard_receive(make_event("MPI_Isend", 0, {{"peer", 1}, {"tag", kAny}})));
  EXPECT_FALSE(is_wildcard_receive(make_event("MPI_Start", 0)));
}

}  // namespace
}  // namespace tracefold
