#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns {

namespace {

struct UnionFind {
  std::vector<std::size_t> parent;
  std::size_t add() {
    parent.push_back(parent.size());
    return parent.size() - 1;
  }
  std::size_t find(std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

}  // namespace

std::vector<GlobalPattern> assemble(std::span<const RankEvents> ranks) {
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
  using Channel = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  struct Ends {
    std::vector<std::size_t> sends, recvs;  // units
  };
  std::map<Channel, Ends> channels;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankEvents& r = ranks[i];
    for (std::size_t e = 0; e < r.events.size(); ++e) {
      const Message& m = r.events[e];
      const bool sends = m.kind == Message::Kind::kSend || m.kind == Message::Kind::kSendrecv;
      if (sends && !is_sentinel(m.peer) && !is_sentinel(m.tag) && m.peer != kAbsent)
        channels[{r.rank, m.peer, m.comm, m.tag}].sends.push_back(unit_of[i][e]);
      // A receive whose source or tag is unknown matches nothing.
      const int64_t from = m.kind == Message::Kind::kSendrecv ? m.rpeer : m.peer;
      const int64_t tag = m.kind == Message::Kind::kSendrecv ? m.rtag : m.tag;
      const bool receives = m.kind == Message::Kind::kRecv || m.kind == Message::Kind::kSendrecv;
      if (receives && !is_sentinel(from) && !is_sentinel(tag) && from != kAbsent)
        channels[{from, r.rank, m.comm, tag}].recvs.push_back(unit_of[i][e]);
    }
  }
  std::vector<std::tuple<std::size_t, int32_t, int32_t>> matched;  // (send unit, from, to)
  for (const auto& [ch, ends] : channels) {
    const std::size_t n = std::min(ends.sends.size(), ends.recvs.size());
    for (std::size_t k = 0; k < n; ++k) {
      uf.join(ends.sends[k], ends.recvs[k]);
      matched.emplace_back(ends.sends[k], static_cast<int32_t>(std::get<0>(ch)),
                           static_cast<int32_t>(std::get<1>(ch)));
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
  for (const auto& [unit, from, to] : matched) {
    auto it = index.find(uf.find(unit));
    if (it == index.end()) continue;
    ++out[it->second].messages;
    out[it->second].edges.emplace_back(from, to);
  }
  for (GlobalPattern& g : out) {
    std::sort(g.edges.begin(), g.edges.end());
    g.edges.erase(std::unique(g.edges.begin(), g.edges.end()), g.edges.end());
  }
  return out;
}

}  // namespace tracefold::patterns
