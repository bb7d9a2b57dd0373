// Forward replay of a recorded timeline: time per call path, point-to-point
// and collective wait states (see waits.hpp).
#include <algorithm>
#include <deque>
#include <filesystem>
#include <limits>

#include "internal.hpp"
#include "tracefold/expand.hpp"
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
       "A synchronous or rendezvous-sized send waits for its receive to be posted"},
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

WaitInput load_wait_input(const Trace& trace, const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir))
    throw WaitsError(dir +
                     ": no timeline directory; wait-state analysis needs event times: record "
                     "the run with `tracefold record --timeline`");
  WaitInput in;
  in.ranks.resize(std::size_t(trace.world_size));
  for (int32_t r = 0; r < trace.world_size; ++r) {
    const std::string path = (fs::path(dir) / ("rank-" + std::to_string(r) + ".tft")).string();
    if (!fs::exists(path))
      throw WaitsError(path + ": missing; the trace has " + std::to_string(trace.world_size) +
                       " ranks and every rank needs its timeline (record with --timeline)");
    RankTimelineFile f;
    try {
      f = read_timeline_file(path);
    } catch (const TimelineError& e) {
      throw WaitsError(e.what());
    }
    if (f.rank != r || f.world_size != trace.world_size)
      throw WaitsError(path + ": timeline of rank " + std::to_string(f.rank) + " of " +
                       std::to_string(f.world_size) + " ranks, the trace has " +
                       std::to_string(trace.world_size) + " ranks");
    auto& evs = in.ranks[std::size_t(r)];
    evs.reserve(f.records.size());
    RankIterator it(trace, r);
    TimedEvent te;
    std::size_t k = 0;
    int64_t prev_end = 0;
    while (it.next(te.ev)) {
      if (k >= f.records.size()) {
        // Past the size bound: no times, so not analysed.
        ++in.dropped;
        continue;
      }
      const TimelineRecord& rec = f.records[k];
      if (rec.op != te.ev.op)
        throw WaitsError(path + ": event " + std::to_string(k) + " is " + OpTable::name(rec.op) +
                         ", the trace has " + OpTable::name(te.ev.op) + " for rank " +
                         std::to_string(r) + " (not this trace's timeline?)");
      te.start_ns = f.to_global(rec.enter_ns);
      te.end_ns = std::max(te.start_ns, f.to_global(rec.exit_ns));
      te.compute_start_ns = k == 0 ? te.start_ns : std::min(prev_end, te.start_ns);
      te.timed = true;
      prev_end = te.end_ns;
      evs.push_back(te);
      ++k;
    }
    if (k < f.records.size())
      throw WaitsError(path + ": " + std::to_string(f.records.size()) + " events, the trace has " +
                       std::to_string(k) + " for rank " + std::to_string(r));
  }
  return in;
}

namespace waits_detail {

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
    rep.callpaths.push_back(std::move(cp));
  }
  return it->second;
}

void Analysis::add(WaitPattern p, int32_t cp, int32_t rank, int64_t ns) {
  if (ns <= 0) return;
  rep.severity[{static_cast<int32_t>(p), cp, rank}] += static_cast<double>(ns) * 1e-9;
}

}  // namespace waits_detail

