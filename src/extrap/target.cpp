// The target grid: --grid, or the rule every input's grid follows
// (docs/extrapolate.md, step 1 of "The idea").
#include <algorithm>

#include "internal.hpp"

namespace tracefold::extrap::detail {

Topology choose_target(const std::vector<GridInput>& grids, const ExtrapOptions& opts,
                       std::string& rule) {
  const int d = grids[0].topo.dims();
  const int64_t n = opts.ranks;
  std::string seen;
  for (const auto& g : grids) seen += (seen.empty() ? "" : ", ") + g.topo.to_string();
  if (opts.grid) {
    Topology t = *opts.grid;
    if (t.dims() != d)
      throw ExtrapError("--grid " + t.to_string() + " has " + std::to_string(t.dims()) +
                        " dimensions, the inputs' grids have " + std::to_string(d) + " (" + seen +
                        ")");
    if (t.ranks() != n)
      throw ExtrapError("--grid " + t.to_string() + " holds " + std::to_string(t.ranks()) +
                        " ranks, not --ranks " + std::to_string(n));
    rule = "--grid";
    return t;
  }
  // Every known rule that gives each input's grid at its rank count; the
  // first that has a grid at the target decides, unless another such rule
  // gives a different one there (the inputs cannot tell them apart).
  std::vector<std::pair<const GridRule*, std::vector<int64_t>>> fits;
  for (const GridRule& r : grid_rules()) {
    const bool all = std::all_of(grids.begin(), grids.end(), [&](const GridInput& g) {
      return r.sizes(g.topo.ranks(), d) == g.topo.sizes;
    });
    if (all) fits.emplace_back(&r, r.sizes(n, d));
  }
  const auto sized = [](const std::vector<int64_t>& v) {
    std::string t;
    for (auto it = v.rbegin(); it != v.rend(); ++it)
      t += (t.empty() ? "" : "x") + std::to_string(*it);
    return t;
  };
  std::string at_target, rules_seen;
  const std::vector<int64_t>* chosen = nullptr;
  const GridRule* chosen_rule = nullptr;
  bool differ = false;
  for (const auto& [r, sizes] : fits) {
    rules_seen += (rules_seen.empty() ? "" : ", ") + r->name;
    if (sizes.empty()) continue;
    at_target += (at_target.empty() ? "" : ", ") + r->name + " gives " + sized(sizes);
    if (!chosen) {
      chosen = &sizes;
      chosen_rule = r;
    } else if (sizes != *chosen) {
      differ = true;
    }
  }
  // Equal sides, where they exist, are what all the inputs' rules give.
  if (chosen && (!differ || chosen_rule == &grid_rules()[0])) {
    rule = chosen_rule->name + ", as in every input";
    return Topology{*chosen, std::vector<bool>(static_cast<std::size_t>(d), false)};
  }
  const bool square = !fits.empty() && fits[0].first == &grid_rules()[0];
  const std::string why =
      square ? std::to_string(n) + " ranks do not fit the equal-sided grids of the inputs (" +
                   seen + ")"
             : "the inputs' grids (" + seen + ") follow " +
                   (fits.empty() ? "no rule known here (equal sides, MPI_Dims_create with the "
                                   "smallest or the largest size fastest)"
                                 : rules_seen);
  if (differ)
    throw ExtrapError(why + ", and at " + std::to_string(n) +
                      " ranks the rules they fit give different grids (" + at_target +
                      "): give --grid with the grid the program makes there");
  if (!fits.empty())
    throw ExtrapError(why + ", which has no " + std::to_string(d) + "-D grid of " +
                      std::to_string(n) + " ranks: give " +
                      (square ? "a square/cubic count or --grid" : "--grid"));
  throw ExtrapError(why + ": give --grid");
}

}  // namespace tracefold::extrap::detail
