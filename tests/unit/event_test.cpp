#include "tracefold/event.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "random_program.hpp"
#include "test_util.hpp"

namespace tracefold {
namespace {

using testing::make_event;
using testing::Rng;

// ------------------------------------------------------------------ fields

TEST(FieldTable, KnownFields) {
  EXPECT_EQ(FieldTable::find("peer"), FieldTable::peer());
  EXPECT_EQ(FieldTable::find("src"), FieldTable::src());
  EXPECT_EQ(FieldTable::find("comm"), FieldTable::comm());
  EXPECT_EQ(FieldTable::find("links"), FieldTable::links());
  EXPECT_EQ(FieldTable::name(FieldTable::peer()), "peer");
  EXPECT_EQ(FieldTable::name(FieldTable::links()), "links");
  EXPECT_EQ(FieldTable::kind(FieldTable::peer()), FieldKind::kScalar);
  EXPECT_EQ(FieldTable::kind(FieldTable::links()), FieldKind::kList);
  for (const char* name : {"tag", "mtag", "count", "dtype", "dsize", "comm", "root", "redop",
                           "newcomm", "color", "key", "req", "flag"}) {
    auto id = FieldTable::find(name);
    ASSERT_TRUE(id.has_value()) << name;
    EXPECT_EQ(FieldTable::kind(*id), FieldKind::kScalar) << name;
    EXPECT_EQ(FieldTable::role(*id), FieldRole::kPlain) << name;
    EXPECT_EQ(FieldTable::intern(name, FieldKind::kScalar), *id) << name;
  }
  for (const char* name : {"links", "counts", "displs"}) {
    auto id = FieldTable::find(name);
    ASSERT_TRUE(id.has_value()) << name;
    EXPECT_EQ(FieldTable::kind(*id), FieldKind::kList) << name;
    EXPECT_EQ(FieldTable::intern(name, FieldKind::kList), *id) << name;
  }
  // Only peer-like fields are relative-encoded.
  EXPECT_EQ(FieldTable::role(FieldTable::peer()), FieldRole::kPeer);
  EXPECT_EQ(FieldTable::role(FieldTable::src()), FieldRole::kPeer);
  EXPECT_EQ(FieldTable::role(FieldTable::comm()), FieldRole::kPlain);
  EXPECT_EQ(FieldTable::role(FieldTable::links()), FieldRole::kPlain);
  // The matched sources/tags of multi-request completions: lists, and only
  // the sources are ranks.
  ASSERT_TRUE(FieldTable::find("srcs").has_value());
  ASSERT_TRUE(FieldTable::find("mtags").has_value());
  EXPECT_EQ(FieldTable::kind(*FieldTable::find("srcs")), FieldKind::kList);
  EXPECT_EQ(FieldTable::kind(*FieldTable::find("mtags")), FieldKind::kList);
  EXPECT_EQ(FieldTable::role(*FieldTable::find("srcs")), FieldRole::kPeer);
  EXPECT_EQ(FieldTable::role(*FieldTable::find("mtags")), FieldRole::kPlain);
}

TEST(FieldTable, InternRegistersNewNamesOnce) {
  EXPECT_FALSE(FieldTable::find("evt_custom_scalar").has_value());
  const FieldId a = FieldTable::intern("evt_custom_scalar", FieldKind::kScalar);
  EXPECT_EQ(FieldTable::intern("evt_custom_scalar", FieldKind::kScalar), a);
  EXPECT_EQ(FieldTable::find("evt_custom_scalar"), a);
  EXPECT_EQ(FieldTable::name(a), "evt_custom_scalar");
  EXPECT_EQ(FieldTable::kind(a), FieldKind::kScalar);
  EXPECT_EQ(FieldTable::role(a), FieldRole::kPlain);
  const FieldId b = FieldTable::intern("evt_custom_list9", FieldKind::kList);
  EXPECT_NE(a, b);
  EXPECT_EQ(FieldTable::kind(b), FieldKind::kList);
  // Single letters, digits and underscores after the first letter are fine.
  EXPECT_NO_THROW(FieldTable::intern("z", FieldKind::kScalar));
  EXPECT_NO_THROW(FieldTable::intern("z_9_", FieldKind::kScalar));
}

TEST(FieldTable, KindConflictsThrow) {
  EXPECT_THROW(FieldTable::intern("peer", FieldKind::kList), std::invalid_argument);
  EXPECT_THROW(FieldTable::intern("links", FieldKind::kScalar), std::invalid_argument);
  FieldTable::intern("evt_kind_conflict", FieldKind::kList);
  try {
    FieldTable::intern("evt_kind_conflict", FieldKind::kScalar);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("evt_kind_conflict"), std::string::npos) << ex.what();
  }
  // The field keeps its first kind.
  EXPECT_EQ(FieldTable::kind(*FieldTable::find("evt_kind_conflict")), FieldKind::kList);
}

TEST(FieldTable, InvalidNamesThrowAndAreNotRegistered) {
  for (const char* name : {"", "Tag", "1abc", "_x", "a-b", "a b", "a.b", "tag=", "é", "aB"}) {
    EXPECT_THROW(FieldTable::intern(name, FieldKind::kScalar), std::invalid_argument)
        << "'" << name << "'";
    EXPECT_FALSE(FieldTable::find(name).has_value()) << "'" << name << "'";
  }
}

TEST(FieldTable, PrintOrderIsKnownFieldsThenByName) {
  const auto id = [](const char* n) { return *FieldTable::find(n); };
  const std::vector<const char*> known = {"peer",  "src",  "tag",  "mtag",  "count",   "dtype",
                                          "dsize", "comm", "root", "redop", "newcomm", "color",
                                          "key",   "req",  "flag", "links", "counts",  "displs"};
  for (std::size_t i = 0; i + 1 < known.size(); ++i) {
    EXPECT_TRUE(FieldTable::print_before(id(known[i]), id(known[i + 1])))
        << known[i] << " " << known[i + 1];
    EXPECT_FALSE(FieldTable::print_before(id(known[i + 1]), id(known[i])))
        << known[i] << " " << known[i + 1];
  }
  // Custom fields come after every known one, sorted by name whatever the
  // order of registration.
  const FieldId zb = FieldTable::intern("evt_order_b", FieldKind::kScalar);
  const FieldId za = FieldTable::intern("evt_order_a", FieldKind::kScalar);
  EXPECT_TRUE(FieldTable::print_before(za, zb));
  EXPECT_FALSE(FieldTable::print_before(zb, za));
  EXPECT_FALSE(FieldTable::print_before(za, za));
  for (const char* k : known) {
    EXPECT_TRUE(FieldTable::print_before(id(k), za)) << k;
    EXPECT_FALSE(FieldTable::print_before(za, id(k))) << k;
  }
}

// -------------------------------------------------------------- operations

TEST(OpTable, LookupsRoundTrip) {
  for (const char* name : {"MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Waitall",
                           "MPI_Allreduce", "MPI_Bcast", "MPI_Barrier", "MPI_Alltoallv",
                           "MPI_Comm_split", "compute", "enter", "exit"}) {
    auto id = OpTable::find(name);
    ASSERT_TRUE(id.has_value()) << name;
    EXPECT_EQ(OpTable::name(*id), name);
    EXPECT_LT(*id, OpTable::size());
  }
  EXPECT_FALSE(OpTable::find("MPI_Nonexistent").has_value());
  EXPECT_FALSE(OpTable::find("mpi_send").has_value());
  EXPECT_FALSE(OpTable::find("").has_value());
  EXPECT_GT(OpTable::size(), 100u);
  // Ids are dense and names unique.
  std::set<std::string> names;
  for (std::size_t i = 0; i < OpTable::size(); ++i) {
    const std::string& n = OpTable::name(static_cast<OpId>(i));
    EXPECT_TRUE(names.insert(n).second) << n;
    EXPECT_EQ(OpTable::find(n), static_cast<OpId>(i)) << n;
  }
}

// --------------------------------------------------------------- call sites

TEST(SiteTable, InternIsDenseInFirstInsertionOrder) {
  SiteTable t;
  const CallSite a{{Frame{"app", 0x10}}};
  const CallSite b{{Frame{"app", 0x20}, Frame{"libc.so.6", 0x1a2b}}};
  const CallSite c{{Frame{"lib", 0x10}}};
  EXPECT_EQ(t.intern(b), 0u);
  EXPECT_EQ(t.intern(a), 1u);
  EXPECT_EQ(t.intern(b), 0u);
  EXPECT_EQ(t.intern(c), 2u);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.at(0), b);
  EXPECT_EQ(t.at(1), a);
  EXPECT_EQ(t.all(), (std::vector<CallSite>{b, a, c}));
  EXPECT_EQ(t.intern(CallSite{}), 3u);
  EXPECT_EQ(t.intern(CallSite{}), 3u);
}

