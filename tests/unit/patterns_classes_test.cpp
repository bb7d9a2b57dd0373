// find_process_patterns over classes of alike ranks (src/analysis/patterns/
// classes.cpp, assemble_classes.cpp): ranks the folded trace cannot tell
// apart are walked once, and the result must be the one of walking every
// rank. Absolute peers are worked on over the same classes, each rank's
// symbols named at the end; the tests below check them against each
// rank's own absolute symbols, searched rank by rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "../../src/analysis/patterns/classes_internal.hpp"
#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

using testing::fold_ranks;
using testing::make_event;

constexpr int32_t kRanks = 12;
constexpr int64_t kHalves = 5;  // a communicator of the even and one of the odd ranks

// Sites 1-3: a 1-D halo exchange (not periodic, so ranks 0 and 11 have one
// neighbour), 4: an Allreduce, 5-6: a ring on each half's communicator.
std::vector<std::vector<Event>> program() {
  std::vector<std::vector<Event>> ranks(kRanks);
  for (int32_t r = 0; r < kRanks; ++r) {
    auto& ev = ranks[static_cast<std::size_t>(r)];
    for (int step = 0; step < 4; ++step) {
      int requests = 0;
      for (int32_t d : {-1, 1})
        if (r + d >= 0 && r + d < kRanks) {
          ev.push_back(make_event("MPI_Irecv", 2,
                                  {{"peer", r + d}, {"tag", 1}, {"count", 8}, {"dsize", 8}}));
          ev.push_back(make_event("MPI_Isend", 1,
                                  {{"peer", r + d}, {"tag", 1}, {"count", 8}, {"dsize", 8}}));
          requests += 2;
        }
      ev.push_back(make_event("MPI_Waitall", 3, {{"count", requests}}));
      ev.push_back(make_event("MPI_Allreduce", 4, {{"count", 1}, {"dsize", 8}}));
    }
    const int32_t me = r / 2, size = kRanks / 2;
    for (int step = 0; step < 3; ++step) {
      ev.push_back(make_event(
          "MPI_Send", 5,
          {{"peer", (me + 1) % size}, {"tag", 2}, {"comm", kHalves}, {"count", 4}, {"dsize", 4}}));
      ev.push_back(make_event("MPI_Recv", 6,
                              {{"peer", (me + size - 1) % size},
                               {"tag", 2},
                               {"comm", kHalves},
                               {"count", 4},
                               {"dsize", 4}}));
    }
  }
  return ranks;
}

CommTable comms() {
  CommTable c;
  c.define_world(kRanks);
  std::vector<int32_t> even, odd;
  for (int32_t r = 0; r < kRanks; ++r) (r % 2 ? odd : even).push_back(r);
  c.define(kHalves, CommGroup{MemberList(even)});
  c.define(kHalves, CommGroup{MemberList(odd)});
  return c;
}

std::string context(SiteId site) {
  return site <= 3 ? "halo" : site == 4 ? "reduce" : "ring";
}

Result run(const Trace& t, PeerMode peers) {
  Options o;
  o.peers = peers;
  return find_process_patterns(t, o, context);
}

TEST(PatternsClasses, AlikeRanksShareAClass) {
  const Trace t = fold_ranks(program(), comms());
  const std::vector<uint32_t> cls = detail::rank_classes(t);
  ASSERT_EQ(cls.size(), static_cast<std::size_t>(kRanks));
  EXPECT_EQ(cls[0], 0u);
  for (int32_t r = 2; r < kRanks - 1; ++r) EXPECT_EQ(cls[static_cast<std::size_t>(r)], cls[1]) << r;
  EXPECT_NE(cls[1], cls[0]);
  EXPECT_NE(cls[kRanks - 1], cls[0]);
  EXPECT_NE(cls[kRanks - 1], cls[1]);
}