namespace {

int64_t field_of(const Event& ev, const char* name) {
  auto id = FieldTable::find(name);
  return id ? ev.get(*id) : kAbsent;
}

int64_t clamp_wait(int64_t w, const TimedEvent& in_call) {
  return std::clamp<int64_t>(w, 0, in_call.end_ns - in_call.start_ns);
}

// Time per call path: computation before each call, the call itself, and
// the MPI group it belongs to.
void basic_times(Analysis& a) {
  for (int32_t r = 0; r < a.rep.world_size; ++r) {
    for (const TimedEvent& te : a.in.ranks[std::size_t(r)]) {
      const OpTraits& t = op_traits(te.ev.op);
      const int32_t cp = a.callpath(te.ev, false);
      const int32_t comp = a.callpath(te.ev, true);
      const int64_t gap = te.start_ns - te.compute_start_ns, call = te.end_ns - te.start_ns;
      a.add(WaitPattern::kTime, comp, r, gap);
      a.add(WaitPattern::kComputation, comp, r, gap);
      a.add(WaitPattern::kTime, cp, r, call);
      if (t.category == OpCategory::kMarker) {
        a.add(WaitPattern::kComputation, cp, r, call);
        continue;
      }
      a.add(WaitPattern::kMpi, cp, r, call);
      switch (t.category) {
        case OpCategory::kSend:
        case OpCategory::kRecv:
        case OpCategory::kSendrecv:
        case OpCategory::kProbe:
        case OpCategory::kPersistent:
        case OpCategory::kRequest:
        case OpCategory::kCompletion:
          a.add(WaitPattern::kPointToPoint, cp, r, call);
          break;
        case OpCategory::kCollective:
          a.add(t.shape == CollectiveShape::kBarrier ? WaitPattern::kSynchronization
                                                     : WaitPattern::kCollective,
                cp, r, call);
          break;
        default:
          break;
      }
    }
  }
}

void note_wait(Analysis& a, const WaitState& w) {
  if (w.ns <= 0) return;
  a.waits.push_back(w);
  a.waited[std::size_t(w.waiter)][w.wev] += w.ns;
}

// Late Sender (with Wrong Order) and Late Receiver over the matched messages.
void point_to_point(Analysis& a) {
  std::vector<std::vector<Event>> evs(a.in.ranks.size());
  for (std::size_t r = 0; r < evs.size(); ++r) {
    evs[r].reserve(a.in.ranks[r].size());
    for (const TimedEvent& te : a.in.ranks[r]) evs[r].push_back(te.ev);
  }
  MatchResult m = match_messages(a.trace.comms, evs);
  a.rep.messages = m.messages.size();
  a.rep.unmatched_sends = m.unmatched_sends;
  a.rep.unmatched_recvs = m.unmatched_recvs;
  auto ev_at = [&](int32_t r, std::size_t i) -> const TimedEvent& {
    return a.in.ranks[std::size_t(r)][i];
  };
  for (const Message& msg : m.messages) {
    a.syncs[std::size_t(msg.receiver)].push_back({msg.recv_complete_event, msg.sender, 0, 0});
    a.syncs[std::size_t(msg.sender)].push_back({msg.send_event, msg.receiver, 0, 0});
  }

  // Messages grouped by the call that completes them on the receiver (a
  // Waitall may complete several): the latest send decides the waiting.
  std::vector<const Message*> order;
  for (const Message& msg : m.messages) order.push_back(&msg);
  std::stable_sort(order.begin(), order.end(), [](const Message* x, const Message* y) {
    return std::tie(x->receiver, x->recv_complete_event, x->recv_event) <
           std::tie(y->receiver, y->recv_complete_event, y->recv_event);
  });
  struct Pending {
    int64_t send_start;
    int32_t cp;
    int64_t ns;
  };
  std::deque<Pending> pending;
  int32_t pending_rank = -1;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    const Message* latest = order[i];
    while (j < order.size() && order[j]->receiver == order[i]->receiver &&
           order[j]->recv_complete_event == order[i]->recv_complete_event) {
      if (ev_at(order[j]->sender, order[j]->send_event).start_ns >
          ev_at(latest->sender, latest->send_event).start_ns)
        latest = order[j];
      ++j;
    }
    const int32_t r = order[i]->receiver;
    if (r != pending_rank) {
      pending.clear();
      pending_rank = r;
    }
    // A message of this call sent before a pending Late Sender's message:
    // that Late Sender waited for the wrong message first.
    for (std::size_t k = i; k < j; ++k) {
      const int64_t sent = ev_at(order[k]->sender, order[k]->send_event).start_ns;
      for (auto p = pending.begin(); p != pending.end();) {
        if (p->send_start > sent) {
          a.add(WaitPattern::kWrongOrder, p->cp, r, p->ns);
          p = pending.erase(p);
        } else {
          ++p;
        }
      }
    }
    const TimedEvent& wait_call = ev_at(r, latest->recv_complete_event);
    const TimedEvent& send = ev_at(latest->sender, latest->send_event);
    const int64_t ls = clamp_wait(send.start_ns - wait_call.start_ns, wait_call);
    if (ls > 0) {
      // Attributed to where the receive was posted (the Irecv, not its Wait).
      const int32_t cp = a.callpath(ev_at(r, latest->recv_event).ev, false);
      a.add(WaitPattern::kLateSender, cp, r, ls);
      note_wait(a, {r, latest->recv_complete_event, latest->sender, latest->send_event, ls});
      pending.push_back({send.start_ns, cp, ls});
      if (pending.size() > a.opt.wrong_order_queue) pending.pop_front();
    }
    i = j;
  }

