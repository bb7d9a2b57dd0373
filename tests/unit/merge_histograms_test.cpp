// Lossy value histograms shared among alike ranks by the inter-process merge
// (share_histograms in merge.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

constexpr int32_t kRanks = 16;

// One rank of an irregular exchange: `sends` Isends to partners drawn at
// random among all ranks (never itself), in an order that does not fold,
// then `tail` sends of constant size to the right neighbour.
std::vector<Event> irregular_rank(int32_t rank, int sends, uint64_t seed) {
  std::mt19937_64 rng(seed * 1000 + static_cast<uint64_t>(rank));
  std::vector<Event> evs;
  for (int i = 0; i < sends; ++i) {
    const int64_t peer = (rank + 1 + static_cast<int64_t>(rng() % (kRanks - 1))) % kRanks;
    evs.push_back(testing::make_event("MPI_Isend", 0,
                                      {{"peer", peer},
                                       {"tag", 0},
                                       {"count", 4 + static_cast<int64_t>(rng() % 29)},
                                       {"comm", 0}}));
  }
  for (int i = 0; i < 10; ++i)
    evs.push_back(testing::make_event(
        "MPI_Send", 1, {{"peer", (rank + 1) % kRanks}, {"tag", 1}, {"count", 8}, {"comm", 0}}));
  return evs;
}

// Each rank's irregular_rank folded on its own, rank r sending sends[r].
std::vector<Trace> rank_traces(const std::vector<int>& sends, const CommTable& comms,
                               const FoldOptions& options = {}) {
  std::vector<Trace> traces;
  for (int32_t r = 0; r < kRanks; ++r) {
    Folder f(r, options);
    for (Event e : irregular_rank(r, sends[static_cast<std::size_t>(r)], 7)) {
      encode_relative(e, r, comms);
      f.append(e);
    }
    traces.push_back(f.finish(kRanks, testing::make_sites(2), comms));
  }
  return traces;
}

std::vector<Trace> lossy_ranks(const std::vector<int>& sends, const CommTable& comms) {
  FoldOptions lossy;
  lossy.histogram_threshold = 4;
  return rank_traces(sends, comms, lossy);
}

// The value -> count pairs of a histogram.
std::map<int64_t, uint64_t> counts_of(const ValueSeq& hist) {
  std::map<int64_t, uint64_t> out;
  for (const ValueSeq::Run& r : hist.runs()) out[r.pattern.at(0)] += r.reps;
  return out;
}

// Sum over values of |share in `hist` - share in `pooled`| (0: same
// proportions, 2: disjoint).
double l1_share_distance(const ValueSeq& hist, const std::map<int64_t, uint64_t>& pooled) {
  std::map<int64_t, std::pair<double, double>> both;
  double total = 0, ptotal = 0;
  for (auto [v, c] : counts_of(hist))
    both[v].first += static_cast<double>(c), total += static_cast<double>(c);
  for (auto [v, c] : pooled)
    both[v].second += static_cast<double>(c), ptotal += static_cast<double>(c);
  double d = 0;
  for (auto& [v, p] : both) d += std::abs(p.first / total - p.second / ptotal);
  return d;
}