TEST(PatternsClasses, SameResultAsEveryRankWalked) {
  const Trace t = fold_ranks(program(), comms());
  const Result shared = run(t, PeerMode::kRelative);
  const Result each = run(t, PeerMode::kAbsolute);
  // Relative symbols: the inner ranks are one group; absolute: one each.
  ASSERT_EQ(shared.groups.size(), 3u);
  EXPECT_EQ(shared.groups[1].ranks, Ranklist::range(1, kRanks - 2));
  EXPECT_EQ(each.groups.size(), static_cast<std::size_t>(kRanks));
  ASSERT_EQ(shared.global.size(), each.global.size());
  ASSERT_FALSE(shared.global.empty());
  bool halo = false;
  for (std::size_t g = 0; g < shared.global.size(); ++g) {
    const GlobalPattern &a = shared.global[g], &b = each.global[g];
    EXPECT_EQ(a.patterns, b.patterns) << g;
    EXPECT_EQ(a.edges, b.edges) << g;
    EXPECT_EQ(a.messages, b.messages) << g;
    EXPECT_EQ(a.loose_events, b.loose_events) << g;
    EXPECT_EQ(a.spelled_channels(), b.spelled_channels()) << g;
    ASSERT_EQ(a.order.size(), b.order.size()) << g;
    for (std::size_t o = 0; o < a.order.size(); ++o) {
      EXPECT_EQ(a.order[o].rank, b.order[o].rank);
      EXPECT_EQ(a.order[o].hops(), b.order[o].hops());
      EXPECT_EQ(a.order[o].occurrences, b.order[o].occurrences);
    }
    EXPECT_EQ(a.shape.title(), b.shape.title()) << g;
    EXPECT_EQ(a.shape.params, b.shape.params) << g;
    halo = halo || a.edges.size() == 2 * (kRanks - 1);
  }
  EXPECT_TRUE(halo) << "no global pattern with the halo's 22 edges";
  EXPECT_EQ(shared.cover.events, each.cover.events);
  EXPECT_EQ(shared.cover.in_one, each.cover.in_one);
  EXPECT_EQ(shared.cover.in_several, each.cover.in_several);
  // 4 steps of up to 4 halo calls and an Allreduce, 3 of 2 ring calls.
  EXPECT_EQ(shared.cover.events, static_cast<std::size_t>(kRanks) * (4 * 5 + 3 * 2) - 2 * 4 * 2);
  std::size_t single_a = 0, single_b = 0;
  for (const auto& s : shared.cover.singles) single_a += s.count * s.ranks.size();
  for (const auto& s : each.cover.singles) single_b += s.count * s.ranks.size();
  EXPECT_EQ(single_a, single_b);
  EXPECT_EQ(shared.cover.in_one + shared.cover.in_several + single_a, shared.cover.events);
}

// Ranks 3 to 8 meet only inner ranks (class 1) in the halo, so their
// messages match alike: their hops are one list of steps for all six, and
// each rank keeps only its partners, one per list of messages (from and
// to the left and the right). The hops themselves are checked against the
// walk of every rank above.
TEST(PatternsClasses, AlikeRanksShareTheirHopSteps) {
  const Result shared = run(fold_ranks(program(), comms()), PeerMode::kRelative);
  std::set<const std::vector<HopStep>*> steps;
  std::size_t orders = 0;
  for (const GlobalPattern& g : shared.global)
    for (const GlobalPattern::Order& o : g.order)
      if (o.rank >= 3 && o.rank <= 8) {
        ASSERT_TRUE(o.steps);
        steps.insert(o.steps.get());
        ++orders;
        EXPECT_EQ(o.size(), 16u) << o.rank;  // 4 steps of 2 receives and 2 sends
        // In order of first use: from and to the left, then the right.
        EXPECT_EQ(o.partners,
                  (std::vector<int32_t>{o.rank - 1, o.rank - 1, o.rank + 1, o.rank + 1}))
            << o.rank;
      }
  EXPECT_EQ(orders, 6u);
  EXPECT_EQ(steps.size(), 1u);
}

