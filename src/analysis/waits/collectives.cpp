// Collective wait states: the rules for one member of a complete instance
// (shared with the parallel analysis, parallel/parallel_collect.cpp) and
// the serial pass that groups every rank's collectives into instances.
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "internal.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::waits_detail {

std::vector<std::size_t> collective_completions(const std::vector<TimedEvent>& evs) {
  // Most ranks start no nonblocking collective: then none is completed, and
  // find_completions' copy of the rank's events (a rank's share of the
  // analysis's largest data, fields and all) is not needed.
  const bool any = std::any_of(evs.begin(), evs.end(), [](const TimedEvent& te) {
    const OpTraits& t = op_traits(te.ev.op);
    return t.category == OpCategory::kCollective && t.nonblocking;
  });
  if (!any) return std::vector<std::size_t>(evs.size(), RequestCompletions::npos);
  std::vector<Event> plain;
  plain.reserve(evs.size());
  for (const TimedEvent& te : evs) plain.push_back(te.ev);
  return collective_completions(evs, find_completions(plain).done);
}

std::vector<std::size_t> collective_completions(const std::vector<TimedEvent>& evs,
                                                std::vector<std::size_t> done) {
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const OpTraits& t = op_traits(evs[i].ev.op);
    if (t.category != OpCategory::kCollective || !t.nonblocking) done[i] = RequestCompletions::npos;
  }
  return done;
}

const std::vector<std::size_t>& collective_done(Analysis& a, int32_t r) {
  auto& done = a.coll_done[std::size_t(r)];
  if (done.size() != a.in.ranks[std::size_t(r)].size())
    done = collective_completions(a.in.ranks[std::size_t(r)]);
  return done;
}

void collective_member(Analysis& a, int32_t r, std::size_t ev, std::size_t wait_ev,
                       const CollSummary& s) {
  const bool nonblocking = wait_ev != ev;
  if (wait_ev == RequestCompletions::npos) return;  // never completed: no waiting seen
  a.syncs[std::size_t(r)].push_back({wait_ev, -1, s.comm, s.group_first});
  const TimedEvent& e = a.at(r, ev);
  // Where the rank waits: in the call, or in the Wait of its request.
  const TimedEvent& w = a.at(r, wait_ev);
  const int32_t cp = a.callpath(e.ev, false);
  auto wait = [&](WaitPattern p, const CollPoint& late) {
    if (late.rank < 0) return;
    const int64_t ns = clamp_wait(late.start - w.start_ns, w);
    if (ns <= 0) return;
    a.add(p, cp, r, ns);
    a.note_wait({r, wait_ev, late.rank, late.ev, ns, p});
  };
  auto completion = [&](WaitPattern p, WaitPattern waiting) {
    wait(waiting, s.last_in);
    // A nonblocking one's completion overlaps the rank's own work.
    if (nonblocking) return;
    const int64_t entered_wait = std::max(e.start_ns, s.last_in.start);
    const int64_t ns = e.end_ns - std::max(s.first_out, entered_wait);
    a.add(p, cp, r, std::min(ns, e.end_ns - e.start_ns));
  };
  switch (op_traits(e.ev.op).shape) {
    case CollectiveShape::kBarrier:
      completion(WaitPattern::kBarrierCompletion, WaitPattern::kWaitBarrier);
      break;
    case CollectiveShape::kNToN:
      completion(WaitPattern::kNxNCompletion, WaitPattern::kWaitNxN);
      break;
    case CollectiveShape::kOneToN:
      if (s.root.rank >= 0 && s.root.rank != r) wait(WaitPattern::kLateBroadcast, s.root);
      break;
    case CollectiveShape::kNToOne:
      if (s.root.rank == r) wait(WaitPattern::kEarlyReduce, s.first_nonroot);
      break;
    case CollectiveShape::kScan:
      wait(WaitPattern::kEarlyScan, s.latest_below);
      break;
    default:
      break;
  }
}

/// Whether the collective at `te` is analysed, and its communicator group.
const CommGroup* analysed_collective(const Trace& trace, const Event& ev, int32_t r,
                                     int64_t& comm) {
  const OpTraits& t = op_traits(ev.op);
  if (t.category != OpCategory::kCollective || t.shape == CollectiveShape::kNeighbor ||
      t.shape == CollectiveShape::kNone)
    return nullptr;
  comm = field_of(ev, "comm");
  if (comm == kAbsent) comm = CommTable::kWorld;
  const CommGroup* g = trace.comms.group_of(comm, r);
  return g && !g->members.empty() ? g : nullptr;
}

