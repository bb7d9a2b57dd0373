// The parallel wait-state analysis (parallel.hpp): each rank reads its own
// timeline, learns its partners' timestamps by exchanges in the recorded
// direction, and runs the serial analysis's per-rank pattern code
// (internal.hpp) on them; then the backward replay (backward.cpp) and the
// gathering of every rank's totals on rank 0 (parallel_collect.cpp).
#include "parallel.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>

#include "internal.hpp"
#include "p2p_replay.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/timeline.hpp"

namespace tracefold::waits_parallel {

using namespace waits_detail;
using namespace detail;

namespace {

// One rank's view of the messages it received.
struct Received {
  int32_t from;
  std::size_t send_event, recv_event, recv_complete;
};

// Ranks agree on failing: the lowest failing rank throws its message, the
// others a PeerFailed.
void agree(MPI_Comm c, const std::string& err) {
  const int first = mpi_common::first_failing(c, err);
  if (first < 0) return;
  int me = 0;
  MPI_Comm_rank(c, &me);
  if (first == me) throw WaitsError(err);
  throw PeerFailed("rank " + std::to_string(first) + " failed");
}

}  // namespace

void agree_or_throw(MPI_Comm c, const std::string& err) {
  agree(c, err);
}

WaitReport analyze_parallel(MPI_Comm world, const Trace& trace, const std::string& dir,
                            const WaitOptions& options, bool bundled, Phases& phases,
                            const std::function<void()>& before_labels) {
  int me_i = 0, np = 0;
  MPI_Comm_rank(world, &me_i);
  MPI_Comm_size(world, &np);
  const int32_t me = me_i;
  const std::size_t P = std::size_t(np);
  WaitInput in;
  in.ranks.resize(P);
  std::string err;
  try {
    if (!std::filesystem::is_directory(dir))
      throw WaitsError(dir +
                       ": no timeline directory; wait-state analysis needs event times: record "
                       "the run with `tracefold record --timeline`");
    in.ranks[std::size_t(me)] = load_rank_events(trace, dir, me, in.dropped);
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree(world, err);
  phases.mark("read timeline");
  std::vector<TimedEvent>& mine = in.ranks[std::size_t(me)];
  // Lent to find_completions and the loop below, moved back after it
  // (copying every event's fields cost as much as reading them).
  std::vector<Event> evs;
  evs.reserve(mine.size());
  for (TimedEvent& te : mine) evs.push_back(std::move(te.ev));
  const RequestCompletions done = find_completions(evs);
  constexpr std::size_t npos = RequestCompletions::npos;

  // This rank's point-to-point operations in program order (a Sendrecv's
  // receive before its send), each on the MPI communicator of its recorded
  // communicator's group with its recorded tag and peer (a wildcard receive
  // by the source and tag its status recorded), so MPI matches them as it
  // matched the recorded run: per communicator, source and tag, in order.
  phases.mark("request completions");
  detail::GroupComms groups = detail::split_groups(world, trace, me);
  std::map<std::pair<int64_t, int32_t>, MPI_Comm> replies;  // reverse messages
  for (const auto& [key, c] : groups) MPI_Comm_dup(c, &replies[key]);
  phases.mark("communicators");
  int tag_ub = 0, has_ub = 0;
  {
    int* ub = nullptr;
    MPI_Comm_get_attr(world, MPI_TAG_UB, &ub, &has_ub);
    tag_ub = has_ub && ub ? *ub : 32767;
  }
  std::vector<P2p> ops;
  ops.reserve(evs.size());
  int64_t sends = 0, unmatched_recvs = 0;
  auto place = [&](P2p& o, int32_t peer, int64_t tag) {
    o.peer = peer;
    o.tag = tag;
    const CommGroup* g = peer < 0 ? nullptr : trace.comms.group_of(o.comm, me);
    const auto it = g ? groups.find({o.comm, g->members.front()}) : groups.end();
    if (it == groups.end() || is_sentinel(tag) || tag < 0 || tag > tag_ub) return;
    o.peer_in = trace.comms.rank_in(o.comm, peer);
    if (o.peer_in < 0) return;
    o.mc = it->second;
    o.rc = replies.at(it->first);
  };
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const OpClass c = classify(evs[i].op);
    const int64_t comm = event_comm(evs[i]);
    if (receives_message(c)) {
      int64_t source = field_of(evs[i], c == OpClass::kSendrecv ? "rpeer" : "peer");
      int64_t tag = field_of(evs[i], c == OpClass::kSendrecv ? "rtag" : "tag");
      if (source != kNull) {
        int64_t msrc = field_of(evs[i], "src"), mtag = field_of(evs[i], "mtag");
        if (c == OpClass::kIrecv) {
          msrc = done.src[i];
          mtag = done.mtag[i];
        }
        if (source == kAny) source = msrc;
        if (tag == kAny) tag = mtag;
        P2p o;
        o.ev = i;
        o.complete = c == OpClass::kIrecv && done.done[i] != npos ? done.done[i] : i;
        // An Irecv no Wait/Test completed is not waited for before the end.
        o.due = c != OpClass::kIrecv ? i : done.done[i];
        o.comm = comm;
        o.send = false;
        place(o, world_peer(trace.comms, comm, me, source), tag);
        ops.push_back(o);
      }
    }
    if (sends_message(c)) {
      const int32_t dest = world_peer(trace.comms, comm, me, field_of(evs[i], "peer"));
      if (dest < 0) continue;
      ++sends;
      P2p o;
      o.ev = i;
      o.complete = c == OpClass::kIsend && done.done[i] != npos ? done.done[i] : i;
      o.comm = comm;
      o.send = true;
      o.bytes = send_bytes(evs[i]);
      o.reply = late_receiver_candidate(options, evs[i].op, evs[o.complete].op, o.bytes);
      place(o, dest, field_of(evs[i], "tag"));
      ops.push_back(o);
    }
  }
  for (std::size_t i = 0; i < evs.size(); ++i) mine[i].ev = std::move(evs[i]);
  evs = {};
  phases.mark("point-to-point operations");
  mark_matched(world, P, ops);
  for (const P2p& o : ops)
    if (!o.send && !o.live) ++unmatched_recvs;

  // The senders' current times, by one message per recorded message.
  std::vector<Payload> starts;
  int64_t replay_waits = 0;
  if (bundled)
    replay_bundled(world, P, ops, mine, true, starts);
  else
    replay_waits = replay(ops, mine, true, starts, nullptr, me);
  phases.mark("forward replay");
  phases.counts.emplace_back("forward replay waits", replay_waits);
  std::vector<Received> recvd;
  for (P2p& o : ops)
    if (!o.send && o.live) {
      o.reply = starts[recvd.size()][3] != 0;
      recvd.push_back({o.peer, std::size_t(starts[recvd.size()][2]), o.ev, o.complete});
    }

  // The clock condition, pass by pass as repair_clock_condition does it.
  // After the first pass only the messages of ranks whose repair moved
  // events are sent again (from the first moved event on), and the passes
  // stop when no rank moved any.
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < recvd.size(); ++j)
    if (recvd[j].from != me) order.push_back(j);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return recvd[x].recv_complete < recvd[y].recv_complete;
  });
  uint64_t violations = 0, found = 0;
  std::vector<std::pair<std::size_t, int64_t>> pass_msgs;
  std::vector<int64_t> moved(P);
  int64_t first_moved = int64_t(mine.size());
  auto resend = [&] {
    MPI_Allgather(&first_moved, 1, MPI_INT64_T, moved.data(), 1, MPI_INT64_T, world);
    if (bundled)
      replay_bundled(world, P, ops, mine, true, starts);
    else
      replay(ops, mine, true, starts, &moved, me);
  };
  for (int pass = 0; pass < 20; ++pass) {
    if (pass > 0) resend();
    pass_msgs.clear();
    for (std::size_t j : order) pass_msgs.push_back({recvd[j].recv_complete, starts[j][0]});
    std::size_t first = 0;
    const uint64_t found_here = repair_receiver(mine, pass_msgs, &first);
    first_moved = int64_t(first);
    MPI_Allreduce(&found_here, &found, 1, MPI_UINT64_T, MPI_SUM, world);
    if (pass == 0) violations = found;
    if (found == 0) break;
  }
  // The last pass moved nothing, so `starts` are the senders' times now
  // (unless the pass bound stopped the repair).
  if (found != 0) resend();
  phases.mark("clock condition");

  // Late Sender needs the send's enter time at the receiver; Late Receiver
  // the receive's at the sender, sent back in a reverse message.
  std::vector<RecvMatch> recv_matches;
  for (std::size_t j = 0; j < recvd.size(); ++j) {
    const Received& m = recvd[j];
    recv_matches.push_back({m.recv_event, m.recv_complete, m.from, m.send_event, starts[j][0]});
  }
  std::vector<Payload> back;
  if (bundled)
    replay_bundled(world, P, ops, mine, false, back);
  else
    replay(ops, mine, false, back, nullptr, me);
  phases.mark("reverse replay");
  std::vector<SendMatch> send_matches;
  {
    std::size_t j = 0;
    for (const P2p& o : ops) {
      if (!o.send || !o.live) continue;
      send_matches.push_back(
          {o.ev, o.complete, o.peer, std::size_t(back[j][2]), back[j][0], o.bytes});
      ++j;
    }
    // In the serial analysis's order: by receiver, then its receive order.
    std::stable_sort(
        send_matches.begin(), send_matches.end(), [](const SendMatch& x, const SendMatch& y) {
          return std::tie(x.receiver, x.recv_event) < std::tie(y.receiver, y.recv_event);
        });
  }
  for (auto& [key, c] : replies) MPI_Comm_free(&c);

  WaitReport local;
  local.world_size = np;
  local.patterns = wait_patterns();
  Analysis a(trace, in, local, options);
  a.coll_done[std::size_t(me)] = collective_completions(mine, done.done);
  basic_times(a, me);
  const int64_t matched = int64_t(recv_matches.size());
  late_senders(a, me, std::move(recv_matches));
  late_receivers(a, me, send_matches);
  detail::Counters counters;
  counters.messages = matched;
  counters.unmatched_recvs = unmatched_recvs;
  counters.sends = sends;
  counters.dropped = int64_t(in.dropped);
  phases.mark("point-to-point");
  detail::collectives_parallel(world, a, me, groups, counters);
  phases.mark("collectives");
  for (auto& [key, c] : groups) MPI_Comm_free(&c);
  return detail::gather_report(world, trace, a, options, counters, violations, phases,
                               before_labels);
}

}  // namespace tracefold::waits_parallel
