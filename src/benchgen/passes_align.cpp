// Collective alignment (seed 000, 4.4.3, Algorithm 2).
//
// MPI pairs collectives on a communicator by their order: the k-th
// collective of every member is one operation. So instead of stopping and
// switching traversals as the seed does, each rank is walked once and its
// k-th collective on each communicator group is paired with the first
// member's k-th; nodes that meet in one collective are joined (union-find).
// A group of nodes is combined in place when no rank's calls change order,
// which holds when no node between them holds any of the moved node's ranks.
//
// With threads every thread's stream (location t * P + r) is walked: a
// collective pairs with the other ranks' by the rank's order on the
// communicator, which is one thread's order as long as one thread of each
// rank calls the communicator's collectives (replay and bench ask the
// same); a rank whose threads share one is refused.
#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "passes_internal.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/trace_query.hpp"
#include "tracefold/union_find.hpp"

namespace tracefold {

using namespace passes;

namespace {

// Collectives that pair over the members of `comm` (intercommunicator
// creation and MPI_Comm_create_group involve other groups).
bool pairs_over_comm(OpId op) {
  const OpTraits& t = op_traits(op);
  return t.collective() && t.family != OpFamily::kIntercommCreate &&
         t.family != OpFamily::kIntercommMerge && t.family != OpFamily::kCommCreateGroup;
}

std::vector<int64_t> comm_ids(const Node& n) {
  std::vector<int64_t> ids;
  if (const Elastic* c = n.field(FieldTable::comm())) {
    for (const ElasticEntry& e : c->entries())
      for (const ValueSeq::Run& r : e.values.runs())
        for (int64_t v : r.pattern)
          if (std::find(ids.begin(), ids.end(), v) == ids.end()) ids.push_back(v);
    // Ranks without a value use the world.
    if (!(c->ranks() == n.ranks)) ids.push_back(CommTable::kWorld);
  } else {
    ids.push_back(CommTable::kWorld);
  }
  return ids;
}

// Whether every node of `members` but `target` can move to `target`'s
// position without reordering any rank's calls.
bool movable(const Trace& t, const std::vector<std::size_t>& members, std::size_t target) {
  for (std::size_t m : members) {
    if (m == target) continue;
    const std::size_t lo = std::min(m, target), hi = std::max(m, target);
    for (std::size_t k = lo + 1; k < hi; ++k)
      if (t.nodes[k].ranks.intersects(t.nodes[m].ranks)) return false;
  }
  return true;
}

void merge_elastic(Elastic& into, const Elastic& from) {
  into.merge(from);
  into.sort_entries();
}

void absorb(Node& into, const Node& from) {
  into.ranks.unite(from.ranks);
  merge_elastic(into.count, from.count);
  for (std::size_t l = 0; l < from.loops.size(); ++l) {
    if (l == into.loops.size()) into.loops.emplace_back();
    merge_elastic(into.loops[l].members, from.loops[l].members);
    merge_elastic(into.loops[l].iters, from.loops[l].iters);
  }
  for (const auto& [f, el] : from.fields) {
    if (Elastic* mine = into.field(f)) {
      merge_elastic(*mine, el);
    } else {
      into.fields.emplace_back(f, el);
      std::sort(into.fields.begin(), into.fields.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  }
  merge_timings(into.timings, from.timings);
}

}  // namespace

bool needs_alignment(const Trace& trace) {
  const int32_t p = trace.world_size, threads = std::max(trace.threads, 1);
  for (const Node& n : trace.nodes) {
    if (!pairs_over_comm(n.key.op)) continue;
    for (int64_t id : comm_ids(n)) {
      auto it = trace.comms.all().find(id);
      if (it == trace.comms.all().end()) continue;
      // Member m of a group is location t * p + m on thread t.
      for (const CommGroup& g : it->second)
        for (int32_t t = 0; t < threads; ++t) {
          const auto in = [&](int32_t m) { return n.ranks.contains(t * p + m); };
          const bool some = std::any_of(g.members.begin(), g.members.end(), in);
          const bool all = std::all_of(g.members.begin(), g.members.end(), in);
          if (some && !all) return true;
        }
    }
  }
  return false;
}

AlignReport align_collectives(Trace& trace) {
  AlignReport report;
  if (!needs_alignment(trace)) return report;
  const FieldId comm_f = FieldTable::comm();
  UnionFind uf(trace.nodes.size());
  const int32_t p = trace.world_size, locations = p * std::max(trace.threads, 1);
  const auto name = [&](int32_t l) { return trace.location_name(l); };
  // (comm id, first member) -> nodes of the first member's collectives, in order.
  std::map<std::pair<int64_t, int32_t>, std::vector<std::size_t>> first_seen;
  std::map<std::pair<int64_t, int32_t>, int32_t> first_rank;  // the location that made them
  // (rank, comm id, first member) -> the one location of the rank that calls them.
  std::map<std::tuple<int32_t, int64_t, int32_t>, int32_t> caller;
  for (int32_t r = 0; r < locations; ++r) {
    const int32_t rank = trace.rank_of(r);
    RankIterator it(trace, r);
    Event ev;
    std::map<std::pair<int64_t, int32_t>, std::size_t> seq;
    while (it.next(ev)) {
      if (!pairs_over_comm(ev.op)) continue;
      const int64_t comm = ev.get(comm_f) == kAbsent ? CommTable::kWorld : ev.get(comm_f);
      const CommGroup* g = trace.comms.group_of(comm, rank);
      if (!g || g->members.empty()) continue;
      const auto key = std::pair{comm, g->members.front()};
      const std::size_t node = static_cast<std::size_t>(it.current_node() - trace.nodes.data());
      if (const auto [c, fresh] = caller.emplace(std::tuple{rank, comm, key.second}, r);
          !fresh && c->second != r)
        throw PassError("rank " + std::to_string(rank) + ": threads " +
                        std::to_string(trace.thread_of(c->second)) + " and " +
                        std::to_string(trace.thread_of(r)) +
                        " both call collectives on communicator " + std::to_string(comm) + " (" +
                        node_label(trace, node) +
                        "); the trace does not say which of them came first, so they cannot be "
                        "paired with the other ranks'");
      auto& list = first_seen[key];
      auto [fr, fresh] = first_rank.emplace(key, r);
      const std::size_t k = seq[key]++;
      if (fr->second == r) {
        list.push_back(node);
        continue;
      }
      if (k >= list.size())
        throw DeadlockError(
            "collectives do not pair: " + name(r) + " calls " + node_label(trace, node) +
                " as collective #" + std::to_string(k) + " on communicator " +
                std::to_string(comm) + ", but " + name(fr->second) + " makes only " +
                std::to_string(list.size()),
            {BlockedRank{rank, node, OpTable::name(ev.op),
                         "the other members of communicator " + std::to_string(comm)}});
      const std::size_t other = list[k];
      if (trace.nodes[other].key.op != ev.op)
        throw PassError("collective #" + std::to_string(k) + " on communicator " +
                        std::to_string(comm) + " is " + node_label(trace, other) + " on " +
                        name(fr->second) + " but " + node_label(trace, node) + " on " + name(r));
      uf.unite(other, node);
    }
    for (const auto& [key, k] : seq) {
      const std::vector<std::size_t>& list = first_seen[key];
      if (k >= list.size()) continue;
      throw DeadlockError("collectives do not pair: " + name(r) + " makes " + std::to_string(k) +
                              " collectives on communicator " + std::to_string(key.first) + ", " +
                              name(first_rank[key]) + " makes " + std::to_string(list.size()) +
                              " (its next is " + node_label(trace, list[k]) + ")",
                          {BlockedRank{trace.rank_of(first_rank[key]), list[k],
                                       OpTable::name(trace.nodes[list[k]].key.op),
                                       name(r) + " on communicator " + std::to_string(key.first)}});
    }
  }
  std::map<std::size_t, std::vector<std::size_t>> classes;
  for (std::size_t i = 0; i < trace.nodes.size(); ++i)
    if (uf.find(i) != i) classes[uf.find(i)].push_back(i);
  std::vector<std::size_t> erase;
  std::map<EventKey, EventKey> renamed;  // merged node's key -> its target's
  for (auto& [root, rest] : classes) {
    std::vector<std::size_t> members{root};
    members.insert(members.end(), rest.begin(), rest.end());
    // Ranks must be disjoint: one rank's two calls cannot become one node.
    Ranklist seen;
    bool disjoint = true;
    for (std::size_t m : members) {
      if (seen.intersects(trace.nodes[m].ranks)) disjoint = false;
      seen.unite(trace.nodes[m].ranks);
    }
    std::size_t target = members.front();
    if (!disjoint ||
        (!movable(trace, members, target) && !movable(trace, members, target = members.back()))) {
      report.unmerged.push_back(members);
      continue;
    }
    for (std::size_t m : members) {
      if (m == target) continue;
      if (!(trace.nodes[m].key == trace.nodes[target].key))
        renamed[trace.nodes[m].key] = trace.nodes[target].key;
      absorb(trace.nodes[target], trace.nodes[m]);
      erase.push_back(m);
      ++report.merged;
    }
  }
  // A successor reached from a merged node finds its timing under the
  // target's key too (the old key stays for other nodes that share it).
  for (Node& n : trace.nodes) {
    std::vector<Timing> extra;
    for (const Timing& t : n.timings)
      if (auto it = renamed.find(t.pred); it != renamed.end()) {
        Timing copy = t;
        copy.pred = it->second;
        extra.push_back(std::move(copy));
      }
    if (extra.empty()) continue;
    std::sort(extra.begin(), extra.end(),
              [](const Timing& a, const Timing& b) { return a.pred < b.pred; });
    merge_timings(n.timings, extra);
  }
  std::sort(erase.rbegin(), erase.rend());
  if (!erase.empty()) {
    report.origin.resize(trace.nodes.size());
    std::iota(report.origin.begin(), report.origin.end(), 0);
  }
  for (std::size_t e : erase) {
    trace.nodes.erase(trace.nodes.begin() + static_cast<std::ptrdiff_t>(e));
    report.origin.erase(report.origin.begin() + static_cast<std::ptrdiff_t>(e));
  }
  return report;
}

std::function<std::string(std::size_t)> print_numbering(const Trace& before,
                                                        std::vector<std::size_t> origin) {
  return [&before, origin = std::move(origin)](std::size_t i) {
    return node_label(before, origin.empty() || i >= origin.size() ? i : origin[i]);
  };
}

}  // namespace tracefold
