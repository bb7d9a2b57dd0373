// The ranks a multigrid's coarse levels keep busy, as a predicate on grid
// coordinates whose strides follow a law of the grid sizes.
//
// A level with fewer points than ranks along a dimension sits on every
// s-th rank there and the others idle: the ranks that make a level's
// calls are those whose coordinate along every dimension is a multiple of
// s_d. Weak scaling keeps s_d fixed (the points a rank holds on the finest
// level decide it), strong scaling keeps the level's points fixed, so
// s_d = S_d / points. Reading s_d in each input and the law across them
// says which ranks are busy at a count never run. One busy coordinate
// along a dimension bounds s_d from below only (S_d, or more): such an
// input cannot tell a fixed stride from a fixed point count.
#include <algorithm>
#include <bit>
#include <numeric>

#include "internal.hpp"
#include "tracefold/expand.hpp"

namespace tracefold::extrap::detail {

std::vector<std::vector<uint32_t>> calls_per_node(const Trace& trace) {
  std::vector<std::vector<uint32_t>> calls(static_cast<std::size_t>(trace.world_size),
                                           std::vector<uint32_t>(trace.nodes.size(), 0));
  for (int32_t r = 0; r < trace.world_size; ++r) {
    RankIterator it(trace, r);
    auto& mine = calls[static_cast<std::size_t>(r)];
    for (Event ev; it.next(ev);)
      ++mine[static_cast<std::size_t>(it.current_node() - trace.nodes.data())];
  }
  return calls;
}

std::optional<std::vector<int64_t>> stride_of(const Topology& topo, const std::vector<bool>& busy) {
  const auto p = static_cast<int64_t>(busy.size());
  if (topo.ranks() != p || !busy[0]) return std::nullopt;
  std::vector<int64_t> stride = topo.sizes;  // gcd of the busy coordinates and the side
  for (int64_t r = 0; r < p; ++r) {
    if (!busy[static_cast<std::size_t>(r)]) continue;
    const auto c = topo.coords(r);
    for (std::size_t d = 0; d < c.size(); ++d) stride[d] = std::gcd(stride[d], c[d]);
  }
  for (int64_t r = 0; r < p; ++r) {
    const auto c = topo.coords(r);
    bool on = true;
    for (std::size_t d = 0; d < c.size(); ++d) on = on && c[d] % stride[d] == 0;
    if (on != busy[static_cast<std::size_t>(r)]) return std::nullopt;
  }
  return stride;
}

std::optional<std::vector<BusyLevel>> busy_levels(const Trace& trace, const Topology& topo) {
  const int64_t p = trace.world_size;
  if (p > 4096 || topo.ranks() != p) return std::nullopt;  // a refusal stays quick
  std::vector<std::vector<uint32_t>> calls;
  try {
    calls = calls_per_node(trace);
  } catch (const std::exception&) {
    return std::nullopt;  // a trace that does not expand is reported elsewhere
  }
  std::vector<uint64_t> total;
  for (const auto& c : calls) total.push_back(std::accumulate(c.begin(), c.end(), uint64_t{0}));
  std::vector<uint64_t> levels(total);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  // Each coarser level's ranks make the calls of the finer ones too: the
  // ranks making at least a level's total must be its strided set, each
  // inside the one before.
  std::vector<BusyLevel> out;
  for (std::size_t k = 1; k < levels.size(); ++k) {
    std::vector<bool> busy;
    for (uint64_t t : total) busy.push_back(t >= levels[k]);
    auto stride = stride_of(topo, busy);
    if (!stride) return std::nullopt;
    BusyLevel l;
    l.stride = *stride;
    for (std::size_t d = 0; d < l.stride.size(); ++d) {
      l.lone.push_back(l.stride[d] == topo.sizes[d]);
      if (!out.empty() && l.stride[d] % out.back().stride[d] != 0) return std::nullopt;
    }
    l.ranks = std::count(busy.begin(), busy.end(), true);
    l.calls = levels[k] - levels[k - 1];
    out.push_back(std::move(l));
  }
  return out;
}

StrideFit fit_stride(const std::vector<StrideObservation>& obs, int64_t target) {
  // Two laws: a fixed stride c, or a fixed number of busy coordinates c
  // (s = S / c). An exact observation pins either; one busy coordinate
  // says only s >= S.
  std::optional<int64_t> fixed, points;
  bool fixed_ok = true, points_ok = true;
  int64_t lone_max = 0;
  for (const auto& o : obs) {
    if (o.lone) {
      lone_max = std::max(lone_max, o.size);
      continue;
    }
    if (fixed && *fixed != o.stride) fixed_ok = false;
    fixed = o.stride;
    if (points && *points != o.size / o.stride) points_ok = false;
    points = o.size / o.stride;
  }
  StrideFit f;
  if (!fixed) {
    // Only lone observations: a fixed point count of 1 (s = S) or a fixed
    // stride of at least the largest side seen; they part where the
    // target's side exceeds that.
    if (target <= lone_max) {
      f.stride = target;
      f.law = "one busy rank at every count";
      return f;
    }
    f.law = "one busy rank in every input (sides up to " + std::to_string(lone_max) +
            "): a fixed stride and a fixed single point cannot be told apart; give an input "
            "with more than " +
            std::to_string(lone_max) + " ranks along it";
    return f;
  }
  if (fixed_ok && *fixed < lone_max) fixed_ok = false;  // the lone input had fewer
  if (points_ok && *points != 1 && lone_max > 0) points_ok = false;
  std::optional<int64_t> at_fixed, at_points;
  if (fixed_ok) at_fixed = *fixed;
  if (points_ok && target % *points == 0) at_points = target / *points;
  if (fixed_ok && points_ok && at_fixed != at_points) {
    f.law = "stride " + std::to_string(*fixed) + " (" + std::to_string(*points) +
            " busy) in every input, all of one side: a fixed stride and a fixed point count "
            "part at " +
            std::to_string(target) + "; give an input with another side along it";
    return f;
  }
  if (fixed_ok) {
    f.stride = std::min(*fixed, target);
    f.law = "every " + std::to_string(*fixed) + " (fixed stride)";
  } else if (points_ok && at_points) {
    f.stride = *at_points;
    f.law = "S/" + std::to_string(*points) + " (" + std::to_string(*points) + " busy, fixed)";
    f.fixed_count = true;
  } else {
    f.law = "no fixed stride or busy count explains the strides seen";
    return f;
  }
  if (target % *f.stride != 0) {
    f.law += ", which does not divide " + std::to_string(target);
    f.stride.reset();
  }
  return f;
}

std::string smallest_grid_with(const std::vector<int64_t>& need, bool powers_of_two) {
  int64_t n = 1;
  for (int64_t v : need) n *= std::max<int64_t>(v, 1);
  if (powers_of_two) n = std::bit_ceil(static_cast<uint64_t>(n));
  // MPI_Dims_create balances the sides, so a count a little above the
  // product of the needs has them; the search stays short.
  for (; n <= (int64_t{1} << 24); n = powers_of_two ? 2 * n : n + 1) {
    const auto sizes = dims_create(n, static_cast<int>(need.size()));
    bool ok = true;
    for (std::size_t d = 0; d < need.size(); ++d) ok = ok && sizes[d] >= need[d];
    if (ok) return std::to_string(n) + " ranks (" + Topology{sizes, {}}.to_string() + ")";
  }
  return {};
}

}  // namespace tracefold::extrap::detail
