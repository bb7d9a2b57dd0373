// Communication diagnoses (seed 002, Table 2) from the exact call times:
// frequent communication (significant time in calls shorter than a few
// sampling periods each: the exact counts, not sample counts), wait for a
// late partner (the waits module's Late Sender / Late Receiver instances,
// which name the partner), large message transfers and I/O (bytes from the
// trace), and long communication that is neither.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "internal.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::diagnose_detail {

namespace {

std::string micros(double s) {
  std::ostringstream o;
  o.precision(s < 1e-3 ? 3 : 4);
  o << s * 1e6 << " us";
  return o.str();
}

// What places a call path's diagnosis in the loops: each iteration's
// share of what the diagnosis is about.
enum class Measure { kCalls, kBytes, kTime };
std::vector<Context::IterationLoss> call_losses(const Context& c, const CallPathSums& a,
                                                Measure m) {
  std::vector<Context::IterationLoss> out;
  out.reserve(a.iterations.size());
  for (const IterationSums& s : a.iterations) {
    double v = c.seconds(s.transfer_ns);
    if (m == Measure::kCalls) v = double(s.calls);
    if (m == Measure::kBytes) v = double(s.bytes);
    out.push_back({s.loop, s.entry, s.iteration, v});
  }
  return out;
}

// Read from the reductions of the ranks' events (reduction.hpp): the
// call-path sums are all this rule needs of the events.
void calls(Context& c) {
  const double bar = c.opt.significant * c.rep.run_seconds;
  for (const CallPathSums& a : c.reduced.calls) {
    if (a.count == 0) continue;
    const std::pair<OpId, SiteId> key{a.op, a.site};
    Event ev;
    ev.op = a.op;
    ev.site = a.site;
    // Waiting in a call is the imbalance's or the late partner's; what is
    // left is the communication itself.
    const double transfer = c.seconds(a.ns - a.waited) / double(c.size);
    if (transfer < bar) continue;
    const double mean = c.seconds(a.ns - a.waited) / double(a.count);
    const double per_rank_calls = double(a.count) / double(c.size);
    Diagnosis d = c.at_call(DiagnosisKind::kLongCommunication, transfer, ev);
    std::ostringstream o;
    // Frequent: many calls, each short; waiting in them of the order of the
    // call itself is the jitter of so many synchronisations and would go
    // with them, so it counts (much more waiting is an imbalance's).
    if (per_rank_calls >= double(c.opt.frequent_calls) &&
        mean < c.opt.frequent_periods * c.seconds(c.period_ns) &&
        a.waited <= 2 * (a.ns - a.waited)) {
      d.kind = DiagnosisKind::kFrequentCommunication;
      d.seconds = c.seconds(a.ns) / double(c.size);
      c.frequent.insert(key);
      o << per_rank_calls << " calls per rank, " << micros(mean)
        << " each on average without waiting (below " << c.opt.frequent_periods
        << " sampling periods of " << micros(c.seconds(c.period_ns)) << "), "
        << micros(c.seconds(a.waited) / double(a.count)) << " waiting";
      // The cause is the loop around the call: its caller.
      CodePlace loop;
      loop.label = d.symptom.stack.size() >= 1 ? "the loop in " + d.symptom.stack.back()
                                               : "the loop around the call";
      loop.stack = d.symptom.stack;
      loop.seconds = d.seconds;
      d.causes.push_back(std::move(loop));
    } else {
      const double per_call = double(a.bytes) / double(a.count);
      if (per_call >= double(c.opt.large_bytes))
        d.kind = is_io(key.first) ? DiagnosisKind::kLargeIo : DiagnosisKind::kLargeTransfer;
      o << a.count << " calls, " << static_cast<uint64_t>(std::llround(per_call))
        << " bytes each on average, " << micros(c.seconds(a.ns) / double(a.count))
        << " each, of which " << micros(c.seconds(a.waited) / double(a.count)) << " waiting";
    }
    d.symptom.seconds = d.seconds;
    // The iterations it is in: frequent communication where the calls are
    // made (its time is mostly the few calls a loaded machine stalled), a
    // large transfer where the bytes go, long communication where its time
    // without waiting is.
    const bool frequent = d.kind == DiagnosisKind::kFrequentCommunication;
    const Measure m = frequent                                      ? Measure::kCalls
                      : d.kind == DiagnosisKind::kLongCommunication ? Measure::kTime
                                                                    : Measure::kBytes;
    d.symptom.where = c.iterations_summed(call_losses(c, a, m), a.ranks, 0);
    if (frequent) d.causes.back().where = d.symptom.where;
    d.detail = o.str();
    c.rep.diagnoses.push_back(std::move(d));
  }
}

void partners(Context& c) {
  struct Agg {
    int64_t ns = 0;
    uint64_t count = 0;
    std::map<int32_t, int64_t> late, waiter;
    const Event *wev = nullptr, *lev = nullptr;
    Places places;
    std::map<int32_t, int64_t> late_work;
    /// The waiting, at the waiters' calls and at the late partners'.
    std::vector<Context::LossAt> waiting, lateness;
  };
  std::map<std::tuple<OpId, SiteId, OpId, SiteId>, Agg> aggs;
  for (const WaitInstance& w : c.waits.instances) {
    if (w.pattern != WaitPattern::kLateSender && w.pattern != WaitPattern::kLateReceiver) continue;
    const TimedEvent& we = c.events(w.waiter)[w.event];
    const TimedEvent& le = c.events(w.late)[w.late_event];
    Agg& a = aggs[{we.ev.op, we.ev.site, le.ev.op, le.ev.site}];
    const int64_t ns = std::llround(w.seconds * 1e9);
    a.ns += ns;
    ++a.count;
    a.late[w.late] += ns;
    a.waiter[w.waiter] += ns;
    a.wev = &we.ev, a.lev = &le.ev;
    a.waiting.push_back({w.waiter, std::size_t(w.event), w.seconds});
    a.lateness.push_back({w.late, std::size_t(w.late_event), w.seconds});
    // What the late partner did instead: its computation before the call.
    const int64_t from = std::max(le.compute_start_ns, c.run_start);
    a.late_work[w.late] += std::max<int64_t>(le.start_ns - from, 0);
    add_computation(c, w.late, from, le.start_ns, std::size_t(w.late_event), a.places);
  }
  for (auto& [key, a] : aggs) {
    Diagnosis d =
        c.at_call(DiagnosisKind::kWaitForPartner, c.seconds(a.ns) / double(c.size), *a.wev);
    auto top = [](const std::map<int32_t, int64_t>& m) {
      return std::max_element(m.begin(), m.end(),
                              [](const auto& x, const auto& y) { return x.second < y.second; })
          ->first;
    };
    const int32_t late = top(a.late), waiter = top(a.waiter);
    d.symptom.rank = waiter;
    d.symptom.where = c.iterations_where(a.waiting, 0);
    CodePlace partner;
    partner.label = "rank " + std::to_string(late) + " late in " + c.call_label(*a.lev);
    partner.stack = c.call_stack(*a.lev);
    partner.seconds = c.seconds(a.late[late]);
    partner.rank = late;
    partner.key = c.call_label(*a.lev);
    partner.where = c.iterations_where(a.lateness, 0);
    d.causes.push_back(std::move(partner));
    for (CodePlace& cp : dominant_places(c, a.places, late, a.late_work[late])) {
      if (d.causes.size() >= c.opt.top) break;
      cp.label += " on rank " + std::to_string(late) + " before it";
      d.causes.push_back(std::move(cp));
    }
    std::ostringstream o;
    o << a.count << " wait state" << (a.count == 1 ? "" : "s") << "; most waiting on rank "
      << waiter << ", most often late: rank " << late << " (" << c.seconds(a.late[late]) << " s of "
      << c.seconds(a.ns) << " s)";
    d.detail = o.str();
    c.rep.diagnoses.push_back(std::move(d));
  }
}

}  // namespace

void diagnose_communication(Context& c) {
  calls(c);
  partners(c);
}

}  // namespace tracefold::diagnose_detail
