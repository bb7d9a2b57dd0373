// Phases (seed 002, Section 4): a phase runs from the exit of one global
// synchronisation to the exit of the next. A global synchronisation is a
// blocking Barrier, Allreduce, Allgather(v), Alltoall(v,w),
// Reduce_scatter(_block) or collective MPI-IO call on a communicator of
// all ranks that no rank left before the last one entered; instances closed at the same
// call site are one phase kind (an iterative code's steps).
#include <algorithm>
#include <set>

#include "internal.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::diagnose_detail {

bool global_sync_op(OpId op) {
  const OpTraits& t = op_traits(op);
  if (t.nonblocking) return false;
  switch (t.family) {
    case OpFamily::kBarrier:
    case OpFamily::kAllreduce:
    case OpFamily::kAllgather:
    case OpFamily::kAllgatherv:
    case OpFamily::kAlltoall:
    case OpFamily::kAlltoallv:
    case OpFamily::kAlltoallw:
    case OpFamily::kReduceScatter:
    case OpFamily::kReduceScatterBlock:
      return true;
    case OpFamily::kFile:
    case OpFamily::kFileRead:
    case OpFamily::kFileWrite:
      return t.variant == OpVariant::kCollective;
    default:
      return false;
  }
}

bool over_world(const Trace& trace, const Event& ev, int32_t r) {
  int64_t comm = field_by_literal(ev, "comm");
  if (comm == kAbsent) comm = CommTable::kWorld;
  const CommGroup* g = trace.comms.group_of(comm, r);
  return g && static_cast<int32_t>(g->members.size()) == trace.world_size;
}

std::vector<std::vector<std::size_t>> sync_candidates(const Trace& trace, const WaitInput& in) {
  std::vector<std::vector<std::size_t>> cand(in.ranks.size());
  for (std::size_t r = 0; r < in.ranks.size(); ++r) {
    const auto& evs = in.ranks[r];
    for (std::size_t k = 0; k < evs.size(); ++k)
      if (global_sync_op(evs[k].ev.op) && over_world(trace, evs[k].ev, int32_t(r)))
        cand[r].push_back(k);
  }
  return cand;
}

namespace {

int64_t median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The seed's clock check: the exits of a global synchronisation are nearly
// simultaneous, so a rank whose exits sit at a constant gap from rank 0's
// has a clock offset. Here clocks are already corrected by the recorder's
// offset measurements; what is left is reported as the residual.
void exit_gap_check(Context& c) {
  if (c.syncs.empty() || c.size < 2) return;
  int64_t worst = 0;
  int32_t worst_rank = 0;
  for (int32_t r = 1; r < c.size; ++r) {
    std::vector<int64_t> gaps;
    gaps.reserve(c.syncs.size());
    for (const SyncInstance& s : c.syncs)
      gaps.push_back(c.events(r)[s.ev[std::size_t(r)]].end_ns - c.events(0)[s.ev[0]].end_ns);
    const int64_t g = median(std::move(gaps));
    if (std::abs(g) > std::abs(worst)) worst = g, worst_rank = r;
  }
  c.rep.notes.push_back("clock check (constant exit gap over " + std::to_string(c.syncs.size()) +
                        " global synchronisations): largest median gap to rank 0 is " +
                        std::to_string(worst / 1000) + " us (rank " + std::to_string(worst_rank) +
                        ")");
}

}  // namespace

