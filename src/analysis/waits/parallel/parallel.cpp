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
#include "tracefold/op_class.hpp"
#include "tracefold/timeline.hpp"

namespace tracefold::waits_parallel {

using namespace waits_detail;

namespace {

using Buffer = std::vector<int64_t>;

// Each destination's records in one exchange. Returns what arrived, with
// `from[s]` the offset of source s's part (from[P] = the end).
Buffer alltoallv(MPI_Comm c, const std::vector<Buffer>& out, std::vector<int>& from) {
  const int n = static_cast<int>(out.size());
  const auto un = static_cast<std::size_t>(n);
  std::vector<int> sc(un), sd(un), rc(un);
  Buffer send;
  for (int p = 0; p < n; ++p) {
    sc[std::size_t(p)] = static_cast<int>(out[std::size_t(p)].size());
    sd[std::size_t(p)] = static_cast<int>(send.size());
    send.insert(send.end(), out[std::size_t(p)].begin(), out[std::size_t(p)].end());
  }
  MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, c);
  from.assign(std::size_t(n) + 1, 0);
  for (int p = 0; p < n; ++p) from[std::size_t(p) + 1] = from[std::size_t(p)] + rc[std::size_t(p)];
  Buffer got(std::size_t(from.back()) + 1);  // never empty: data() is a valid pointer
  send.push_back(0);
  MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT64_T, got.data(), rc.data(), from.data(),
                MPI_INT64_T, c);
  got.pop_back();
  return got;
}

int64_t comm_of(const Event& ev) {
  const int64_t c = field_of(ev, "comm");
  return c == kAbsent ? CommTable::kWorld : c;
}

// One rank's view of the messages it received.
struct Received {
  int32_t from;
  std::size_t send_event, recv_event, recv_complete;
};

// A recorded send or receive and where its replay goes; `live` once both
// sides know the message was recorded at both ends.
struct P2p {
  std::size_t ev = 0, complete = 0;
  int64_t comm = 0, tag = 0;
  int32_t peer = -1;  // world rank
  int peer_in = -1;   // rank in mc
  bool send = false, live = false;
  /// The sender needs the receive's enter time back (Late Receiver): a
  /// synchronous or rendezvous-sized send. Receives learn it from the
  /// forward message.
  bool reply = false;
  uint64_t bytes = 0;
  MPI_Comm mc = MPI_COMM_NULL, rc = MPI_COMM_NULL;
};

// What one replayed message carries: an enter time, an exit time, the
// event (its index in the sender's events; the call path follows from it)
// and, forward, whether the sender needs a reply.
using Payload = std::array<int64_t, 4>;

// A truncated timeline loses messages at one end only: each pair of ranks
// first trades its counts per communicator and tag (one small exchange,
// not one record per message), and only the first min(sent, received) of
// each are replayed, which is what FIFO matching pairs anyway. Without
// this a receive with no recorded send would wait forever.
void mark_matched(MPI_Comm world, std::size_t P, std::vector<P2p>& ops) {
  using Key = std::tuple<int32_t, int64_t, int64_t>;  // peer, comm, tag
  std::map<Key, std::array<int64_t, 2>> mine;         // sends, receives
  for (const P2p& o : ops)
    if (o.mc != MPI_COMM_NULL) ++mine[{o.peer, o.comm, o.tag}][o.send ? 0 : 1];
  std::vector<Buffer> out(P);
  for (const auto& [k, n] : mine)
    out[std::size_t(std::get<0>(k))].insert(out[std::size_t(std::get<0>(k))].end(),
                                            {std::get<1>(k), std::get<2>(k), n[0], n[1]});
  std::vector<int> from;
  const Buffer got = alltoallv(world, out, from);
  std::map<Key, std::array<int64_t, 2>> theirs;
  for (std::size_t s = 0; s < P; ++s)
    for (int k = from[s]; k < from[s + 1]; k += 4)
      theirs[{int32_t(s), got[std::size_t(k)], got[std::size_t(k) + 1]}] = {
          got[std::size_t(k) + 2], got[std::size_t(k) + 3]};
  std::map<Key, std::array<int64_t, 2>> seen;
  for (P2p& o : ops) {
    if (o.mc == MPI_COMM_NULL) continue;
    const Key k{o.peer, o.comm, o.tag};
    const auto t = theirs.find(k);
    const int64_t other = t == theirs.end() ? 0 : t->second[o.send ? 1 : 0];
    o.live = seen[k][o.send ? 0 : 1]++ < other;
  }
}

