// Phases of different shapes inside one global pattern (split_phases):
// code that does two exchanges in one function, one loop iteration after
// the other, makes one per-process repeat of both, so the messages join
// them into one global pattern whose union of edges may well fit a shape
// that neither phase is. The tags tell the phases apart.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "classes_internal.hpp"
#include "shapes_internal.hpp"

namespace tracefold::patterns {

namespace {

using detail::Edge;
using detail::EdgeSet;

// The grid of a halo's `grid` parameter (`3x2`: slowest first), fastest
// first; empty if it does not parse.
std::vector<int64_t> grid_of(const std::string& text) {
  std::vector<int64_t> sides;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t x = text.find('x', at);
    const std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return {};
    sides.insert(sides.begin(), std::stoll(part));
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return sides;
}

// The step from a to b on `grid` per axis, -1, 0 or +1, a wrap round an
// axis counted as the step it makes (from the last coordinate to the
// first is +1).
std::vector<int> step(const std::vector<int64_t>& grid, int32_t a, int32_t b) {
  std::vector<int> d;
  int64_t pa = a, pb = b;
  for (int64_t side : grid) {
    int64_t s = pb % side - pa % side;
    if (s > 1) s = -1;
    if (s < -1) s = 1;
    d.push_back(static_cast<int>(s));
    pa /= side;
    pb /= side;
  }
  return d;
}

// `g`'s channels and rank orders of the tags `mine` says yes to, the
// per-process patterns shared (as the tag phases below share them).
GlobalPattern part_of(const GlobalPattern& g, const std::function<bool(int64_t)>& mine) {
  GlobalPattern part;
  part.patterns = g.patterns;
  for (const Channel& c : g.channels)
    if (mine(c.tag)) {
      part.channels.push_back(c);
      part.messages += c.messages;
    }
  for (const ChannelClass& k : g.channel_classes)
    if (mine(k.tag)) {
      part.channel_classes.push_back(k);
      part.messages += k.messages * k.senders.size();
    }
  // Alike ranks share their steps: each list is filtered once.
  std::map<const std::vector<HopStep>*, std::shared_ptr<const std::vector<HopStep>>> kept;
  for (const GlobalPattern::Order& o : g.order) {
    if (!o.steps) continue;
    auto [it, fresh] = kept.try_emplace(o.steps.get());
    if (fresh) {
      auto steps = std::make_shared<std::vector<HopStep>>();
      for (const HopStep& h : *o.steps)
        if (mine(h.tag)) steps->push_back(h);
      if (!steps->empty()) it->second = std::move(steps);
    }
    if (!it->second) continue;
    GlobalPattern::Order own = o;
    own.steps = it->second;
    part.order.push_back(std::move(own));
  }
  return part;
}

// `g` split by how its messages are received, when some tags are
// received by blocking receives only and the others by posted ones only:
// lu's sweeps (blocking receives from upstream before the sends on) and
// its halo (MPI_Irecv, MPI_Isend, MPI_Wait) run over the same grid edges
// in one loop, so neither the edges nor the tags' edge sets tell them
// apart, only the receive mode. Both parts must have a shape of their own.
std::optional<std::vector<GlobalPattern>> split_modes(const GlobalPattern& g, int32_t ranks) {
  std::map<int64_t, int> mode;  // per tag: 1 blocking receives, 2 other, 3 both
  for (const GlobalPattern::Order& o : g.order)
    if (o.steps)
      for (const HopStep& h : *o.steps)
        if (!h.send) mode[h.tag] |= h.blocking ? 1 : 2;
  bool blocking = false, posted = false;
  for (const auto& [tag, m] : mode) {
    if (m == 3) return std::nullopt;
    (m == 1 ? blocking : posted) = true;
  }
  if (!blocking || !posted) return std::nullopt;
  std::vector<GlobalPattern> parts;
  for (const int want : {1, 2}) {
    // Channels of tags no receive hop names (outside the per-process
    // patterns) go with the first part.
    std::vector<GlobalPattern> one{part_of(g, [&](int64_t tag) {
      auto it = mode.find(tag);
      return it == mode.end() ? want == 1 : it->second == want;
    })};
    detail::sort_globals(one);
    GlobalPattern& part = one.front();
    part.shape = classify(part, ranks);
    if (part.shape.kind == ShapeKind::kUnclassified || part.shape.kind == ShapeKind::kIrregular)
      return std::nullopt;
    parts.push_back(std::move(part));
  }
  parts[0].loose_events = g.loose_events;
  parts[0].collectives = g.collectives;
  return parts;
}

}  // namespace

std::vector<GlobalPattern> split_phases(GlobalPattern g, int32_t ranks) {
  if (std::optional<std::vector<GlobalPattern>> modes = split_modes(g, ranks)) {
    std::vector<GlobalPattern> out;
    for (GlobalPattern& part : *modes)
      for (GlobalPattern& p : split_phases(std::move(part), ranks)) out.push_back(std::move(p));
    return out;
  }
  std::vector<GlobalPattern> whole;
  if (g.shape.kind != ShapeKind::kHalo) {
    whole.push_back(std::move(g));
    return whole;
  }
  // Tags whose messages go over the same edges are one phase (the rows'
  // reduction and dot products of a CG); only a phase on other edges can
  // have another shape.
  std::map<std::pair<int64_t, int64_t>, EdgeSet> by_tag;
  g.for_each_channel([&](const Channel& c) { by_tag[{c.comm, c.tag}].emplace_back(c.from, c.to); });
  std::map<EdgeSet, std::vector<std::pair<int64_t, int64_t>>> phases;
  for (auto& [tag, edges] : by_tag) {
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    phases[edges].push_back(tag);
  }
  const std::vector<int64_t> grid = grid_of(g.shape.param("grid"));
  if (phases.size() < 2 || grid.empty()) {
    whole.push_back(std::move(g));
    return whole;
  }
  // A halo sent one direction or one axis at a time has phases too, but
  // each holds every edge of the grid that steps its way: one halo. A
  // phase that holds some of a direction's edges and not others is an
  // exchange of its own.
  std::map<std::vector<int>, std::size_t> per_step;
  for (const Edge& e : g.edges)
    if (e.first != e.second) ++per_step[step(grid, e.first, e.second)];
  bool apart = false;
  for (const auto& [edges, tags] : phases) {
    std::map<std::vector<int>, std::size_t> mine;
    for (const Edge& e : edges)
      if (e.first != e.second) ++mine[step(grid, e.first, e.second)];
    for (const auto& [d, n] : mine) apart = apart || n != per_step[d];
  }
  if (!apart) {
    whole.push_back(std::move(g));
    return whole;
  }
  // One pattern per phase, in order of its first tag, each named alone;
  // all share the per-process patterns (the ranks' repeats hold both).
  std::map<std::pair<int64_t, int64_t>, std::size_t> phase_of;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ordered;
  for (const auto& [edges, tags] : phases) ordered.push_back(tags);
  std::sort(ordered.begin(), ordered.end());
  std::vector<GlobalPattern> parts(ordered.size());
  for (std::size_t p = 0; p < ordered.size(); ++p) {
    for (const auto& t : ordered[p]) phase_of[t] = p;
    parts[p].patterns = g.patterns;
    parts[p].order = g.order;  // the steps are shared, not copied
  }
  parts[0].loose_events = g.loose_events;
  parts[0].collectives = g.collectives;
  for (const Channel& c : g.channels) {
    GlobalPattern& part = parts[phase_of.at({c.comm, c.tag})];
    part.channels.push_back(c);
    part.messages += c.messages;
  }
  for (const ChannelClass& k : g.channel_classes) {
    GlobalPattern& part = parts[phase_of.at({k.comm, k.tag})];
    part.channel_classes.push_back(k);
    part.messages += k.messages * k.senders.size();
  }
  detail::sort_globals(parts);
  for (GlobalPattern& part : parts) {
    part.shape = classify(part, ranks);
    // A phase that fits nothing is no better a name than the whole.
    if (part.shape.kind == ShapeKind::kUnclassified || part.shape.kind == ShapeKind::kIrregular) {
      whole.push_back(std::move(g));
      return whole;
    }
  }
  return parts;
}

}  // namespace tracefold::patterns
