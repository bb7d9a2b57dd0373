// Forward replay of a recorded timeline: time per call path and point-to-point
// wait states, and the order of the passes (collective wait states:
// collectives.cpp; see waits.hpp).
#include <algorithm>
#include <array>
#include <deque>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <unordered_map>

#include "internal.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/export.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/timeline_io.hpp"

namespace tracefold {

using namespace waits_detail;

const std::vector<WaitPatternInfo>& wait_patterns() {
  using P = WaitPattern;
  auto at = [](P p) { return static_cast<int32_t>(p); };
  static const std::vector<WaitPatternInfo> table = {
      {"time", "Time", -1, "Computation and MPI time of every rank"},
      {"comp", "Computation", at(P::kTime), "Time between MPI calls"},
      {"mpi", "MPI", at(P::kTime), "Time inside MPI calls"},
      {"p2p", "Point-to-point", at(P::kMpi), "Time in sends, receives and their Wait/Test calls"},
      {"late_sender", "Late Sender", at(P::kPointToPoint),
       "A receive (or the Wait of an Irecv) waits for a send that began later; attributed to "
       "the receive's call path"},
      {"wrong_order", "Late Sender / Wrong Order", at(P::kLateSender),
       "Late Sender while a message sent earlier to the same rank was still pending"},
      {"late_receiver", "Late Receiver", at(P::kPointToPoint),
       "A send still blocked when its receive was posted waits from its enter to that post "
       "(the rule: --late-receiver)"},
      {"coll", "Collective", at(P::kMpi), "Time in data-moving collectives"},
      {"late_broadcast", "Late Broadcast", at(P::kCollective),
       "1-to-N (Bcast, Scatter): a non-root rank waits for the root to enter"},
      {"early_reduce", "Early Reduce", at(P::kCollective),
       "N-to-1 (Reduce, Gather): the root waits for the first non-root rank to enter"},
      {"early_scan", "Early Scan", at(P::kCollective),
       "Scan, Exscan: a rank waits for the last lower rank to enter"},
      {"wait_nxn", "Wait at N x N", at(P::kCollective),
       "N-to-N (Allreduce, Alltoall, Allgather, Reduce_scatter): waiting for the last rank "
       "to enter"},
      {"nxn_completion", "N x N Completion", at(P::kCollective),
       "N-to-N: time in the call after the first rank has left it"},
      {"sync", "Synchronization", at(P::kMpi), "Time in MPI_Barrier"},
      {"wait_barrier", "Wait at Barrier", at(P::kSynchronization),
       "Waiting in a barrier for the last rank to enter"},
      {"barrier_completion", "Barrier Completion", at(P::kSynchronization),
       "Time in a barrier after the first rank has left it"},
  };
  return table;
}

double WaitReport::total(WaitPattern p) const {
  double s = 0;
  for (const auto& [key, v] : severity)
    if (std::get<0>(key) == static_cast<int32_t>(p)) s += v;
  return s;
}

double WaitReport::exclusive(int32_t pattern, int32_t callpath, int32_t rank) const {
  auto value = [&](int32_t p) {
    auto it = severity.find({p, callpath, rank});
    return it == severity.end() ? 0.0 : it->second;
  };
  double v = value(pattern);
  for (std::size_t c = 0; c < patterns.size(); ++c)
    if (patterns[c].parent == pattern) v -= value(static_cast<int32_t>(c));
  return v;
}

std::string default_timeline_dir(const std::string& trace_path) {
  return trace_path + ".timeline";
}

namespace waits_detail {

Analysis::Analysis(const Trace& t, const WaitInput& i, WaitReport& r, const WaitOptions& o)
    : trace(t), in(i), rep(r), opt(o) {
  waited.resize(in.ranks.size());
  syncs.resize(in.ranks.size());
  coll_done.resize(in.ranks.size());
  for (std::size_t k = 0; k < in.ranks.size(); ++k) waited[k].assign(in.ranks[k].size(), 0);
}

int32_t Analysis::callpath(const Event& ev, bool computation) {
  auto [it, fresh] = cp_index.try_emplace({ev.op, ev.site, computation},
                                          static_cast<int32_t>(rep.callpaths.size()));
  if (fresh) {
    WaitCallPath cp;
    cp.op = ev.op;
    cp.site = ev.site;
    cp.computation = computation;
    std::string where = ev.site < trace.sites.size()
                            ? site_label(trace.symtab, trace.sites.at(ev.site))
                            : std::string("?");
    cp.label = (computation ? "computation before " : "") + OpTable::name(ev.op) + " at " + where;
    if (ev.site < trace.sites.size()) {
      cp.stack = site_path(trace.symtab, trace.sites.at(ev.site));
      std::reverse(cp.stack.begin(), cp.stack.end());
    }
    rep.callpaths.push_back(std::move(cp));
  }
  return it->second;
}

void Analysis::add(WaitPattern p, int32_t cp, int32_t rank, int64_t v) {
  if (v <= 0) return;
  ns[{static_cast<int32_t>(p), cp, rank}] += v;
}

void Analysis::note_wait(const WaitState& w) {
  if (w.ns <= 0) return;
  waits.push_back(w);
  waited[std::size_t(w.waiter)][w.wev] += w.ns;
}

}  // namespace waits_detail

MatchResult match_wait_input(const Trace& trace, WaitInput& in) {
  if (!in.locations.empty()) return waits_detail::match_locations(trace, in);
  // A long run's events are most of the analysis's memory, and their
  // fields most of that: lent, not copied, and given back however the
  // matching ends.
  struct Lent {
    WaitInput& in;
    std::vector<std::vector<Event>> evs;
    ~Lent() {
      for (std::size_t r = 0; r < evs.size(); ++r)
        for (std::size_t k = 0; k < evs[r].size(); ++k) in.ranks[r][k].ev = std::move(evs[r][k]);
    }
  } lent{in, std::vector<std::vector<Event>>(in.ranks.size())};
  for (std::size_t r = 0; r < in.ranks.size(); ++r) {
    lent.evs[r].reserve(in.ranks[r].size());
    for (TimedEvent& te : in.ranks[r]) lent.evs[r].push_back(std::move(te.ev));
  }
  return match_messages(trace.comms, lent.evs);
}

namespace waits_detail {

MatchResult match_locations(const Trace& trace, const WaitInput& in) {
  if (in.locations.empty()) {
    std::vector<std::vector<Event>> evs(in.ranks.size());
    for (std::size_t r = 0; r < evs.size(); ++r) {
      evs[r].reserve(in.ranks[r].size());
      for (const TimedEvent& te : in.ranks[r]) evs[r].push_back(te.ev);
    }
    return match_messages(trace.comms, evs);
  }
  // A receive takes its key's sends from every thread of the sending rank,
  // in the rank-wide order the recorder noted: export's pairing.
  std::vector<RankTimeline> tl(in.ranks.size());
  for (std::size_t k = 0; k < tl.size(); ++k) {
    tl[k].rank = in.locations[k].rank;
    tl[k].thread = in.locations[k].thread;
    tl[k].events = in.ranks[k];
  }
  return match_messages(trace.comms, tl);
}

int64_t field_of(const Event& ev, const char* name) {
  return field_by_literal(ev, name);
}

void basic_times(Analysis& a, int32_t r) {
  const auto& evs = a.in.ranks[std::size_t(r)];
  // A Wait that completes a nonblocking collective is that collective's
  // time, at the call path that started it (where its wait states go).
  std::vector<std::size_t> started_by(evs.size(), RequestCompletions::npos);
  const std::vector<std::size_t>& done = collective_done(a, r);
  for (std::size_t i = 0; i < evs.size(); ++i)
    if (done[i] != RequestCompletions::npos) started_by[done[i]] = i;
  // Every event adds to several (pattern, call path) cells: summed here per
  // call path and added to the report's map once at the end, and each
  // (op, site)'s two call paths looked up once, not in two maps per event
  // (this loop was 18 % of the serial analysis's instructions). The
  // sums are integers, and a cell is made only when a positive time is
  // added to it, as add() does.
  constexpr std::size_t kP = std::size_t(WaitPattern::kCount);
  std::vector<std::array<int64_t, kP>> sums;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> paths;  // (op, site): call, computation
  auto add = [&](WaitPattern p, int32_t cp, int64_t v) {
    if (v <= 0) return;
    if (std::size_t(cp) >= sums.size()) sums.resize(std::size_t(cp) + 1, std::array<int64_t, kP>{});
    sums[std::size_t(cp)][std::size_t(p)] += v;
  };
  for (std::size_t k = 0; k < evs.size(); ++k) {
    const TimedEvent& te = evs[k];
    const uint64_t key = uint64_t(te.ev.op) << 32 | te.ev.site;
    auto found = paths.find(key);
    if (found == paths.end()) {
      // In the order the call paths were always made: the call's, then
      // its computation's.
      const int32_t call_path = a.callpath(te.ev, false);
      found = paths.emplace(key, std::pair{call_path, a.callpath(te.ev, true)}).first;
    }
    int32_t cp = found->second.first;
    const int32_t comp = found->second.second;
    const bool completes_collective = started_by[k] != RequestCompletions::npos;
    if (completes_collective) cp = a.callpath(evs[started_by[k]].ev, false);
    const OpTraits& t = op_traits(completes_collective ? evs[started_by[k]].ev.op : te.ev.op);
    const int64_t gap = te.start_ns - te.compute_start_ns, call = te.end_ns - te.start_ns;
    add(WaitPattern::kTime, comp, gap);
    add(WaitPattern::kComputation, comp, gap);
    add(WaitPattern::kTime, cp, call);
    if (t.category == OpCategory::kMarker) {
      add(WaitPattern::kComputation, cp, call);
      continue;
    }
    add(WaitPattern::kMpi, cp, call);
    if (t.point_to_point())
      add(WaitPattern::kPointToPoint, cp, call);
    else if (t.category == OpCategory::kCollective)
      add(t.shape == CollectiveShape::kBarrier ? WaitPattern::kSynchronization
                                               : WaitPattern::kCollective,
          cp, call);
  }
  for (std::size_t cp = 0; cp < sums.size(); ++cp)
    for (std::size_t p = 0; p < kP; ++p)
      if (sums[cp][p] > 0) a.add(WaitPattern(p), int32_t(cp), r, sums[cp][p]);
}

void late_senders(Analysis& a, int32_t r, std::vector<RecvMatch> msgs) {
  for (const RecvMatch& m : msgs)
    a.syncs[std::size_t(r)].push_back({m.recv_complete_event, m.sender, 0, 0});
  // Grouped by the call that completes them (a Waitall may complete
  // several): the latest send decides the waiting.
  std::sort(msgs.begin(), msgs.end(), [](const RecvMatch& x, const RecvMatch& y) {
    return std::tie(x.recv_complete_event, x.recv_event) <
           std::tie(y.recv_complete_event, y.recv_event);
  });
  struct Pending {
    int64_t send_start;
    int32_t cp;
    int64_t ns;
  };
  std::deque<Pending> pending;
  for (std::size_t i = 0; i < msgs.size();) {
    std::size_t j = i;
    const RecvMatch* latest = &msgs[i];
    while (j < msgs.size() && msgs[j].recv_complete_event == msgs[i].recv_complete_event) {
      if (msgs[j].send_start > latest->send_start) latest = &msgs[j];
      ++j;
    }
    // A message of this call sent before a pending Late Sender's message:
    // that Late Sender waited for the wrong message first.
    for (std::size_t k = i; k < j; ++k) {
      for (auto p = pending.begin(); p != pending.end();) {
        if (p->send_start > msgs[k].send_start) {
          a.add(WaitPattern::kWrongOrder, p->cp, r, p->ns);
          p = pending.erase(p);
        } else {
          ++p;
        }
      }
    }
    const TimedEvent& wait_call = a.at(r, latest->recv_complete_event);
    const int64_t ls = clamp_wait(latest->send_start - wait_call.start_ns, wait_call);
    if (ls > 0) {
      // Attributed to where the receive was posted (the Irecv, not its Wait).
      const int32_t cp = a.callpath(a.at(r, latest->recv_event).ev, false);
      a.add(WaitPattern::kLateSender, cp, r, ls);
      a.note_wait({r, latest->recv_complete_event, latest->sender, latest->send_event, ls,
                   WaitPattern::kLateSender});
      pending.push_back({latest->send_start, cp, ls});
      if (pending.size() > a.opt.wrong_order_queue) pending.pop_front();
    }
    i = j;
  }
}

void Span::add(const std::vector<TimedEvent>& evs) {
  events += evs.size();
  if (evs.empty()) return;
  lo = std::min(lo, evs.front().compute_start_ns);
  hi = std::max(hi, evs.back().end_ns);
}

void sort_for_replay(Analysis& a) {
  for (auto& s : a.syncs)
    std::sort(s.begin(), s.end(),
              [](const SyncPoint& x, const SyncPoint& y) { return x.ev < y.ev; });
  // The wait states in one order whatever order the ranks were analysed in.
  std::sort(a.waits.begin(), a.waits.end(), [](const WaitState& x, const WaitState& y) {
    return std::tie(x.waiter, x.wev, x.late, x.lev, x.ns) <
           std::tie(y.waiter, y.wev, y.late, y.lev, y.ns);
  });
}

namespace {

// What a timeline cut by its size bound leaves out, and up to where every
// rank is analysed when that is where the analysis ends.
std::string untimed_note(const WaitInput& in, int64_t run_start) {
  // Entries are ranks, or with threads locations: named by their ranks
  // (and the one the cut is at by its location's name).
  const auto ranks_of = [&](const std::vector<uint64_t>& per_entry) {
    std::vector<int32_t> rs;
    for (std::size_t e = 0; e < per_entry.size(); ++e)
      if (per_entry[e]) rs.push_back(in.locations.empty() ? int32_t(e) : in.locations[e].rank);
    std::sort(rs.begin(), rs.end());
    rs.erase(std::unique(rs.begin(), rs.end()), rs.end());
    return rs;
  };
  std::ostringstream o;
  o << "the timeline reached its size bound: " << in.dropped
    << " later events have no times and were not analysed";
  const std::vector<int32_t> cut = ranks_of(in.untimed);
  if (!cut.empty())
    o << " (" << (cut.size() == 1 ? "rank " : "ranks ") << human_ranks(cut)
      << "; record with a larger --timeline-max)";
  if (in.cut_rank < 0 || !in.cut_by_timeline) return o.str();
  uint64_t after = 0;
  for (uint64_t n : in.after_cut) after += n;
  const std::vector<int32_t> of = ranks_of(in.after_cut);
  const std::string at = in.locations.empty() ? std::to_string(in.cut_rank)
                                              : in.locations[std::size_t(in.cut_rank)].name;
  o << "; every rank is analysed up to " << std::fixed << std::setprecision(3)
    << double(in.cut_ns - run_start) * 1e-9 << " s into the run, where rank " << at
    << "'s timeline ends (a later call may have waited for one of its untimed calls): " << after
    << " later timed calls left out";
  if (!of.empty()) o << " (of " << (of.size() == 1 ? "rank " : "ranks ") << human_ranks(of) << ")";
  return o.str();
}

}  // namespace

void finish(Analysis& a, const Span& span) {
  WaitReport& rep = a.rep;
  rep.events = span.events;
  rep.run_seconds = span.hi > span.lo ? static_cast<double>(span.hi - span.lo) * 1e-9 : 0;
  rep.dropped = a.in.dropped;
  if (a.in.dropped) rep.notes.push_back(untimed_note(a.in, span.lo));
  if (a.uncaused)
    rep.notes.push_back(std::to_string(a.uncaused) +
                        " wait states had neither excess time nor waiting on the late rank "
                        "since the previous synchronization (no cause found)");
  auto seconds = [](int64_t ns) { return static_cast<double>(ns) * 1e-9; };
  for (const auto& [key, v] : a.ns) rep.severity[key] = seconds(v);
  for (const auto& [key, v] : a.critical_ns) rep.critical_path[key] = seconds(v);
  for (const auto& [key, v] : a.delay_ns) rep.delay_costs[key] = seconds(v);
  for (const auto& [key, v] : a.propagated_ns) rep.propagated_costs[key] = seconds(v);
  if (a.opt.keep_instances) {
    rep.instances.reserve(a.waits.size());
    for (const WaitState& w : a.waits)
      rep.instances.push_back({w.waiter, w.wev, w.late, w.lev, seconds(w.ns), w.pattern});
  }
  if (rep.unmatched_recvs)
    rep.notes.push_back(std::to_string(rep.unmatched_recvs) +
                        " receives found no matching send (not analysed)");
  if (rep.incomplete_collectives)
    rep.notes.push_back(std::to_string(rep.incomplete_collectives) +
                        " collective instances miss a member's part (not analysed)");
  // Not the default, so the report says whose Late Receiver it is.
  if (a.opt.late_receiver == LateReceiverRule::kProtocol)
    rep.notes.push_back(
        "Late Receiver by protocol (--late-receiver protocol): synchronous sends "
        "and messages of at least " +
        std::to_string(a.opt.rendezvous_bytes) + " bytes");
}

}  // namespace waits_detail

namespace {

// Messages matched by the core (timeline.hpp), handed to each receiver and
// sender as the parallel analysis's exchange would.
void point_to_point(Analysis& a) {
  MatchResult own;
  if (!a.opt.matched) own = match_locations(a.trace, a.in);
  const MatchResult& m = a.opt.matched ? *a.opt.matched : own;
  a.rep.messages = m.messages.size();
  a.rep.unmatched_sends = m.unmatched_sends;
  a.rep.unmatched_recvs = m.unmatched_recvs;
  const std::size_t n = a.in.ranks.size();
  // One rank's receives and sends are made at a time, from the messages'
  // indices sorted by receiver and by sender (stable: each rank's in the
  // match's order): every rank's at once held about 90 bytes per message,
  // on top of the events, at the wait analysis's busiest moment.
  const auto by_rank = [&](auto stream) {
    std::vector<std::size_t> from(n + 1, 0), order(m.messages.size());
    for (const Message& msg : m.messages) ++from[std::size_t(stream(msg)) + 1];
    for (std::size_t r = 0; r < n; ++r) from[r + 1] += from[r];
    std::vector<std::size_t> at(from.begin(), from.end() - 1);
    for (std::size_t i = 0; i < m.messages.size(); ++i)
      order[at[std::size_t(stream(m.messages[i]))]++] = i;
    return std::pair{std::move(from), std::move(order)};
  };
  const auto [recv_from, recv_order] = by_rank([](const Message& x) { return x.receiver_stream; });
  const auto [send_from, send_order] = by_rank([](const Message& x) { return x.sender_stream; });
  std::vector<SendMatch> sends;
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<RecvMatch> recvs;
    recvs.reserve(recv_from[r + 1] - recv_from[r]);
    for (std::size_t k = recv_from[r]; k < recv_from[r + 1]; ++k) {
      const Message& msg = m.messages[recv_order[k]];
      const auto sender = int32_t(msg.sender_stream);
      recvs.push_back({msg.recv_event, msg.recv_complete_event, sender, msg.send_event,
                       a.at(sender, msg.send_event).start_ns});
    }
    late_senders(a, int32_t(r), std::move(recvs));
    sends.clear();
    for (std::size_t k = send_from[r]; k < send_from[r + 1]; ++k) {
      const Message& msg = m.messages[send_order[k]];
      const auto receiver = int32_t(msg.receiver_stream);
      sends.push_back({msg.send_event, msg.send_complete_event, receiver, msg.recv_event,
                       a.at(receiver, msg.recv_event).start_ns, msg.bytes});
    }
    late_receivers(a, int32_t(r), sends);
  }
}

}  // namespace

