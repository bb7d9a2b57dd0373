// Relative endpoints per rank, the input of topology detection.
#include <set>

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

}  // namespace tracefold::extrap
