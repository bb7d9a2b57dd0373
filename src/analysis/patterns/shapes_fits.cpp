// The shape fitters on plain edge sets (shapes_internal.hpp): rings and
// shifts (and the pipelines and ring collectives among them), butterflies,
// trees, master-worker, pairwise exchanges, all-to-all and incast.
#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "shapes_internal.hpp"

namespace tracefold::patterns::detail {

// Every rank sends `d` ranks on: all the way round (a ring) or up to the
// last rank (a shift), whichever fits; d is the most common distance.
std::optional<Shape> fit_ring(const EdgeSet& edges, int32_t p) {
  if (p < 2) return std::nullopt;
  std::map<int32_t, std::size_t> by_distance;
  for (const auto& [a, b] : edges) ++by_distance[((b - a) % p + p) % p];
  int32_t d = 0;
  std::size_t most = 0;
  for (const auto& [dist, n] : by_distance)
    if (n > most) most = n, d = dist;
  if (d > p / 2) d -= p;  // -1 rather than p - 1
  std::optional<Shape> best;
  for (bool periodic : {true, false}) {
    EdgeSet x;
    for (int32_t r = 0; r < p; ++r) {
      const int32_t to = r + d;
      if (to >= 0 && to < p)
        x.emplace_back(r, to);
      else if (periodic)
        x.emplace_back(r, (to % p + p) % p);
    }
    Shape s;
    s.kind = ShapeKind::kRing;
    s.name = periodic ? "ring" : "shift";
    s.params = {{"distance", std::to_string(d < 0 ? -d : d)},
                {"direction", d < 0 ? "-" : "+"},
                {"periodic", periodic ? "yes" : "no"}};
    std::optional<Shape> fit = detail::scored(std::move(s), edges, std::move(x));
    if (detail::better(fit, best)) best = std::move(fit);
  }
  return best;
}

// A shift by one rank whose ranks wait for the stage before them
// (a blocking receive) before they send on, block after block: a
// pipeline. The same edges with posted receives or MPI_Sendrecv (each rank
// sends before or while it receives) stay a shift. The blocks are those a
// middle stage receives in one occurrence of its pattern.
std::optional<Shape> as_pipeline(const GlobalPattern& g, const Shape& shift) {
  if (shift.param("distance") != "1" || shift.param("periodic") != "no") return std::nullopt;
  const int32_t d = shift.param("direction") == "-" ? -1 : 1;
  std::size_t blocks = 0;
  for (const GlobalPattern::Order& o : g.order) {
    std::size_t receives = 0, sends = 0;
    for (std::size_t i = 0; i < o.size(); ++i) {
      const Hop h = o.hop(i);
      if (h.peer != o.rank + (h.send ? d : -d) || (!h.send && !h.blocking)) return std::nullopt;
      receives += !h.send;
      sends += h.send;
    }
    // A stage with one before it waits for its first block before it sends.
    if (receives > 0 && o.hop(0).send) return std::nullopt;
    if (receives > 0 && sends > 0)
      blocks = std::max(blocks, receives / std::max<std::size_t>(o.occurrences, 1));
  }
  if (blocks == 0) return std::nullopt;
  Shape s = shift;
  s.kind = ShapeKind::kPipeline;
  s.name = "pipeline";
  std::set<int32_t> stages;
  for (const auto& [a, b] : g.edges) stages.insert(a), stages.insert(b);
  s.params = {{"stages", std::to_string(stages.size())},
              {"direction", shift.param("direction")},
              {"blocks", std::to_string(blocks) + " per iteration"}};
  return s;
}

// A ring by one rank round which every rank sends 2 (p - 1) messages in
// each occurrence of its pattern: the p - 1 reduce-scatter steps and the
// p - 1 allgather steps of a ring allreduce written in point-to-point
// (each rank ends the first half with one chunk summed and passes the
// summed chunks round in the second). A token passed once a step stays a
// ring.
std::optional<Shape> as_ring_collective(const GlobalPattern& g, const Shape& ring, int32_t p) {
  if (p < 3 || ring.param("distance") != "1" || ring.param("periodic") != "yes" ||
      g.order.size() != static_cast<std::size_t>(p))
    return std::nullopt;
  const auto steps = static_cast<std::size_t>(2 * (p - 1));
  for (const GlobalPattern::Order& o : g.order) {
    std::size_t sends = 0;
    for (std::size_t i = 0; i < o.size(); ++i) sends += o.hop(i).send;
    if (o.occurrences < 2 || sends != steps * o.occurrences) return std::nullopt;
  }
  uint64_t least = UINT64_MAX, most = 0;
  g.for_each_channel([&](const Channel& c) {
    if (c.messages == 0) return;
    least = std::min(least, c.bytes / c.messages);
    most = std::max(most, c.bytes / c.messages);
  });
  Shape s = ring;
  s.kind = ShapeKind::kRingCollective;
  s.name = "ring collective";
  const std::string half = std::to_string(p - 1);
  s.params = {{"phases", "reduce-scatter " + half + ", allgather " + half},
              {"steps", std::to_string(steps) + " per iteration"},
              {"direction", ring.param("direction")},
              {"bytes", most == 0       ? "unknown"
                        : least == most ? std::to_string(most)
                                        : std::to_string(least) + ".." + std::to_string(most)}};
  return s;
}

// r with r xor 2^s, for the stages s at least half of whose edges occur.
std::optional<Shape> fit_butterfly(const EdgeSet& edges, int32_t p) {
  EdgeSet x;
  std::string distances;
  int stages = 0;
  for (int32_t bit = 1; bit < p; bit <<= 1) {
    EdgeSet stage;
    std::size_t found = 0;
    for (int32_t r = 0; r < p; ++r)
      if ((r ^ bit) < p) {
        stage.emplace_back(r, r ^ bit);
        found += std::binary_search(edges.begin(), edges.end(), stage.back());
      }
    if (2 * found < stage.size()) continue;
    ++stages;
    distances += (distances.empty() ? "" : ",") + std::to_string(bit);
    x.insert(x.end(), stage.begin(), stage.end());
  }
  if (stages < 2) return std::nullopt;  // one stage is a pairwise exchange
  Shape s;
  s.kind = ShapeKind::kButterfly;
  s.name = "butterfly";
  s.params = {{"stages", std::to_string(stages)}, {"distances", distances}};
  return detail::scored(std::move(s), edges, std::move(x));
}

namespace {

// The ranks most edges touch (at most `n`), as candidate roots.
std::vector<int32_t> hubs(const EdgeSet& edges, int32_t p, std::size_t n) {
  std::vector<std::size_t> deg(static_cast<std::size_t>(p), 0);
  for (const auto& [a, b] : edges) {
    ++deg[static_cast<std::size_t>(a)];
    ++deg[static_cast<std::size_t>(b)];
  }
  std::vector<int32_t> order(static_cast<std::size_t>(p));
  for (int32_t r = 0; r < p; ++r) order[static_cast<std::size_t>(r)] = r;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return deg[static_cast<std::size_t>(a)] > deg[static_cast<std::size_t>(b)];
  });
  order.resize(std::min(n, order.size()));
  return order;
}

