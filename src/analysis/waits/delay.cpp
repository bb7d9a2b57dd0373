// Backward replay over the wait states the forward replay found: the
// critical path and the direct delay costs.
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

void delay_costs(Analysis& a) {
  uint64_t uncaused = 0;
  for (const WaitState& w : a.waits) {
    const int64_t pw = previous_sync(a, w.waiter, w.wev, w.late);
    const int64_t pl = previous_sync(a, w.late, w.lev, w.waiter);
    std::map<int32_t, int64_t> diff;
    execution(a, w.late, pl, w.lev, +1, diff);
    execution(a, w.waiter, pw, w.wev, -1, diff);
    int64_t excess = 0;
    for (const auto& [cp, ns] : diff)
      if (ns > 0) excess += ns;
    if (excess <= 0) {
      ++uncaused;  // the late rank was itself held up (propagated delay)
      continue;
    }
    const double seconds = static_cast<double>(w.ns) * 1e-9;
    for (const auto& [cp, ns] : diff)
      if (ns > 0)
        a.rep.delay_costs[{cp, w.late}] +=
            seconds * static_cast<double>(ns) / static_cast<double>(excess);
  }
  if (uncaused)
    a.rep.notes.push_back(std::to_string(uncaused) +
                          " wait states had no excess time on the late rank since the previous "
                          "synchronization (their cause lies further back; propagated delay "
                          "costs are not computed)");
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
        a.rep.critical_path[{a.callpath(te.ev, false), r}] +=
            static_cast<double>(call - w->second->ns) * 1e-9;
        r = w->second->late;
        k = w->second->lev;
        whole_call = false;
        continue;
      }
      a.rep.critical_path[{a.callpath(te.ev, false), r}] += static_cast<double>(call) * 1e-9;
    }
    a.rep.critical_path[{a.callpath(te.ev, true), r}] +=
        static_cast<double>(te.start_ns - te.compute_start_ns) * 1e-9;
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
