// Naming a global pattern's shape (docs/patterns.md, "Shapes"): each shape
// builds the edges it expects from parameters read off the observed edges,
// and the fit that agrees best names the pattern. Grid shapes (halo,
// wavefront) are in shapes_grid.cpp, the others in shapes_fits.cpp and
// shapes_multilevel.cpp.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "shapes_internal.hpp"

namespace tracefold::patterns {

std::string Shape::title() const {
  if (kind == ShapeKind::kUnclassified) return "unclassified";
  std::string t = name;
  if (!partial()) return t;
  auto count = [](std::size_t n, const char* what) {
    return std::to_string(n) + (n == 1 ? " edge " : " edges ") + what;
  };
  t += ", partial (";
  if (!missing.empty()) t += count(missing.size(), "missing");
  if (!missing.empty() && !extra.empty()) t += ", ";
  if (!extra.empty()) t += count(extra.size(), "extra");
  return t + ")";
}

std::string Shape::param(const std::string& key) const {
  for (const auto& [k, v] : params)
    if (k == key) return v;
  return "";
}

namespace detail {

Shape scored(Shape s, const EdgeSet& observed, EdgeSet expected) {
  // The grid fits hand over sorted lists: checking costs less than sorting.
  if (!std::is_sorted(expected.begin(), expected.end()))
    std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  std::size_t matched = 0;
  for (auto o = observed.cbegin(), x = expected.cbegin();
       o != observed.cend() && x != expected.cend();)
    if (*o < *x) {
      ++o;
    } else if (*x < *o) {
      ++x;
    } else {
      ++matched, ++o, ++x;
    }
  s.matched = matched;
  const std::size_t missing = expected.size() - matched, extra = observed.size() - matched;
  const std::size_t all = observed.size() + missing;
  s.quality = all == 0 ? 0.0 : static_cast<double>(s.matched) / static_cast<double>(all);
  s.missing.clear();
  s.extra.clear();
  // The edges themselves only where the shape may be named (kMinQuality,
  // or one edge off): a poorer fit is never shown, and its lists would
  // hold about every edge (megabytes at 16,384 ranks, for each fit tried).
  if (s.quality < kMinQuality && missing + extra != 1) return s;
  std::set_difference(expected.begin(), expected.end(), observed.begin(), observed.end(),
                      std::back_inserter(s.missing));
  std::set_difference(observed.begin(), observed.end(), expected.begin(), expected.end(),
                      std::back_inserter(s.extra));
  return s;
}

bool better(const std::optional<Shape>& a, const std::optional<Shape>& b) {
  return a && (!b || a->quality > b->quality);
}

std::vector<std::size_t> out_degrees(const EdgeSet& edges, int32_t p) {
  std::vector<std::size_t> deg(static_cast<std::size_t>(p), 0);
  for (const auto& [a, b] : edges) ++deg[static_cast<std::size_t>(a)];
  return deg;
}

}  // namespace detail

namespace {

using detail::Edge;
using detail::EdgeSet;
using detail::out_degrees;

// `2:4, 3:1`: so many ranks send to so many partners.
std::string degree_text(const EdgeSet& edges, int32_t p) {
  std::map<std::size_t, std::size_t> hist;
  for (std::size_t d : out_degrees(edges, p))
    if (d > 0) ++hist[d];
  std::string out;
  for (const auto& [d, n] : hist)
    out += (out.empty() ? "" : ", ") + std::to_string(d) + ":" + std::to_string(n);
  return out;
}

// No regular shape: irregular if the neighbourhood is symmetric (most
// edges have their reverse) and every rank in it both sends and receives,
// as unstructured and AMG codes exchange; else unclassified.
Shape fallback(const EdgeSet& edges, int32_t p) {
  std::size_t symmetric = 0;
  std::vector<bool> sends(static_cast<std::size_t>(p), false), receives(sends);
  for (const auto& [a, b] : edges) {
    symmetric += std::binary_search(edges.begin(), edges.end(), Edge{b, a});
    sends[static_cast<std::size_t>(a)] = true;
    receives[static_cast<std::size_t>(b)] = true;
  }
  const double share = edges.empty() ? 0.0 : static_cast<double>(symmetric) / edges.size();
  Shape s;
  if (share >= 0.9 && sends == receives) {
    s.kind = ShapeKind::kIrregular;
    s.name = "irregular neighbourhood";
    const std::vector<std::size_t> deg = out_degrees(edges, p);
    std::size_t lo = SIZE_MAX, hi = 0, senders = 0;
    for (std::size_t r = 0; r < deg.size(); ++r) {
      if (!sends[r]) continue;
      ++senders;
      lo = std::min(lo, deg[r]);
      hi = std::max(hi, deg[r]);
    }
    s.params = {
        {"ranks", std::to_string(senders)},
        {"degree", lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi)},
        {"symmetric", std::to_string(static_cast<int>(share * 100 + 0.5)) + "%"}};
    s.quality = share;
    s.matched = symmetric;
    return s;
  }
  s.params = {{"edges", std::to_string(edges.size())}};
  // No point-to-point edge: collectives only, which are not fitted yet.
  if (!edges.empty()) s.params.emplace_back("out-degrees", degree_text(edges, p));
  return s;
}

bool acceptable(const Shape& s) {
  return s.quality >= kMinQuality || (s.missing.size() + s.extra.size() == 1 && s.matched >= 2);
}

}  // namespace

