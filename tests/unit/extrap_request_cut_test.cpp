// A lossy filter that drops a request drops the completion's link to it
// (request_cut.hpp): links renumbered over the kept requests, lists along
// the links cut, completions left with nothing dropped; and the weighted
// LCS on ranks whose extra calls are nonblocking.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/extrap/lcs_filter.hpp"
#include "tracefold/extrap/request_cut.hpp"
#include "tracefold/wildcards.hpp"

using namespace tracefold;
using namespace tracefold::extrap;
using tracefold::testing::make_event;

namespace {

Event with_links(const std::string& op, std::vector<int64_t> links) {
  Event e = make_event(op, 0);
  e.set_list(FieldTable::links(), std::move(links));
  return e;
}

std::vector<int64_t> links_of(const Event& e) {
  const FieldValue* f = e.find(FieldTable::links());
  return f ? f->list : std::vector<int64_t>{};
}

}  // namespace

// Irecv A (dropped), Isend B, Irecv C; Waitall(A, B, C) keeps B and C at
// distances 2 and 1 of the kept calls.
TEST(ExtrapRequestCut, RenumbersLinksOverTheKeptRequests) {
  RequestCut cut;
  Event a = make_event("MPI_Irecv", 0), b = make_event("MPI_Isend", 1),
        c = make_event("MPI_Irecv", 2);
  EXPECT_FALSE(cut.pass(a, false));
  EXPECT_TRUE(cut.pass(b, true));
  EXPECT_TRUE(cut.pass(c, true));
  Event w = with_links("MPI_Waitall", {3, 2, 1});
  const FieldId srcs = FieldTable::intern("srcs", FieldKind::kList);
  w.set_list(srcs, {kUndefined, kUndefined, 5});
  ASSERT_TRUE(cut.pass(w, true));
  EXPECT_EQ(links_of(w), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(w.find(srcs)->list, (std::vector<int64_t>{kUndefined, 5}));
  EXPECT_EQ(cut.links_cut(), 1u);
  EXPECT_EQ(cut.completions_dropped(), 0u);
}

// A link that spans a dropped request gets one shorter; one that does not
// stays; sentinels (MPI_REQUEST_NULL) stay as they are.
TEST(ExtrapRequestCut, ShortensLinksAcrossADroppedRequest) {
  RequestCut cut;
  Event a = make_event("MPI_Isend", 0), b = make_event("MPI_Irecv", 1),
        c = make_event("MPI_Isend", 2);
  cut.pass(a, true);
  cut.pass(b, false);
  cut.pass(c, true);
  Event w = with_links("MPI_Waitall", {3, kNull, 1});
  ASSERT_TRUE(cut.pass(w, true));
  EXPECT_EQ(links_of(w), (std::vector<int64_t>{2, kNull, 1}));
}

// A Wait, a Waitall whose requests were all dropped: dropped with them,
// not left as MPI_Waitall(0, ...). A Waitall(0) recorded as such stays.
TEST(ExtrapRequestCut, DropsACompletionLeftWithNothing) {
  RequestCut cut;
  Event a = make_event("MPI_Irecv", 0), b = make_event("MPI_Isend", 1);
  cut.pass(a, false);
  cut.pass(b, false);
  Event w = with_links("MPI_Waitall", {2, 1});
  EXPECT_FALSE(cut.pass(w, true));
  Event one = with_links("MPI_Wait", {1});
  EXPECT_FALSE(cut.pass(one, true));
  Event none = with_links("MPI_Waitall", {});
  EXPECT_TRUE(cut.pass(none, true));
  EXPECT_EQ(cut.completions_dropped(), 2u);
}

// Waitany: the completed request's index is renumbered, and the call goes
// when the request it completed went. Waitsome: indices renumbered,
// outcount follows.
TEST(ExtrapRequestCut, RenumbersIndexAndIndices) {
  const FieldId index = FieldTable::intern("index", FieldKind::kScalar);
  const FieldId indices = FieldTable::intern("indices", FieldKind::kList);
  const FieldId outcount = FieldTable::intern("outcount", FieldKind::kScalar);
  RequestCut cut;
  for (int i = 0; i < 3; ++i) {
    Event e = make_event("MPI_Irecv", 0);
    cut.pass(e, i != 0);  // the first of three dropped
  }
  Event any = with_links("MPI_Waitany", {3, 2, 1});
  any.set(index, 2);
  ASSERT_TRUE(cut.pass(any, true));
  EXPECT_EQ(any.get(index), 1);
  EXPECT_EQ(links_of(any), (std::vector<int64_t>{2, 1}));
  Event gone = with_links("MPI_Waitany", {3, 2, 1});
  gone.set(index, 0);
  EXPECT_FALSE(cut.pass(gone, true));
  Event some = with_links("MPI_Waitsome", {3, 2, 1});
  some.set_list(indices, {0, 2});
  some.set(outcount, 2);
  ASSERT_TRUE(cut.pass(some, true));
  EXPECT_EQ(some.find(indices)->list, (std::vector<int64_t>{1}));
  EXPECT_EQ(some.get(outcount), 1);
}

// The weighted LCS on ranks where rank 0 alone makes an extra Irecv,
// Isend, Waitall (a rank-dependent exchange at its own call sites) inside
// a common Irecv/Isend/Waitall step: the extra calls go with their
// completion, the common Waitall keeps exactly its own two requests, and
// the requests of the kept calls are still completed by the kept Waitall.
TEST(ExtrapRequestCut, LcsDropsAnExtraExchangeWithItsCompletion) {
  CommTable comms;
  comms.define_world(2);
  const FieldId peer = FieldTable::peer();
  auto ev = [&](const std::string& op, SiteId site, int64_t to) {
    Event e = make_event(op, site);
    e.set(peer, to);
    return e;
  };
  std::vector<std::vector<Event>> ranks(2);
  for (int32_t r = 0; r < 2; ++r) {
    auto& v = ranks[static_cast<std::size_t>(r)];
    for (int step = 0; step < 3; ++step) {
      v.push_back(ev("MPI_Irecv", 0, 1 - r));
      if (r == 0) v.push_back(ev("MPI_Irecv", 3, 1));
      v.push_back(ev("MPI_Isend", 1, 1 - r));
      if (r == 0) v.push_back(ev("MPI_Isend", 4, 1));
      // rank 0's common Waitall names its Irecv (4 back) and Isend (2 back)
      v.push_back(with_links("MPI_Waitall",
                             r == 0 ? std::vector<int64_t>{4, 2} : std::vector<int64_t>{2, 1}));
      v.back().site = 2;
      if (r == 0) {
        v.push_back(with_links("MPI_Waitall", {3, 1}));
        v.back().site = 5;
      }
    }
  }
  const Trace t = tracefold::testing::fold_ranks(ranks, comms);
  std::vector<FilterReport> reps;
  const auto out = lcs_filter({&t}, {"a.tf"}, reps);
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_EQ(reps[0].dropped, (std::vector<uint64_t>{9, 0}));
  EXPECT_EQ(reps[0].kept, (std::vector<uint64_t>{9, 9}));
  for (int32_t r = 0; r < 2; ++r) {
    const std::vector<Event> evs = expand_rank(out[0], r);
    ASSERT_EQ(evs.size(), 9u);
    for (std::size_t i = 0; i < evs.size(); i += 3) {
      EXPECT_EQ(OpTable::name(evs[i].op), "MPI_Irecv");
      EXPECT_EQ(links_of(evs[i + 2]), (std::vector<int64_t>{2, 1})) << "rank " << r;
    }
  }
}
