// The multilevel fit (detail::fit_multilevel): one shape repeated over
// levels of message size, as a multigrid V-cycle exchanges.
#include <algorithm>
#include <functional>
#include <map>

#include "shapes_internal.hpp"

namespace tracefold::patterns::detail {

std::optional<Shape> fit_multilevel(const GlobalPattern& g, int32_t ranks) {
  std::map<uint64_t, EdgeSet, std::greater<>> levels;  // bytes per message, largest first
  g.for_each_channel([&](const Channel& c) {
    if (c.from != c.to) levels[c.messages ? c.bytes / c.messages : 0].emplace_back(c.from, c.to);
  });
  if (levels.size() < 2) return std::nullopt;
  Shape m;
  m.kind = ShapeKind::kMultilevel;
  std::string bytes, active, grids;
  std::size_t observed = 0;
  const EdgeSet* previous = nullptr;
  std::vector<int32_t> prev_ranks;
  std::size_t first_ranks = 0;
  for (auto& [b, edges] : levels) {
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    // A coarse level's ranks, renumbered in order, are the grid (or ring,
    // ...) it runs on: every other rank of a 4x4 grid is a 2x2 grid.
    std::vector<int32_t> in;
    for (const auto& [a, c] : edges) in.insert(in.end(), {a, c});
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    // Levels shrink or repeat the one before; a halo whose x and y
    // messages differ in size must not pass for two levels.
    if (previous && !(edges == *previous || in.size() < prev_ranks.size())) return std::nullopt;
    auto index = [&](int32_t r) {
      return static_cast<int32_t>(std::lower_bound(in.begin(), in.end(), r) - in.begin());
    };
    GlobalPattern level;
    const bool all = static_cast<int32_t>(in.size()) == ranks;
    for (const auto& [a, c] : edges)
      level.edges.emplace_back(all ? a : index(a), all ? c : index(c));
    std::sort(level.edges.begin(), level.edges.end());
    const Shape s = classify_edges(level, all ? ranks : static_cast<int32_t>(in.size()), false);
    if (s.kind == ShapeKind::kUnclassified || s.kind == ShapeKind::kIrregular) return std::nullopt;
    if (m.name.empty()) {
      m.name = "multilevel " + s.name;
      m.params = s.params;
    } else if (m.name != "multilevel " + s.name || s.param("neighbours") != m.param("neighbours")) {
      return std::nullopt;
    }
    auto world = [&](std::pair<int32_t, int32_t> e) {
      return all ? e
                 : std::make_pair(in[static_cast<std::size_t>(e.first)],
                                  in[static_cast<std::size_t>(e.second)]);
    };
    for (const auto& e : s.missing) m.missing.push_back(world(e));
    for (const auto& e : s.extra) m.extra.push_back(world(e));
    m.matched += s.matched;
    observed += edges.size();
    bytes += (bytes.empty() ? "" : ", ") + std::to_string(b);
    active += (active.empty() ? "" : ", ") + std::to_string(in.size());
    grids += (grids.empty() ? "" : ", ") + s.param("grid");
    previous = &edges;
    prev_ranks = in;
    if (first_ranks == 0) first_ranks = in.size();
  }
  // On the same ranks throughout, two fields of different sizes exchanged
  // with the same neighbours are no levels: ask for three or more that
  // shrink by one whole factor (a V-cycle halves).
  if (prev_ranks.size() == first_ranks) {
    if (levels.size() < 3) return std::nullopt;
    const uint64_t big = levels.begin()->first, next = std::next(levels.begin())->first;
    if (next == 0 || big % next != 0) return std::nullopt;
    const uint64_t factor = big / next;
    for (auto it = std::next(levels.begin()); it != levels.end(); ++it)
      if (it->first * factor != std::prev(it)->first) return std::nullopt;
  }
  std::sort(m.missing.begin(), m.missing.end());
  std::sort(m.extra.begin(), m.extra.end());
  m.quality = static_cast<double>(m.matched) / static_cast<double>(observed + m.missing.size());
  std::vector<std::pair<std::string, std::string>> params = {
      {"levels", std::to_string(levels.size())},
      {"bytes per level", bytes},
      {"ranks per level", active}};
  if (!m.param("grid").empty()) params.emplace_back("grid per level", grids);
  for (const auto& kv : m.params)
    if (kv.first != "bytes" && kv.first != "grid") params.push_back(kv);
  m.params = std::move(params);
  return m;
}

}  // namespace tracefold::patterns::detail
