// Pre-flight of replay: the whole trace is checked before the first MPI call,
// so that a damaged trace is refused with the node named instead of leaving
// ranks waiting in calls their peers never make.
#include <algorithm>
#include <map>
#include <vector>

#include "tracefold/expand.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/replay.hpp"
#include "tracefold/validate.hpp"

namespace tracefold {

namespace {

std::string describe(const Trace& trace, std::size_t node) {
  const Node& n = trace.nodes[node];
  return "node #" + std::to_string(node) + " (" + OpTable::name(n.key.op) + ", site " +
         std::to_string(n.key.site) + ")";
}

// Calls every member of the communicator makes, in the same order: the
// collectives and the communicator constructors. MPI_Comm_create_group is
// left out (only the new group's members call it), and so is
// MPI_Intercomm_merge (its communicator spans two groups).
bool collective_over_comm(OpId op) {
  const OpTraits& t = op_traits(op);
  return t.shape != CollectiveShape::kNone && t.family != OpFamily::kCommCreateGroup &&
         t.family != OpFamily::kIntercommMerge;
}

struct Call {
  OpId op;
  int64_t root;
  std::size_t node;
};

// One group of one communicator id: the calls of its lowest member (ranks
// are walked in increasing order, so it comes first) against which every
// other member's calls are compared as they come.
struct GroupCalls {
  int32_t reference = 0;
  std::vector<Call> calls;
  std::map<int32_t, std::size_t> seen;  // other member -> calls compared so far
};

std::string comm_name(int64_t id, const CommGroup& g) {
  return "communicator " + std::to_string(id) + " (ranks " + g.members.to_ranklist().to_string() +
         ")";
}

void check_collective_order(const Trace& trace) {
  const FieldId comm_field = FieldTable::comm();
  const FieldId root_field = FieldTable::find("root").value();
  // A trace's table may leave the world out: it is every rank.
  CommGroup world{MemberList::run(0, 1, trace.world_size)};
  std::map<const CommGroup*, GroupCalls> groups;
  std::map<const CommGroup*, int64_t> ids;
  for (int32_t rank = 0; rank < trace.world_size; ++rank) {
    RankIterator it(trace, rank);
    Event ev;
    while (it.next(ev)) {
      if (!collective_over_comm(ev.op)) continue;
      int64_t comm = ev.get(comm_field);
      if (comm == kAbsent) comm = CommTable::kWorld;
      const CommGroup* g = comm == CommTable::kWorld && !trace.comms.group_of(comm, rank)
                               ? &world
                               : trace.comms.group_of(comm, rank);
      // A call on no communicator, or one this rank is not in, is left to
      // the replay's own checks.
      if (!g || g->members.empty()) continue;
      const std::size_t node = static_cast<std::size_t>(it.current_node() - trace.nodes.data());
      const Call call{ev.op, ev.get(root_field), node};
      auto [pos, added] = groups.try_emplace(g);
      GroupCalls& gc = pos->second;
      if (added) {
        gc.reference = *std::min_element(g->members.begin(), g->members.end());
        ids[g] = comm;
      }
      if (rank == gc.reference) {
        gc.calls.push_back(call);
        continue;
      }
      const std::size_t k = gc.seen[rank]++;
      const std::string where = comm_name(comm, *g) + ", collective call " + std::to_string(k + 1);
      if (k >= gc.calls.size())
        throw ReplayError(where + ": rank " + std::to_string(rank) + " calls " +
                          describe(trace, node) + ", rank " + std::to_string(gc.reference) +
                          " has no such call (it makes " + std::to_string(gc.calls.size()) + ")");
      const Call& want = gc.calls[k];
      // Roots are compared where both are ranks: on an intercommunicator
      // the root's own side passes MPI_ROOT or MPI_PROC_NULL instead.
      const bool rooted = (op_traits(ev.op).shape == CollectiveShape::kOneToN ||
                           op_traits(ev.op).shape == CollectiveShape::kNToOne) &&
                          want.root >= 0 && call.root >= 0;
      if (want.op != call.op || (rooted && want.root != call.root))
        throw ReplayError(where + ": rank " + std::to_string(gc.reference) + " calls " +
                          describe(trace, want.node) +
                          (rooted ? " with root " + std::to_string(want.root) : "") + ", rank " +
                          std::to_string(rank) + " calls " + describe(trace, node) +
                          (rooted ? " with root " + std::to_string(call.root) : "") +
                          ": the replay would wait forever");
    }
    for (auto& [g, gc] : groups) {
      if (rank == gc.reference || !std::count(g->members.begin(), g->members.end(), rank)) continue;
      const std::size_t k = gc.seen[rank];
      if (k < gc.calls.size())
        throw ReplayError(comm_name(ids[g], *g) + ": rank " + std::to_string(gc.reference) +
                          " makes " + std::to_string(gc.calls.size()) + " collective calls, rank " +
                          std::to_string(rank) + " only " + std::to_string(k) + " (the next is " +
                          describe(trace, gc.calls[k].node) + ")");
    }
  }
}

}  // namespace

void preflight_check(const Trace& trace, const ReplayOptions& options) {
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    if (const std::string missing = missing_required_field(trace.nodes[i]); !missing.empty())
      throw ReplayError(describe(trace, i) + ": " + missing);
    // Graph topologies are made again from their recorded edges, which
    // traces of older recorders lack (and MPI_Dist_graph_create's are never
    // recorded: each rank passes a part of the graph).
    if (op_traits(trace.nodes[i].key.op).family == OpFamily::kGraphCreate) {
      const std::string& name = OpTable::name(trace.nodes[i].key.op);
      const auto has = [&](const char* f) {
        const auto id = FieldTable::find(f);
        return id && trace.nodes[i].field(*id) != nullptr;
      };
      if (name == "MPI_Dist_graph_create" ||
          (name == "MPI_Graph_create" && !(has("gindex") && has("gedges"))) ||
          (name == "MPI_Dist_graph_create_adjacent" && !(has("gsrcs") && has("gdsts"))))
        throw ReplayError(describe(trace, i) +
                          ": the trace does not hold this graph's edges, so replay cannot make "
                          "the topology again");
    }
  }
  if (const auto init = init_thread_node(trace); init && !options.single_thread)
    throw ReplayError(describe(trace, *init) + ": " + std::string(kInitThreadRefusal));
  if (options.clock == ComputeClock::kCpu) {
    if (options.compute == ComputeMode::kSleep)
      throw ReplayError("--compute-clock cpu spins on the processor clock; it cannot sleep");
    const bool any = std::any_of(trace.nodes.begin(), trace.nodes.end(), [](const Node& n) {
      return std::any_of(n.timings.begin(), n.timings.end(), [](const Timing& t) {
        return std::any_of(t.stats.begin(), t.stats.end(),
                           [](const auto& st) { return st.first == kComputeCpuStatistic; });
      });
    });
    if (!any)
      throw ReplayError("--compute-clock cpu: the trace holds no " +
                        std::string(kComputeCpuStatistic) + " statistic; record with --stats " +
                        std::string(kComputeCpuStatistic));
  }
  // Probabilistic replay draws loop counts and values per rank: the order
  // is only known as it happens.
  const bool probabilistic =
      options.probabilistic.value_or(trace.lossy.find("histogram") != std::string::npos);
  if (!probabilistic) check_collective_order(trace);
}

}  // namespace tracefold
