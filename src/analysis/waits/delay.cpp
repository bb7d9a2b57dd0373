// Backward replay over the wait states the forward replay found: the
// critical path and the delay costs (direct and propagated).
#include <algorithm>
#include <map>

#include "internal.hpp"

namespace tracefold::waits_detail {

namespace {

// Past this many events back, a synchronization interval is cut short: a
// delay is caused near its wait, and the scan must stay linear in practice.
constexpr std::size_t kMaxScan = 100000;

bool syncs_with(const Analysis& a, const SyncPoint& p, int32_t other) {
  if (p.partner >= 0) return p.partner == other;
  const CommGroup* g = a.trace.comms.group_of(p.comm, other);
  return g && !g->members.empty() && g->members.front() == p.group_first;
}

// The last event of `rank` before `ev` at which it synchronized with
// `other`; -1 if none (the interval starts at the rank's first event).
int64_t previous_sync(const Analysis& a, int32_t rank, std::size_t ev, int32_t other) {
  const auto& s = a.syncs[std::size_t(rank)];
  auto it = std::lower_bound(s.begin(), s.end(), ev,
                             [](const SyncPoint& p, std::size_t e) { return p.ev < e; });
  std::size_t scanned = 0;
  while (it != s.begin() && scanned++ < kMaxScan) {
    --it;
    if (syncs_with(a, *it, other)) return static_cast<int64_t>(it->ev);
  }
  return ev > kMaxScan ? static_cast<int64_t>(ev - kMaxScan) : -1;
}

// Time per call path that `rank` spent on its own (not waiting) after
// event `from` and up to the start of event `to`.
void execution(Analysis& a, int32_t rank, int64_t from, std::size_t to, int sign,
               std::map<int32_t, int64_t>& out) {
  const auto& evs = a.in.ranks[std::size_t(rank)];
  for (std::size_t k = std::size_t(from + 1); k <= to; ++k) {
    const TimedEvent& te = evs[k];
    out[a.callpath(te.ev, true)] += sign * (te.start_ns - te.compute_start_ns);
    if (k < to)
      out[a.callpath(te.ev, false)] +=
          sign * (te.end_ns - te.start_ns - a.waited[std::size_t(rank)][k]);
  }
}

// Delay costs after Scalasca's definition (seed 003's backward replay): a
// wait state is caused by what the late rank did in excess of the waiter
// since they last synchronized — its excess computation (a delay: direct
// cost) and its own waiting in that interval (a propagating wait state).
// The wait's time, plus what it has itself propagated to later waits, is
// shared among these causes in proportion to their size; the share of a
// propagating wait state travels on to its own causes, and what reaches a
// delay that way is its propagated cost. Waits are visited from the latest
// to the earliest so that every wait has received its propagated share
// before it passes it on.
void delay_costs(Analysis& a) {
  const std::size_t n = a.waits.size();
  // Per rank: (event, wait index) of the waits there, sorted by event.
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> at_rank(a.in.ranks.size());
  for (std::size_t i = 0; i < n; ++i)
    at_rank[std::size_t(a.waits[i].waiter)].push_back({a.waits[i].wev, i});
  for (auto& v : at_rank) std::sort(v.begin(), v.end());
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  auto ends = [&](std::size_t i) { return a.at(a.waits[i].waiter, a.waits[i].wev).end_ns; };
  // a.waits is in canonical order (finish()): the index breaks ties.
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return ends(x) != ends(y) ? ends(x) > ends(y) : x > y;
  });
  std::vector<double> propagated(n, 0.0);
  uint64_t uncaused = 0;
  for (const std::size_t i : order) {
    const WaitState& w = a.waits[i];
    const int64_t pw = previous_sync(a, w.waiter, w.wev, w.late);
    const int64_t pl = previous_sync(a, w.late, w.lev, w.waiter);
    std::map<int32_t, int64_t> diff;
    execution(a, w.late, pl, w.lev, +1, diff);
    execution(a, w.waiter, pw, w.wev, -1, diff);
    int64_t total = 0;
    for (const auto& [cp, ns] : diff)
      if (ns > 0) total += ns;
    // The late rank's own wait states in the interval, which made it late.
    const auto& mine = at_rank[std::size_t(w.late)];
    // Events after pl (pairs (pl, n) sort after every (pl, index)).
    auto lo = pl < 0 ? mine.begin()
                     : std::upper_bound(mine.begin(), mine.end(),
                                        std::pair<std::size_t, std::size_t>{std::size_t(pl), n});
    auto hi =
        std::lower_bound(mine.begin(), mine.end(), std::pair<std::size_t, std::size_t>{w.lev, 0});
    for (auto it = lo; it != hi; ++it) total += a.waits[it->second].ns;
    if (total <= 0) {
      ++uncaused;
      continue;
    }
    const double direct = static_cast<double>(w.ns) * 1e-9, carried = propagated[i];
    const double t = static_cast<double>(total);
    for (const auto& [cp, ns] : diff) {
      if (ns <= 0) continue;
      const double share = static_cast<double>(ns) / t;
      a.rep.delay_costs[{cp, w.late}] += direct * share;
      if (carried > 0) a.rep.propagated_costs[{cp, w.late}] += carried * share;
    }
    for (auto it = lo; it != hi; ++it)
      propagated[it->second] +=
          (direct + carried) * static_cast<double>(a.waits[it->second].ns) / t;
  }
  if (uncaused)
    a.rep.notes.push_back(std::to_string(uncaused) +
                          " wait states had neither excess time nor waiting on the late rank "
                          "since the previous synchronization (no cause found)");
}

void critical_path(Analysis& a) {
  // The biggest wait state per waiting call: the path follows the rank that
  // was late there.
  std::map<std::pair<int32_t, std::size_t>, const WaitState*> at;
  for (const WaitState& w : a.waits) {
    auto& slot = at[{w.waiter, w.wev}];
    if (!slot || w.ns > slot->ns) slot = &w;
  }
  // The run ends with the rank that enters its last call (MPI_Finalize,
  // which waits for everyone) last.
  int32_t r = -1;
  int64_t last = 0;
  uint64_t total = 0;
  for (int32_t q = 0; q < a.rep.world_size; ++q) {
    const auto& evs = a.in.ranks[std::size_t(q)];
    total += evs.size();
    if (!evs.empty() && (r < 0 || evs.back().start_ns > last)) {
      r = q;
      last = evs.back().start_ns;
    }
  }
  if (r < 0) return;
  std::size_t k = a.in.ranks[std::size_t(r)].size() - 1;
  bool whole_call = true;
  // Every step goes back in time; the bound only guards against a clock
  // that runs backwards between ranks.
  for (uint64_t steps = 0; steps < 4 * total + 4; ++steps) {
    const TimedEvent& te = a.in.ranks[std::size_t(r)][k];
    if (whole_call) {
      auto w = at.find({r, k});
      const int64_t call = te.end_ns - te.start_ns;
      if (w != at.end()) {
        a.critical_ns[{a.callpath(te.ev, false), r}] += call - w->second->ns;
        r = w->second->late;
        k = w->second->lev;
        whole_call = false;
        continue;
      }
      a.critical_ns[{a.callpath(te.ev, false), r}] += call;
    }
    a.critical_ns[{a.callpath(te.ev, true), r}] += te.start_ns - te.compute_start_ns;
    if (k == 0) break;
    --k;
    whole_call = true;
  }
}

}  // namespace

void critical_path_and_delays(Analysis& a) {
  critical_path(a);
  delay_costs(a);
}

}  // namespace tracefold::waits_detail
