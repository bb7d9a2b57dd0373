// The diagnosis's driver: per-event waiting and bytes, the semantic labels,
// then phases and the diagnoses (seed 002, Sections 4-5).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "internal.hpp"
#include "tracefold/export.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold {

using namespace diagnose_detail;

namespace diagnose_detail {

std::string Context::call_label(const Event& ev) const {
  const std::string where =
      ev.site < trace.sites.size() ? site_label(trace.symtab, trace.sites.at(ev.site)) : "?";
  return OpTable::name(ev.op) + " at " + where;
}

std::vector<std::string> Context::call_stack(const Event& ev) const {
  if (ev.site >= trace.sites.size()) return {};
  std::vector<std::string> s = site_path(trace.symtab, trace.sites.at(ev.site));
  std::reverse(s.begin(), s.end());
  return s;
}

std::string function_names(const SourceFrames& frames) {
  std::string out;
  for (auto f = frames.rbegin(); f != frames.rend(); ++f)
    if (!f->function.empty()) out += (out.empty() ? "" : " > ") + f->function;
  return out;
}

bool is_environment(OpId op) {
  const OpFamily f = op_traits(op).family;
  return f == OpFamily::kInit || f == OpFamily::kFinalize;
}

bool is_io(OpId op) {
  const OpFamily f = op_traits(op).family;
  return f == OpFamily::kFile || f == OpFamily::kFileRead || f == OpFamily::kFileWrite;
}

void event_labels(const Context& c, int32_t r, std::size_t k,
                  int64_t out[static_cast<int>(TimeLabel::kCount)]) {
  const TimedEvent& te = c.events(r)[k];
  auto add = [&](TimeLabel l, int64_t ns) { out[static_cast<int>(l)] += std::max<int64_t>(ns, 0); };
  if (k > 0 || !is_environment(te.ev.op))
    add(TimeLabel::kComputation, te.start_ns - te.compute_start_ns);
  if (is_environment(te.ev.op)) return;
  const int64_t len = te.end_ns - te.start_ns;
  if (op_traits(te.ev.op).collective()) {
    add(TimeLabel::kCollectiveSync, len);
    return;
  }
  const int64_t w = std::min(len, c.waited[std::size_t(r)][k]);
  add(TimeLabel::kWait, w);
  add(TimeLabel::kTransfer, len - w);
}

// MPI_Init and MPI_Finalize can take long and are nobody's loss.
std::pair<int64_t, int64_t> run_bounds(const WaitInput& in) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& evs : in.ranks) {
    if (evs.empty()) continue;
    const TimedEvent& first = evs.front();
    lo = std::min(lo, is_environment(first.ev.op) ? first.end_ns : first.start_ns);
    const TimedEvent& last = evs.back();
    hi = std::max(hi, is_environment(last.ev.op) ? last.start_ns : last.end_ns);
  }
  if (lo > hi) lo = hi = 0;
  return {lo, hi};
}

namespace {

// The note naming the ranks whose samples end before their computation does.
void note_cut_samples(Context& c) {
  std::vector<int32_t> cut;
  int64_t first_end = INT64_MAX;
  for (std::size_t r = 0; r < c.digests.size(); ++r)
    if (c.digests[r].cut) {
      cut.push_back(int32_t(r));
      first_end = std::min(first_end, c.digests[r].cut_last);
    }
  if (cut.empty()) return;
  std::ostringstream o;
  o << "samples of " << (cut.size() == 1 ? "rank " : "ranks ") << human_ranks(cut)
    << " end before their computation does, the first " << std::fixed << std::setprecision(3)
    << c.seconds(std::max(first_end, c.run_start) - c.run_start)
    << " s into the run (the samples file reached its size bound, raise it with "
       "--timeline-max; or a thread computed for over 4,096 periods without an MPI call): "
       "the computation after is named by MPI call site";
  c.rep.notes.push_back(o.str());
}

// The per-phase summary (seed 002's inefficiency ratio per diagnosis):
// after the diagnoses are sorted, so each line lists them most severe first.
void summarise(DiagnoseReport& rep) {
  const double run = rep.run_seconds > 0 ? rep.run_seconds : 1;
  const double ranks = rep.world_size > 0 ? double(rep.world_size) : 1;
  rep.summary.clear();
  for (std::size_t p = 0; p < rep.phases.size(); ++p) {
    PhaseSummary s;
    s.phase = static_cast<int32_t>(p);
    for (double v : rep.phases[p].labels) s.seconds += v;
    s.seconds /= ranks;
    s.share = s.seconds / run;
    rep.summary.push_back(std::move(s));
  }
  PhaseSummary whole;
  for (std::size_t i = 0; i < rep.diagnoses.size(); ++i) {
    const int32_t p = rep.diagnoses[i].phase;
    PhaseSummary& s =
        p >= 0 && std::size_t(p) < rep.summary.size() ? rep.summary[std::size_t(p)] : whole;
    s.diagnoses.push_back(i);
    s.could_save += rep.diagnoses[i].seconds / run;
  }
  for (PhaseSummary& s : rep.summary) s.could_save = std::min(s.could_save, s.share);
  if (!whole.diagnoses.empty()) {
    whole.could_save = std::min(whole.could_save, 1.0);
    rep.summary.push_back(std::move(whole));
  }
}

void labels(Context& c) {
  int64_t ns[static_cast<int>(TimeLabel::kCount)] = {};
  for (int32_t r = 0; r < c.size; ++r)
    for (std::size_t k = 0; k < c.events(r).size(); ++k) event_labels(c, r, k, ns);
  for (int l = 0; l < static_cast<int>(TimeLabel::kCount); ++l) c.rep.labels[l] = c.seconds(ns[l]);
}

}  // namespace
}  // namespace diagnose_detail