// The receiver of a class's sender: a relative peer wraps round its
// group (modulo), an absolute one is a fixed distance away (modulo 0).
TEST(PatternsClasses, ChannelClassSpellsItsChannels) {
  const ChannelClass ring{Ranklist::range(0, 4), 1, 4, 0, 7, 2, 64, 1};
  GlobalPattern g;
  g.channels = {{9, 8, 0, 3, 1, 8, 0}};
  g.channel_classes = {ring, {Ranklist::range(5, 2), -5, 0, 0, 7, 1, 16, 0}};
  std::vector<Channel> seen;
  g.for_each_channel([&](const Channel& c) { seen.push_back(c); });
  EXPECT_EQ(seen, (std::vector<Channel>{{9, 8, 0, 3, 1, 8, 0},
                                        {0, 1, 0, 7, 2, 64, 1},
                                        {1, 2, 0, 7, 2, 64, 1},
                                        {2, 3, 0, 7, 2, 64, 1},
                                        {3, 0, 0, 7, 2, 64, 1},
                                        {5, 0, 0, 7, 1, 16, 0},
                                        {6, 1, 0, 7, 1, 16, 0}}));
  std::vector<Channel> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(g.spelled_channels(), sorted);
}

// find_process_patterns keeps a global pattern's channels by class: the
// halo's 22 channels are two entries (to the right from ranks 0-10, to the
// left from ranks 1-11), whatever the peer mode, and spelled out they are
// the channels of every rank, with the edges made from them.
TEST(PatternsClasses, ChannelsAreKeptByClass) {
  const Trace t = fold_ranks(program(), comms());
  for (PeerMode peers : {PeerMode::kRelative, PeerMode::kAbsolute}) {
    const Result r = run(t, peers);
    const GlobalPattern* halo = nullptr;
    for (const GlobalPattern& g : r.global)
      if (g.edges.size() == 2 * (kRanks - 1)) halo = &g;
    ASSERT_TRUE(halo);
    EXPECT_TRUE(halo->channels.empty());
    EXPECT_EQ(halo->channel_classes.size(), 2u);
    std::vector<Channel> expected;
    std::vector<std::pair<int32_t, int32_t>> edges;
    for (int32_t a = 0; a < kRanks; ++a)
      for (int32_t b : {a - 1, a + 1})
        if (b >= 0 && b < kRanks) {
          expected.push_back({a, b, 0, 1, 4, 4 * 64, 0});  // 4 steps of 8 doubles
          edges.emplace_back(a, b);
        }
    EXPECT_EQ(halo->spelled_channels(), expected);
    EXPECT_EQ(halo->edges, edges);
    EXPECT_EQ(halo->messages, expected.size() * 4);
  }
}

// Each rank's patterns as a walk of that rank alone finds them with
// absolute peers: its symbols' texts and the contexts of its events, and
// per pattern its context, positions and symbol texts. Ranks whose symbols
// and contexts are equal are one group, in order of their first rank.
struct RankAlone {
  std::vector<std::string> symbols, contexts;
  std::vector<std::tuple<std::string, std::vector<std::size_t>, std::vector<std::string>>> found;
};
std::vector<std::pair<Ranklist, RankAlone>> each_rank_alone(const Trace& t) {
  std::vector<std::pair<Ranklist, RankAlone>> groups;
  for (int32_t r = 0; r < t.world_size; ++r) {
    Alphabet a;
    std::vector<Symbol> text;
    std::vector<uint32_t> ctx;
    RankAlone mine;
    RankIterator it(t, r);
    Event ev;
    while (it.next(ev))
      if (std::optional<SymbolKey> k = symbol_of(ev, r, t.comms, PeerMode::kAbsolute)) {
        text.push_back(a.intern(*k));
        ctx.push_back(static_cast<uint32_t>(context(ev.site)[0]));  // halo, reduce, ring
        mine.symbols.push_back(a.describe(text.back(), PeerMode::kAbsolute));
        mine.contexts.push_back(context(ev.site));
      }
    for (const ProcessPattern& p : process_patterns(text, ctx)) {
      std::vector<std::string> texts;
      for (Symbol s : p.symbols) texts.push_back(a.describe(s, PeerMode::kAbsolute));
      mine.found.emplace_back(mine.contexts[p.positions.front()], p.positions, texts);
    }
    auto same = [&](const auto& g) {
      return g.second.symbols == mine.symbols && g.second.contexts == mine.contexts;
    };
    if (auto g = std::find_if(groups.begin(), groups.end(), same); g != groups.end())
      g->first.insert(r);
    else
      groups.emplace_back(Ranklist::single(r), std::move(mine));
  }
  return groups;
}