WaitReport analyze_waits(const Trace& trace, const WaitInput& input, const WaitOptions& options) {
  WaitReport rep;
  rep.world_size = trace.world_size;
  rep.patterns = wait_patterns();
  if (input.locations.empty() && static_cast<int32_t>(input.ranks.size()) != trace.world_size)
    throw WaitsError("timeline of " + std::to_string(input.ranks.size()) +
                     " ranks, the trace has " + std::to_string(trace.world_size));
  if (!input.locations.empty() && input.locations.size() != input.ranks.size())
    throw WaitsError("events of " + std::to_string(input.ranks.size()) + " locations, " +
                     std::to_string(input.locations.size()) + " named");
  rep.locations = input.locations;
  if (!input.note.empty()) rep.notes.push_back(input.note);
  Analysis a(trace, input, rep, options);
  for (int32_t r = 0; r < int32_t(input.ranks.size()); ++r) basic_times(a, r);
  report_progress(options.progress, 1, kWaitPasses);
  point_to_point(a);
  report_progress(options.progress, 2, kWaitPasses);
  collectives(a);
  report_progress(options.progress, 3, kWaitPasses);
  sort_for_replay(a);
  if (options.causes) critical_path_and_delays(a);
  Span span;
  for (const auto& evs : a.in.ranks) span.add(evs);
  finish(a, span);
  report_progress(options.progress, kWaitPasses, kWaitPasses);
  return rep;
}

}  // namespace tracefold
