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
// Critical path. A token walks the events of its holder backwards from
// the end of the run, adding calls and computation to the path, and at a
// call that waited goes to the rank it waited for, at the event that rank
// was late at; the rank it ends on tells every rank.
#include <mpi.h>

#include <algorithm>
#include <deque>
#include <map>

#include "parallel.hpp"

namespace tracefold::waits_parallel::detail {

using namespace waits_detail;

namespace {

enum Tag : int { kDelay = 1, kToken = 2, kDone = 3 };

}  // namespace

void backward_replay(MPI_Comm world, Analysis& a, int32_t me, Phases& phases) {
  MPI_Comm c;
  MPI_Comm_dup(world, &c);
  int np = 0;
  MPI_Comm_size(c, &np);
  sort_for_replay(a);
  const auto& evs = a.in.ranks[std::size_t(me)];
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

  // The critical path starts at the rank that entered its last call last
  // (the lowest such rank on ties, as the serial walk picks it).
  int64_t last = evs.empty() ? std::numeric_limits<int64_t>::min() : evs.back().start_ns,
          latest = 0;
  MPI_Allreduce(&last, &latest, 1, MPI_INT64_T, MPI_MAX, c);
  int candidate = !evs.empty() && last == latest ? me : np, starter = np;
  MPI_Allreduce(&candidate, &starter, 1, MPI_INT, MPI_MIN, c);
  int64_t total_events = int64_t(evs.size()), all_events = 0;
  MPI_Allreduce(&total_events, &all_events, 1, MPI_INT64_T, MPI_SUM, c);
  const int64_t bound = 4 * all_events + 4;  // the serial walk's guard
  // The biggest wait state per waiting call (the first on ties).
  std::map<std::size_t, std::size_t> biggest;
  for (std::size_t i = 0; i < waits.size(); ++i) {
    auto [slot, fresh] = biggest.try_emplace(waits[i].wev, i);
    if (!fresh && waits[i].ns > waits[slot->second].ns) slot->second = i;
  }

  std::deque<std::vector<int64_t>> sent;
  std::vector<MPI_Request> reqs;
  auto post = [&](std::vector<int64_t> m, int to, int tag) {
    std::vector<int64_t>& b = sent.emplace_back(std::move(m));
    MPI_Isend(b.data(), int(b.size()), MPI_INT64_T, to, tag, c, &reqs.emplace_back());
  };
  bool done = starter == np;  // no events anywhere: no path
  // The critical token: it walks this rank's events from `k` down until a
  // call that waited, then goes to the rank it waited for; where it runs
  // out of events (or steps, as the serial walk bounds them) it ends and
  // tells every rank.
  CriticalWalk walk;
  auto chase = [&](std::size_t k, int64_t steps) {
    for (;; ++steps) {
      if (steps >= bound) break;
      const auto b = walk.whole_call ? biggest.find(k) : biggest.end();
      const std::size_t left =
          walk.step(a, me, k, b == biggest.end() ? CriticalWalk::npos : b->second);
      if (left != CriticalWalk::npos) {
        post({int64_t(waits[left].lev), steps + 1}, waits[left].late, kToken);
        return;
      }
      if (k == 0) break;
      --k;
    }
    walk.holds = false;
    for (int p = 0; p < np; ++p)
      if (p != me) post({}, p, kDone);
    done = true;
  };
  if (starter == me) {
    walk.holds = true;
    chase(evs.size() - 1, 0);
  }

  std::vector<int64_t> propagated(waits.size(), 0);
  std::vector<int64_t> buf;
  int received = 0;
  int64_t tokens = 0, blocked = 0;
  // Takes one message, whichever comes first.
  auto serve = [&] {
    MPI_Message msg;
    MPI_Status st;
    MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &msg, &st);
    int count = 0;
    MPI_Get_count(&st, MPI_INT64_T, &count);
    buf.resize(std::size_t(count) + 1);
    MPI_Mrecv(buf.data(), count, MPI_INT64_T, &msg, MPI_STATUS_IGNORE);
    if (st.MPI_TAG == kDone) {
      done = true;
    } else if (st.MPI_TAG == kToken) {
      ++tokens;
      walk.arrive();
      chase(std::size_t(buf[0]), buf[1]);
    } else {
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
  for (std::size_t i = waits.size(); i-- > 0;) {
    blocked += pending[i] > 0 ? 1 : 0;
    while (pending[i] > 0) serve();
    const WaitState& w = waits[i];
    const OwnTime time = own_time(a, me, previous_sync(a, me, w.wev, w.late), w.wev);
    std::vector<int64_t> m;
    m.reserve(3 + 2 * time.size());
    m.insert(m.end(), {int64_t(w.lev), w.ns, propagated[i]});
    for (const auto& [key, ns] : time) m.insert(m.end(), {key, ns});
    post(std::move(m), w.late, kDelay);
  }
  while (received < nin || !done) serve();
  MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  MPI_Comm_free(&c);
  phases.counts.emplace_back("wait states", int64_t(waits.size()));
  phases.counts.emplace_back("wait states held for shares", blocked);
  phases.counts.emplace_back("critical token hops", tokens);
}

}  // namespace tracefold::waits_parallel::detail
