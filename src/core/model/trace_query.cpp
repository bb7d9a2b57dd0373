#include "tracefold/trace_query.hpp"

#include <algorithm>

namespace tracefold {

std::string node_label(const Trace& trace, std::size_t index) {
  if (index >= trace.nodes.size()) return "node #" + std::to_string(index);
  const Node& n = trace.nodes[index];
  const std::string site = n.key.site < trace.sites.size()
                               ? site_label(trace.symtab, trace.sites.at(n.key.site))
                               : "site " + std::to_string(n.key.site);
  const std::string op =
      n.key.op < OpTable::size() ? OpTable::name(n.key.op) : "op " + std::to_string(n.key.op);
  return "node #" + std::to_string(index) + " (" + op + " at " + site + ")";
}

PredefinedComm predefined_comm(const Trace& trace, int64_t id, int32_t world_rank) {
  if (id == CommTable::kWorld) return PredefinedComm::kWorld;
  const CommGroup* g = trace.comms.group_of(id, world_rank);
  if (!g) return PredefinedComm::kNone;
  if (g->members.size() == 1 && g->members[0] == world_rank) return PredefinedComm::kSelf;
  if (static_cast<int32_t>(g->members.size()) != trace.world_size) return PredefinedComm::kNone;
  for (std::size_t i = 0; i < g->members.size(); ++i)
    if (g->members[i] != static_cast<int32_t>(i)) return PredefinedComm::kNone;
  return PredefinedComm::kWorld;
}

bool has_statistic(const Trace& trace, std::string_view name) {
  return std::any_of(trace.nodes.begin(), trace.nodes.end(), [&](const Node& n) {
    return std::any_of(n.timings.begin(), n.timings.end(), [&](const Timing& t) {
      return std::any_of(t.stats.begin(), t.stats.end(),
                         [&](const auto& st) { return st.first == name && !st.second.empty(); });
    });
  });
}

Trace same_header(const Trace& trace) {
  Trace out;
  out.world_size = trace.world_size;
  out.sites = trace.sites;
  out.symtab = trace.symtab;
  out.comms = trace.comms;
  out.lossy = trace.lossy;
  return out;
}

}  // namespace tracefold
