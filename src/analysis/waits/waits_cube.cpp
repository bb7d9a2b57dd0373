// A wait-state report as a CUBE4 profile (cube4.hpp), for `analyze -o
// x.cubex`.
#include <map>

#include "tracefold/cube4.hpp"
#include "tracefold/waits.hpp"

namespace tracefold {

Cube4Profile wait_cube(const WaitReport& r, std::vector<int32_t>* leaves) {
  Cube4Profile cube;
  cube.set_ranks(r.world_size);
  for (const WaitPatternInfo& p : r.patterns)
    cube.add_metric({p.id, p.name, p.description, "sec", p.parent});
  const int32_t critical = cube.add_metric(
      {"critical_path", "Critical path",
       "Time of each call path and rank on the path that determines the run time", "sec", -1});
  const int32_t delay = cube.add_metric(
      {"delay_costs", "Delay costs",
       "Waiting time of other ranks caused by the excess time of this call path and rank", "sec",
       -1});
  const int32_t propagated = cube.add_metric(
      {"propagated_delay_costs", "Propagated delay costs",
       "Waiting time caused indirectly, through wait states of ranks that were late because "
       "they had waited, by the excess time of this call path and rank",
       "sec", -1});
  // The call tree: a node per (caller node, frame), shared by every call
  // path through it; the call path itself is a leaf below its innermost
  // frame. Regions are shared by name.
  std::map<std::string, int32_t> regions;
  auto region = [&](const std::string& name, const std::string& paradigm) {
    auto [it, fresh] = regions.try_emplace(paradigm + "\n" + name, 0);
    if (fresh) it->second = cube.add_region({name, "", -1, paradigm});
    return it->second;
  };
  std::map<std::pair<int32_t, std::string>, int32_t> nodes;
  auto node = [&](int32_t parent, const std::string& name, const std::string& paradigm) {
    auto [it, fresh] = nodes.try_emplace({parent, paradigm + "\n" + name}, 0);
    if (fresh) it->second = cube.add_cnode(region(name, paradigm), parent);
    return it->second;
  };
  std::vector<int32_t> leaf(r.callpaths.size());
  for (std::size_t k = 0; k < r.callpaths.size(); ++k) {
    const WaitCallPath& c = r.callpaths[k];
    int32_t parent = -1;
    for (const std::string& frame : c.stack) parent = node(parent, frame, "user");
    leaf[k] = c.computation ? node(parent, "computation before " + OpTable::name(c.op), "user")
                            : node(parent, OpTable::name(c.op), "mpi");
  }
  for (const auto& [key, v] : r.severity) {
    const auto [p, cp, rank] = key;
    const double ex = r.exclusive(p, cp, rank);
    // Rounding of the subtraction, not time.
    if (ex > 1e-12) cube.add(p, leaf[std::size_t(cp)], rank, ex);
  }
  for (const auto& [key, v] : r.critical_path)
    if (v > 0) cube.add(critical, leaf[std::size_t(key.first)], key.second, v);
  for (const auto& [key, v] : r.delay_costs)
    if (v > 0) cube.add(delay, leaf[std::size_t(key.first)], key.second, v);
  for (const auto& [key, v] : r.propagated_costs)
    if (v > 0) cube.add(propagated, leaf[std::size_t(key.first)], key.second, v);
  if (leaves) *leaves = leaf;
  cube.attributes.push_back({"creator", "tracefold analyze"});
  return cube;
}

}  // namespace tracefold