namespace detail {

Shape classify_edges(const GlobalPattern& g, int32_t p, bool levels) {
  EdgeSet edges;
  edges.reserve(g.edges.size());
  // A rank's messages to itself (the diagonal of a transpose) are local
  // copies, no part of a shape.
  for (const auto& e : g.edges)
    if (e.first >= 0 && e.second >= 0 && e.first < p && e.second < p && e.first != e.second)
      edges.push_back(e);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  if (edges.empty()) return fallback(edges, p);
  // In order of preference: a fit must beat the ones before it.
  // Once a fit is perfect, no later one can win: they are not tried.
  std::optional<Shape> best = fit_ring(edges, p);
  if (best && best->name == "shift")
    if (std::optional<Shape> pipeline = as_pipeline(g, *best)) best = std::move(pipeline);
  if (best && best->name == "ring")
    if (std::optional<Shape> collective = as_ring_collective(g, *best, p))
      best = std::move(collective);
  if (!detail::perfect(best)) {
    std::vector<int64_t> grid;
    std::optional<Shape> halo = detail::fit_halo(g, edges, p, grid);
    // A wavefront covers the grid a halo would: it goes first, and only the
    // ranks' order tells them apart.
    std::optional<Shape> wave = detail::fit_wavefront(g, edges, grid);
    if (wave && (!halo || wave->quality >= halo->quality)) halo = wave;
    if (detail::better(halo, best)) best = std::move(halo);
  }
  const std::function<std::optional<Shape>()> fits[] = {
      [&] { return fit_butterfly(edges, p); },        [&] { return fit_tree(edges, p); },
      [&] { return fit_master_worker(g, edges, p); }, [&] { return fit_pairwise(edges, p); },
      [&] { return fit_alltoall(edges, p); },         [&] { return fit_incast(edges, p); }};
  for (const auto& fit : fits) {
    if (detail::perfect(best)) break;
    if (std::optional<Shape> f = fit(); detail::better(f, best)) best = std::move(f);
  }
  // Levels are the more specific name when they fit as well: a V-cycle's
  // halo at each level, or coarse levels on fewer ranks that the union of
  // all levels fits badly.
  if (levels &&
      (!best || (best->kind != ShapeKind::kWavefront && best->kind != ShapeKind::kPipeline &&
                 best->kind != ShapeKind::kRingCollective)))
    if (std::optional<Shape> m = detail::fit_multilevel(g, p);
        m && acceptable(*m) && (!best || m->quality >= best->quality))
      return *m;
  if (!best || !acceptable(*best)) return fallback(edges, p);
  return *best;
}

}  // namespace detail

Shape classify(const GlobalPattern& g, int32_t ranks) {
  // Native collectives only: the calls themselves are the shape (an edge
  // set would be the MPI library's algorithm, which the trace does not
  // show).
  if (g.edges.empty() && !g.collectives.empty()) {
    std::set<int32_t> members;
    for (const auto& [rank, p] : g.patterns) members.insert(rank);
    Shape s;
    s.kind = ShapeKind::kCollective;
    s.name = "collective";
    std::string ops;
    for (const std::string& op : g.collectives) ops += (ops.empty() ? "" : ", ") + op;
    s.params = {{"operations", ops}, {"ranks", std::to_string(members.size())}};
    s.quality = 1;
    return s;
  }
  return detail::classify_edges(g, ranks, true);
}

}  // namespace tracefold::patterns
