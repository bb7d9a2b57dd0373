#include "tracefold/thread_comms.hpp"

#include <algorithm>

#include "tracefold/event.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/thread_order.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold {

bool collective_over_comm(OpId op) {
  const OpTraits& t = op_traits(op);
  return t.shape != CollectiveShape::kNone && t.family != OpFamily::kCommCreateGroup &&
         t.family != OpFamily::kIntercommMerge;
}

ThreadComms thread_comms(const Trace& trace, int32_t rank, const std::string& what) {
  ThreadComms out;
  const auto threads = static_cast<std::size_t>(std::max(trace.threads, 1));
  out.last_use.resize(threads);
  const FieldId comm = FieldTable::comm();
  const FieldId pcomm = FieldTable::intern("pcomm", FieldKind::kScalar);
  const FieldId newcomm = FieldTable::intern("newcomm", FieldKind::kScalar);
  // Per communicator, the first thread that makes a collective call on it
  // and the node of that call.
  std::unordered_map<int64_t, std::pair<int32_t, std::size_t>> collective_by;
  for (std::size_t t = 0; t < threads; ++t) {
    RankIterator it(trace, static_cast<int32_t>(t) * trace.world_size + rank);
    auto& last = out.last_use[t];
    Event ev;
    for (uint64_t i = 0; it.next(ev); ++i) {
      for (const FieldId f : {comm, pcomm})
        if (const int64_t id = ev.get(f); id != kAbsent && id != kNull) last[id] = i;
      if (const int64_t id = ev.get(newcomm); id != kAbsent && id != kNull)
        out.creators.emplace(id, static_cast<int32_t>(t));
      if (!out.ordered && (ev.get(others_field()) > 0 || ev.get(rothers_field()) > 0)) {
        out.ordered = true;
        out.ordered_node = static_cast<std::size_t>(it.current_node() - trace.nodes.data());
      }
      if (!collective_over_comm(ev.op) || !out.error.empty()) continue;
      int64_t id = ev.get(comm);
      if (id == kAbsent) id = CommTable::kWorld;
      const auto node = static_cast<std::size_t>(it.current_node() - trace.nodes.data());
      const auto [first, fresh] = collective_by.try_emplace(id, static_cast<int32_t>(t), node);
      if (fresh || first->second.first == static_cast<int32_t>(t)) continue;
      out.error = "rank " + std::to_string(rank) + ": threads " +
                  std::to_string(first->second.first) + " and " + std::to_string(t) +
                  " both make collective calls on communicator " + std::to_string(id) + " (" +
                  node_label(trace, first->second.second) + ", " + node_label(trace, node) +
                  "); the trace does not record their order across threads, so " + what +
                  " cannot make them in the program's order";
    }
  }
  return out;
}

}  // namespace tracefold
