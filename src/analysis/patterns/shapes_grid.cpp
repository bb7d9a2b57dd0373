// Shapes on a process grid: halo exchanges and wavefront sweeps. Ranks are
// laid out row-major, x fastest (rank = x + Sx * (y + Sy * z)), as the
// extrapolation's topology detection assumes and MPI_Cart_create numbers.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "shapes_internal.hpp"
#include "tracefold/extrap/topology.hpp"

namespace tracefold::patterns::detail {

namespace {

using Sizes = std::vector<int64_t>;
using Offset = std::vector<int>;
constexpr const char* kAxis[] = {"x", "y", "z"};

int64_t rank_at(const Sizes& c, const Sizes& sizes) {
  int64_t r = 0, stride = 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    r += c[i] * stride;
    stride *= sizes[i];
  }
  return r;
}

// The step from a to b in grid units, each component -1, 0 or 1, into `o`
// and `wrapped` (an entry per axis): a step across the grid's end on an
// axis of more than 2 is a wrap. False when b is no neighbour of a. The
// fits ask this for every edge of every candidate grid, hundreds of
// thousands of times at 16,384 ranks: nothing is allocated.
bool step_between(int64_t a, int64_t b, const Sizes& sizes, int* o, bool* wrapped) {
  bool any = false;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const int64_t d = b % sizes[i] - a % sizes[i];
    a /= sizes[i];
    b /= sizes[i];
    o[i] = 0;
    wrapped[i] = false;
    if (d == 0) continue;
    any = true;
    if (d == 1 || d == -1) {
      o[i] = static_cast<int>(d);
    } else if (sizes[i] > 2 && (d == sizes[i] - 1 || d == 1 - sizes[i])) {
      o[i] = d > 0 ? -1 : 1;
      wrapped[i] = true;
    } else {
      return false;
    }
  }
  return any;
}

constexpr std::size_t kMaxAxes = 8;  // candidate grids have at most extrap::kMaxDims

// step_between() as an Offset, the wraps in `wraps`; nullopt when b is no
// neighbour of a.
std::optional<Offset> offset(int64_t a, int64_t b, const Sizes& sizes,
                             std::vector<bool>* wraps = nullptr) {
  if (sizes.size() > kMaxAxes) throw std::logic_error("patterns: grid of more than 8 axes");
  int o[kMaxAxes];
  bool wrapped[kMaxAxes];
  if (!step_between(a, b, sizes, o, wrapped)) return std::nullopt;
  if (wraps) wraps->assign(wrapped, wrapped + sizes.size());
  return Offset(o, o + sizes.size());
}

// The axes whose ends exchange: at least half the wrap edges a star
// stencil would have there (one stray edge across the grid's corner does
// not make every axis periodic).
std::vector<bool> periodic_axes(const EdgeSet& edges, const Sizes& sizes) {
  int64_t p = 1;
  for (int64_t s : sizes) p *= s;
  if (sizes.size() > kMaxAxes) throw std::logic_error("patterns: grid of more than 8 axes");
  std::vector<int64_t> count(sizes.size(), 0);
  int o[kMaxAxes];
  bool wraps[kMaxAxes];
  for (const auto& [a, b] : edges)
    if (step_between(a, b, sizes, o, wraps))
      for (std::size_t i = 0; i < sizes.size(); ++i) count[i] += wraps[i];
  std::vector<bool> out(sizes.size(), false);
  for (std::size_t i = 0; i < sizes.size(); ++i) out[i] = count[i] > 0 && count[i] >= p / sizes[i];
  return out;
}

std::string offset_name(const Offset& o) {
  std::string s;
  for (std::size_t i = 0; i < o.size(); ++i)
    if (o[i] != 0) s += std::string(o[i] > 0 ? "+" : "-") + kAxis[i];
  return s;
}

int nonzeros(const Offset& o) {
  return static_cast<int>(std::count_if(o.begin(), o.end(), [](int v) { return v != 0; }));
}

