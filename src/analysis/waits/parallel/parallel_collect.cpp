// The parallel analysis's collectives and its gathering on rank 0
// (parallel.hpp).
#include <algorithm>
#include <array>
#include <limits>
#include <map>

#include "parallel.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::waits_parallel::detail {

using namespace waits_detail;
using Buffer = std::vector<int64_t>;

namespace {

// What one member contributes to a collective instance: the latest entry,
// the earliest non-root entry and the root's entry (each: enter time,
// tie-breaking key, world rank, event; rank -1 = none), then the earliest
// exit.
constexpr int kSlots = 13;
using Contribution = std::array<int64_t, kSlots>;

bool better(const int64_t* x, const int64_t* y, bool later) {
  if (x[2] < 0) return false;
  if (y[2] < 0) return true;
  if (x[0] != y[0]) return later ? x[0] > y[0] : x[0] < y[0];
  return x[1] < y[1];
}

// Commutative and associative (ties go to the lower key), so every rank
// and every reduction order agrees with the serial analysis's choice.
void combine(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) {
    const int64_t* a = static_cast<const int64_t*>(in) + i * kSlots;
    int64_t* b = static_cast<int64_t*>(inout) + i * kSlots;
    if (better(a, b, true)) std::copy(a, a + 4, b);
    if (better(a + 4, b + 4, false)) std::copy(a + 4, a + 8, b + 4);
    if (b[10] < 0) std::copy(a + 8, a + 12, b + 8);
    b[12] = std::min(a[12], b[12]);
  }
}

CollPoint point(const int64_t* p) {
  return {p[0], int32_t(p[2]), std::size_t(p[3])};
}

void put(int64_t* p, const TimedEvent& e, int64_t tie, int32_t rank, std::size_t ev) {
  p[0] = e.start_ns;
  p[1] = tie;
  p[2] = rank;
  p[3] = int64_t(ev);
}

Contribution nothing() {
  Contribution c;
  c.fill(-1);
  c[12] = std::numeric_limits<int64_t>::max();
  return c;
}

}  // namespace

GroupComms split_groups(MPI_Comm world, const Trace& trace, int32_t me) {
  // comm_split is collective over the world: every rank walks the trace's
  // communicators in the same order.
  GroupComms comms;
  for (const auto& [id, groups] : trace.comms.all()) {
    const CommGroup* g = trace.comms.group_of(id, me);
    const int color = g && !g->members.empty() ? g->members.front() : MPI_UNDEFINED;
    const int key = std::max(0, trace.comms.rank_in(id, me));
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_split(world, color, key, &c);
    if (c != MPI_COMM_NULL) comms[{id, color}] = c;
  }
  return comms;
}

