// Pre-flight of replay: the whole trace is checked before the first MPI call,
// so that a damaged trace is refused with the node named instead of leaving
// ranks waiting in calls their peers never make.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "replay_internal.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/replay.hpp"
#include "tracefold/thread_comms.hpp"
#include "tracefold/trace_query.hpp"
#include "tracefold/validate.hpp"

namespace tracefold {

namespace {

struct Call {
  OpId op;
  int64_t root;
  std::size_t node;
};

// One group of one communicator id that holds the rank being checked: the
// calls of its lowest member (the reference), against which the rank's
// calls are compared as they come.
struct GroupCalls {
  int64_t id = 0;
  int32_t reference = 0;
  std::vector<Call> calls;
  std::size_t seen = 0;  // the checked rank's calls compared so far
};

std::string comm_name(int64_t id, const CommGroup& g) {
  return "communicator " + std::to_string(id) + " (ranks " + g.members.to_ranklist().to_string() +
         ")";
}

// The collective calls `rank` makes, each with the group of its
// communicator that holds the rank (the world when the trace's table
// leaves it out), in the order made; a call on no known group is left to
// the replay's own checks.
template <class F>
void for_collectives(const Trace& trace, const CommGroup& world, int32_t rank, F&& f) {
  const FieldId comm_field = FieldTable::comm();
  const FieldId root_field = FieldTable::find("root").value();
  RankIterator it(trace, rank);
  Event ev;
  while (it.next(ev)) {
    if (!collective_over_comm(ev.op)) continue;
    int64_t comm = ev.get(comm_field);
    if (comm == kAbsent) comm = CommTable::kWorld;
    const CommGroup* g = trace.comms.group_of(comm, rank);
    if (!g && comm == CommTable::kWorld) g = &world;
    if (!g || g->members.empty()) continue;
    const std::size_t node = static_cast<std::size_t>(it.current_node() - trace.nodes.data());
    f(g, comm, Call{ev.op, ev.get(root_field), node});
  }
}

}  // namespace

std::string collective_order_error(const Trace& trace, int32_t rank) {
  CommGroup world{MemberList::run(0, 1, trace.world_size)};
  // Every group that holds `rank` and whose reference is another rank.
  std::map<const CommGroup*, GroupCalls> groups;
  auto consider = [&](int64_t id, const CommGroup* g) {
    if (!g || g->members.empty()) return;
    const int32_t reference = *std::min_element(g->members.begin(), g->members.end());
    if (reference == rank) return;
    GroupCalls& gc = groups[g];
    gc.id = id;
    gc.reference = reference;
  };
  for (const auto& [id, unused] : trace.comms.all()) consider(id, trace.comms.group_of(id, rank));
  if (!trace.comms.group_of(CommTable::kWorld, rank)) consider(CommTable::kWorld, &world);
  // Each reference walked once, for all the groups it leads.
  std::set<int32_t> references;
  for (const auto& [g, gc] : groups) references.insert(gc.reference);
  for (const int32_t reference : references) {
    for_collectives(trace, world, reference, [&](const CommGroup* g, int64_t, const Call& call) {
      if (auto found = groups.find(g);
          found != groups.end() && found->second.reference == reference)
        found->second.calls.push_back(call);
    });
  }
  std::string error;
  for_collectives(trace, world, rank, [&](const CommGroup* g, int64_t comm, const Call& call) {
    if (!error.empty()) return;
    auto found = groups.find(g);
    if (found == groups.end()) return;  // this rank leads the group
    GroupCalls& gc = found->second;
    const std::size_t k = gc.seen++;
    const std::string where = comm_name(comm, *g) + ", collective call " + std::to_string(k + 1);
    if (k >= gc.calls.size()) {
      error = where + ": rank " + std::to_string(rank) + " calls " + node_label(trace, call.node) +
              ", rank " + std::to_string(gc.reference) + " has no such call (it makes " +
              std::to_string(gc.calls.size()) + ")";
      return;
    }
    const Call& want = gc.calls[k];
    // Roots are compared where both are ranks: on an intercommunicator
    // the root's own side passes MPI_ROOT or MPI_PROC_NULL instead.
    const bool rooted = (op_traits(call.op).shape == CollectiveShape::kOneToN ||
                         op_traits(call.op).shape == CollectiveShape::kNToOne) &&
                        want.root >= 0 && call.root >= 0;
    if (want.op != call.op || (rooted && want.root != call.root))
      error = where + ": rank " + std::to_string(gc.reference) + " calls " +
              node_label(trace, want.node) +
              (rooted ? " with root " + std::to_string(want.root) : "") + ", rank " +
              std::to_string(rank) + " calls " + node_label(trace, call.node) +
              (rooted ? " with root " + std::to_string(call.root) : "") +
              ": the replay would wait forever";
  });
  if (!error.empty()) return error;
  for (const auto& [g, gc] : groups)
    if (gc.seen < gc.calls.size())
      return comm_name(gc.id, *g) + ": rank " + std::to_string(gc.reference) + " makes " +
             std::to_string(gc.calls.size()) + " collective calls, rank " + std::to_string(rank) +
             " only " + std::to_string(gc.seen) + " (the next is " +
             node_label(trace, gc.calls[gc.seen].node) + ")";
  return "";
}

void preflight_check(const Trace& trace, const ReplayOptions& options) {
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    if (const std::string missing = missing_required_field(trace.nodes[i]); !missing.empty())
      throw ReplayError(node_label(trace, i) + ": " + missing);
    // Graph topologies are made again from their recorded edges, which
    // traces of older recorders lack. MPI_Dist_graph_create's trace holds
    // the neighbours MPI gave each rank, not the edges each passed, and the
    // order MPI gives them in follows those edges.
    if (op_traits(trace.nodes[i].key.op).family == OpFamily::kGraphCreate) {
      const std::string& name = OpTable::name(trace.nodes[i].key.op);
      const auto has = [&](const char* f) {
        const auto id = FieldTable::find(f);
        return id && trace.nodes[i].field(*id) != nullptr;
      };
      if (name == "MPI_Dist_graph_create")
        throw ReplayError(node_label(trace, i) +
                          ": the trace holds the neighbours MPI gave each rank, not the edges each "
                          "passed, so replay cannot make this graph again with its neighbours in "
                          "the same order");
      if ((name == "MPI_Graph_create" && !(has("gindex") && has("gedges"))) ||
          (name == "MPI_Dist_graph_create_adjacent" && !(has("gsrcs") && has("gdsts"))))
        throw ReplayError(node_label(trace, i) +
                          ": the trace does not hold this graph's edges, so replay cannot make "
                          "the topology again");
    }
  }
  // A trace with threads says which thread made each call: each is
  // replayed by a thread of its own, except where replay plans one rank's
  // receives as a whole.
  const bool probabilistic =
      options.probabilistic.value_or(trace.lossy.find("histogram") != std::string::npos);
  if (const auto node = other_thread_node(trace); node && probabilistic)
    throw ReplayError(node_label(trace, *node) + ": " + std::to_string(trace.threads) +
                      " threads per rank called MPI; probabilistic replay plans each rank's "
                      "receives for one thread and cannot replay a trace with threads");
  if (const auto init = init_thread_node(trace);
      init && trace.threads <= 1 && !options.single_thread)
    throw ReplayError(node_label(trace, *init) + ": " + std::string(kInitThreadRefusal));
  if (options.clock == ComputeClock::kCpu) {
    if (options.compute == ComputeMode::kSleep)
      throw ReplayError("--compute-clock cpu spins on the processor clock; it cannot sleep");
    if (!has_statistic(trace, kComputeCpuStatistic))
      throw ReplayError("--compute-clock cpu: the trace holds no " +
                        std::string(kComputeCpuStatistic) + " statistic; record with --stats " +
                        std::string(kComputeCpuStatistic));
  }
}

}  // namespace tracefold
