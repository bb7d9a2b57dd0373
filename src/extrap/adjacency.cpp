// Relative endpoints per rank, the input of topology detection.
#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

#include "internal.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/extrap/grid.hpp"

namespace tracefold::extrap {

namespace {

// Whether every value of the node's `comm` field is the world (or the
// field is absent, which means the world), or with `world_like` a
// communicator that is the world under another id.
bool on_world(const Trace& trace, const Node& node, bool world_like) {
  const Elastic* comm = node.field(FieldTable::comm());
  if (!comm) return true;
  for (const auto& e : comm->entries())
    for (const auto& run : e.values.runs())
      for (int64_t v : run.pattern)
        if (v != CommTable::kWorld && !(world_like && world_like_comm(trace, v))) return false;
  return true;
}

}  // namespace

bool world_like_comm(const Trace& trace, int64_t id) {
  if (id == CommTable::kWorld) return true;
  const auto it = trace.comms.all().find(id);
  if (it == trace.comms.all().end() || it->second.size() != 1) return false;
  return it->second[0].members == MemberList::run(0, 1, trace.world_size);
}

std::vector<std::vector<int64_t>> relative_endpoints(const Trace& trace, bool world_like) {
  std::vector<std::set<int64_t>> seen(static_cast<std::size_t>(trace.world_size));
  const auto rpeer = FieldTable::find("rpeer");
  for (const Node& node : trace.nodes) {
    if (!on_world(trace, node, world_like)) continue;
    for (FieldId f : {FieldTable::peer(), rpeer.value_or(FieldTable::peer())}) {
      const Elastic* e = node.field(f);
      if (!e) continue;
      for (const auto& entry : e->entries()) {
        std::set<int64_t> values;
        for (const auto& run : entry.values.runs())
          for (int64_t v : run.pattern)
            if (!is_sentinel(v)) values.insert(v);
        if (values.empty()) continue;
        entry.ranks.for_each([&](int32_t r) {
          if (r < trace.world_size)
            seen[static_cast<std::size_t>(r)].insert(values.begin(), values.end());
        });
      }
    }
  }
  std::vector<std::vector<int64_t>> out;
  out.reserve(seen.size());
  for (auto& s : seen) out.emplace_back(s.begin(), s.end());
  return out;
}

namespace detail {

namespace {

std::vector<int64_t> pattern_of(const std::vector<int64_t>& endpoints, int64_t p) {
  std::vector<int64_t> out;
  for (int64_t e : endpoints) out.push_back(((e % p) + p) % p);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s.empty() ? "none" : s;
}

// How often ranks `who` and `other` reach node `n`: where `other` makes
// fewer of the calls, it idles while `who` reaches its extra partner (a
// multigrid's coarse level, on which only every 2^l-th rank takes part).
std::string call_counts(const Trace& trace, std::size_t n, int64_t who, int64_t other) {
  const auto count = [&](int64_t rank) {
    std::size_t calls = 0;
    RankIterator it(trace, static_cast<int32_t>(rank));
    for (Event ev; it.next(ev);)
      if (it.current_node() == &trace.nodes[n]) ++calls;
    return calls;
  };
  try {
    const std::size_t w = count(who), o = count(other);
    const std::string text = ", " + std::to_string(w) + " calls on rank " + std::to_string(who) +
                             " against " + std::to_string(o) + " on rank " + std::to_string(other);
    if (o < w)
      return text + " (rank " + std::to_string(other) + " idles for the other " +
             std::to_string(w - o) + ")";
    return text + " (with other partners)";
  } catch (const std::exception&) {
    return "";  // a trace that does not expand is reported elsewhere
  }
}

// Ordinal text: 2nd, 4th...
std::string nth(int64_t s) {
  const char* suffix = s % 10 == 1 && s % 100 != 11   ? "st"
                       : s % 10 == 2 && s % 100 != 12 ? "nd"
                       : s % 10 == 3 && s % 100 != 13 ? "rd"
                                                      : "th";
  return std::to_string(s) + suffix;
}

// The level behind `who`'s extra calls at node `n`, when the ranks that
// make as many calls there as `who` are exactly those whose coordinate
// along every dimension of `topo` is a multiple of a stride (a multigrid
// level on which every s-th rank takes part and the others idle): names
// the strides, the ranks, and what would extrapolate it. Empty otherwise.
std::string level_text(const Trace& trace, const Topology& topo, std::size_t n, int64_t who) {
  const int64_t p = trace.world_size;
  if (p > 4096 || topo.ranks() != p) return "";  // a refusal stays quick
  std::vector<std::size_t> calls(static_cast<std::size_t>(p), 0);
  try {
    const auto all = calls_per_node(trace);
    for (int64_t r = 0; r < p; ++r)
      calls[static_cast<std::size_t>(r)] = all[static_cast<std::size_t>(r)][n];
  } catch (const std::exception&) {
    return "";
  }
  std::vector<bool> busy;
  std::vector<int64_t> active;
  for (int64_t r = 0; r < p; ++r) {
    busy.push_back(calls[static_cast<std::size_t>(r)] == calls[static_cast<std::size_t>(who)]);
    if (busy.back()) active.push_back(r);
  }
  const auto found = stride_of(topo, busy);
  if (!found || std::all_of(found->begin(), found->end(), [](int64_t s) { return s == 1; }))
    return "";
  const std::vector<int64_t>& stride = *found;
  bool own_sites = true;  // only the level's ranks reach the node
  for (int64_t r = 0; r < p; ++r)
    own_sites =
        own_sites && (busy[static_cast<std::size_t>(r)] || calls[static_cast<std::size_t>(r)] == 0);
  static const char* const kDim[] = {"x", "y", "z"};
  std::string along, mult;
  for (std::size_t d = 0; d < stride.size(); ++d) {
    mult += (mult.empty() ? "" : ", ") + std::string(d < 3 ? kDim[d] : "?") + " " +
            std::to_string(stride[d]);
    if (stride[d] == 1) continue;
    along += (along.empty() ? "" : " and ") +
             (stride[d] == topo.sizes[d] ? "only the first" : "every " + nth(stride[d])) +
             " rank along " + (d < 3 ? kDim[d] : "?");
  }
  return ". The ranks making rank " + std::to_string(who) + "'s " +
         std::to_string(calls[static_cast<std::size_t>(who)]) + " calls there are " + along +
         " (coordinates multiples of " + mult + ": ranks " +
         (active.size() <= 16 ? list_text(active)
                              : list_text({active.begin(), active.begin() + 16}) + " ...") +
         ", " + std::to_string(active.size()) + " of " + std::to_string(p) +
         "), a coarse level on which the others idle: the row-major stencil gives every rank of "
         "a part the same calls and has no model of a level's ranks chosen by a stride. To "
         "extrapolate it, record with enough points a rank that every rank keeps one on every "
         "level, " +
         (own_sites ? "drop the level's calls, which have call sites of their own, with --lcs "
                      "(lossy)"
                    : "give the level's exchanges call sites of their own and drop them with "
                      "--lcs (lossy)");
}

// Ranks `a` and `b` differ by `offset` along each dimension of `topo`.
std::vector<int64_t> offset_vector(const Topology& topo, int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t s : topo.sizes) {
    v.push_back(b % s - a % s);
    a /= s;
    b /= s;
  }
  return v;
}

// Ranks in a part of `topo` whose partners differ from the part's first rank's.
std::size_t mixed_ranks(const Topology& topo, const std::vector<std::vector<int64_t>>& endpoints) {
  const auto p = static_cast<int64_t>(endpoints.size());
  std::vector<int64_t> first(static_cast<std::size_t>(cell_count(topo)), -1);
  std::size_t mixed = 0;
  for (int64_t r = 0; r < p; ++r) {
    int64_t& a = first[static_cast<std::size_t>(cell_of(topo, r))];
    if (a < 0)
      a = r;
    else if (pattern_of(endpoints[static_cast<std::size_t>(a)], p) !=
             pattern_of(endpoints[static_cast<std::size_t>(r)], p))
      ++mixed;
  }
  return mixed;
}

// Distinct steps between partners, as offsets along each dimension of
// `topo`: a program's own grid takes the fewest (a 2-D stencil's partner
// one row up is (0, 1) on its 4x4 grid, but (0, 1, 0) or (0, -1, 1) on
// 4x2x2, depending on the row).
std::size_t distinct_steps(const Topology& topo,
                           const std::vector<std::vector<int64_t>>& endpoints) {
  const auto p = static_cast<int64_t>(endpoints.size());
  std::set<std::vector<int64_t>> steps;
  for (int64_t r = 0; r < p; ++r)
    for (int64_t e : endpoints[static_cast<std::size_t>(r)])
      steps.insert(offset_vector(topo, r, (((r + e) % p) + p) % p));
  return steps.size();
}

}  // namespace

PlausibleGrid plausible_grid(const std::vector<std::vector<int64_t>>& endpoints) {
  const auto p = static_cast<int64_t>(endpoints.size());
  // Candidates: MPI_Dims_create's grids in 1 to 3 dimensions (every size at
  // least 2) and the same sizes with the largest fastest (NPB LU's layout).
  // The one the program most likely used has the fewest distinct steps
  // between partners; of equals, the one whose parts mix the fewest ranks
  // (the pair of ranks shown is then the telling one), then the most
  // dimensions. Fewest mixed alone favours 3-D grids, whose parts are
  // smaller, for programs on 2-D ones.
  PlausibleGrid best;
  std::size_t best_steps = 0, best_mixed = 0;
  for (int d = kMaxDims; d >= 1; --d) {
    const std::vector<int64_t> sizes = dims_create(p, d);
    if (d > 1 && std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < 2; })) continue;
    std::vector<std::pair<std::vector<int64_t>, const char*>> cands = {
        {sizes, "MPI_Dims_create makes"}};
    if (std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) != sizes.end())
      cands.push_back(
          {{sizes.rbegin(), sizes.rend()}, "of MPI_Dims_create's sizes with the largest fastest"});
    for (const auto& [s, rule] : cands) {
      Topology t{s, {}};
      const std::size_t steps = distinct_steps(t, endpoints), mixed = mixed_ranks(t, endpoints);
      if (best.topo.sizes.empty() || steps < best_steps ||
          (steps == best_steps && mixed < best_mixed)) {
        best = {t, rule};
        best_steps = steps;
        best_mixed = mixed;
      }
    }
  }
  return best;
}