void collectives_parallel(MPI_Comm world, Analysis& a, int32_t me, const GroupComms& comms,
                          Counters& counters) {
  (void)world;
  const Trace& trace = a.trace;
  using GroupKey = GroupComms::key_type;
  const auto& evs = a.in.ranks[std::size_t(me)];
  const std::vector<std::size_t>& done = collective_done(a, me);
  struct Mine {
    std::size_t ev;
    GroupKey group;
    const CommGroup* g;
  };
  std::vector<Mine> mine;
  std::map<GroupKey, int64_t> count;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    int64_t comm = 0;
    const CommGroup* g = analysed_collective(trace, evs[i].ev, me, comm);
    if (!g || !comms.count({comm, g->members.front()})) continue;
    mine.push_back({i, {comm, g->members.front()}, g});
    ++count[mine.back().group];
  }
  // The k-th collective of a group is an instance; it is analysed if every
  // member's k-th is within its timeline's bound.
  std::map<GroupKey, int64_t> complete;
  for (const auto& [key, c] : comms) {
    const int64_t n = count[key];
    int64_t lo = 0, hi = 0;
    MPI_Allreduce(&n, &lo, 1, MPI_INT64_T, MPI_MIN, c);
    MPI_Allreduce(&n, &hi, 1, MPI_INT64_T, MPI_MAX, c);
    complete[key] = lo;
    if (key.second == me) {
      counters.collectives += lo;
      counters.incomplete += hi - lo;
    }
  }
  MPI_Datatype type;
  MPI_Type_contiguous(kSlots, MPI_INT64_T, &type);
  MPI_Type_commit(&type);
  MPI_Op op;
  MPI_Op_create(&combine, 1, &op);
  // Up to kWindow instances in flight (nonblocking collectives of the same
  // shapes, posted in program order), then all completed and analysed in
  // that order: not one synchronization of the group per instance. Each
  // member posts a group's instances in the same order, and a window only
  // waits for instances posted before the next ones, so it cannot block
  // where the one-at-a-time order would not.
  constexpr std::size_t kWindow = 64;
  struct Pending {
    std::size_t ev = 0, wait_ev = 0;
    CollectiveShape shape{};
    bool is_root = false, below = false;
    Contribution mine_c = nothing(), all = nothing();
    CollSummary s;
  };
  std::vector<Pending> window(kWindow);
  std::vector<MPI_Request> reqs;
  std::size_t used = 0;
  auto drain = [&] {
    MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    reqs.clear();
    for (std::size_t i = 0; i < used; ++i) {
      Pending& p = window[i];
      switch (p.shape) {
        case CollectiveShape::kBarrier:
        case CollectiveShape::kNToN:
          p.s.last_in = point(&p.all[0]);
          p.s.first_out = p.all[12];
          break;
        case CollectiveShape::kOneToN:
          if (p.all[10] >= 0) p.s.root = point(&p.all[8]);
          break;
        case CollectiveShape::kNToOne:
          if (p.is_root) {
            p.s.root = point(&p.all[8]);
            p.s.first_nonroot = point(&p.all[4]);
          }
          break;
        case CollectiveShape::kScan:
          if (p.below) p.s.latest_below = point(&p.all[0]);
          break;
        default:
          break;
      }
      collective_member(a, me, p.ev, p.wait_ev, p.s);
    }
    used = 0;
  };
  std::map<GroupKey, int64_t> seq;
  for (const Mine& m : mine) {
    if (seq[m.group]++ >= complete[m.group]) continue;
    MPI_Comm c = comms.at(m.group);
    const TimedEvent& e = evs[m.ev];
    Pending& p = window[used++];
    p = Pending{};
    p.ev = m.ev;
    p.wait_ev = op_traits(e.ev.op).nonblocking ? done[m.ev] : m.ev;
    p.shape = op_traits(e.ev.op).shape;
    p.s.comm = m.group.first;
    p.s.group_first = m.group.second;
    const int32_t root = collective_root(e.ev, *m.g);
    const int root_in = root < 0 ? -1 : trace.comms.rank_in(m.group.first, root);
    Contribution& mine_c = p.mine_c;
    Contribution& all = p.all;
    switch (p.shape) {
      case CollectiveShape::kBarrier:
      case CollectiveShape::kNToN:
        put(&mine_c[0], e, me, me, m.ev);
        mine_c[12] = e.end_ns;
        MPI_Iallreduce(mine_c.data(), all.data(), 1, type, op, c, &reqs.emplace_back());
        break;
      case CollectiveShape::kOneToN:
        if (root_in < 0) break;
        if (root == me) put(&all[8], e, me, me, m.ev);
        MPI_Ibcast(all.data(), 1, type, root_in, c, &reqs.emplace_back());
        break;
      case CollectiveShape::kNToOne:
        if (root_in < 0) break;
        p.is_root = root == me;
        if (root == me)
          put(&mine_c[8], e, me, me, m.ev);
        else
          put(&mine_c[4], e, me, me, m.ev);
        MPI_Ireduce(mine_c.data(), all.data(), 1, type, op, root_in, c, &reqs.emplace_back());
        break;
      case CollectiveShape::kScan: {
        const int32_t in_comm = trace.comms.rank_in(m.group.first, me);
        put(&mine_c[0], e, in_comm, me, m.ev);
        p.below = in_comm > 0;
        MPI_Iexscan(mine_c.data(), all.data(), 1, type, op, c, &reqs.emplace_back());
        break;
      }
      default:
        break;
    }
    if (used == kWindow) drain();
  }
  drain();
  MPI_Op_free(&op);
  MPI_Type_free(&type);
}

