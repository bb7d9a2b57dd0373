// The parallel backward replay (parallel.hpp): the critical path and the
// delay costs without any rank holding another's events.
//
// Delay costs. For each of its wait states a rank sends the rank it waited
// for (the late rank) one message: the waiting time, what that wait has
// itself received from later waits (propagated), and the waiter's own time
// per call path since the two last synchronized. The late rank charges the
// costs to its own call paths and passes shares on to its own wait states
// in that interval (charge_delay, shared with the serial replay). So the
// messages go against the direction the waiting was caused in: receiver to
// sender for a Late Sender, sender to receiver for a Late Receiver,
// waiting member to the late member of a collective. A rank sends its wait
// states from the latest backwards, each once every later wait that passes
// it a share has arrived (it knows which from one exchange of the late
// events beforehand); nothing else waits, so the replay's chains are only
// as long as the chains of wait states that feed each other.
//
// Critical path: see critical_path_segments below.
#include <mpi.h>

#include <algorithm>
#include <limits>
#include <map>

#include "parallel.hpp"

namespace tracefold::waits_parallel::detail {

using namespace waits_detail;

namespace {

enum Tag : int { kDelay = 1 };

// The critical path, without a token travelling the ranks one message at a
// time (one hop per rank change, each waiting for the next rank to be
// scheduled): the walk over a rank's events from where the path arrives
// leaves at the first earlier call with a wait state, to the late rank at
// its late event, which each rank knows of its own calls. Rank 0 gathers
// these links (per waiting call: event, late rank, late event), follows
// the path over them from the rank that entered its last call last (the
// lowest on ties) with the serial walk's step bound, and sends each rank
// its stretches of the path (first event, events, whether it arrived
// there), which the rank walks with the serial code. Returns the hops
// (rank 0; 0 elsewhere).
int64_t critical_path_segments(MPI_Comm c, Analysis& a, int32_t me,
                               const std::map<std::size_t, std::size_t>& biggest) {
  int np = 0;
  MPI_Comm_size(c, &np);
  const auto& evs = a.in.ranks[std::size_t(me)];
  std::vector<int64_t> links = {
      int64_t(evs.size()), evs.empty() ? std::numeric_limits<int64_t>::min() : evs.back().start_ns};
  for (const auto& [wev, i] : biggest)
    links.insert(links.end(), {int64_t(wev), a.waits[i].late, int64_t(a.waits[i].lev)});
  const int n = int(links.size());
  const std::size_t P = std::size_t(np);
  std::vector<int> counts(me == 0 ? P : 0), displs(me == 0 ? P + 1 : 0);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, c);
  std::vector<int64_t> all;
  if (me == 0) {
    for (std::size_t p = 0; p < P; ++p) displs[p + 1] = displs[p] + counts[p];
    all.resize(std::size_t(displs[P]) + 1);
  }
  MPI_Gatherv(links.data(), n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T,
              0, c);
  // Per rank: its stretches (first event, events, arrived) to walk.
  std::vector<std::vector<int64_t>> out(me == 0 ? P : 0);
  int64_t hops = 0;
  if (me == 0) {
    int64_t total = 0, latest = 0;
    int32_t r = -1;
    for (std::size_t p = 0; p < P; ++p) {
      const int64_t* h = &all[std::size_t(displs[p])];
      total += h[0];
      if (h[0] > 0 && (r < 0 || h[1] > latest)) r = int32_t(p), latest = h[1];
    }
    const int64_t bound = 4 * total + 4;  // the serial walk's guard
    int64_t k = r < 0 ? 0 : all[std::size_t(displs[std::size_t(r)])] - 1, steps = 0;
    bool arrived = false;
    while (r >= 0 && steps < bound) {
      // The last waiting call of r at or (arrived: strictly) before k.
      const int64_t* lo = &all[std::size_t(displs[std::size_t(r)]) + 2];
      const int64_t* hi = &all[std::size_t(displs[std::size_t(r) + 1])];
      const int64_t* at = hi;
      std::size_t a_lo = 0, a_hi = std::size_t(hi - lo) / 3;
      while (a_lo < a_hi) {  // first link whose event is past the limit
        const std::size_t mid = (a_lo + a_hi) / 2;
        if (lo[3 * mid] < k + (arrived ? 0 : 1))
          a_lo = mid + 1;
        else
          a_hi = mid;
      }
      if (a_lo > 0) at = lo + 3 * (a_lo - 1);
      const int64_t j = at == hi ? 0 : at[0];
      const int64_t events = std::min(k - j + 1, bound - steps);
      out[std::size_t(r)].insert(out[std::size_t(r)].end(), {k, events, arrived ? 1 : 0});
      steps += events;
      if (at == hi || events < k - j + 1) break;
      r = int32_t(at[1]);
      k = at[2];
      arrived = true;
      ++hops;
    }
  }
  std::vector<int> sc(me == 0 ? P : 0), sd(me == 0 ? P : 0);
  std::vector<int64_t> send;
  for (std::size_t p = 0; p < out.size(); ++p) {
    sd[p] = int(send.size());
    sc[p] = int(out[p].size());
    send.insert(send.end(), out[p].begin(), out[p].end());
  }
  send.push_back(0);
  int mine_n = 0;
  MPI_Scatter(sc.data(), 1, MPI_INT, &mine_n, 1, MPI_INT, 0, c);
  std::vector<int64_t> segs(std::size_t(mine_n) + 1);
  MPI_Scatterv(send.data(), sc.data(), sd.data(), MPI_INT64_T, segs.data(), mine_n, MPI_INT64_T, 0,
               c);
  for (std::size_t s = 0; s + 2 < std::size_t(mine_n) + 1; s += 3) {
    CriticalWalk walk;
    walk.holds = true;
    if (segs[s + 2] != 0) walk.arrive();
    for (int64_t e = segs[s], left = segs[s + 1]; left-- > 0; --e) {
      const auto b = walk.whole_call ? biggest.find(std::size_t(e)) : biggest.end();
      walk.step(a, me, std::size_t(e), b == biggest.end() ? CriticalWalk::npos : b->second);
    }
  }
  return hops;
}

}  // namespace

