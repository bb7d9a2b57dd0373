// Backward replay over the wait states the forward replay found: the
// critical path and the delay costs (direct and propagated). The per-rank
// parts (charge_delay, CriticalWalk) are shared with the parallel replay
// (parallel/backward.cpp); this file's serial driver visits every rank.
#include <algorithm>
#include <map>
#include <queue>

#include "internal.hpp"

namespace tracefold::waits_detail {

namespace {

// Past this many events back, a synchronization interval is cut short: a
// delay is caused near its wait, and the scan must stay linear in practice.
constexpr std::size_t kMaxScan = 100000;

bool syncs_with(const Analysis& a, const SyncPoint& p, int32_t other) {
  if (p.partner >= 0) return p.partner == other;
  const CommGroup* g = a.trace.comms.group_of(p.comm, a.world_rank(other));
  if (!g || g->members.empty() || g->members.front() != p.group_first) return false;
  if (a.in.locations.empty()) return true;
  // Of a rank's threads, only the one that calls the group's collectives.
  auto c = a.coll_caller.find({a.world_rank(other), p.comm, p.group_first});
  return c != a.coll_caller.end() && c->second == other;
}

__extension__ typedef __int128 Wide;  // GCC and Clang: exact products of nanoseconds

// v * num / den without overflow, rounded down (num <= den, all >= 0).
int64_t share(int64_t v, int64_t num, int64_t den) {
  return static_cast<int64_t>(static_cast<Wide>(v) * num / den);
}

}  // namespace

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

OwnTime own_time(const Analysis& a, int32_t rank, int64_t from, std::size_t to) {
  OwnTime out;
  const auto& evs = a.in.ranks[std::size_t(rank)];
  for (std::size_t k = std::size_t(from + 1); k <= to; ++k) {
    const TimedEvent& te = evs[k];
    out[callpath_key(te.ev, true)] += te.start_ns - te.compute_start_ns;
    if (k < to)
      out[callpath_key(te.ev, false)] += te.end_ns - te.start_ns - a.waited[std::size_t(rank)][k];
  }
  return out;
}

// Delay costs after Scalasca's definition (seed 003's backward replay): a
// wait state is caused by what the late rank did in excess of the waiter
// since they last synchronized — its excess computation (a delay: direct
// cost) and its own waiting in that interval (a propagating wait state).
// The wait's time, plus what it has itself propagated to later waits, is
// shared among these causes in proportion to their size; the share of a
// propagating wait state travels on to its own causes, and what reaches a
// delay that way is its propagated cost.
std::pair<std::size_t, std::size_t> fed_waits(const Analysis& a, int32_t late, std::size_t lev,
                                              int32_t waiter, const WaitsByEvent& late_waits) {
  const int64_t pl = previous_sync(a, late, lev, waiter);
  // Events after pl: pairs (pl, npos) sort after every (pl, index).
  const auto lo =
      pl < 0
          ? late_waits.begin()
          : std::upper_bound(late_waits.begin(), late_waits.end(),
                             std::pair<std::size_t, std::size_t>{std::size_t(pl), std::size_t(-1)});
  const auto hi = std::lower_bound(late_waits.begin(), late_waits.end(),
                                   std::pair<std::size_t, std::size_t>{lev, 0});
  return {std::size_t(lo - late_waits.begin()), std::size_t(std::max(lo, hi) - late_waits.begin())};
}

void charge_delay(Analysis& a, const WaitState& w, int64_t carried, const OwnTime& waiter_time,
                  const WaitsByEvent& late_waits, std::vector<int64_t>& propagated) {
  const int64_t pl = previous_sync(a, w.late, w.lev, w.waiter);
  OwnTime diff = own_time(a, w.late, pl, w.lev);
  for (const auto& [key, ns] : waiter_time) diff[key] -= ns;
  int64_t total = 0;
  for (const auto& [key, ns] : diff)
    if (ns > 0) total += ns;
  // The late rank's own wait states in the interval, which made it late.
  const auto [lo, hi] = fed_waits(a, w.late, w.lev, w.waiter, late_waits);
  for (std::size_t j = lo; j < hi; ++j) total += a.waits[late_waits[j].second].ns;
  if (total <= 0) {
    ++a.uncaused;
    return;
  }
  for (const auto& [key, ns] : diff) {
    if (ns <= 0) continue;
    Event ev;
    ev.op = OpId((key >> 1) & 0xffff);
    ev.site = SiteId(key >> 17);
    const int32_t cp = a.cp_index.at({ev.op, ev.site, (key & 1) != 0});
    a.delay_ns[{cp, w.late}] += share(w.ns, ns, total);
    if (carried > 0) a.propagated_ns[{cp, w.late}] += share(carried, ns, total);
  }
  for (std::size_t j = lo; j < hi; ++j) {
    const std::size_t fed = late_waits[j].second;
    propagated[fed] += share(w.ns + carried, a.waits[fed].ns, total);
  }
}

std::size_t CriticalWalk::step(Analysis& a, int32_t rank, std::size_t k, std::size_t biggest) {
  if (!holds) return npos;
  const TimedEvent& te = a.at(rank, k);
  if (whole_call) {
    const int64_t call = te.end_ns - te.start_ns;
    if (biggest != npos) {
      a.critical_ns[{a.callpath(te.ev, false), rank}] += call - a.waits[biggest].ns;
      holds = false;
      return biggest;
    }
    a.critical_ns[{a.callpath(te.ev, false), rank}] += call;
  }
  a.critical_ns[{a.callpath(te.ev, true), rank}] += te.start_ns - te.compute_start_ns;
  whole_call = true;
  return npos;
}

namespace {

// The biggest wait state per waiting call (the first in canonical order
// on ties): the critical path follows the rank that was late there.
std::map<std::pair<int32_t, std::size_t>, std::size_t> biggest_waits(const Analysis& a) {
  std::map<std::pair<int32_t, std::size_t>, std::size_t> at;
  for (std::size_t i = 0; i < a.waits.size(); ++i) {
    const WaitState& w = a.waits[i];
    auto [slot, fresh] = at.try_emplace({w.waiter, w.wev}, i);
    if (!fresh && w.ns > a.waits[slot->second].ns) slot->second = i;
  }
  return at;
}

void critical_path(Analysis& a) {
  const auto at = biggest_waits(a);
  // The run ends with the rank that enters its last call (MPI_Finalize,
  // which waits for everyone) last.
  int32_t r = -1;
  int64_t last = 0;
  uint64_t total = 0;
  for (int32_t q = 0; q < int32_t(a.in.ranks.size()); ++q) {
    const auto& evs = a.in.ranks[std::size_t(q)];
    total += evs.size();
    if (!evs.empty() && (r < 0 || evs.back().start_ns > last)) {
      r = q;
      last = evs.back().start_ns;
    }
  }
  if (r < 0) return;
  std::size_t k = a.in.ranks[std::size_t(r)].size() - 1;
  CriticalWalk walk;
  walk.holds = true;
  // Every step goes back in time; the bound only guards against a clock
  // that runs backwards between ranks.
  for (uint64_t steps = 0; steps < 4 * total + 4; ++steps) {
    const auto w = walk.whole_call ? at.find({r, k}) : at.end();
    const std::size_t left = walk.step(a, r, k, w == at.end() ? CriticalWalk::npos : w->second);
    if (left != CriticalWalk::npos) {
      r = a.waits[left].late;
      k = a.waits[left].lev;
      walk.arrive();
      continue;
    }
    if (k == 0) break;
    --k;
  }
}

// Every wait state once its propagated share is complete: after all later
// wait states whose late rank's interval holds it (the order the parallel
// replay's messages impose; a cycle, possible only with inconsistent
// clocks, is broken in time order).
void delay_costs(Analysis& a) {
  const std::size_t n = a.waits.size();
  std::vector<WaitsByEvent> at_rank(a.in.ranks.size());
  for (std::size_t i = 0; i < n; ++i)
    at_rank[std::size_t(a.waits[i].waiter)].push_back({a.waits[i].wev, i});
  for (auto& v : at_rank) std::sort(v.begin(), v.end());
  // Which waits each wait feeds (the late rank's waits in its interval).
  std::vector<std::size_t> pending(n, 0);
  std::vector<std::pair<std::size_t, std::size_t>> feeds(n);  // range in at_rank[late]
  for (std::size_t i = 0; i < n; ++i) {
    const WaitState& w = a.waits[i];
    const auto& mine = at_rank[std::size_t(w.late)];
    feeds[i] = fed_waits(a, w.late, w.lev, w.waiter, mine);
    for (std::size_t j = feeds[i].first; j < feeds[i].second; ++j) ++pending[mine[j].second];
  }
  auto ends = [&](std::size_t i) { return a.at(a.waits[i].waiter, a.waits[i].wev).end_ns; };
  auto later = [&](std::size_t x, std::size_t y) {  // heap order: latest first
    return ends(x) != ends(y) ? ends(x) < ends(y) : x < y;
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> ready(later);
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int64_t> propagated(n, 0);
  std::vector<bool> done(n, false);
  std::size_t visited = 0;
  while (visited < n) {
    std::size_t i = 0;
    if (!ready.empty()) {
      i = ready.top();
      ready.pop();
    } else {  // a cycle: the latest remaining wait goes first
      bool any = false;
      for (std::size_t j = 0; j < n; ++j)
        if (!done[j] && (!any || later(i, j))) i = j, any = true;
    }
    if (done[i]) continue;
    done[i] = true;
    ++visited;
    const WaitState& w = a.waits[i];
    const OwnTime mine = own_time(a, w.waiter, previous_sync(a, w.waiter, w.wev, w.late), w.wev);
    charge_delay(a, w, propagated[i], mine, at_rank[std::size_t(w.late)], propagated);
    const auto& fed = at_rank[std::size_t(w.late)];
    for (std::size_t j = feeds[i].first; j < feeds[i].second; ++j)
      if (--pending[fed[j].second] == 0 && !done[fed[j].second]) ready.push(fed[j].second);
  }
}

}  // namespace

void critical_path_and_delays(Analysis& a) {
  critical_path(a);
  delay_costs(a);
}

}  // namespace tracefold::waits_detail