// The offsets with at most `k` nonzero components, fewest first, then by
// axis (-x +x -y +y ... before the diagonals).
std::vector<Offset> stencil(int dims, int k) {
  std::vector<Offset> out;
  int total = 1;
  for (int i = 0; i < dims; ++i) total *= 3;
  for (int n = 0; n < total; ++n) {
    Offset o;
    for (int i = 0, v = n; i < dims; ++i, v /= 3) o.push_back(v % 3 - 1);
    if (nonzeros(o) > 0 && nonzeros(o) <= k) out.push_back(o);
  }
  std::stable_sort(out.begin(), out.end(), [](const Offset& a, const Offset& b) {
    if (nonzeros(a) != nonzeros(b)) return nonzeros(a) < nonzeros(b);
    for (std::size_t i = 0; i < a.size(); ++i) {  // the first axis moved, then its sign
      if ((a[i] != 0) != (b[i] != 0)) return a[i] != 0;
      if (a[i] != b[i]) return a[i] < b[i];
    }
    return false;
  });
  return out;
}

// Each rank's neighbour at each offset, across the end of a periodic axis.
EdgeSet grid_edges(const Sizes& sizes, const std::vector<bool>& periodic,
                   const std::vector<Offset>& offsets) {
  int64_t p = 1;
  for (int64_t s : sizes) p *= s;
  EdgeSet out;
  out.reserve(static_cast<std::size_t>(p) * offsets.size());
  // Tens of thousands of ranks times up to 26 offsets: no allocation per
  // neighbour, and each rank's few edges sorted in place (ranks ascend,
  // so the whole list comes out sorted).
  Sizes c(sizes.size(), 0), n(sizes.size(), 0);
  for (int64_t r = 0; r < p; ++r) {
    int64_t rest = r;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      c[i] = rest % sizes[i];
      rest /= sizes[i];
    }
    const std::size_t first = out.size();
    for (const Offset& o : offsets) {
      bool inside = true;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        n[i] = c[i] + o[i];
        if (n[i] >= 0 && n[i] < sizes[i]) continue;
        if (!periodic[i]) inside = false;
        n[i] = (n[i] + sizes[i]) % sizes[i];
      }
      const int64_t q = rank_at(n, sizes);
      if (inside && q != r) out.emplace_back(static_cast<int32_t>(r), static_cast<int32_t>(q));
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string grid_text(const Sizes& sizes) {
  return extrap::Topology{sizes, {}}.to_string();
}

// Grids that might hold the pattern: the topology detection's answer for
// its edges, and the layouts programs choose (grid_rules) in 1 to 3 dims.
std::vector<Sizes> grid_candidates(const EdgeSet& edges, int32_t ranks) {
  std::vector<std::vector<int64_t>> endpoints(static_cast<std::size_t>(ranks));
  for (const auto& [a, b] : edges) {
    endpoints[static_cast<std::size_t>(a)].push_back(b - a);
    endpoints[static_cast<std::size_t>(b)].push_back(a - b);
  }
  std::vector<Sizes> out;
  auto add = [&](const Sizes& s) {
    if (s.empty() || std::find(out.begin(), out.end(), s) != out.end()) return;
    if (s.size() > 1 && std::any_of(s.begin(), s.end(), [](int64_t v) { return v < 2; })) return;
    out.push_back(s);
  };
  try {
    add(extrap::detect_topology(endpoints).topology.sizes);
  } catch (const std::runtime_error&) {
    // a partial pattern: its groups fit no grid exactly; the layouts below may
  }
  for (int d = 1; d <= extrap::kMaxDims; ++d)
    for (const extrap::GridRule& rule : extrap::grid_rules()) add(rule.sizes(ranks, d));
  std::stable_sort(out.begin(), out.end(),
                   [](const Sizes& a, const Sizes& b) { return a.size() < b.size(); });
  return out;
}

const char* stencil_name(int dims, int k) {
  if (dims == 1) return "3-point";
  if (dims == 2) return k == 1 ? "5-point" : "9-point";
  return k == 1 ? "7-point" : k == 2 ? "19-point" : "27-point";
}

// Bytes per message by direction: `-x 192, +x 192`, a range where the
// channels of one direction differ.
std::string bytes_by_direction(const GlobalPattern& g, const Sizes& sizes, int dims) {
  std::map<Offset, std::pair<uint64_t, uint64_t>> range;  // min, max per message
  g.for_each_channel([&](const Channel& c) {
    const std::optional<Offset> o = offset(c.from, c.to, sizes);
    if (!o || c.messages == 0) return;
    const uint64_t b = c.bytes / c.messages;
    auto [it, fresh] = range.try_emplace(*o, b, b);
    it->second.first = std::min(it->second.first, b);
    it->second.second = std::max(it->second.second, b);
  });
  std::string out;
  for (const Offset& o : stencil(dims, dims)) {
    auto it = range.find(o);
    if (it == range.end()) continue;
    if (!out.empty()) out += ", ";
    out += offset_name(o) + " " + std::to_string(it->second.first);
    if (it->second.second != it->second.first) out += ".." + std::to_string(it->second.second);
  }
  return out;
}

}  // namespace

