// The statistical model of data-dependent MPI_Alltoallv counts
// (src/extrap/count_model.cpp, --model-counts), on synthetic sorts folded
// and merged like recorded ones.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/extrap/extrapolate.hpp"

using namespace tracefold;
using namespace tracefold::extrap;

namespace {

FieldId list_field(const char* name) {
  return FieldTable::intern(name, FieldKind::kList);
}

// A sort on p ranks: a boundary Sendrecv along a line (1-D, not periodic),
// then an MPI_Alltoallv of `total` elements a rank whose per-peer counts are
// random around total / p (the same matrix seen from both sides).
Trace sort_trace(int32_t p, int64_t total, int steps, bool running_displs = true) {
  std::mt19937_64 rng(static_cast<uint64_t>(p) * 77);
  std::vector<std::vector<Event>> ranks(static_cast<std::size_t>(p));
  for (int s = 0; s < steps; ++s) {
    std::vector<std::vector<int64_t>> m(static_cast<std::size_t>(p));
    for (auto& row : m) {  // random shares of `total`, whole numbers
      row.assign(static_cast<std::size_t>(p), 0);
      for (int64_t k = 0; k < total; ++k) ++row[rng() % static_cast<uint64_t>(p)];
    }
    for (int32_t r = 0; r < p; ++r) {
      Event b;
      b.op = *OpTable::find("MPI_Sendrecv");
      b.site = 0;
      b.set(FieldTable::peer(), r + 1 < p ? r + 1 : kNull);
      b.set(FieldTable::intern("rpeer", FieldKind::kScalar), r > 0 ? r - 1 : kNull);
      b.set(FieldTable::intern("count", FieldKind::kScalar), 1);
      ranks[static_cast<std::size_t>(r)].push_back(b);
      Event a;
      a.op = *OpTable::find("MPI_Alltoallv");
      a.site = 1;
      std::vector<int64_t> c, d, rc, rd;
      int64_t at = 0, rat = 0;
      for (int32_t j = 0; j < p; ++j) {
        c.push_back(m[static_cast<std::size_t>(r)][static_cast<std::size_t>(j)]);
        rc.push_back(m[static_cast<std::size_t>(j)][static_cast<std::size_t>(r)]);
        d.push_back(running_displs ? at : 0);
        rd.push_back(rat);
        at += c.back();
        rat += rc.back();
      }
      a.set_list(list_field("counts"), c);
      a.set_list(list_field("displs"), d);
      a.set_list(list_field("rcounts"), rc);
      a.set_list(list_field("rdispls"), rd);
      ranks[static_cast<std::size_t>(r)].push_back(a);
    }
  }
  CommTable comms;
  comms.define_world(p);
  return tracefold::testing::fold_ranks(ranks, comms, 2);
}

std::vector<ExtrapInput> sorts(int64_t total_keys, bool running_displs = true) {
  std::vector<ExtrapInput> in;
  for (int32_t p : {4, 8, 16})
    in.push_back({"s" + std::to_string(p) + ".tf",
                  sort_trace(p, total_keys / p, 3, running_displs || p != 8)});
  return in;
}

std::vector<int64_t> list_of(const Event& e, FieldId f) {
  const FieldValue* v = e.find(f);
  return v ? v->list : std::vector<int64_t>{};
}

// Every rank's modelled Alltoallv calls at p ranks: [rank][call] -> counts
// and rcounts.
struct Vectors {
  std::vector<std::vector<std::vector<int64_t>>> counts, rcounts;
};

Vectors vectors(const Trace& t) {
  Vectors v;
  const FieldId c = list_field("counts"), rc = list_field("rcounts");
  for (int32_t r = 0; r < t.world_size; ++r) {
    v.counts.emplace_back();
    v.rcounts.emplace_back();
    for (const Event& e : expand_rank(t, r)) {
      if (OpTable::name(e.op) != "MPI_Alltoallv") continue;
      v.counts.back().push_back(list_of(e, c));
      v.rcounts.back().push_back(list_of(e, rc));
    }
  }
  return v;
}

}  // namespace

