#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "classes_internal.hpp"
#include "tracefold/patterns.hpp"
#include "tracefold/union_find.hpp"

namespace tracefold::patterns {

GlobalPattern::Order GlobalPattern::Order::of(int32_t rank, const std::vector<Hop>& hops,
                                              std::size_t occurrences) {
  Order o;
  o.rank = rank;
  o.occurrences = occurrences;
  auto steps = std::make_shared<std::vector<HopStep>>();
  steps->reserve(hops.size());
  for (const Hop& h : hops) {
    auto at = std::find(o.partners.begin(), o.partners.end(), h.peer);
    if (at == o.partners.end()) at = o.partners.insert(at, h.peer);
    steps->push_back({static_cast<uint32_t>(at - o.partners.begin()), h.send, h.blocking, h.tag});
  }
  o.steps = std::move(steps);
  return o;
}

std::vector<Hop> GlobalPattern::Order::hops() const {
  std::vector<Hop> out;
  out.reserve(size());
  for (std::size_t i = 0; i < size(); ++i) out.push_back(hop(i));
  return out;
}

std::vector<Channel> GlobalPattern::spelled_channels() const {
  std::vector<Channel> out;
  for_each_channel([&](const Channel& c) { out.push_back(c); });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<GlobalPattern> assemble(std::span<const RankEvents> ranks,
                                    std::vector<std::vector<int32_t>>* global_of) {
  // Units: one per (rank, per-process pattern), one per loose event.
  UnionFind uf;
  std::map<std::pair<int32_t, int32_t>, std::size_t> pattern_unit;
  std::vector<std::vector<std::size_t>> unit_of(ranks.size());
  std::vector<bool> is_pattern;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankEvents& r = ranks[i];
    if (r.pattern_of.size() != r.events.size())
      throw std::invalid_argument("assemble: rank " + std::to_string(r.rank) + " has " +
                                  std::to_string(r.events.size()) + " events but " +
                                  std::to_string(r.pattern_of.size()) + " pattern marks");
    for (int32_t p : r.pattern_of) {
      if (p < 0) {
        unit_of[i].push_back(uf.add());
        is_pattern.push_back(false);
        continue;
      }
      auto [it, fresh] = pattern_unit.try_emplace({r.rank, p}, 0);
      if (fresh) {
        it->second = uf.add();
        is_pattern.push_back(true);
      }
      unit_of[i].push_back(it->second);
    }
  }
  // Channels (sender, receiver, comm, tag): sends and receives in order.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  struct Ends {
    std::vector<std::pair<std::size_t, std::size_t>> sends, recvs;  // (rank index, event)
  };
  std::map<Key, Ends> channels;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankEvents& r = ranks[i];
    for (std::size_t e = 0; e < r.events.size(); ++e) {
      const Message& m = r.events[e];
      if (const auto to = detail::sent_to(m))
        channels[{r.rank, to->first, m.comm, to->second}].sends.emplace_back(i, e);
      if (const auto from = detail::received_from(m))
        channels[{from->first, r.rank, m.comm, from->second}].recvs.emplace_back(i, e);
    }
  }
  // The channels that matched something; per event, the hops it makes (a
  // Sendrecv may make two).
  std::vector<Channel> chans;
  chans.reserve(channels.size());
  std::vector<std::vector<std::pair<std::size_t, Hop>>> hops(ranks.size());  // (event, hop)
  for (const auto& [ch, ends] : channels) {
    const std::size_t n = std::min(ends.sends.size(), ends.recvs.size());
    if (n == 0) continue;
    Channel& c = chans.emplace_back();
    c.from = static_cast<int32_t>(std::get<0>(ch));
    c.to = static_cast<int32_t>(std::get<1>(ch));
    c.comm = std::get<2>(ch);
    c.tag = std::get<3>(ch);
    for (std::size_t k = 0; k < n; ++k) {
      const auto [si, se] = ends.sends[k];
      const auto [ri, re] = ends.recvs[k];
      uf.unite(unit_of[si][se], unit_of[ri][re]);
      const Message& rm = ranks[ri].events[re];
      ++c.messages;
      c.bytes += ranks[si].events[se].bytes;
      if (rm.wildcard) ++c.wildcard;
      hops[si].push_back({se, {c.to, true, false, c.tag}});
      hops[ri].push_back(
          {re, {c.from, false, rm.blocking && rm.kind == Message::Kind::kRecv, c.tag}});
    }
  }
  // Components holding a per-process pattern become global patterns.
  std::map<std::size_t, std::size_t> index;  // root -> position in out
  std::vector<GlobalPattern> out;
  for (const auto& [key, unit] : pattern_unit) {  // sorted by (rank, pattern)
    auto [it, fresh] = index.try_emplace(uf.find(unit), out.size());
    if (fresh) out.emplace_back();
    out[it->second].patterns.push_back(key);
  }
  for (std::size_t u = 0; u < is_pattern.size(); ++u) {
    if (is_pattern[u]) continue;
    auto it = index.find(uf.find(u));
    if (it != index.end()) ++out[it->second].loose_events;
  }
  // One channel's messages may lie in different global patterns (a tag
  // reused by two phases that never meet), so each message is counted
  // where its own send lies.
  for (const Channel& c : chans) {
    const auto& ends = channels.at({c.from, c.to, c.comm, c.tag});
    std::map<std::size_t, Channel> per_pattern;
    for (std::size_t k = 0; k < c.messages; ++k) {
      const auto [si, se] = ends.sends[k];
      auto it = index.find(uf.find(unit_of[si][se]));
      if (it == index.end()) continue;
      Channel& part =
          per_pattern.try_emplace(it->second, Channel{c.from, c.to, c.comm, c.tag}).first->second;
      ++part.messages;
      part.bytes += ranks[si].events[se].bytes;
      const auto [ri, re] = ends.recvs[k];
      if (ranks[ri].events[re].wildcard) ++part.wildcard;
    }
    for (auto& [g, part] : per_pattern) {
      out[g].messages += part.messages;
      out[g].channels.push_back(part);
    }
  }
  // Each rank's hops inside its per-process patterns, by global pattern.
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankEvents& r = ranks[i];
    struct Spelled {
      std::vector<Hop> hops;
      std::size_t occurrences = 1;
    };
    std::map<std::size_t, Spelled> orders;
    // In the rank's order of events (a Sendrecv makes two hops of one event).
    std::stable_sort(hops[i].begin(), hops[i].end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [e, hop] : hops[i]) {
      const int32_t p = r.pattern_of[e];
      if (p < 0) continue;
      auto it = index.find(uf.find(unit_of[i][e]));
      if (it == index.end()) continue;
      auto [o, fresh] = orders.try_emplace(it->second);
      if (fresh) {
        const auto pi = static_cast<std::size_t>(p);
        o->second.occurrences = pi < r.occurrences.size() ? r.occurrences[pi] : 1;
      }
      o->second.hops.push_back(hop);
    }
    for (const auto& [g, o] : orders)
      out[g].order.push_back(GlobalPattern::Order::of(r.rank, o.hops, o.occurrences));
  }
  if (global_of) {
    global_of->assign(ranks.size(), {});
    for (std::size_t i = 0; i < ranks.size(); ++i)
      for (std::size_t unit : unit_of[i]) {
        auto it = index.find(uf.find(unit));
        (*global_of)[i].push_back(it == index.end() ? -1 : static_cast<int32_t>(it->second));
      }
  }
  detail::sort_globals(out);
  return out;
}

namespace detail {
void sort_globals(std::vector<GlobalPattern>& out) {
  for (GlobalPattern& g : out) {
    std::sort(g.channels.begin(), g.channels.end());
    std::sort(g.order.begin(), g.order.end(),
              [](const auto& a, const auto& b) { return a.rank < b.rank; });
    // The edges are the channels' (sender, receiver) pairs, each once.
    std::size_t channels = g.channels.size();
    for (const ChannelClass& k : g.channel_classes) channels += k.senders.size();
    std::vector<std::pair<int32_t, int32_t>> all;
    all.reserve(channels);
    g.for_each_channel([&](const Channel& c) { all.emplace_back(c.from, c.to); });
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    // A channel per direction and tag is some twice as many as edges: the
    // edges keep no room for them.
    g.edges.assign(all.begin(), all.end());
  }
}
}  // namespace detail

}  // namespace tracefold::patterns