WaitReport gather_report(MPI_Comm world, const Trace& trace, Analysis& a,
                         const WaitOptions& options, const Counters& c, uint64_t violations,
                         Phases& phases, const std::function<void()>& before_labels) {
  int me = 0, np = 0;
  MPI_Comm_rank(world, &me);
  MPI_Comm_size(world, &np);
  backward_replay(world, a, me, phases);
  phases.mark("backward replay");
  // What rank 0 needs from this rank: counts and per (pattern, call path)
  // totals, bounded by the call paths, not by the events.
  Span span;
  span.add(a.in.ranks[std::size_t(me)]);
  Buffer buf = {c.messages, c.unmatched_recvs,   c.sends, c.collectives, c.incomplete,
                c.dropped,  int64_t(a.uncaused), span.lo, span.hi,       int64_t(span.events)};
  auto section = [&buf](std::size_t n) { buf.push_back(int64_t(n)); };
  section(a.rep.callpaths.size());
  for (const WaitCallPath& cp : a.rep.callpaths)
    buf.insert(buf.end(), {cp.op, cp.site, cp.computation ? 1 : 0});
  section(a.ns.size());
  for (const auto& [key, v] : a.ns)
    buf.insert(buf.end(), {std::get<0>(key), std::get<1>(key), std::get<2>(key), v});
  for (const auto* cells : {&a.critical_ns, &a.delay_ns, &a.propagated_ns}) {
    section(cells->size());
    for (const auto& [key, v] : *cells) buf.insert(buf.end(), {key.first, key.second, v});
  }

  const int n = static_cast<int>(buf.size());
  std::vector<int> counts(me == 0 ? std::size_t(np) : 0), displs;
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world);
  Buffer all;
  if (me == 0) {
    displs.assign(std::size_t(np) + 1, 0);
    for (int r = 0; r < np; ++r)
      displs[std::size_t(r) + 1] = displs[std::size_t(r)] + counts[std::size_t(r)];
    all.resize(std::size_t(displs.back()));
  }
  MPI_Gatherv(buf.data(), n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T, 0,
              world);
  WaitReport rep;
  phases.mark("gather");
  if (me != 0) return rep;
  if (before_labels) before_labels();

  rep.world_size = np;
  rep.patterns = wait_patterns();
  WaitInput in;
  in.ranks.resize(std::size_t(np));
  Analysis g(trace, in, rep, options);
  // Call paths numbered as the serial analysis meets them: by rank, and
  // within a rank in the order of first use (each rank's own numbering).
  std::vector<std::vector<int32_t>> global(static_cast<std::size_t>(np));
  std::vector<std::size_t> parts(static_cast<std::size_t>(np));
  int64_t sends = 0;
  Span whole;
  for (int r = 0; r < np; ++r) {
    std::size_t k = std::size_t(displs[std::size_t(r)]);
    const int64_t* h = &all[k];
    rep.messages += uint64_t(h[0]);
    rep.unmatched_recvs += uint64_t(h[1]);
    sends += h[2];
    rep.collectives += uint64_t(h[3]);
    rep.incomplete_collectives += uint64_t(h[4]);
    in.dropped += uint64_t(h[5]);
    g.uncaused += uint64_t(h[6]);
    whole.lo = std::min(whole.lo, h[7]);
    whole.hi = std::max(whole.hi, h[8]);
    whole.events += uint64_t(h[9]);
    k += 10;
    for (std::size_t n_c = std::size_t(all[k++]); n_c-- > 0; k += 3) {
      Event ev;
      ev.op = OpId(all[k]);
      ev.site = SiteId(all[k + 1]);
      global[std::size_t(r)].push_back(g.callpath(ev, all[k + 2] != 0));
    }
    parts[std::size_t(r)] = k;
  }
  rep.unmatched_sends = uint64_t(sends) - rep.messages;
  for (int r = 0; r < np; ++r) {
    std::size_t k = parts[std::size_t(r)];
    const auto& cp = global[std::size_t(r)];
    for (std::size_t n_v = std::size_t(all[k++]); n_v-- > 0; k += 4)
      g.ns[{int32_t(all[k]), cp[std::size_t(all[k + 1])], int32_t(all[k + 2])}] += all[k + 3];
    for (auto* cells : {&g.critical_ns, &g.delay_ns, &g.propagated_ns})
      for (std::size_t n_v = std::size_t(all[k++]); n_v-- > 0; k += 3)
        (*cells)[{cp[std::size_t(all[k])], int32_t(all[k + 1])}] += all[k + 2];
  }
  finish(g, whole);
  note_clock_repair(rep, violations);
  return rep;
}

}  // namespace tracefold::waits_parallel::detail