// The ranks the edges touch (all below p), ascending.
std::vector<int32_t> touched(const EdgeSet& edges, int32_t p) {
  std::vector<bool> in(static_cast<std::size_t>(p), false);
  for (const auto& [a, b] : edges)
    in[static_cast<std::size_t>(a)] = in[static_cast<std::size_t>(b)] = true;
  std::vector<int32_t> out;
  for (int32_t r = 0; r < p; ++r)
    if (in[static_cast<std::size_t>(r)]) out.push_back(r);
  return out;
}

}  // namespace

// Binomial, binary or linear trees over ranks relative to a root, their
// edges towards the leaves (down: bcast, scatter), the root (up: reduce,
// gather) or both. A linear tree both ways is a master-worker.
std::optional<Shape> fit_tree(const EdgeSet& edges, int32_t p) {
  if (p < 3) return std::nullopt;
  std::optional<Shape> best;
  const char* const kinds[] = {"binomial", "binary", "linear"};
  for (int32_t root : hubs(edges, p, 4))
    for (int kind = 0; kind < 3; ++kind) {
      EdgeSet down;
      std::vector<std::size_t> children(static_cast<std::size_t>(p), 0);
      for (int32_t v = 1; v < p; ++v) {
        const int32_t parent =
            kind == 0   ? v - static_cast<int32_t>(std::bit_floor(static_cast<uint32_t>(v)))
            : kind == 1 ? (v - 1) / 2
                        : 0;
        ++children[static_cast<std::size_t>(parent)];
        down.emplace_back((parent + root) % p, (v + root) % p);
      }
      const std::size_t fan_out = *std::max_element(children.begin(), children.end());
      for (int dir = 0; dir < (kind == 2 ? 2 : 3); ++dir) {
        EdgeSet x;
        for (const auto& [a, b] : down) {
          if (dir != 1) x.emplace_back(a, b);
          if (dir != 0) x.emplace_back(b, a);
        }
        Shape s;
        s.kind = ShapeKind::kTree;
        s.name = std::string(kinds[kind]) + " tree";
        s.params = {{"root", std::to_string(root)},
                    {"direction", dir == 0   ? "down (bcast, scatter)"
                                  : dir == 1 ? "up (reduce, gather)"
                                             : "both"},
                    {"fan-out", std::to_string(fan_out)}};
        std::optional<Shape> fit = detail::scored(std::move(s), edges, std::move(x));
        if (detail::better(fit, best)) best = std::move(fit);
      }
    }
  return best;
}