TEST(SiteTable, FormatAndParse) {
  const CallSite s{{Frame{"app", 0x10}, Frame{"libc.so.6", 0x1a2b}}};
  EXPECT_EQ(SiteTable::format(s), "app+0x10 libc.so.6+0x1a2b");
  EXPECT_EQ(SiteTable::format(CallSite{}), "-");
  EXPECT_EQ(SiteTable::format(CallSite{{Frame{"m", 0}}}), "m+0x0");
  CallSite out;
  ASSERT_TRUE(SiteTable::parse("app+0x10 libc.so.6+0x1a2b", out));
  EXPECT_EQ(out, s);
  ASSERT_TRUE(SiteTable::parse("-", out));
  EXPECT_TRUE(out.frames.empty());
  // A module name may itself contain '+'.
  ASSERT_TRUE(SiteTable::parse("libstdc++.so+0xff", out));
  ASSERT_EQ(out.frames.size(), 1u);
  EXPECT_EQ(out.frames[0].module, "libstdc++.so");
  EXPECT_EQ(out.frames[0].offset, 0xffu);
  ASSERT_TRUE(
      SiteTable::parse(SiteTable::format(CallSite{{Frame{"a+0x1", 0xffffffffffffffffull}}}), out));
  EXPECT_EQ(out.frames[0].module, "a+0x1");
  EXPECT_EQ(out.frames[0].offset, 0xffffffffffffffffull);
  for (const char* bad : {"", "app", "app+0x", "+0x10", "app+0xZZ", "app+10", "app+0x10g",
                          "app+0x10000000000000000", "app+0x10 x"}) {
    CallSite cs;
    EXPECT_FALSE(SiteTable::parse(bad, cs)) << "'" << bad << "'";
  }
  // Random round trips.
  Rng rng(7);
  for (int i = 0; i < 200; ++i) {
    CallSite cs;
    for (uint64_t k = 0, n = 1 + rng.below(5); k < n; ++k)
      cs.frames.push_back(
          Frame{"mod" + std::to_string(rng.below(9)) + ".so", rng.next() >> rng.below(64)});
    CallSite back;
    ASSERT_TRUE(SiteTable::parse(SiteTable::format(cs), back)) << SiteTable::format(cs);
    EXPECT_EQ(back, cs);
  }
}

