// A wait-state report as a CUBE4 profile (cube4.hpp), for `analyze -o
// x.cubex`.
#include "tracefold/cube4.hpp"
#include "tracefold/waits.hpp"

namespace tracefold {

Cube4Profile wait_cube(const WaitReport& r) {
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
  for (const WaitCallPath& c : r.callpaths) {
    const int32_t region = cube.add_region(
        {c.label, "", -1, c.computation ? std::string("user") : std::string("mpi")});
    cube.add_cnode(region, c.parent);
  }
  for (const auto& [key, v] : r.severity) {
    const auto [p, cp, rank] = key;
    const double ex = r.exclusive(p, cp, rank);
    // Rounding of the subtraction, not time.
    if (ex > 1e-12) cube.add(p, cp, rank, ex);
  }
  for (const auto& [key, v] : r.critical_path)
    if (v > 0) cube.add(critical, key.first, key.second, v);
  for (const auto& [key, v] : r.delay_costs)
    if (v > 0) cube.add(delay, key.first, key.second, v);
  for (const auto& [key, v] : r.propagated_costs)
    if (v > 0) cube.add(propagated, key.first, key.second, v);
  cube.attributes.push_back({"creator", "tracefold analyze"});
  return cube;
}

}  // namespace tracefold
