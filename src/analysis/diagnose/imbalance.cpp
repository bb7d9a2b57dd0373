// Load imbalance (seed 002, 5.3): at a phase's closing synchronisation S,
// imb_symptom(S) = avg(S) - min(S) of the ranks' time in S before the last
// rank entered it (the seed's samples could not tell); a code place C
// of the phase is a cause when imb_cause(C) = max(C) - avg(C) is at least
// a tenth of the symptom (and above one sampling period, the noise floor).
// Serialisation is the sub-case where all ranks but one wait for as long as
// that one computes, and compute little themselves; MPMD phases report
// their rank groups.
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "internal.hpp"
#include "tracefold/export.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::diagnose_detail {

namespace {

double noise_floor(const Context& c) {
  return !c.have_samples ? 0 : c.seconds(c.period_ns * c.max_sample_periods);
}

// A rank of a serialised call waits at least this share of what the one
// rank computes, and computes at most the rest itself. The second half
// matters on a loaded machine: a rank descheduled on its way out of the
// previous call enters the next one late, so that imbalanced ranks, which
// did work of their own, wait as long as in a serialisation.
constexpr double kSerialWait = 0.8;

bool computed_little(int64_t work, int64_t late_work) {
  return double(work) <= (1 - kSerialWait) * double(late_work);
}

// `rank`'s computation before its events (prev, last].
int64_t work_between(const Context& c, int32_t rank, std::size_t prev, std::size_t last) {
  const auto& evs = c.events(rank);
  int64_t ns = 0;
  for (std::size_t k = prev + 1; k <= last; ++k)
    ns += evs[k].start_ns - std::max(evs[k].compute_start_ns, c.run_start);
  return ns;
}

}  // namespace

void diagnose_imbalance(Context& c) {
  const int32_t P = c.size;
  std::vector<int32_t> all(static_cast<std::size_t>(P));
  for (int32_t r = 0; r < P; ++r) all[std::size_t(r)] = r;
  for (std::size_t p = 0; p + 1 < c.rep.phases.size(); ++p) {
    const Phase& ph = c.rep.phases[p];
    if (c.frequent.count(c.phase_key[p])) continue;
    int64_t symptom = 0;
    std::vector<std::pair<std::size_t, double>> per_instance;
    std::size_t serial = 0;
    Imbalances imb;
    Places whole;  // the phase's computation over all its instances
    for (std::size_t i : c.phase_syncs[p]) {
      const SyncInstance& s = c.syncs[i];
      // The ranks' time in the call up to the last one's entry: the rest of
      // it, the collective's own work, is the same on every rank of an idle
      // machine, but a loaded one stretches it unevenly (a rank descheduled
      // in it leaves it late), which balancing the work would not save.
      int64_t last_in = INT64_MIN;
      for (int32_t r = 0; r < P; ++r)
        last_in = std::max(last_in, c.events(r)[s.ev[std::size_t(r)]].start_ns);
      std::vector<int64_t> in(static_cast<std::size_t>(P));
      Places places;
      for (int32_t r = 0; r < P; ++r) {
        const TimedEvent& te = c.events(r)[s.ev[std::size_t(r)]];
        in[std::size_t(r)] = std::clamp<int64_t>(last_in - te.start_ns, 0, te.end_ns - te.start_ns);
        const std::size_t prev = i == 0 ? 0 : c.syncs[i - 1].ev[std::size_t(r)];
        add_gaps(c, r, prev, s.ev[std::size_t(r)], places);
      }
      int64_t sum = 0;
      for (int64_t v : in) sum += v;
      const auto mn = std::min_element(in.begin(), in.end());
      symptom += sum / P - *mn;
      per_instance.emplace_back(i, c.seconds(sum / P - *mn));
      accumulate_imbalance(c, places, all, imb, i);
      for (const auto& [key, pl] : places) {
        auto [it, fresh] = whole.try_emplace(key, pl);
        if (!fresh)
          for (std::size_t r = 0; r < pl.ns.size(); ++r) it->second.ns[r] += pl.ns[r];
      }
      // All but the last-arriving rank waited about as long as it worked,
      // and did little work of their own.
      const int32_t late = int32_t(mn - in.begin());
      auto work_of = [&](int32_t r) {
        return work_between(c, r, i == 0 ? 0 : c.syncs[i - 1].ev[std::size_t(r)],
                            s.ev[std::size_t(r)]);
      };
      const int64_t late_work = work_of(late);
      bool all_wait = P > 1 && late_work > 0;
      for (int32_t r = 0; r < P && all_wait; ++r)
        if (r != late && (double(in[std::size_t(r)]) < kSerialWait * double(late_work) ||
                          !computed_little(work_of(r), late_work)))
          all_wait = false;
      if (all_wait) ++serial;
    }
    const double sym_s = c.seconds(symptom);
    if (sym_s <= 0) continue;
    Diagnosis d;
    d.kind = DiagnosisKind::kLoadImbalance;
    if (2 * serial > c.phase_syncs[p].size()) d.kind = DiagnosisKind::kSerialisation;
    if (ph.groups.size() > 1) d.kind = DiagnosisKind::kMpmdImbalance;
    d.phase = int32_t(p);
    d.seconds = sym_s;  // avg - min: already time per rank
    d.symptom.label = ph.closing;
    const TimedEvent& first = c.events(0)[c.syncs[c.phase_syncs[p].front()].ev[0]];
    d.symptom.stack = c.call_stack(first.ev);
    d.symptom.seconds = sym_s;
    const double floor = std::max(c.opt.cause_share * sym_s, noise_floor(c));
    d.symptom.where = c.iterations_of(per_instance, 0);
    if (d.kind != DiagnosisKind::kMpmdImbalance) {
      d.causes = imbalance_causes(c, imb, floor);
      for (CodePlace& cp : d.causes)
        if (auto m = imb.find(cp.key); m != imb.end())
          cp.where = c.iterations_of(m->second.by_instance, noise_floor(c));
    }
    double explained = 0;
    for (const CodePlace& cp : d.causes) explained += cp.seconds;
    std::ostringstream o;
    o << "avg - min of the ranks' time in the closing call before the last one entered, over "
      << ph.instances << " phase instance" << (ph.instances == 1 ? "" : "s");
    if (d.kind == DiagnosisKind::kSerialisation)
      o << "; in " << serial << " of them all ranks but one waited as long as it computed";
    if (d.causes.size() > 1 && explained > 1.2 * sym_s)
      o << "; partially evened out: the causes' imbalances add up to " << explained
        << " s against a symptom of " << sym_s << " s";
    if (d.kind == DiagnosisKind::kMpmdImbalance) {
      o << "; rank groups by their calls:";
      for (std::size_t g = 0; g < ph.groups.size(); ++g) {
        o << (g ? " |" : "") << " ranks " << human_ranks(ph.groups[g]);
        // What each group spends its computation on, seen on its first rank.
        const int32_t first = ph.groups[g].front();
        int64_t total = 0;
        for (std::size_t i : c.phase_syncs[p])
          total += work_between(c, first, i == 0 ? 0 : c.syncs[i - 1].ev[std::size_t(first)],
                                c.syncs[i].ev[std::size_t(first)]);
        for (CodePlace cp : dominant_places(c, whole, first, total)) {
          cp.label += " (the work of ranks " + human_ranks(ph.groups[g]) + ")";
          d.causes.push_back(std::move(cp));
          break;
        }
      }
    }
    if (d.causes.empty())
      o << "; no single place explains a tenth of it" +
               std::string(!c.have_samples ? " (record with --sample to see inside "
                                             "the computation)"
                                           : "");
    d.detail = o.str();
    c.rep.diagnoses.push_back(std::move(d));
  }
}