void find_phases(Context& c) {
  const int32_t P = c.size;
  // Per rank, the global synchronisations in program order.
  const std::vector<std::vector<std::size_t>> cand = sync_candidates(c.trace, c.in.events);
  std::size_t n = cand[0].size();
  for (const auto& v : cand) n = std::min(n, v.size());
  for (const auto& v : cand)
    if (v.size() != n) {
      c.rep.notes.push_back(
          "ranks reach different numbers of global synchronisations; phases "
          "are found up to the " +
          std::to_string(n) + "th");
      break;
    }
  std::map<std::pair<OpId, SiteId>, std::size_t> kinds;
  std::vector<std::size_t> boundary_of;  // per accepted instance: its phase kind
  for (std::size_t k = 0; k < n; ++k) {
    const Event& ev0 = c.events(0)[cand[0][k]].ev;
    bool same = true;
    int64_t lo = INT64_MAX, hi = INT64_MIN, last_in = INT64_MIN;
    for (int32_t r = 0; r < P; ++r) {
      const TimedEvent& te = c.events(r)[cand[std::size_t(r)][k]];
      same = same && te.ev.op == ev0.op;
      lo = std::min(lo, te.end_ns), hi = std::max(hi, te.end_ns);
      last_in = std::max(last_in, te.start_ns);
    }
    if (!same) {
      c.rep.notes.push_back("global synchronisation " + std::to_string(k) +
                            " is not the same operation on every rank; phases end there");
      break;
    }
    // Synchronising: no rank left before the last one entered (within the
    // clocks' tolerance). Exact times make the seed's exit-spread
    // heuristic unnecessary; the spread is still reported.
    const int64_t spread = hi - lo;
    if (lo < last_in - c.opt.tolerance_ns - c.in.clock_uncertainty_ns)
      continue;  // not synchronising: the phase goes on
    SyncInstance s;
    for (int32_t r = 0; r < P; ++r) {
      s.ev.push_back(cand[std::size_t(r)][k]);
    }
    s.spread_ns = spread;
    auto [it, fresh] = kinds.try_emplace({ev0.op, ev0.site}, c.rep.phases.size());
    if (fresh) {
      Phase p;
      p.closing = c.call_label(ev0);
      c.rep.phases.push_back(std::move(p));
      c.phase_syncs.emplace_back();
      c.phase_key.push_back({ev0.op, ev0.site});
    }
    c.phase_syncs[it->second].push_back(c.syncs.size());
    boundary_of.push_back(it->second);
    c.syncs.push_back(std::move(s));
  }
  // The rest of the run, after the last global synchronisation.
  const std::size_t tail = c.rep.phases.size();
  c.rep.phases.push_back(Phase{});
  c.rep.phases.back().closing = "";
  c.phase_syncs.emplace_back();
  c.phase_key.push_back({0, 0});

  // Every event, and the computation before it, to its phase instance.
  std::vector<std::vector<std::set<std::pair<OpId, SiteId>>>> calls(
      c.rep.phases.size(), std::vector<std::set<std::pair<OpId, SiteId>>>(std::size_t(P)));
  for (Phase& p : c.rep.phases) p.start_ns = INT64_MAX, p.end_ns = INT64_MIN;
  for (int32_t r = 0; r < P; ++r) {
    const auto& evs = c.events(r);
    std::size_t j = 0;  // next accepted instance
    int64_t from = c.run_start;
    for (std::size_t k = 0; k < evs.size(); ++k) {
      const std::size_t kind = j < c.syncs.size() ? boundary_of[j] : tail;
      Phase& p = c.rep.phases[kind];
      int64_t ns[static_cast<int>(TimeLabel::kCount)] = {};
      event_labels(c, r, k, ns);
      for (int l = 0; l < static_cast<int>(TimeLabel::kCount); ++l) p.labels[l] += c.seconds(ns[l]);
      if (!is_environment(evs[k].ev.op))
        calls[kind][std::size_t(r)].insert({evs[k].ev.op, evs[k].ev.site});
      if (j < c.syncs.size() && c.syncs[j].ev[std::size_t(r)] == k) {
        p.start_ns = std::min(p.start_ns, from - c.run_start);
        p.end_ns = std::max(p.end_ns, evs[k].end_ns - c.run_start);
        from = evs[k].end_ns;
        ++j;
      }
    }
    Phase& t = c.rep.phases[tail];
    t.start_ns = std::min(t.start_ns, from - c.run_start);
    t.end_ns = std::max(t.end_ns, c.run_end - c.run_start);
  }
  for (std::size_t p = 0; p < c.rep.phases.size(); ++p) {
    Phase& ph = c.rep.phases[p];
    ph.instances = p == tail ? 1 : c.phase_syncs[p].size();
    for (std::size_t i : c.phase_syncs[p])
      ph.exit_spread_us = std::max(ph.exit_spread_us, double(c.syncs[i].spread_ns) * 1e-3);
    // Rank groups: ranks that make the same set of calls in the phase.
    std::map<std::set<std::pair<OpId, SiteId>>, std::vector<int32_t>> groups;
    for (int32_t r = 0; r < P; ++r) groups[calls[p][std::size_t(r)]].push_back(r);
    for (auto& [calls_of, ranks] : groups) ph.groups.push_back(std::move(ranks));
    std::sort(ph.groups.begin(), ph.groups.end());
    if (ph.start_ns > ph.end_ns) ph.start_ns = ph.end_ns = 0;
  }
  exit_gap_check(c);
}

}  // namespace tracefold::diagnose_detail