// Strong scaling, 61,440 elements over all ranks (15,360, 7,680, 3,840 a
// rank at 4, 8, 16) to 12 ranks: 5,120 a rank; what i sends j is what j
// expects from i; the output is marked lossy with the share of events.
TEST(ExtrapCountModel, StrongScalingTotalsAndBothSidesAgree) {
  ExtrapOptions o;
  o.ranks = 12;
  o.try_plugins = false;
  o.model_counts = true;
  const ExtrapResult res = extrapolate(sorts(61440), o);
  const Vectors v = vectors(res.trace);
  ASSERT_EQ(v.counts.size(), 12u);
  std::map<int64_t, int> distinct;
  for (int32_t i = 0; i < 12; ++i) {
    ASSERT_EQ(v.counts[static_cast<std::size_t>(i)].size(), 3u);
    for (std::size_t s = 0; s < 3; ++s) {
      const auto& row = v.counts[static_cast<std::size_t>(i)][s];
      ASSERT_EQ(row.size(), 12u);
      int64_t sum = 0;
      for (int32_t j = 0; j < 12; ++j) {
        sum += row[static_cast<std::size_t>(j)];
        ++distinct[row[static_cast<std::size_t>(j)]];
        EXPECT_EQ(row[static_cast<std::size_t>(j)],
                  v.rcounts[static_cast<std::size_t>(j)][s][static_cast<std::size_t>(i)])
            << "rank " << i << " to " << j << ", call " << s;
      }
      EXPECT_EQ(sum, 5120) << "rank " << i << ", call " << s;
    }
  }
  EXPECT_GT(distinct.size(), 5u) << "the model drew no spread";
  // 3 of the 6 calls a rank make are modelled.
  EXPECT_EQ(res.modelled_events, 36);
  EXPECT_EQ(res.events, 72);
  EXPECT_EQ(res.trace.lossy, "statistical count model (50.00 % of events modelled)");
  // The same inputs give the same draws.
  EXPECT_EQ(vectors(extrapolate(sorts(61440), o).trace).counts, v.counts);
}

// At 1,024 ranks the output holds 64 vectors a call, not one per rank,
// and each rank still sends its modelled total.
TEST(ExtrapCountModel, LargeTargetStaysSmall) {
  ExtrapOptions o;
  o.ranks = 1024;
  o.try_plugins = false;
  o.model_counts = true;
  const ExtrapResult res = extrapolate(sorts(65536), o);
  const FieldId c = list_field("counts");
  for (const Node& n : res.trace.nodes)
    if (const Elastic* e = n.field(c)) {
      EXPECT_EQ(e->entries().size(), 64u);
    }
  for (int32_t r : {0, 63, 64, 1023}) {
    int calls = 0;
    for (const Event& e : expand_rank(res.trace, r))
      if (OpTable::name(e.op) == "MPI_Alltoallv") {
        const auto row = list_of(e, c);
        ASSERT_EQ(row.size(), 1024u);
        int64_t sum = 0;
        for (int64_t x : row) sum += x;
        EXPECT_EQ(sum, 64) << "rank " << r;
        ++calls;
      }
    EXPECT_EQ(calls, 3);
  }
}

// Without the option the refusal names it and says why, with no list of
// numbers; with displacements that are not running sums the model refuses.
TEST(ExtrapCountModel, RefusalsNameTheOptionAndTheReason) {
  ExtrapOptions o;
  o.ranks = 12;
  o.try_plugins = false;
  try {
    extrapolate(sorts(61440), o);
    ADD_FAILURE() << "no error";
  } catch (const ExtrapError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("field counts: the per-peer counts differ from rank to rank"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("--model-counts draws them from a statistical model"), std::string::npos) << m;
    EXPECT_EQ(m.find(" '"), std::string::npos) << "quotes a value sequence: " << m;
  }
  o.model_counts = true;
  try {
    extrapolate(sorts(61440, false), o);
    ADD_FAILURE() << "no error";
  } catch (const ExtrapError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("s8.tf: node"), std::string::npos) << m;
    EXPECT_NE(m.find("field displs: the displacements are not the running sums of counts"),
              std::string::npos)
        << m;
  }
}