namespace diagnose_detail {

DiagnoseReport diagnose_digests(const Trace& trace, const DiagnoseInput& input, EventFacts&& facts,
                                Reduction&& reduced, std::vector<RankDigest>&& digests,
                                bool have_samples, const DiagnoseOptions& options) {
  if (trace.world_size > 0 && (reduced.first != 0 || reduced.last != trace.world_size))
    throw DiagnoseError("diagnose: the reduced events are of ranks " +
                        std::to_string(reduced.first) + "-" + std::to_string(reduced.last - 1) +
                        ", the trace has " + std::to_string(trace.world_size));
  DiagnoseReport rep;
  rep.world_size = trace.world_size;
  Context c(trace, input, options, rep);
  c.size = trace.world_size;
  c.have_samples = have_samples;
  c.digests = std::move(digests);
  std::vector<int64_t> periods;
  for (const RankDigest& d : c.digests) {
    rep.samples += d.samples;
    periods.push_back(d.period_ns);
    c.max_sample_periods = std::max(c.max_sample_periods, d.max_periods);
  }
  rep.period_ns = run_period(periods);
  c.period_ns = digest_params(facts, rep.period_ns).period_ns;
  c.waits = std::move(facts.waits);
  c.waited = std::move(facts.waited);
  c.bytes = std::move(facts.bytes);
  c.run_start = facts.run_start;
  c.run_end = facts.run_end;
  c.loops = std::move(facts.loops);
  c.reduced = std::move(reduced);
  for (const std::string& n : c.waits.notes) rep.notes.push_back(n);
  rep.run_seconds = c.seconds(c.run_end - c.run_start);
  note_cut_samples(c);
  labels(c);
  find_phases(c);
  diagnose_communication(c);  // first: it tells which closing calls are frequent
  diagnose_imbalance(c);
  diagnose_serialisation(c);
  const double run = rep.run_seconds > 0 ? rep.run_seconds : 1;
  for (Diagnosis& d : rep.diagnoses) d.percent = d.seconds / run * 100;
  std::erase_if(rep.diagnoses,
                [&](const Diagnosis& d) { return d.seconds < options.significant * run; });
  std::stable_sort(rep.diagnoses.begin(), rep.diagnoses.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return a.seconds > b.seconds; });
  summarise(rep);
  derive_labels(c);
  draw_picture(c);
  name_trees(c);
  return rep;
}

}  // namespace diagnose_detail

// The serial diagnosis is the parallel one with a single analysis rank:
// the same facts of the events, the same digest of every rank's samples.
DiagnoseReport diagnose(const Trace& trace, const DiagnoseInput& input,
                        const DiagnoseOptions& options) {
  if (static_cast<int32_t>(input.events.ranks.size()) != trace.world_size)
    throw DiagnoseError("timeline of " + std::to_string(input.events.ranks.size()) +
                        " ranks, the trace has " + std::to_string(trace.world_size));
  if (!input.samples.empty() && static_cast<int32_t>(input.samples.size()) != trace.world_size)
    throw DiagnoseError("samples of " + std::to_string(input.samples.size()) +
                        " ranks, the trace has " + std::to_string(trace.world_size));
  EventFacts facts = event_facts(trace, input.events, input.matched ? &*input.matched : nullptr);
  std::vector<int64_t> periods;
  for (const RankSamples& s : input.samples) periods.push_back(s.period_ns);
  const DigestParams p = digest_params(facts, run_period(periods));
  std::vector<RankDigest> digests;
  Reduction reduced;
  for (int32_t r = 0; r < trace.world_size; ++r) {
    const std::vector<EventSpan> spans = event_spans(input.events, facts, r);
    merge(reduced, reduce_rank(r, spans));
    if (input.samples.empty()) continue;
    digests.push_back(digest_rank(input.samples[std::size_t(r)],
                                  std::size_t(r) < input.context_names.size()
                                      ? input.context_names[std::size_t(r)]
                                      : std::vector<std::string>{},
                                  spans, p));
  }
  return diagnose_digests(trace, input, std::move(facts), std::move(reduced), std::move(digests),
                          !input.samples.empty(), options);
}

}  // namespace tracefold