TEST(MergeHistograms, AlikeRanksShareOneHistogramScaledToTheLargest) {
  CommTable comms;
  comms.define_world(kRanks);
  // 40..60 sends: one power-of-two class (32..63), except rank 5's 100.
  std::vector<int> sends;
  for (int32_t r = 0; r < kRanks; ++r) sends.push_back(r == 5 ? 100 : 40 + r);
  std::vector<Trace> ranks = lossy_ranks(sends, comms);
  const FieldId peer = FieldTable::peer(), count = *FieldTable::find("count");
  // What the ranks' own histograms pool to (weights before scaling).
  std::map<int64_t, uint64_t> pooled;
  for (int32_t r = 0; r < kRanks; ++r) {
    if (r == 5) continue;
    const ValueSeq& own =
        ranks[static_cast<std::size_t>(r)].nodes.at(0).field(peer)->entries().at(0).values;
    ASSERT_TRUE(own.is_histogram()) << "rank " << r;
    for (auto [v, c] : counts_of(own)) pooled[v] += c;
  }
  const Trace t = reduce_traces(ranks);
  ASSERT_EQ(t.nodes.size(), 2u);
  for (FieldId f : {peer, count}) {
    const Elastic& el = *t.nodes[0].field(f);
    ASSERT_EQ(el.entries().size(), 2u) << FieldTable::name(f) << ": " << el.to_string();
    const ElasticEntry& shared = el.entries()[0];
    const ElasticEntry& alone = el.entries()[1];
    EXPECT_EQ(alone.ranks, Ranklist::from_ranks({5}));
    EXPECT_EQ(alone.values.size(), 100u);
    EXPECT_EQ(shared.ranks.size(), static_cast<std::size_t>(kRanks - 1));
    EXPECT_FALSE(shared.ranks.contains(5));
    ASSERT_TRUE(shared.values.is_histogram());
    // The largest member (rank 15: 55 sends) takes every value, the others
    // a part of them.
    EXPECT_EQ(shared.values.size(), 55u) << FieldTable::name(f);
  }
  // The pooled offsets in proportion: rounding at each merge round moves a
  // value's count by less than one, so the shares stay close to the exact
  // ones (one rank's histogram alone, scaled, is far from them).
  EXPECT_LT(l1_share_distance(t.nodes[0].field(peer)->entries()[0].values, pooled), 0.15);
  // The exact sequences (the right-neighbour sends) are untouched.
  const Elastic& tail = *t.nodes[1].field(peer);
  ASSERT_EQ(tail.entries().size(), 1u);
  EXPECT_FALSE(tail.entries()[0].values.is_histogram());
  EXPECT_EQ(tail.entries()[0].values.to_string(), "1*10");
  EXPECT_EQ(t.lossy, "histogram threshold=4; histograms shared by alike ranks: count, peer");
  // Every rank still expands to its own number of calls.
  for (int32_t r = 0; r < kRanks; ++r)
    EXPECT_EQ(expand_rank(t, r).size(),
              static_cast<std::size_t>(sends[static_cast<std::size_t>(r)] + 10));
  // The shared form is what makes the trace small: one entry per class.
  std::size_t own_bytes = 0;
  for (const Trace& one : ranks) own_bytes += encode_compact(one).size();
  EXPECT_LT(encode_compact(t).size() * 4, own_bytes);
  // And it reads back as written.
  EXPECT_EQ(format_trace(parse_trace(format_trace(t), "t")), format_trace(t));
}

// merge --histogram-threshold makes the histograms after merging: the
// shared form is then made by share_histograms, the same as the merge's.
TEST(MergeHistograms, ShareAfterMergingEqualsShareWhileMerging) {
  CommTable comms;
  comms.define_world(kRanks);
  std::vector<int> sends(kRanks, 200);
  const Trace while_merging = reduce_traces(lossy_ranks(sends, comms));
  Trace after = reduce_traces(rank_traces(sends, comms));
  ASSERT_TRUE(apply_histogram_threshold(after, 4));
  share_histograms(after);
  for (FieldId f : {FieldTable::peer(), *FieldTable::find("count")}) {
    const Elastic& a = *after.nodes.at(0).field(f);
    const Elastic& b = *while_merging.nodes.at(0).field(f);
    ASSERT_EQ(a.entries().size(), 1u);
    ASSERT_EQ(b.entries().size(), 1u);
    EXPECT_EQ(a.entries()[0].values.size(), 200u);
    EXPECT_EQ(a.entries()[0].ranks.size(), static_cast<std::size_t>(kRanks));
    // Equal member counts: the same pool whichever way, but for the
    // rounding of each merge round (less than one value per value and
    // round).
    EXPECT_LT(l1_share_distance(b.entries()[0].values, counts_of(a.entries()[0].values)), 0.15);
  }
  EXPECT_EQ(after.lossy, while_merging.lossy);
}

// Lossless traces never share: only histograms are pooled.
TEST(MergeHistograms, LosslessTracesAreLeftAlone) {
  CommTable comms;
  comms.define_world(kRanks);
  Trace t = reduce_traces(rank_traces(std::vector<int>(kRanks, 48), comms));
  EXPECT_EQ(t.nodes.at(0).field(FieldTable::peer())->entries().size(),
            static_cast<std::size_t>(kRanks));
  const std::string before = format_trace(t);
  share_histograms(t);
  EXPECT_EQ(format_trace(t), before);
  EXPECT_TRUE(t.lossy.empty());
  for (int32_t r = 0; r < kRanks; ++r) {
    std::vector<Event> want = irregular_rank(r, 48, 7);
    const std::vector<Event> got = expand_rank(t, r);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(got[i].get(FieldTable::peer()), want[i].get(FieldTable::peer()));
  }
}

}  // namespace
}  // namespace tracefold