// Walks the operations in program order posting, forward, for each live
// send a nonblocking send of its times to the receiver and for each live
// receive the matching nonblocking receive (a Sendrecv's receive first);
// backward, each live receive whose sender needs it (`reply`) sends its
// enter time and event back to its sender, on a duplicate communicator
// with the same tag, and the sender receives one per such send. All complete at the end, so no
// order of posting can block. What arrives goes to `in`, one payload per live incoming operation in
// program order. With `changed_from` (forward only; per world rank the first event its clock repair
// moved) only the messages whose send is at or after that event travel: the others' payloads in
// `in` are still current.
void replay(const std::vector<P2p>& ops, const std::vector<TimedEvent>& mine, bool forward,
            std::vector<Payload>& in, const std::vector<int64_t>* changed_from, int32_t me) {
  std::size_t n_in = 0, n_out = 0;
  for (const P2p& o : ops)
    if (o.live) ++(o.send == forward ? n_out : n_in);
  in.resize(n_in);
  std::vector<Payload> out(n_out);
  std::vector<MPI_Request> reqs;
  reqs.reserve(n_in + n_out);
  std::size_t r = 0, s = 0;
  for (const P2p& o : ops) {
    if (!o.live) continue;
    MPI_Comm c = forward ? o.mc : o.rc;
    if (o.send == forward) {
      if (changed_from && int64_t(o.ev) < (*changed_from)[std::size_t(me)]) continue;
      if (!forward && !o.reply) continue;
      Payload& p = out[s++];
      p = {mine[o.ev].start_ns, mine[o.ev].end_ns, int64_t(o.ev), o.reply ? 1 : 0};
      MPI_Isend(p.data(), 4, MPI_INT64_T, o.peer_in, int(o.tag), c, &reqs.emplace_back());
    } else {
      Payload& p = in[r++];
      if (changed_from && p[2] < (*changed_from)[std::size_t(o.peer)]) continue;
      if (!forward && !o.reply) continue;
      MPI_Irecv(p.data(), 4, MPI_INT64_T, o.peer_in, int(o.tag), c, &reqs.emplace_back());
    }
  }
  MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
}

// The same exchange as replay(), bundled: each rank sends every peer all
// the records meant for it in one MPI_Alltoallv (communicator id, tag,
// then the payload), and each incoming operation takes the next record
// of its peer with its communicator and tag, which is the order MPI's
// matching gave replay() (per source, communicator and tag, first sent
// first received). Every live message travels, so a clock-repair pass
// needs no `changed_from`.
void replay_bundled(MPI_Comm world, std::size_t P, const std::vector<P2p>& ops,
                    const std::vector<TimedEvent>& mine, bool forward, std::vector<Payload>& in) {
  constexpr std::size_t kRecord = 6;
  std::vector<Buffer> out(P);
  std::size_t n_in = 0;
  for (const P2p& o : ops) {
    if (!o.live) continue;
    if (o.send != forward) {
      ++n_in;
      continue;
    }
    if (!forward && !o.reply) continue;
    out[std::size_t(o.peer)].insert(
        out[std::size_t(o.peer)].end(),
        {o.comm, o.tag, mine[o.ev].start_ns, mine[o.ev].end_ns, int64_t(o.ev), o.reply ? 1 : 0});
  }
  std::vector<int> from;
  const Buffer got = alltoallv(world, out, from);
  // Each source's records by communicator and tag, in the order sent.
  using Key = std::tuple<int32_t, int64_t, int64_t>;
  std::map<Key, std::pair<std::vector<std::size_t>, std::size_t>> queues;
  for (std::size_t s = 0; s < P; ++s)
    for (auto k = std::size_t(from[s]); k < std::size_t(from[s + 1]); k += kRecord)
      queues[{int32_t(s), got[k], got[k + 1]}].first.push_back(k);
  in.resize(n_in);
  std::size_t r = 0;
  for (const P2p& o : ops) {
    if (!o.live || o.send == forward) continue;
    Payload& p = in[r++];
    if (!forward && !o.reply) continue;
    auto& [q, head] = queues[{o.peer, o.comm, o.tag}];
    // mark_matched made both ends count the same messages.
    if (head >= q.size())
      throw WaitsError("bundled replay: no record from rank " + std::to_string(o.peer) +
                       " for event " + std::to_string(o.ev));
    std::copy_n(&got[q[head++] + 2], 4, p.begin());
  }
}