std::optional<Shape> fit_halo(const GlobalPattern& g, const EdgeSet& edges, int32_t ranks,
                              std::vector<int64_t>& grid) {
  std::optional<Shape> best;
  for (const Sizes& sizes : grid_candidates(edges, ranks)) {
    // No later candidate beats a fit of every edge (see perfect()).
    if (perfect(best)) break;
    const int dims = static_cast<int>(sizes.size());
    const std::vector<bool> periodic = periodic_axes(edges, sizes);
    std::string axes;
    for (int i = 0; i < dims; ++i)
      if (periodic[static_cast<std::size_t>(i)])
        axes += std::string(axes.empty() ? "" : ",") + kAxis[i];
    const std::string bytes = bytes_by_direction(g, sizes, dims);
    for (int k = 1; k <= dims && !perfect(best); ++k) {
      Shape s;
      s.kind = ShapeKind::kHalo;
      s.name = std::to_string(dims) + "-D halo";
      s.params = {{"grid", grid_text(sizes)},
                  {"periodic", axes.empty() ? "none" : axes},
                  {"neighbours", stencil_name(dims, k)},
                  {"bytes", bytes}};
      std::optional<Shape> fit =
          scored(std::move(s), edges, grid_edges(sizes, periodic, stencil(dims, k)));
      if (better(fit, best)) {
        best = std::move(fit);
        grid = sizes;
      }
      if (dims == 1) break;
    }
  }
  return best;
}