namespace tracefold {
namespace {

// One rank of a polling exchange: per round, MPI_Iprobe(ANY_SOURCE) until a
// message is there (an irregular number of empty polls), MPI_Recv from the
// left neighbour, MPI_Send to the right one.
std::vector<Event> polling_rank(int32_t rank, int rounds) {
  std::mt19937_64 rng(99 + static_cast<uint64_t>(rank));
  std::vector<Event> evs;
  const int64_t left = (rank + kRanks - 1) % kRanks, right = (rank + 1) % kRanks;
  for (int i = 0; i < rounds; ++i) {
    const int empty = static_cast<int>(rng() % 40);
    for (int k = 0; k <= empty; ++k)
      evs.push_back(testing::make_event(
          "MPI_Iprobe", 0, {{"peer", kAny}, {"tag", 5}, {"comm", 0}, {"flag", k == empty}}));
    evs.push_back(testing::make_event("MPI_Recv", 1,
                                      {{"peer", left}, {"tag", 5}, {"count", 8}, {"comm", 0}}));
    evs.push_back(testing::make_event("MPI_Send", 2,
                                      {{"peer", right}, {"tag", 5}, {"count", 8}, {"comm", 0}}));
  }
  return evs;
}

TEST(MergeHistograms, PollLoopsAreModelledAndSharedWhileSendsAndReceivesStayExact) {
  CommTable comms;
  comms.define_world(kRanks);
  FoldOptions lossy;
  lossy.histogram_threshold = 4;
  constexpr int kRounds = 30;
  std::vector<Trace> ranks;
  for (int32_t r = 0; r < kRanks; ++r) {
    Folder f(r, lossy);
    for (Event e : polling_rank(r, kRounds)) {
      encode_relative(e, r, comms);
      f.append(e);
    }
    ranks.push_back(f.finish(kRanks, testing::make_sites(3), comms));
  }
  const Trace t = reduce_traces(ranks);
  EXPECT_NE(t.lossy.find("poll loops modelled"), std::string::npos) << t.lossy;
  const Node* probe = nullptr;
  for (const Node& n : t.nodes)
    if (OpTable::name(n.key.op) == "MPI_Iprobe") probe = &n;
  ASSERT_NE(probe, nullptr);
  ASSERT_FALSE(probe->loops.empty());
  // Every rank's trip counts are one histogram class (30 loop entries):
  // the ranks share one entry instead of keeping one each.
  const Elastic& iters = probe->loops.back().iters;
  ASSERT_EQ(iters.entries().size(), 1u) << iters.to_string();
  EXPECT_TRUE(iters.entries()[0].values.is_histogram());
  EXPECT_EQ(iters.entries()[0].values.size(), static_cast<uint64_t>(kRounds));
  for (const auto& [f, el] : probe->fields)
    for (const ElasticEntry& e : el.entries())
      EXPECT_TRUE(e.values.is_histogram()) << FieldTable::name(f) << ": " << el.to_string();
  // The real communications expand exactly as recorded on every rank.
  for (int32_t r = 0; r < kRanks; ++r) {
    std::vector<std::pair<std::string, int64_t>> want, got;
    for (const Event& e : polling_rank(r, kRounds))
      if (OpTable::name(e.op) != "MPI_Iprobe")
        want.emplace_back(OpTable::name(e.op), e.get(FieldTable::peer()));
    RankIterator it(t, r);
    Event e;
    int64_t probes = 0;
    while (it.next(e)) {
      if (OpTable::name(e.op) == "MPI_Iprobe")
        ++probes;
      else
        got.emplace_back(OpTable::name(e.op), e.get(FieldTable::peer()));
    }
    EXPECT_EQ(got, want) << "rank " << r;
    EXPECT_GE(probes, kRounds) << "rank " << r;
  }
}

}  // namespace
}  // namespace tracefold