std::optional<Shape> fit_master_worker(const GlobalPattern& g, const EdgeSet& edges, int32_t p) {
  if (p < 3) return std::nullopt;
  const int32_t m = hubs(edges, p, 1)[0];
  EdgeSet x;
  for (int32_t w = 0; w < p; ++w)
    if (w != m) {
      x.emplace_back(m, w);
      x.emplace_back(w, m);
    }
  std::size_t tasks = 0, returns = 0, wild = 0;
  g.for_each_channel([&](const Channel& c) {
    if (c.from == m) tasks += c.messages;
    if (c.to == m) {
      returns += c.messages;
      wild += c.wildcard;
    }
  });
  Shape s;
  s.kind = ShapeKind::kMasterWorker;
  s.name = "master-worker";
  s.params = {{"master", std::to_string(m)},
              {"workers", std::to_string(p - 1)},
              {"tasks", std::to_string(tasks)},
              {"wildcard returns", std::to_string(wild) + " of " + std::to_string(returns)}};
  return detail::scored(std::move(s), edges, std::move(x));
}

// Every rank of the pattern sends to every other (an all-to-all in
// point-to-point, or one per row or column communicator, each its own
// global pattern): fitted on the ranks the edges touch, not the world, so
// a sub-communicator's exchange is whole.
std::optional<Shape> fit_alltoall(const EdgeSet& edges, int32_t p) {
  const std::vector<int32_t> ranks = touched(edges, p);
  if (ranks.size() < 3) return std::nullopt;  // a pair: pairwise, a ring
  // Its quality is at most edges / pairs: a halo of 16,384 ranks must not
  // build the 268 million pairs it could never be named by.
  const double pairs = static_cast<double>(ranks.size()) * static_cast<double>(ranks.size() - 1);
  if (static_cast<double>(edges.size() + 1) < kMinQuality * pairs) return std::nullopt;
  EdgeSet x;
  for (int32_t a : ranks)
    for (int32_t b : ranks)
      if (a != b) x.emplace_back(a, b);
  Shape s;
  s.kind = ShapeKind::kAlltoall;
  s.name = "all-to-all";
  s.params = {{"ranks", std::to_string(ranks.size())}};
  return detail::scored(std::move(s), edges, std::move(x));
}