void diagnose_serialisation(Context& c) {
  // Closing synchronisations are the imbalance diagnosis's.
  std::set<std::pair<int32_t, std::size_t>> closing;
  for (const SyncInstance& s : c.syncs)
    for (int32_t r = 0; r < c.size; ++r) closing.insert({r, s.ev[std::size_t(r)]});
  struct Inst {
    std::vector<int64_t> waits;
    int64_t most_work = 0;  ///< the most any waiter computed before its call
  };
  std::map<std::pair<int32_t, uint64_t>, Inst> insts;
  for (const WaitInstance& w : c.waits.instances) {
    switch (w.pattern) {
      case WaitPattern::kLateBroadcast:
      case WaitPattern::kEarlyReduce:
      case WaitPattern::kWaitNxN:
      case WaitPattern::kWaitBarrier:
      case WaitPattern::kEarlyScan:
        break;
      default:
        continue;
    }
    if (closing.count({w.late, std::size_t(w.late_event)})) continue;
    Inst& inst = insts[{w.late, w.late_event}];
    inst.waits.push_back(std::llround(w.seconds * 1e9));
    const TimedEvent& we = c.events(w.waiter)[w.event];
    inst.most_work =
        std::max(inst.most_work, we.start_ns - std::max(we.compute_start_ns, c.run_start));
  }
  struct Agg {
    int64_t waited = 0;
    uint64_t count = 0, serial = 0;
    Places places;
    int64_t work = 0;
    const Event* ev = nullptr;
  };
  std::map<std::tuple<OpId, SiteId, int32_t>, Agg> aggs;
  for (const auto& [key, inst] : insts) {
    const auto [late, lev] = key;
    const TimedEvent& te = c.events(late)[lev];
    int64_t comm = field_by_literal(te.ev, "comm");
    if (comm == kAbsent) comm = CommTable::kWorld;
    const CommGroup* g = c.trace.comms.group_of(comm, late);
    if (!g || inst.waits.size() + 1 != g->members.size() || inst.waits.empty()) continue;
    const int64_t work = te.start_ns - std::max(te.compute_start_ns, c.run_start);
    if (work <= 0) continue;
    // A loaded machine now and then deschedules a waiting rank, which then
    // enters late and waits less than the late rank computed. As for a
    // phase (above), the call is serialised when most of its instances
    // are, and the waiting of all of them counts.
    const int64_t least = *std::min_element(inst.waits.begin(), inst.waits.end());
    Agg& a = aggs[{te.ev.op, te.ev.site, late}];
    if (double(least) >= kSerialWait * double(work) && computed_little(inst.most_work, work))
      ++a.serial;
    for (int64_t w : inst.waits) a.waited += w;
    ++a.count;
    a.work += work;
    a.ev = &te.ev;
    add_computation(c, late, std::max(te.compute_start_ns, c.run_start), te.start_ns, lev,
                    a.places);
  }
  for (auto& [key, a] : aggs) {
    if (2 * a.serial <= a.count) continue;
    Diagnosis d =
        c.at_call(DiagnosisKind::kSerialisation, c.seconds(a.waited) / double(c.size), *a.ev);
    d.symptom.rank = std::get<2>(key);
    d.causes = dominant_places(c, a.places, std::get<2>(key), a.work);
    std::ostringstream o;
    o << "in " << a.serial << " of " << a.count << " instance" << (a.count == 1 ? "" : "s")
      << " all other ranks waited for rank " << std::get<2>(key) << " as long as it computed ("
      << c.seconds(a.work) << " s in all of them)";
    d.detail = o.str();
    c.rep.diagnoses.push_back(std::move(d));
  }
}

}  // namespace tracefold::diagnose_detail
