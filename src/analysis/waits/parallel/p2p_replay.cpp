// The point-to-point exchanges of the parallel wait-state analysis
// (p2p_replay.hpp).
//
// The default replay sends one message per recorded message, in the
// recorded direction, but keeps only a window of them in flight: a rank
// walks its events in program order, posts each send where it was recorded
// and each receive a little ahead of the walk, and once more than
// a window of requests are outstanding it waits for the receives the recorded
// run had completed by this point of the walk. Posting the whole run at
// once (the first version) let Open MPI's queues and request pools grow
// with the run's length.
//
// Why the waiting cannot block forever: a rank waits only for receives
// whose recorded completion lies at or before its position in the walk,
// and it has posted every send up to that position. If such a receive's
// send is not posted yet, its sender is waiting too, for a receive it had
// completed before that send in the recorded run, so before the first
// receive completed there. Following the senders, the recorded completion
// times decrease strictly, so the chain ends at a receive whose send has
// been posted. Sends are never waited for before the end (they complete
// by themselves, eagerly, or when their receive is posted).
#include "p2p_replay.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <tuple>

#include "tracefold/waits.hpp"

namespace tracefold::waits_parallel::detail {

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

namespace {

/// Requests in flight per rank before the walk waits for due receives
/// (then down to half of it); receives are posted up to half of it ahead
/// of the walk. TRACEFOLD_ANALYZE_WINDOW sets another (tests use 1, where
/// the walk waits at every event it can).
std::size_t window() {
  static const std::size_t w = [] {
    const char* e = std::getenv("TRACEFOLD_ANALYZE_WINDOW");
    const long v = e ? std::strtol(e, nullptr, 10) : 0;
    return v > 0 ? std::size_t(v) : std::size_t(128);
  }();
  return w;
}

// Reusable request slots: a request, the payload of a send, and the walk
// position from which it may be waited for.
struct Slots {
  std::vector<MPI_Request> req;
  std::vector<std::size_t> due;
  // A deque: a send in flight reads its payload where MPI_Isend was given
  // it, and MPI may read it after the call returns (MPICH over UCX does),
  // so taking a new slot must not move the payloads of earlier ones.
  std::deque<Payload> out;
  std::vector<int> free, done;
  std::size_t active = 0;
  int64_t waits = 0;  ///< MPI_Waitsome calls before the end

  int take(std::size_t when) {
    ++active;
    if (free.empty()) {
      req.push_back(MPI_REQUEST_NULL);
      due.push_back(when);
      out.emplace_back();
      done.push_back(0);
      return int(req.size()) - 1;
    }
    const int s = free.back();
    free.pop_back();
    due[std::size_t(s)] = when;
    return s;
  }
  // Frees the slots MPI_Testsome or MPI_Waitsome reported.
  void release(int n) {
    for (int k = 0; k < n; ++k) free.push_back(done[std::size_t(k)]);
    active -= std::size_t(n);
  }
  bool any_due(std::size_t at) const {
    for (std::size_t s = 0; s < req.size(); ++s)
      if (req[s] != MPI_REQUEST_NULL && due[s] <= at) return true;
    return false;
  }
  // Past the window: collect what has completed, then wait for receives
  // that are due at walk position `at` until half the window is left.
  void throttle(std::size_t at) {
    if (active <= window()) return;
    int n = 0;
    MPI_Testsome(int(req.size()), req.data(), &n, done.data(), MPI_STATUSES_IGNORE);
    if (n != MPI_UNDEFINED) release(n);
    while (active > window() / 2 && any_due(at)) {
      MPI_Waitsome(int(req.size()), req.data(), &n, done.data(), MPI_STATUSES_IGNORE);
      ++waits;
      if (n == MPI_UNDEFINED) break;
      release(n);
    }
  }
};

}  // namespace

int64_t replay(const std::vector<P2p>& ops, const std::vector<TimedEvent>& mine, bool forward,
               std::vector<Payload>& in, const std::vector<int64_t>* changed_from, int32_t me) {
  // Per operation: its index in `in` if incoming and live, else -1.
  std::vector<int64_t> rin(ops.size(), -1);
  std::size_t n_in = 0;
  for (std::size_t k = 0; k < ops.size(); ++k)
    if (ops[k].live && ops[k].send != forward) rin[k] = int64_t(n_in++);
  in.resize(n_in);
  auto travels = [&](std::size_t k) {
    const P2p& o = ops[k];
    if (!o.live || (!forward && !o.reply)) return false;
    if (o.send == forward)
      return !changed_from || int64_t(o.ev) >= (*changed_from)[std::size_t(me)];
    return !changed_from || in[std::size_t(rin[k])][2] >= (*changed_from)[std::size_t(o.peer)];
  };
  Slots slots;
  std::vector<char> posted(ops.size(), 0);
  // The receive cursor: every travelling receive before `post` is posted;
  // `ahead` of them lie at or after the walk's operation.
  std::size_t post = 0, ahead = 0;
  const std::size_t max_ahead = window() / 2;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    while (post < ops.size() && (post <= k || ahead < max_ahead)) {
      const P2p& o = ops[post];
      if (o.send != forward && travels(post)) {
        // Backward, the replies are waited for at the end only: a
        // rendezvous-sized send that MPI buffered gives no order to rely on.
        const int s = slots.take(forward ? o.due : P2p::npos);
        MPI_Irecv(in[std::size_t(rin[post])].data(), 4, MPI_INT64_T, o.peer_in, int(o.tag),
                  forward ? o.mc : o.rc, &slots.req[std::size_t(s)]);
        posted[post] = 1;
        ++ahead;
      }
      ++post;
    }
    const P2p& o = ops[k];
    if (o.send == forward) {
      if (travels(k)) {
        const int s = slots.take(P2p::npos);
        Payload& p = slots.out[std::size_t(s)];
        p = {mine[o.ev].start_ns, mine[o.ev].end_ns, int64_t(o.ev), o.reply ? 1 : 0};
        MPI_Isend(p.data(), 4, MPI_INT64_T, o.peer_in, int(o.tag), forward ? o.mc : o.rc,
                  &slots.req[std::size_t(s)]);
      }
    } else if (posted[k]) {
      --ahead;
    }
    // After the last operation of an event: a Sendrecv's send is posted
    // before its receive may be waited for.
    if (k + 1 == ops.size() || ops[k + 1].ev != o.ev) slots.throttle(o.ev);
  }
  MPI_Waitall(int(slots.req.size()), slots.req.data(), MPI_STATUSES_IGNORE);
  return slots.waits;
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

}  // namespace tracefold::waits_parallel::detail