/// The root of a rooted collective as a world rank, or -1.
int32_t collective_root(const Event& ev, const CommGroup& g) {
  const int64_t root = field_of(ev, "root");
  if (is_sentinel(root) || root < 0 || root >= int64_t(g.members.size())) return -1;
  return g.members[std::size_t(root)];
}

void collectives(Analysis& a) {
  struct Member {
    int32_t rank;
    std::size_t ev;
  };
  struct Instance {
    int64_t comm;
    const CommGroup* group;
    std::vector<Member> members;
  };
  std::map<std::tuple<int64_t, int32_t, uint64_t>, Instance> instances;
  std::vector<const std::vector<std::size_t>*> done(a.in.ranks.size());
  // With threads: one location of each rank may call collectives on a
  // group, since their order across a rank's threads is not recorded.
  auto& caller = a.coll_caller;
  for (int32_t r = 0; r < int32_t(a.in.ranks.size()); ++r) {
    done[std::size_t(r)] = &collective_done(a, r);
    // This rank's k-th collective on a group meets the others' k-th.
    std::map<std::pair<int64_t, int32_t>, uint64_t> seq;
    const auto& evs = a.in.ranks[std::size_t(r)];
    for (std::size_t i = 0; i < evs.size(); ++i) {
      int64_t comm = 0;
      const CommGroup* g = analysed_collective(a.trace, evs[i].ev, a.world_rank(r), comm);
      if (!g) continue;
      const std::pair<int64_t, int32_t> gk{comm, g->members.front()};
      if (!a.in.locations.empty()) {
        const int32_t first =
            caller.try_emplace({a.world_rank(r), comm, g->members.front()}, r).first->second;
        if (first != r)
          throw WaitsError("locations " + a.in.locations[std::size_t(first)].name + " and " +
                           a.in.locations[std::size_t(r)].name +
                           " (rank.thread) both call collectives on communicator " +
                           std::to_string(comm) +
                           ": their order across threads is not recorded, so the instances "
                           "cannot be told apart");
      }
      Instance& inst = instances[{comm, g->members.front(), seq[gk]++}];
      inst.comm = comm;
      inst.group = g;
      inst.members.push_back({r, i});
    }
  }
  for (auto& [key, inst] : instances) {
    if (inst.members.size() != inst.group->members.size()) {
      ++a.rep.incomplete_collectives;  // some member's part is past the bound
      continue;
    }
    ++a.rep.collectives;
    auto wait_of = [&](const Member& m) {
      const std::size_t d = (*done[std::size_t(m.rank)])[m.ev];
      return op_traits(a.at(m.rank, m.ev).ev.op).nonblocking ? d : m.ev;
    };
    CollSummary s;
    s.comm = inst.comm;
    s.group_first = inst.group->members.front();
    s.first_out = std::numeric_limits<int64_t>::max();
    const int32_t root =
        collective_root(a.at(inst.members.front().rank, inst.members.front().ev).ev, *inst.group);
    // Members are in world rank order: strict comparisons keep the lowest
    // rank on ties, as the parallel reductions do.
    for (const Member& m : inst.members) {
      const TimedEvent& e = a.at(m.rank, m.ev);
      if (s.last_in.rank < 0 || e.start_ns > s.last_in.start)
        s.last_in = {e.start_ns, m.rank, m.ev};
      s.first_out = std::min(s.first_out, e.end_ns);
      if (a.world_rank(m.rank) == root)
        s.root = {e.start_ns, m.rank, m.ev};
      else if (s.first_nonroot.rank < 0 || e.start_ns < s.first_nonroot.start)
        s.first_nonroot = {e.start_ns, m.rank, m.ev};
    }
    if (op_traits(a.at(inst.members.front().rank, inst.members.front().ev).ev.op).shape ==
        CollectiveShape::kScan) {
      // In communicator order: a rank depends on the ranks below it.
      std::map<int32_t, const Member*> by_rank;
      for (const Member& m : inst.members)
        by_rank[a.trace.comms.rank_in(inst.comm, a.world_rank(m.rank))] = &m;
      CollPoint below;
      for (const auto& [cr, m] : by_rank) {
        s.latest_below = below;
        collective_member(a, m->rank, m->ev, wait_of(*m), s);
        const TimedEvent& e = a.at(m->rank, m->ev);
        if (below.rank < 0 || e.start_ns > below.start) below = {e.start_ns, m->rank, m->ev};
      }
      continue;
    }
    for (const Member& m : inst.members) collective_member(a, m.rank, m.ev, wait_of(m), s);
  }
}

}  // namespace tracefold::waits_detail