namespace {

// The sum of every modelled row of rank r, call by call.
std::vector<int64_t> row_sums(const std::vector<std::vector<int64_t>>& calls) {
  std::vector<int64_t> out;
  for (const auto& row : calls) {
    int64_t s = 0;
    for (int64_t x : row) s += x;
    out.push_back(s);
  }
  return out;
}

}  // namespace

// 67 ranks, a prime: no divisor of 67 gives a period, so 33 classes of two
// ranks take the draws and rank 66 is left over. The spread must survive
// (a period of one would give every peer the same count), and every rank
// must still send and receive one total, its counts the transpose of the
// others' rcounts.
TEST(ExtrapCountModel, PrimeTargetKeepsTheSpread) {
  ExtrapOptions o;
  o.ranks = 67;
  o.try_plugins = false;
  o.model_counts = true;
  const ExtrapResult res = extrapolate(sorts(61440), o);
  const Vectors v = vectors(res.trace);
  ASSERT_EQ(v.counts.size(), 67u);
  const std::vector<int64_t> total = row_sums(v.counts[0]);
  ASSERT_EQ(total.size(), 3u);
  std::map<int64_t, int> distinct;
  for (std::size_t i = 0; i < 67; ++i) {
    EXPECT_EQ(row_sums(v.counts[i]), total) << "rank " << i << " sends";
    EXPECT_EQ(row_sums(v.rcounts[i]), total) << "rank " << i << " receives";
    for (std::size_t s = 0; s < 3; ++s)
      for (std::size_t j = 0; j < 67; ++j) {
        EXPECT_EQ(v.counts[i][s][j], v.rcounts[j][s][i]) << i << " to " << j << ", call " << s;
        ++distinct[v.counts[i][s][j]];
      }
  }
  // 61,440 elements over 67 ranks: 917 a rank.
  for (int64_t t : total) EXPECT_NEAR(static_cast<double>(t), 917.0, 917 * 0.05);
  EXPECT_GT(distinct.size(), 5u) << "the model drew no spread";
  const FieldId c = list_field("counts");
  for (const Node& n : res.trace.nodes)
    if (const Elastic* e = n.field(c)) {
      EXPECT_EQ(e->entries().size(), 34u);
    }
}

// 16,381 ranks, a prime: 63 classes of 260 ranks and one rank over, so the
// output holds 64 vectors a call; body and leftover ranks send one total.
TEST(ExtrapCountModel, LargePrimeTargetStaysSmall) {
  std::vector<ExtrapInput> in;
  for (int32_t p : {4, 8, 16})
    in.push_back({"w" + std::to_string(p) + ".tf", sort_trace(p, 65536, 1)});
  ExtrapOptions o;
  o.ranks = 16381;
  o.try_plugins = false;
  o.model_counts = true;
  const ExtrapResult res = extrapolate(in, o);
  const FieldId c = list_field("counts"), rc = list_field("rcounts");
  for (const Node& n : res.trace.nodes)
    if (const Elastic* e = n.field(c)) {
      EXPECT_EQ(e->entries().size(), 64u);
    }
  std::map<int64_t, int> distinct, sums;
  for (int32_t r : {0, 62, 63, 16379, 16380})
    for (const Event& e : expand_rank(res.trace, r))
      if (OpTable::name(e.op) == "MPI_Alltoallv") {
        for (FieldId f : {c, rc}) {
          const auto row = list_of(e, f);
          ASSERT_EQ(row.size(), 16381u);
          int64_t sum = 0;
          for (int64_t x : row) {
            sum += x;
            ++distinct[x];
          }
          EXPECT_NEAR(static_cast<double>(sum), 65536.0, 65536 * 0.05) << "rank " << r;
          ++sums[sum];
        }
      }
  EXPECT_EQ(sums.size(), 1u) << "the ranks send or receive different totals";
  // 4 a peer with a fitted cv of 0.06: 3, 4 and 5 (one period of one
  // rank would give 4 to every peer).
  EXPECT_GE(distinct.size(), 3u) << "the model drew no spread";
}