  // Late Receiver: a send that cannot complete before its receive is
  // posted (synchronous mode, or rendezvous-sized) entered before that.
  for (const Message& msg : m.messages) {
    const TimedEvent& send = ev_at(msg.sender, msg.send_event);
    const OpTraits& t = op_traits(send.ev.op);
    if (t.variant != OpVariant::kSynchronous && msg.bytes < a.opt.rendezvous_bytes) continue;
    const TimedEvent& blocked = ev_at(msg.sender, msg.send_complete_event);
    const TimedEvent& posted = ev_at(msg.receiver, msg.recv_event);
    const int64_t lr = clamp_wait(posted.start_ns - blocked.start_ns, blocked);
    if (lr <= 0) continue;
    a.add(WaitPattern::kLateReceiver, a.callpath(send.ev, false), msg.sender, lr);
    note_wait(a, {msg.sender, msg.send_complete_event, msg.receiver, msg.recv_event, lr});
  }
}

// Blocking collectives, grouped into instances per communicator group in
// call order (every member calls them in the same order).
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
  for (int32_t r = 0; r < a.rep.world_size; ++r) {
    // This rank's k-th collective on a group meets the others' k-th.
    std::map<std::pair<int64_t, int32_t>, uint64_t> seq;
    const auto& evs = a.in.ranks[std::size_t(r)];
    for (std::size_t i = 0; i < evs.size(); ++i) {
      const OpTraits& t = op_traits(evs[i].ev.op);
      if (t.category != OpCategory::kCollective || t.nonblocking ||
          t.shape == CollectiveShape::kNeighbor || t.shape == CollectiveShape::kNone)
        continue;
      int64_t comm = field_of(evs[i].ev, "comm");
      if (comm == kAbsent) comm = CommTable::kWorld;
      const CommGroup* g = a.trace.comms.group_of(comm, r);
      if (!g || g->members.empty()) continue;
      const std::pair<int64_t, int32_t> gk{comm, g->members.front()};
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
    auto te = [&](const Member& m) -> const TimedEvent& {
      return a.in.ranks[std::size_t(m.rank)][m.ev];
    };
    for (const Member& m : inst.members)
      a.syncs[std::size_t(m.rank)].push_back({m.ev, -1, inst.comm, inst.group->members.front()});
    const Member& first = inst.members.front();
    const OpTraits& t = op_traits(te(first).ev.op);
    const Member* last_in = &first;
    int64_t first_out = std::numeric_limits<int64_t>::max();
    for (const Member& m : inst.members) {
      if (te(m).start_ns > te(*last_in).start_ns) last_in = &m;
      first_out = std::min(first_out, te(m).end_ns);
    }
    auto wait = [&](WaitPattern p, const Member& waiter, const Member& late) {
      const TimedEvent& w = te(waiter);
      const int64_t ns = clamp_wait(te(late).start_ns - w.start_ns, w);
      if (ns <= 0) return;
      a.add(p, a.callpath(w.ev, false), waiter.rank, ns);
      note_wait(a, {waiter.rank, waiter.ev, late.rank, late.ev, ns});
    };
    auto completion = [&](WaitPattern p, WaitPattern waiting) {
      for (const Member& m : inst.members) {
        wait(waiting, m, *last_in);
        const TimedEvent& e = te(m);
        const int64_t entered_wait = std::max(e.start_ns, te(*last_in).start_ns);
        const int64_t ns = e.end_ns - std::max(first_out, entered_wait);
        a.add(p, a.callpath(e.ev, false), m.rank, std::min(ns, e.end_ns - e.start_ns));
      }
    };
    // The root as a member, from the `root` field (a rank in the communicator).
    auto root_member = [&]() -> const Member* {
      const int64_t root = field_of(te(first).ev, "root");
      if (is_sentinel(root) || root < 0 || root >= int64_t(inst.group->members.size()))
        return nullptr;
      const int32_t world = inst.group->members[std::size_t(root)];
      for (const Member& m : inst.members)
        if (m.rank == world) return &m;
      return nullptr;
    };
    switch (t.shape) {
      case CollectiveShape::kBarrier:
        completion(WaitPattern::kBarrierCompletion, WaitPattern::kWaitBarrier);
        break;
      case CollectiveShape::kNToN:
        completion(WaitPattern::kNxNCompletion, WaitPattern::kWaitNxN);
        break;
      case CollectiveShape::kOneToN:
        if (const Member* root = root_member())
          for (const Member& m : inst.members)
            if (&m != root) wait(WaitPattern::kLateBroadcast, m, *root);
        break;
      case CollectiveShape::kNToOne:
        if (const Member* root = root_member()) {
          const Member* earliest = nullptr;
          for (const Member& m : inst.members)
            if (&m != root && (!earliest || te(m).start_ns < te(*earliest).start_ns)) earliest = &m;
          if (earliest) wait(WaitPattern::kEarlyReduce, *root, *earliest);
        }
        break;
      case CollectiveShape::kScan: {
        // Members in communicator order: rank i depends on ranks below it.
        std::map<int32_t, const Member*> by_rank;
        for (const Member& m : inst.members) by_rank[a.trace.comms.rank_in(inst.comm, m.rank)] = &m;
        const Member* latest_below = nullptr;
        for (const auto& [cr, m] : by_rank) {
          if (latest_below) wait(WaitPattern::kEarlyScan, *m, *latest_below);
          if (!latest_below || te(*m).start_ns > te(*latest_below).start_ns) latest_below = m;
        }
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace

WaitReport analyze_waits(const Trace& trace, const WaitInput& input, const WaitOptions& options) {
  WaitReport rep;
  rep.world_size = trace.world_size;
  rep.patterns = wait_patterns();
  if (static_cast<int32_t>(input.ranks.size()) != trace.world_size)
    throw WaitsError("timeline of " + std::to_string(input.ranks.size()) +
                     " ranks, the trace has " + std::to_string(trace.world_size));
  Analysis a{trace, input, rep, options, {}, {}, {}, {}};
  a.waited.resize(input.ranks.size());
  a.syncs.resize(input.ranks.size());
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (std::size_t r = 0; r < input.ranks.size(); ++r) {
    const auto& evs = input.ranks[r];
    a.waited[r].assign(evs.size(), 0);
    rep.events += evs.size();
    if (evs.empty()) continue;
    lo = std::min(lo, evs.front().compute_start_ns);
    hi = std::max(hi, evs.back().end_ns);
  }
  rep.run_seconds = hi > lo ? static_cast<double>(hi - lo) * 1e-9 : 0;
  rep.dropped = input.dropped;
  if (input.dropped)
    rep.notes.push_back("the timeline reached its size bound: " + std::to_string(input.dropped) +
                        " later events have no times and were not analysed");
  basic_times(a);
  report_progress(options.progress, 1, kWaitPasses);
  point_to_point(a);
  report_progress(options.progress, 2, kWaitPasses);
  collectives(a);
  report_progress(options.progress, 3, kWaitPasses);
  for (auto& s : a.syncs)
    std::sort(s.begin(), s.end(),
              [](const SyncPoint& x, const SyncPoint& y) { return x.ev < y.ev; });
  critical_path_and_delays(a);
  report_progress(options.progress, kWaitPasses, kWaitPasses);
  if (rep.unmatched_recvs)
    rep.notes.push_back(std::to_string(rep.unmatched_recvs) +
                        " receives found no matching send (not analysed)");
  if (rep.incomplete_collectives)
    rep.notes.push_back(std::to_string(rep.incomplete_collectives) +
                        " collective instances miss a member's part (not analysed)");
  return rep;
}

}  // namespace tracefold