// ------------------------------------------------------------ communicators

TEST(CommTable, WorldAndSubCommunicators) {
  CommTable t;
  t.define_world(8);
  ASSERT_NE(t.group_of(CommTable::kWorld, 5), nullptr);
  EXPECT_EQ(t.group_of(CommTable::kWorld, 5)->members,
            (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(t.rank_in(CommTable::kWorld, 5), 5);
  EXPECT_EQ(t.group_of(CommTable::kWorld, 8), nullptr);
  EXPECT_EQ(t.rank_in(CommTable::kWorld, 8), -1);

  // One id, two disjoint groups (as one MPI_Comm_split makes), members in
  // comm-rank order, not ascending.
  t.define(5, CommGroup{{6, 2, 4, 0}});
  t.define(5, CommGroup{{7, 1}});
  ASSERT_NE(t.group_of(5, 4), nullptr);
  EXPECT_EQ(t.group_of(5, 4)->members, (std::vector<int32_t>{6, 2, 4, 0}));
  EXPECT_EQ(t.rank_in(5, 6), 0);
  EXPECT_EQ(t.rank_in(5, 2), 1);
  EXPECT_EQ(t.rank_in(5, 4), 2);
  EXPECT_EQ(t.rank_in(5, 0), 3);
  EXPECT_EQ(t.rank_in(5, 7), 0);
  EXPECT_EQ(t.rank_in(5, 1), 1);
  EXPECT_EQ(t.group_of(5, 3), nullptr);
  EXPECT_EQ(t.rank_in(5, 3), -1);
  EXPECT_EQ(t.group_of(9, 0), nullptr);
  EXPECT_EQ(t.rank_in(9, 0), -1);
  EXPECT_EQ(t.all().size(), 2u);
  EXPECT_EQ(t.all().at(5).size(), 2u);

  // Defining the same group again changes nothing.
  CommTable copy = t;
  EXPECT_NO_THROW(t.define(5, CommGroup{{6, 2, 4, 0}}));
  EXPECT_EQ(t, copy);
}

// A group of ranks 0 .. n-1 in order is looked up by arithmetic (no
// per-rank index); a second group of the same id brings the index back.
TEST(CommTable, IdentityGroupWithoutIndex) {
  CommTable t;
  t.define_world(1 << 20);
  EXPECT_EQ(t.rank_in(CommTable::kWorld, (1 << 20) - 1), (1 << 20) - 1);
  EXPECT_EQ(t.rank_in(CommTable::kWorld, 1 << 20), -1);
  EXPECT_EQ(t.rank_in(CommTable::kWorld, -1), -1);
  EXPECT_EQ(t.group_of(CommTable::kWorld, -1), nullptr);
  t.define(3, CommGroup{{0, 1, 2}});
  EXPECT_EQ(t.rank_in(3, 2), 2);
  EXPECT_THROW(t.define(3, CommGroup{{4, 2}}), std::invalid_argument);
  t.define(3, CommGroup{{5, 4}});
  EXPECT_EQ(t.rank_in(3, 1), 1);
  EXPECT_EQ(t.rank_in(3, 4), 1);
  ASSERT_NE(t.group_of(3, 5), nullptr);
  EXPECT_EQ(t.group_of(3, 5)->members, (std::vector<int32_t>{5, 4}));
  EXPECT_EQ(t.group_of(3, 3), nullptr);
}

TEST(CommTable, ConflictingGroupsThrow) {
  CommTable t;
  t.define_world(8);
  t.define(3, CommGroup{{0, 1, 2}});
  // Overlaps the existing group of id 3.
  EXPECT_THROW(t.define(3, CommGroup{{2, 5}}), std::invalid_argument);
  // Same members, another order: a different group that overlaps.
  EXPECT_THROW(t.define(3, CommGroup{{2, 1, 0}}), std::invalid_argument);
  // A different id may hold the same ranks.
  EXPECT_NO_THROW(t.define(4, CommGroup{{2, 5}}));
  EXPECT_EQ(t.rank_in(3, 2), 2);
  EXPECT_EQ(t.rank_in(4, 2), 0);
}

TEST(CommTable, MergeUnitesAndDetectsConflicts) {
  CommTable a, b;
  a.define_world(4);
  b.define_world(4);
  a.define(1, CommGroup{{0, 2}});
  b.define(1, CommGroup{{3, 1}});
  b.define(2, CommGroup{{1, 0}});
  CommTable m = a;
  m.merge(b);
  EXPECT_EQ(m.rank_in(1, 3), 0);
  EXPECT_EQ(m.rank_in(1, 2), 1);
  EXPECT_EQ(m.rank_in(2, 0), 1);
  CommTable m2 = b;
  m2.merge(a);
  EXPECT_EQ(m, m2) << "merge order must not matter";
  m.merge(a);  // idempotent
  EXPECT_EQ(m, m2);
  CommTable c;
  c.define(1, CommGroup{{2, 3}});
  EXPECT_THROW(m.merge(c), std::invalid_argument);
}

// ----------------------------------------------------------------- events

TEST(Event, FieldsStaySortedAndUnique) {
  const FieldId tag = FieldTable::intern("tag", FieldKind::kScalar);
  const FieldId count = FieldTable::intern("count", FieldKind::kScalar);
  Event e;
  e.set(count, 4);
  e.set(tag, 1);
  e.set(FieldTable::peer(), 3);
  e.set_list(FieldTable::links(), {1, 2});
  e.set(tag, 9);
  ASSERT_EQ(e.fields.size(), 4u);
  EXPECT_TRUE(
      std::is_sorted(e.fields.begin(), e.fields.end(),
                     [](const FieldValue& a, const FieldValue& b) { return a.field < b.field; }));
  EXPECT_EQ(e.get(tag), 9);
  EXPECT_EQ(e.get(count), 4);
  EXPECT_EQ(e.get(FieldTable::src()), kAbsent);
  EXPECT_EQ(e.find(FieldTable::src()), nullptr);
  ASSERT_NE(e.find(FieldTable::links()), nullptr);
  EXPECT_EQ(e.find(FieldTable::links())->list, (std::vector<int64_t>{1, 2}));
  e.set_list(FieldTable::links(), {});
  EXPECT_TRUE(e.find(FieldTable::links())->list.empty());
  EXPECT_EQ(e.fields.size(), 4u);
}

TEST(Event, SameCallIgnoresTimingsOnly) {
  Event a = make_event("MPI_Send", 2, {{"peer", 1}, {"tag", 0}});
  Event b = a;
  b.compute_ns = 100;
  b.comm_ns = 5;
  EXPECT_TRUE(a.same_call(b));
  Event c = a;
  c.site = 3;
  EXPECT_FALSE(a.same_call(c));
  Event d = a;
  d.op = *OpTable::find("MPI_Ssend");
  EXPECT_FALSE(a.same_call(d));
  Event e = a;
  e.set(FieldTable::intern("tag", FieldKind::kScalar), 1);
  EXPECT_FALSE(a.same_call(e));
  Event f = a;
  f.set_list(FieldTable::links(), {});
  EXPECT_FALSE(a.same_call(f)) << "an empty list is not an absent field";
  EXPECT_EQ(a.key(), (EventKey{*OpTable::find("MPI_Send"), 2}));
  EXPECT_NE(a.key().packed(), c.key().packed());
}

// ---------------------------------------------------- relative peer encoding

TEST(RelativeEncoding, WorldOffsets) {
  CommTable comms;
  comms.define_world(8);
  Event e = make_event("MPI_Sendrecv", 0, {{"peer", 5}, {"src", 1}, {"tag", 7}});
  encode_relative(e, 3, comms);
  EXPECT_EQ(e.get(FieldTable::peer()), 2);  // 5 - 3
  EXPECT_EQ(e.get(FieldTable::src()), 6);   // (1 - 3) mod 8
  EXPECT_EQ(e.get(*FieldTable::find("tag")), 7) << "plain fields stay as they are";
  decode_relative(e, 3, comms);
  EXPECT_EQ(e.get(FieldTable::peer()), 5);
  EXPECT_EQ(e.get(FieldTable::src()), 1);
  // Sentinels are never encoded.
  Event s = make_event("MPI_Irecv", 0, {{"peer", kAny}, {"src", kNull}});
  encode_relative(s, 6, comms);
  EXPECT_EQ(s.get(FieldTable::peer()), kAny);
  EXPECT_EQ(s.get(FieldTable::src()), kNull);
  decode_relative(s, 6, comms);
  EXPECT_EQ(s.get(FieldTable::peer()), kAny);
  // Neighbour exchanges on every rank encode to the same offsets (SPMD).
  for (int32_t r = 0; r < 8; ++r) {
    Event n = make_event("MPI_Isend", 0, {{"peer", (r + 1) % 8}});
    encode_relative(n, r, comms);
    EXPECT_EQ(n.get(FieldTable::peer()), 1) << r;
  }
}

// List peer fields (`srcs`) are encoded element by element; undef entries
// (requests that did not complete) stay as they are.
TEST(RelativeEncoding, ListPeerFieldsEncodePerElement) {
  CommTable comms;
  comms.define_world(4);
  const FieldId srcs = FieldTable::intern("srcs", FieldKind::kList);
  const FieldId mtags = FieldTable::intern("mtags", FieldKind::kList);
  Event e = make_event("MPI_Waitall", 0, {{"comm", 0}});
  e.set_list(srcs, {3, kUndefined, 0, 2});
  e.set_list(mtags, {3, kUndefined, 0, 2});
  EXPECT_TRUE(has_relative_fields(e));
  encode_relative(e, 2, comms);
  EXPECT_EQ(e.find(srcs)->list, (std::vector<int64_t>{1, kUndefined, 2, 0}));
  EXPECT_EQ(e.find(mtags)->list, (std::vector<int64_t>{3, kUndefined, 0, 2}))
      << "matched tags are not ranks";
  decode_relative(e, 2, comms);
  EXPECT_EQ(e.find(srcs)->list, (std::vector<int64_t>{3, kUndefined, 0, 2}));
  // A stencil-like pattern (each rank hears from both neighbours) encodes
  // identically on every rank, so it folds across ranks.
  for (int32_t r = 0; r < 4; ++r) {
    Event n;
    n.op = *OpTable::find("MPI_Waitall");
    n.set_list(srcs, {(r + 3) % 4, (r + 1) % 4});
    encode_relative(n, r, comms);
    EXPECT_EQ(n.find(srcs)->list, (std::vector<int64_t>{3, 1})) << r;
  }
  // Only undef entries: nothing to encode, no communicator needed.
  Event u = make_event("MPI_Waitall", 0, {{"comm", 9}});
  u.set_list(srcs, {kUndefined});
  EXPECT_FALSE(has_relative_fields(u));
  EXPECT_NO_THROW(encode_relative(u, 0, comms));
  // Out-of-range entries are rejected, naming the field.
  Event bad;
  bad.op = *OpTable::find("MPI_Waitall");
  bad.set_list(srcs, {1, 4});
  try {
    encode_relative(bad, 0, comms);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("srcs"), std::string::npos) << ex.what();
  }
}

TEST(RelativeEncoding, RoundTripsOnWorld) {
  for (int32_t p : {1, 2, 3, 7, 16, 33}) {
    CommTable comms;
    comms.define_world(p);
    for (int32_t r = 0; r < p; ++r) {
      for (int64_t peer = 0; peer < p; ++peer) {
        Event e =
            make_event("MPI_Send", 1, {{"peer", peer}, {"src", (peer * 7 + 3) % p}, {"comm", 0}});
        const Event orig = e;
        encode_relative(e, r, comms);
        const int64_t rel = e.get(FieldTable::peer());
        ASSERT_GE(rel, 0);
        ASSERT_LT(rel, p);
        ASSERT_EQ((r + rel) % p, peer);
        decode_relative(e, r, comms);
        ASSERT_TRUE(e.same_call(orig)) << "P=" << p << " rank " << r << " peer " << peer;
      }
    }
  }
}

// Peers are ranks in the event's communicator; the encoding uses the caller's
// position in that communicator's member order, which need not be ascending.
TEST(RelativeEncoding, SubCommunicatorWithNonAscendingOrder) {
  CommTable comms;
  comms.define_world(8);
  comms.define(3, CommGroup{{6, 2, 4, 0}});
  comms.define(3, CommGroup{{1, 7, 5}});
  // World rank 4 is rank 2 of its group of comm 3 (size 4); peer 1 (world 2).
  Event e = make_event("MPI_Send", 0, {{"peer", 1}, {"comm", 3}});
  encode_relative(e, 4, comms);
  EXPECT_EQ(e.get(FieldTable::peer()), 3);  // (1 - 2) mod 4
  decode_relative(e, 4, comms);
  EXPECT_EQ(e.get(FieldTable::peer()), 1);
  // World rank 5 is rank 2 of the size-3 group: same comm id, other group.
  Event f = make_event("MPI_Send", 0, {{"peer", 0}, {"comm", 3}});
  encode_relative(f, 5, comms);
  EXPECT_EQ(f.get(FieldTable::peer()), 1);  // (0 - 2) mod 3
  decode_relative(f, 5, comms);
  EXPECT_EQ(f.get(FieldTable::peer()), 0);
  // Exhaustive round trip over both groups.
  for (const CommGroup& g : comms.all().at(3)) {
    const auto n = static_cast<int64_t>(g.members.size());
    for (int32_t w : g.members) {
      for (int64_t peer = 0; peer < n; ++peer) {
        Event ev = make_event("MPI_Isend", 0, {{"peer", peer}, {"comm", 3}});
        encode_relative(ev, w, comms);
        const int64_t me = comms.rank_in(3, w);
        ASSERT_EQ(ev.get(FieldTable::peer()), ((peer - me) % n + n) % n) << "world " << w;
        decode_relative(ev, w, comms);
        ASSERT_EQ(ev.get(FieldTable::peer()), peer) << "world " << w;
      }
    }
  }
}

TEST(RelativeEncoding, OutOfRangePeersAndUnknownCommunicatorsThrow) {
  CommTable comms;
  comms.define_world(8);
  comms.define(3, CommGroup{{6, 2, 4, 0}});
  auto expect_throw_naming = [&](Event e, int32_t rank, const std::string& name) {
    try {
      encode_relative(e, rank, comms);
      ADD_FAILURE() << "no exception for " << name;
    } catch (const std::invalid_argument& ex) {
      EXPECT_NE(std::string(ex.what()).find(name), std::string::npos) << ex.what();
    }
  };
  expect_throw_naming(make_event("MPI_Send", 0, {{"peer", 8}}), 0, "peer");
  expect_throw_naming(make_event("MPI_Send", 0, {{"peer", -1}}), 0, "peer");
  expect_throw_naming(make_event("MPI_Recv", 0, {{"peer", 1}, {"src", 9}}), 0, "src");
  // Valid in the world, not in the size-4 communicator.
  expect_throw_naming(make_event("MPI_Send", 0, {{"peer", 4}, {"comm", 3}}), 6, "peer");
  // Unknown communicator, or one this rank is not in.
  EXPECT_THROW(
      {
        Event e = make_event("MPI_Send", 0, {{"peer", 0}, {"comm", 9}});
        encode_relative(e, 0, comms);
      },
      std::invalid_argument);
  EXPECT_THROW(
      {
        Event e = make_event("MPI_Send", 0, {{"peer", 0}, {"comm", 3}});
        encode_relative(e, 1, comms);
      },
      std::invalid_argument);
  // Events without peer fields need no communicator.
  Event plain = make_event("MPI_Barrier", 0, {{"comm", 9}});
  EXPECT_NO_THROW(encode_relative(plain, 0, comms));
  EXPECT_EQ(plain.get(FieldTable::comm()), 9);
}

}  // namespace
}  // namespace tracefold
