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

// Waiting per event from the wait states, bytes per event (a completion
// gets its requests' bytes: that is where a nonblocking transfer ends).
void per_event(Context& c) {
  c.waited.resize(std::size_t(c.size));
  c.bytes.resize(std::size_t(c.size));
  for (int32_t r = 0; r < c.size; ++r) {
    const auto& evs = c.events(r);
    c.waited[std::size_t(r)].assign(evs.size(), 0);
    auto& bytes = c.bytes[std::size_t(r)];
    bytes.assign(evs.size(), 0);
    std::vector<Event> plain;
    plain.reserve(evs.size());
    for (const TimedEvent& te : evs) plain.push_back(te.ev);
    const RequestCompletions done = find_completions(plain);
    for (std::size_t k = 0; k < evs.size(); ++k) {
      const uint64_t b = send_bytes(evs[k].ev);
      bytes[k] += b;
      if (done.done[k] != RequestCompletions::npos && done.done[k] != k) bytes[done.done[k]] += b;
    }
  }
  for (const WaitInstance& w : c.waits.instances) {
    auto& row = c.waited[std::size_t(w.waiter)];
    if (w.event < row.size()) row[w.event] += std::llround(w.seconds * 1e9);
  }
}

void run_span(Context& c) {
  std::tie(c.run_start, c.run_end) = run_bounds(c.in.events);
  c.rep.run_seconds = c.seconds(c.run_end - c.run_start);
}

// Per rank: the main thread's computation samples in time order, and each
// sample context's place key (its user frames' names, outermost first).
void index_samples(Context& c) {
  if (c.in.samples.empty()) return;
  c.samples_end.assign(std::size_t(c.size), INT64_MAX);
  c.comp_samples.resize(std::size_t(c.size));
  c.context_key.resize(std::size_t(c.size));
  c.context_path.resize(std::size_t(c.size));
  std::vector<int32_t> cut;
  int64_t first_end = INT64_MAX;
  for (int32_t r = 0; r < c.size; ++r) {
    const RankSamples& rs = c.in.samples[std::size_t(r)];
    auto& idx = c.comp_samples[std::size_t(r)];
    for (uint32_t i = 0; i < rs.samples.size(); ++i)
      if (rs.samples[i].thread == 0 && !rs.samples[i].in_mpi) {
        idx.push_back(i);
        c.max_sample_periods = std::max(c.max_sample_periods, c.sample_periods(r, rs.samples[i]));
      }
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
      return rs.samples[a].time_ns < rs.samples[b].time_ns;
    });
    // Samples that stop while the rank still computes (the file's size
    // bound, a rank that died) would leave that computation without a
    // place. Samples dropped while later ones were kept (the loader busy, a
    // ring full) are gaps, not an end, and so is a last wait with no
    // samples (processor-time samples of a blocked rank).
    if (c.sampled(r) && (!rs.has_trailer || rs.dropped > 0)) {
      int64_t last = INT64_MIN, periods = 1;
      for (const Sample& smp : rs.samples)
        if (smp.time_ns > last) last = smp.time_ns, periods = c.sample_periods(r, smp);
      const int64_t end = last == INT64_MIN ? INT64_MIN : last + c.period_ns * periods;
      bool computes = false;
      const auto& evs = c.events(r);
      for (auto k = evs.size(); k-- > 0 && !computes && evs[k].start_ns > end;)
        computes = evs[k].start_ns - std::max(evs[k].compute_start_ns, end) >= c.period_ns;
      if (computes) {
        c.samples_end[std::size_t(r)] = end;
        // A file without a trailer has its note from the reader already.
        if (rs.has_trailer) {
          cut.push_back(r);
          first_end = std::min(first_end, last);
        }
      }
    }
    const std::vector<std::string>* names =
        std::size_t(r) < c.in.context_names.size() && !c.in.context_names[std::size_t(r)].empty()
            ? &c.in.context_names[std::size_t(r)]
            : nullptr;
    auto name = [&](uint32_t ctx) -> std::string {
      if (names) return ctx < names->size() ? (*names)[ctx] : "";
      const SampleContext& sc = rs.contexts[ctx];
      std::ostringstream o;
      o << (sc.module < rs.modules.size() ? rs.modules[sc.module].name : "?") << "+0x" << std::hex
        << sc.offset;
      return o.str();
    };
    auto& keys = c.context_key[std::size_t(r)];
    keys.assign(rs.contexts.size(), "");
    auto& paths = c.context_path[std::size_t(r)];
    paths.assign(rs.contexts.size(), {});
    for (uint32_t ctx = 1; ctx < rs.contexts.size(); ++ctx) {
      std::vector<std::string> path;
      // A tree read from a file is checked to have parents before children;
      // the bound guards against a cycle all the same.
      for (uint32_t at = ctx, n = 0; at != 0 && at < rs.contexts.size() && n < 4096;
           at = rs.contexts[at].parent, ++n) {
        std::string nm = name(at);
        if (!nm.empty()) path.push_back(std::move(nm));
      }
      std::reverse(path.begin(), path.end());
      std::string key;
      for (const std::string& f : path) key += (key.empty() ? "" : " > ") + f;
      keys[ctx] = std::move(key);
      paths[ctx] = std::move(path);
    }
  }
  if (!cut.empty()) {
    std::ostringstream o;
    o << "samples of " << (cut.size() == 1 ? "rank " : "ranks ") << human_ranks(cut)
      << " end before their computation does, the first " << std::fixed << std::setprecision(3)
      << c.seconds(std::max(first_end, c.run_start) - c.run_start)
      << " s into the run (the samples file reached its size bound, raise it with "
         "--timeline-max; or a thread computed for over 4,096 periods without an MPI call): "
         "the computation after is named by MPI call site";
    c.rep.notes.push_back(o.str());
  }
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

DiagnoseReport diagnose(const Trace& trace, const DiagnoseInput& input,
                        const DiagnoseOptions& options) {
  DiagnoseReport rep;
  rep.world_size = trace.world_size;
  if (static_cast<int32_t>(input.events.ranks.size()) != trace.world_size)
    throw DiagnoseError("timeline of " + std::to_string(input.events.ranks.size()) +
                        " ranks, the trace has " + std::to_string(trace.world_size));
  if (!input.samples.empty() && static_cast<int32_t>(input.samples.size()) != trace.world_size)
    throw DiagnoseError("samples of " + std::to_string(input.samples.size()) +
                        " ranks, the trace has " + std::to_string(trace.world_size));
  Context c(trace, input, options, rep);
  c.size = trace.world_size;
  for (const RankSamples& s : input.samples) {
    rep.samples += s.samples.size();
    if (s.period_ns > 0) rep.period_ns = s.period_ns;
  }
  // Without samples, "frequent" still needs a time scale: the default period.
  c.period_ns = rep.period_ns > 0 ? rep.period_ns : 5000000;
  WaitOptions wo;
  wo.keep_instances = true;
  c.waits = analyze_waits(trace, input.events, wo);
  for (const std::string& n : c.waits.notes) rep.notes.push_back(n);
  per_event(c);
  run_span(c);
  index_samples(c);
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
  return rep;
}

}  // namespace tracefold