std::optional<Shape> fit_wavefront(const GlobalPattern& g, const EdgeSet& edges,
                                   const std::vector<int64_t>& grid) {
  if (grid.size() < 2) return std::nullopt;
  struct Sweep {
    Offset dir;
    std::size_t hops = 0;
    // Messages with the partner met most often in the sweep: a sweep in
    // k-blocks passes each block on, so an upstream neighbour sends (and
    // a downstream one receives) once a block.
    std::size_t blocks = 0;
  };
  struct Sweeps {
    bool valid = true;  // every hop a blocking receive or a send, one step along one axis
    std::vector<Sweep> sweeps;
  };
  struct RankSweeps {
    int32_t rank;
    const std::vector<Sweep>* sweeps;
    std::size_t occurrences;
  };
  // A rank's sweeps follow from its steps and the step to each of its
  // partners: ranks that share both (alike ranks inside the grid) are read
  // once. The step to a partner: axis * 2 + 1 forward, axis * 2 backward,
  // -1 for no single step along one axis (or one across the grid's end).
  std::map<std::tuple<const std::vector<HopStep>*, std::vector<int>, std::size_t>, Sweeps> read;
  std::vector<RankSweeps> all;
  bool receives_then_sends = false;
  std::vector<int> code;
  for (const GlobalPattern::Order& o : g.order) {
    if (!o.steps) continue;
    code.clear();
    for (int32_t peer : o.partners) {
      std::vector<bool> wraps(grid.size(), false);
      std::optional<Offset> step = offset(o.rank, peer, grid, &wraps);
      if (!step || nonzeros(*step) != 1 ||
          std::find(wraps.begin(), wraps.end(), true) != wraps.end()) {
        code.push_back(-1);
        continue;
      }
      const auto axis = static_cast<int>(
          std::find_if(step->begin(), step->end(), [](int v) { return v != 0; }) - step->begin());
      code.push_back(axis * 2 + ((*step)[static_cast<std::size_t>(axis)] > 0 ? 1 : 0));
    }
    const std::size_t occurrences = std::max<std::size_t>(o.occurrences, 1);
    auto [it, fresh] = read.try_emplace({o.steps.get(), code, occurrences});
    Sweeps& rs = it->second;
    if (fresh) {
      bool received = false;
      // One iteration's hops: an iteration starts a sweep even where the
      // last one ran the same way (one function per direction: each call
      // is a sweep, though consecutive calls go alike).
      const std::size_t per =
          o.steps->size() % occurrences == 0 ? o.steps->size() / occurrences : 0;
      // Messages per partner rank (a partner index names one channel: a
      // rank is as many partners as its messages have tags).
      std::map<int32_t, std::size_t> with;
      auto close = [&] {
        if (rs.sweeps.empty()) return;
        for (const auto& [peer, n] : with)
          rs.sweeps.back().blocks = std::max(rs.sweeps.back().blocks, n);
        with.clear();
      };
      for (std::size_t i = 0; i < o.steps->size(); ++i) {
        const HopStep& h = (*o.steps)[i];
        // Upstream data must have arrived before the rank works and sends
        // on: a posted receive, a Sendrecv or a wrap around the grid is no
        // sweep.
        const int c = code[h.partner];
        if ((!h.send && !h.blocking) || c < 0) {
          rs.valid = false;
          break;
        }
        const auto axis = static_cast<std::size_t>(c / 2);
        const int forward = c % 2 ? 1 : -1;
        const int sign = h.send ? forward : -forward;
        if (rs.sweeps.empty() || (per > 0 && i % per == 0) ||
            (rs.sweeps.back().dir[axis] != 0 && rs.sweeps.back().dir[axis] != sign)) {
          close();
          rs.sweeps.push_back({Offset(grid.size(), 0), 0});
          received = false;
        }
        rs.sweeps.back().dir[axis] = sign;
        ++rs.sweeps.back().hops;
        ++with[o.partners[h.partner]];
        if (!h.send) received = true;
        if (h.send && received) receives_then_sends = true;
      }
      close();
    }
    if (!rs.valid) return std::nullopt;
    if (!rs.sweeps.empty()) all.push_back({o.rank, &rs.sweeps, occurrences});
  }
  if (all.empty() || !receives_then_sends) return std::nullopt;
  // The rank that sees the most sweeps in full (every axis's direction)
  // speaks for all: ranks on the grid's edges may see only some axes.
  auto full = [](const RankSweeps& r) {
    return std::count_if(r.sweeps->begin(), r.sweeps->end(), [](const Sweep& s) {
      return nonzeros(s.dir) == static_cast<int>(s.dir.size());
    });
  };
  auto hops_of = [](const RankSweeps& r) {
    std::size_t n = 0;
    for (const Sweep& s : *r.sweeps) n += s.hops;
    return n;
  };
  const RankSweeps* rep = &all[0];
  for (const RankSweeps& r : all)
    if (std::make_pair(full(r), hops_of(r)) > std::make_pair(full(*rep), hops_of(*rep))) rep = &r;
  const std::size_t hops = hops_of(*rep);
  // A sweep takes a receive and a send per axis on an inner rank; a halo
  // exchange with blocking receives breaks into sweeps of a hop or two.
  if (hops < 2 * grid.size() * rep->sweeps->size()) return std::nullopt;
  const std::size_t per_iteration = rep->sweeps->size() % rep->occurrences == 0
                                        ? rep->sweeps->size() / rep->occurrences
                                        : rep->sweeps->size();
  std::string order;
  std::set<Offset> dirs;
  std::size_t fewest = SIZE_MAX, most = 0;
  for (std::size_t i = 0; i < per_iteration; ++i) {
    const Offset& d = (*rep->sweeps)[i].dir;
    fewest = std::min(fewest, (*rep->sweeps)[i].blocks);
    most = std::max(most, (*rep->sweeps)[i].blocks);
    dirs.insert(d);
    Sizes origin(grid.size(), 0);
    for (std::size_t a = 0; a < grid.size(); ++a) origin[a] = d[a] < 0 ? grid[a] - 1 : 0;
    if (!order.empty()) order += ", ";
    order += offset_name(d) + " from " + std::to_string(rank_at(origin, grid));
  }
  EdgeSet expected;
  for (const Offset& d : dirs)
    for (std::size_t a = 0; a < grid.size(); ++a) {
      if (d[a] == 0) continue;
      Offset step(grid.size(), 0);
      step[a] = d[a];
      const EdgeSet e = grid_edges(grid, std::vector<bool>(grid.size(), false), {step});
      expected.insert(expected.end(), e.begin(), e.end());
    }
  Shape s;
  s.kind = ShapeKind::kWavefront;
  s.name = "wavefront";
  s.params = {{"grid", grid_text(grid)},
              {"sweeps", std::to_string(per_iteration) + " per iteration"},
              {"blocks", (fewest == most ? std::to_string(most)
                                         : std::to_string(fewest) + ".." + std::to_string(most)) +
                             " per sweep"},
              {"directions", std::to_string(dirs.size())},
              {"order", order}};
  return scored(std::move(s), edges, std::move(expected));
}

}  // namespace tracefold::patterns::detail