// One rank receives from the others and sends nothing back: fitted, like
// the all-to-all, on the ranks the edges touch, so many ranks sending to
// one of a sub-communicator are named; an incast from every rank of the
// world is a linear tree up, which comes first.
std::optional<Shape> fit_incast(const EdgeSet& edges, int32_t p) {
  std::vector<std::size_t> in(static_cast<std::size_t>(p), 0);
  for (const auto& [a, b] : edges) ++in[static_cast<std::size_t>(b)];
  const std::vector<int32_t> ranks = touched(edges, p);
  int32_t target = -1;
  std::size_t most = 0;
  for (int32_t r = 0; r < p; ++r)
    if (in[static_cast<std::size_t>(r)] > most) {
      most = in[static_cast<std::size_t>(r)];
      target = r;
    }
  if (most < 2) return std::nullopt;
  EdgeSet x;
  for (int32_t r : ranks)
    if (r != target) x.emplace_back(r, target);
  Shape s;
  s.kind = ShapeKind::kIncast;
  s.name = "incast";
  s.params = {{"target", std::to_string(target)}, {"senders", std::to_string(ranks.size() - 1)}};
  return detail::scored(std::move(s), edges, std::move(x));
}

// Each rank with one partner, both ways: the pairs that carry the most
// edges, taken greedily. On a q x q grid, rank (x, y) with (y, x) is a
// transpose, fitted on its own so that a stray message between two
// diagonal ranks does not turn it into some other pairing.
std::optional<Shape> fit_pairwise(const EdgeSet& edges, int32_t p) {
  EdgeSet undirected;
  undirected.reserve(edges.size());
  for (const auto& [a, b] : edges) undirected.emplace_back(std::min(a, b), std::max(a, b));
  std::sort(undirected.begin(), undirected.end());
  std::vector<std::pair<Edge, int>> pairs;  // undirected pair -> edges, in order of pairs
  for (const Edge& e : undirected)
    if (!pairs.empty() && pairs.back().first == e)
      ++pairs.back().second;
    else
      pairs.emplace_back(e, 1);
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<bool> taken(static_cast<std::size_t>(p), false);
  EdgeSet x;
  std::set<int32_t> xors, diffs;
  for (const auto& [e, w] : pairs) {
    const auto [a, b] = e;
    if (taken[static_cast<std::size_t>(a)] || taken[static_cast<std::size_t>(b)]) continue;
    taken[static_cast<std::size_t>(a)] = taken[static_cast<std::size_t>(b)] = true;
    x.emplace_back(a, b);
    x.emplace_back(b, a);
    xors.insert(a ^ b);
    diffs.insert(b - a);
  }
  if (x.empty()) return std::nullopt;
  Shape s;
  s.kind = ShapeKind::kPairwise;
  s.name = "pairwise";
  s.params = {{"pairs", std::to_string(x.size() / 2)}};
  if (xors.size() == 1)
    s.params.emplace_back("partner", "rank xor " + std::to_string(*xors.begin()));
  else if (diffs.size() == 1)
    s.params.emplace_back("partner", "rank +/- " + std::to_string(*diffs.begin()));
  std::optional<Shape> best = detail::scored(std::move(s), edges, std::move(x));
  int32_t q = 1;
  while ((q + 1) * (q + 1) <= p) ++q;
  if (q * q != p || q < 2) return best;
  EdgeSet mirror;
  for (int32_t r = 0; r < p; ++r)
    if (const int32_t m = (r % q) * q + r / q; m != r) mirror.emplace_back(r, m);
  Shape t;
  t.kind = ShapeKind::kTranspose;
  t.name = "transpose";
  t.params = {{"pairs", std::to_string(mirror.size() / 2)},
              {"grid", std::to_string(q) + "x" + std::to_string(q)}};
  std::optional<Shape> fit = detail::scored(std::move(t), edges, std::move(mirror));
  return fit->quality >= best->quality ? fit : best;
}

}  // namespace tracefold::patterns::detail