// Ranks agree on failing: the lowest failing rank throws its message, the
// others a PeerFailed.
void agree(MPI_Comm c, const std::string& err) {
  int me = 0, size = 0;
  MPI_Comm_rank(c, &me);
  MPI_Comm_size(c, &size);
  int mine = err.empty() ? size : me, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c);
  if (first == size) return;
  if (first == me) throw WaitsError(err);
  throw PeerFailed("rank " + std::to_string(first) + " failed");
}

}  // namespace

void agree_or_throw(MPI_Comm c, const std::string& err) {
  agree(c, err);
}

WaitReport analyze_parallel(MPI_Comm world, const Trace& trace, const std::string& dir,
                            const WaitOptions& options, bool bundled, Phases& phases) {
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
  detail::GroupComms groups = detail::split_groups(world, trace, me);
  std::map<std::pair<int64_t, int32_t>, MPI_Comm> replies;  // reverse messages
  for (const auto& [key, c] : groups) MPI_Comm_dup(c, &replies[key]);
  int tag_ub = 0, has_ub = 0;
  {
    int* ub = nullptr;
    MPI_Comm_get_attr(world, MPI_TAG_UB, &ub, &has_ub);
    tag_ub = has_ub && ub ? *ub : 32767;
  }
  std::vector<P2p> ops;
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
    const int64_t comm = comm_of(evs[i]);
    if (c == OpClass::kRecv || c == OpClass::kIrecv || c == OpClass::kSendrecv) {
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
        o.comm = comm;
        o.send = false;
        place(o, world_peer(trace.comms, comm, me, source), tag);
        ops.push_back(o);
      }
    }
    if (c == OpClass::kSend || c == OpClass::kIsend || c == OpClass::kSendrecv) {
      const int32_t dest = world_peer(trace.comms, comm, me, field_of(evs[i], "peer"));
      if (dest < 0) continue;
      ++sends;
      P2p o;
      o.ev = i;
      o.complete = c == OpClass::kIsend && done.done[i] != npos ? done.done[i] : i;
      o.comm = comm;
      o.send = true;
      o.bytes = send_bytes(evs[i]);
      o.reply = op_traits(evs[i].op).variant == OpVariant::kSynchronous ||
                o.bytes >= options.rendezvous_bytes;
      place(o, dest, field_of(evs[i], "tag"));
      ops.push_back(o);
    }
  }
  for (std::size_t i = 0; i < evs.size(); ++i) mine[i].ev = std::move(evs[i]);
  evs = {};
  phases.mark("communicators");
  mark_matched(world, P, ops);
  for (const P2p& o : ops)
    if (!o.send && !o.live) ++unmatched_recvs;

  // The senders' current times, by one message per recorded message.
  std::vector<Payload> starts;
  if (bundled)
    replay_bundled(world, P, ops, mine, true, starts);
  else
    replay(ops, mine, true, starts, nullptr, me);
  phases.mark("forward replay");
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
  return detail::gather_report(world, trace, a, options, counters, violations, phases);
}

}  // namespace tracefold::waits_parallel