void expect_as_each_rank_alone(const Trace& t) {
  const Result r = run(t, PeerMode::kAbsolute);
  const auto alone = each_rank_alone(t);
  ASSERT_EQ(r.groups.size(), alone.size());
  for (std::size_t g = 0; g < alone.size(); ++g) {
    EXPECT_EQ(r.groups[g].ranks, alone[g].first) << g;
    EXPECT_EQ(r.groups[g].events, alone[g].second.symbols.size()) << g;
    ASSERT_EQ(r.groups[g].patterns.size(), alone[g].second.found.size()) << g;
    for (std::size_t p = 0; p < alone[g].second.found.size(); ++p) {
      const auto& e = r.groups[g].patterns[p];
      std::vector<std::string> texts;
      for (Symbol s : e.pattern.symbols)
        texts.push_back(r.alphabet.describe(s, PeerMode::kAbsolute));
      EXPECT_EQ(std::tuple(e.context, e.pattern.positions, texts), alone[g].second.found[p])
          << "group " << g << ", pattern " << p;
    }
  }
  // A single event's symbol names the rank's own partner: each rank has
  // as many events of that text and context as the singles give it.
  std::map<std::tuple<int32_t, std::string, std::string>, std::size_t> listed;
  for (const Result::Cover::Single& s : r.cover.singles)
    s.ranks.for_each([&](int32_t rank) {
      listed[{rank, s.context, r.alphabet.describe(s.symbol, PeerMode::kAbsolute)}] += s.count;
    });
  ASSERT_FALSE(listed.empty());
  for (const auto& [key, count] : listed) {
    const auto& [rank, ctx, text] = key;
    const RankAlone* mine = nullptr;
    for (const auto& [ranks, a] : alone)
      if (ranks.contains(rank)) mine = &a;
    ASSERT_TRUE(mine);
    std::size_t have = 0;
    for (std::size_t k = 0; k < mine->symbols.size(); ++k)
      have += mine->symbols[k] == text && mine->contexts[k] == ctx;
    EXPECT_LE(count, have) << "rank " << rank << " " << ctx << " " << text;
  }
}

// The halo and rings above: alike ranks of one class read differently
// with absolute peers (a group each).
TEST(PatternsClasses, AbsolutePeersAsEachRankAlone) {
  expect_as_each_rank_alone(fold_ranks(program(), comms()));
}

// Workers of different classes (their partner, rank 0, lies at another
// distance from each) that make the same absolute calls are one group:
// three times, each receives a task from 0 and sends its result back.
TEST(PatternsClasses, AbsolutePeersJoinRanksOfDifferentClasses) {
  constexpr int32_t kWorkers = 3;
  std::vector<std::vector<Event>> ranks(kWorkers + 1);
  for (int step = 0; step < 3; ++step) {
    for (int32_t w = 1; w <= kWorkers; ++w) {
      ranks[0].push_back(make_event("MPI_Send", 1, {{"peer", w}, {"tag", 1}, {"count", 2}}));
      ranks[static_cast<std::size_t>(w)].push_back(
          make_event("MPI_Recv", 2, {{"peer", 0}, {"tag", 1}, {"count", 2}}));
      ranks[static_cast<std::size_t>(w)].push_back(
          make_event("MPI_Send", 1, {{"peer", 0}, {"tag", 2}, {"count", 1}}));
    }
    for (int32_t w = 1; w <= kWorkers; ++w)
      ranks[0].push_back(make_event("MPI_Recv", 2, {{"peer", w}, {"tag", 2}, {"count", 1}}));
  }
  for (auto& ev : ranks) ev.push_back(make_event("MPI_Allreduce", 4, {{"count", 1}}));
  CommTable c;
  c.define_world(kWorkers + 1);
  const Trace t = fold_ranks(ranks, c);
  ASSERT_GT(detail::rank_classes(t)[2], detail::rank_classes(t)[1]);
  expect_as_each_rank_alone(t);
  EXPECT_EQ(run(t, PeerMode::kAbsolute).groups.at(1).ranks, Ranklist::range(1, kWorkers));
}

}  // namespace
}  // namespace tracefold::patterns