std::string no_grid_detail(const Trace& trace, const std::vector<std::vector<int64_t>>& endpoints) {
  const auto p = static_cast<int64_t>(endpoints.size());
  const PlausibleGrid grid = plausible_grid(endpoints);
  const Topology& topo = grid.topo;
  std::vector<int64_t> first_of(static_cast<std::size_t>(cell_count(topo)), -1);
  for (int64_t r = 0; r < p; ++r) {
    const int cell = cell_of(topo, r);
    int64_t& a = first_of[static_cast<std::size_t>(cell)];
    if (a < 0) {
      a = r;
      continue;
    }
    const auto pa = pattern_of(endpoints[static_cast<std::size_t>(a)], p);
    const auto pb = pattern_of(endpoints[static_cast<std::size_t>(r)], p);
    if (pa == pb) continue;
    std::vector<int64_t> only_a, only_b;
    std::set_difference(pa.begin(), pa.end(), pb.begin(), pb.end(), std::back_inserter(only_a));
    std::set_difference(pb.begin(), pb.end(), pa.begin(), pa.end(), std::back_inserter(only_b));
    // The node where the first extra partner shows, for the message.
    const int64_t who = only_b.empty() ? a : r;
    const int64_t extra = only_b.empty() ? only_a.front() : only_b.front();
    const int64_t other = who == a ? r : a;
    std::string node, level;
    for (std::size_t n = 0; n < trace.nodes.size() && node.empty(); ++n) {
      const Elastic* e = trace.nodes[n].field(FieldTable::peer());
      if (!e) continue;
      for (const auto& entry : e->entries()) {
        if (!entry.ranks.contains(static_cast<int32_t>(who))) continue;
        for (const auto& run : entry.values.runs())
          for (int64_t v : run.pattern)
            if (!is_sentinel(v) && ((v % p) + p) % p == extra && node.empty())
              node = "node " + std::to_string(n) + " (" + describe_node(trace, trace.nodes[n]) +
                     ")" + call_counts(trace, n, who, other);
        level = level_text(trace, topo, n, who);
      }
    }
    return "; on the " + topo.to_string() + " grid " + grid.rule + ", ranks " + std::to_string(a) +
           " and " + std::to_string(r) + " lie in the same part (" + cell_name(topo, cell) +
           ") but talk to different partners (relative, mod " + std::to_string(p) + "): rank " +
           std::to_string(a) + " to " + list_text(pa) + ", rank " + std::to_string(r) + " to " +
           list_text(pb) +
           (node.empty() ? std::string()
                         : "; rank " + std::to_string(who) + " meets " + std::to_string(extra) +
                               " at " + node) +
           (!level.empty()
                ? level + ", or write a plugin (docs/extrapolate.md, Plugins)"
                : ". Ranks of one part with different partners (ranks that idle on a "
                  "multigrid's coarse levels while others reach partners farther apart, a "
                  "transpose partner that differs from rank to rank) follow no row-major "
                  "stencil: record a configuration in which every rank of a part talks to the "
                  "same partners, keep the common part with --snippet or --lcs where the extra "
                  "calls have call sites of their own, or write a plugin (docs/extrapolate.md, "
                  "Plugins)");
  }
  return "";
}

}  // namespace detail

}  // namespace tracefold::extrap