void backward_replay(MPI_Comm world, Analysis& a, int32_t me, Phases& phases) {
  MPI_Comm c;
  MPI_Comm_dup(world, &c);
  int np = 0;
  MPI_Comm_size(c, &np);
  sort_for_replay(a);
  const std::vector<WaitState>& waits = a.waits;  // all of them this rank's
  WaitsByEvent mine;
  for (std::size_t i = 0; i < waits.size(); ++i) mine.push_back({waits[i].wev, i});

  // Each late rank learns which messages will arrive (one small exchange
  // of the wait states' late events), so it knows which of its own wait
  // states must wait for which: a wait's share is complete once every
  // later wait that passes it a share has arrived.
  const std::size_t P = static_cast<std::size_t>(np);
  std::vector<int> sc(P, 0), rc(P, 0), sd(P, 0), rd(P, 0);
  std::vector<int64_t> out;
  {
    std::vector<std::vector<int64_t>> to(P);
    for (const WaitState& w : waits) to[std::size_t(w.late)].push_back(int64_t(w.lev));
    for (int p = 0; p < np; ++p) {
      sd[std::size_t(p)] = int(out.size());
      sc[std::size_t(p)] = int(to[std::size_t(p)].size());
      out.insert(out.end(), to[std::size_t(p)].begin(), to[std::size_t(p)].end());
    }
  }
  MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, c);
  int nin = 0;
  for (int p = 0; p < np; ++p) rd[std::size_t(p)] = nin, nin += rc[std::size_t(p)];
  std::vector<int64_t> levs(std::size_t(nin) + 1);
  out.push_back(0);
  MPI_Alltoallv(out.data(), sc.data(), sd.data(), MPI_INT64_T, levs.data(), rc.data(), rd.data(),
                MPI_INT64_T, c);
  std::vector<std::size_t> pending(waits.size(), 0);
  for (int p = 0; p < np; ++p)
    for (int k = rd[std::size_t(p)]; k < rd[std::size_t(p)] + rc[std::size_t(p)]; ++k) {
      const auto [lo, hi] = fed_waits(a, me, std::size_t(levs[std::size_t(k)]), p, mine);
      for (std::size_t j = lo; j < hi; ++j) ++pending[mine[j].second];
    }

  // The biggest wait state per waiting call (the first on ties).
  std::map<std::size_t, std::size_t> biggest;
  for (std::size_t i = 0; i < waits.size(); ++i) {
    auto [slot, fresh] = biggest.try_emplace(waits[i].wev, i);
    if (!fresh && waits[i].ns > waits[slot->second].ns) slot->second = i;
  }
  const int64_t hops = critical_path_segments(c, a, me, biggest);

  // The messages in flight, in reused slots (request and buffer): every
  // 128 sends the completed ones are collected (MPI_Testsome, never
  // blocking), so the requests outstanding stay near the number not yet
  // delivered instead of growing to one per wait state.
  std::vector<MPI_Request> reqs;
  std::vector<std::vector<int64_t>> sent;
  std::vector<int> free_slots, done;
  int since_collect = 0;
  auto post = [&](const std::vector<int64_t>& m, int to, int tag) {
    if (++since_collect == 128) {
      since_collect = 0;
      int n = 0;
      MPI_Testsome(int(reqs.size()), reqs.data(), &n, done.data(), MPI_STATUSES_IGNORE);
      for (int k = 0; k < n && n != MPI_UNDEFINED; ++k) free_slots.push_back(done[std::size_t(k)]);
    }
    std::size_t s = reqs.size();
    if (free_slots.empty()) {
      reqs.push_back(MPI_REQUEST_NULL);
      sent.emplace_back();
      done.push_back(0);
    } else {
      s = std::size_t(free_slots.back());
      free_slots.pop_back();
    }
    sent[s].assign(m.begin(), m.end());
    MPI_Isend(sent[s].data(), int(m.size()), MPI_INT64_T, to, tag, c, &reqs[s]);
  };

  std::vector<int64_t> propagated(waits.size(), 0);
  std::vector<int64_t> buf;
  int received = 0;
  int64_t blocked = 0;
  // Takes one message, whichever comes first.
  auto serve = [&] {
    MPI_Message msg;
    MPI_Status st;
    MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &msg, &st);
    int count = 0;
    MPI_Get_count(&st, MPI_INT64_T, &count);
    buf.resize(std::size_t(count) + 1);
    MPI_Mrecv(buf.data(), count, MPI_INT64_T, &msg, MPI_STATUS_IGNORE);
    {
      // A wait state of st.MPI_SOURCE that this rank caused: its late
      // event, waiting, carried share, then the waiter's own time.
      OwnTime time;
      for (std::size_t k = 3; k + 1 < std::size_t(count); k += 2) time[buf[k]] = buf[k + 1];
      const std::size_t lev = std::size_t(buf[0]);
      charge_delay(a, {st.MPI_SOURCE, 0, me, lev, buf[1]}, buf[2], time, mine, propagated);
      const auto [lo, hi] = fed_waits(a, me, lev, st.MPI_SOURCE, mine);
      for (std::size_t j = lo; j < hi; ++j) --pending[mine[j].second];
      ++received;
    }
  };
  // Own wait states from the latest, each once its share is complete.
  std::vector<int64_t> m;
  for (std::size_t i = waits.size(); i-- > 0;) {
    blocked += pending[i] > 0 ? 1 : 0;
    while (pending[i] > 0) serve();
    const WaitState& w = waits[i];
    const OwnTime time = own_time(a, me, previous_sync(a, me, w.wev, w.late), w.wev);
    m.clear();
    m.insert(m.end(), {int64_t(w.lev), w.ns, propagated[i]});
    for (const auto& [key, ns] : time) m.insert(m.end(), {key, ns});
    post(m, w.late, kDelay);
  }
  while (received < nin) serve();
  MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  MPI_Comm_free(&c);
  phases.counts.emplace_back("wait states", int64_t(waits.size()));
  phases.counts.emplace_back("wait states held for shares", blocked);
  phases.counts.emplace_back("critical path hops", hops);
}

}  // namespace tracefold::waits_parallel::detail
