// Reading a recording for the diagnosis: the timeline's events on rank 0's
// clock (the waits module's reader, clock condition repaired as `analyze`
// does), and the samples beside them (samples.hpp), put on the same clock
// and named with the symbolizer.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "internal.hpp"
#include "tracefold/event_log.hpp"
#include "tracefold/export.hpp"
#include "tracefold/symbolize.hpp"
#include "tracefold/timeline_io.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::diagnose_detail {

namespace fs = std::filesystem;

namespace {

// The frame of context `i` of `rs` as the symbolizer is asked about it;
// false for the root and for frames of system libraries (they get no name).
bool frame_of(const RankSamples& rs, const SymbolTables& tables, std::size_t i, FrameQuery& q) {
  const SampleContext& c = rs.contexts[i];
  if (c.module >= rs.modules.size()) return false;
  const Module& m = rs.modules[c.module];
  // tracefold's own recorder library is a system library here wherever it
  // was loaded from (system_module knows its installed path only): a run
  // recorded from a build directory would otherwise name its frames as
  // causes, and reading its debug information was most of the naming time.
  if (system_module(tables, Frame{m.name, c.offset}) || m.name.rfind("libtracefold", 0) == 0)
    return false;
  q.key = {m.path.empty() ? m.name : m.path, c.offset};
  q.module = m;
  return true;
}

SymbolTables module_tables(const RankSamples& rs) {
  SymbolTables tables;
  for (const Module& m : rs.modules) tables.modules.emplace(m.name, m);
  return tables;
}

// Which event logs end before their timelines, why, and what is analysed.
std::string cut_note(const WaitInput& in, const UnfoldedRun& run) {
  std::vector<int32_t> bound, died, early;
  std::ostringstream counts;
  uint64_t after = 0, kept = 0;
  std::size_t listed = 0;
  for (std::size_t r = 0; r < in.unlogged.size(); ++r) {
    after += in.after_cut[r];
    kept += in.ranks[r].size();
    const uint64_t left = in.unlogged[r];
    if (!left) continue;
    const bool dead = std::find(run.cut.begin(), run.cut.end(), int32_t(r)) != run.cut.end();
    (r < run.dropped.size() && run.dropped[r] ? bound : dead ? died : early).push_back(int32_t(r));
    // A few ranks' counts say how much was lost; a thousand would bury the rest.
    if (++listed > 8) continue;
    const uint64_t calls = in.ranks[r].size() + in.after_cut[r];
    counts << (listed > 1 ? ", " : "") << "rank " << r << " " << calls << " of " << calls + left;
  }
  if (listed > 8) counts << ", " << listed - 8 << " more ranks";
  auto who = [](const std::vector<int32_t>& v) {
    return (v.size() == 1 ? "rank " : "ranks ") + human_ranks(v);
  };
  std::vector<std::string> why;
  if (!bound.empty())
    why.push_back(who(bound) +
                  " reached the size bound (record with a larger --timeline-max to keep every "
                  "call's parameters)");
  if (!died.empty()) why.push_back(who(died) + " died before the log's last block was written");
  if (!early.empty()) why.push_back(who(early) + " end early");
  std::ostringstream o;
  o << "event logs end before their timelines:";
  for (std::size_t i = 0; i < why.size(); ++i) o << (i ? "; " : " ") << why[i];
  o << "; calls with parameters of those timed: " << counts.str();
  // A timeline that ends earlier is where the analysis ends: its own note.
  if (in.cut_by_timeline) return o.str();
  o << "; every rank is analysed up to " << std::fixed << std::setprecision(3)
    << double(in.cut_ns - run_bounds(in).first) * 1e-9 << " s into the run, where rank "
    << in.cut_rank
    << "'s first call without parameters began (a later call may have waited for it): " << kept
    << " calls analysed, " << after << " later ones left out";
  if (after) {
    std::vector<int32_t> ranks;
    for (std::size_t r = 0; r < in.after_cut.size(); ++r)
      if (in.after_cut[r]) ranks.push_back(int32_t(r));
    o << " (of " << who(ranks) << ")";
  }
  return o.str();
}

}  // namespace

// The name a place uses for a frame: its function, and the functions
// inlined into it down to the one at the address (`work_a > nap`), the same
// at every address in them so that samples add up per function; "" for
// system libraries; module+offset when nothing is known.
std::string name_frame(const FrameQuery& q, symbolize::Symbolizer& sym, bool& unnamed) {
  std::string name = function_names(sym.lookup(q.module, q.key.second));
  unnamed = name.empty();
  if (unnamed) {
    std::ostringstream o;
    o << q.module.name << "+0x" << std::hex << q.key.second;
    name = o.str();
  }
  return name;
}

void frame_queries(const RankSamples& rs, std::set<FrameKey>& seen, std::vector<FrameQuery>& out) {
  const SymbolTables tables = module_tables(rs);
  FrameQuery q;
  for (std::size_t i = 1; i < rs.contexts.size(); ++i)
    if (frame_of(rs, tables, i, q) && seen.insert(q.key).second) out.push_back(q);
}

std::vector<std::string> names_from_memo(const RankSamples& rs, const FrameMemo& memo) {
  const SymbolTables tables = module_tables(rs);
  std::vector<std::string> names(rs.contexts.size());
  FrameQuery q;
  for (std::size_t i = 1; i < rs.contexts.size(); ++i)
    if (frame_of(rs, tables, i, q))
      if (auto it = memo.find(q.key); it != memo.end()) names[i] = it->second;
  return names;
}

std::vector<std::string> name_contexts(const RankSamples& rs, symbolize::Symbolizer& sym,
                                       FrameMemo& memo, std::set<FrameKey>& unnamed) {
  const SymbolTables tables = module_tables(rs);
  std::vector<std::string> names(rs.contexts.size());
  FrameQuery q;
  for (std::size_t i = 1; i < rs.contexts.size(); ++i) {
    if (!frame_of(rs, tables, i, q)) continue;
    auto [it, fresh] = memo.try_emplace(q.key);
    if (fresh) {
      bool none = false;
      it->second = name_frame(q, sym, none);
      if (none) unnamed.insert(q.key);
    }
    names[i] = it->second;
  }
  return names;
}

DiagnoseInput load_diagnose_timelines(const Trace& trace, const std::string& dir,
                                      std::vector<std::string>& notes, UnfoldedRun* unfolded) {
  DiagnoseInput in;
  try {
    in.events = unfolded ? load_wait_input(trace, std::move(unfolded->events), dir)
                         : load_wait_input(trace, dir);
  } catch (const WaitsError& e) {
    throw DiagnoseError(e.what());
  }
  if (unfolded) {
    notes.push_back("recorded with --sample-only: the calls come from the event logs in " + dir +
                    " (no folded trace)");
    if (!unfolded->cut.empty()) {
      uint64_t calls = 0;
      for (int32_t r : unfolded->cut) calls += in.events.ranks[std::size_t(r)].size();
      notes.push_back(
          (unfolded->cut.size() == 1 ? "the event log of rank " : "the event logs of ranks ") +
          human_ranks(unfolded->cut) + (unfolded->cut.size() == 1 ? " ends" : " end") +
          " without a trailer (the rank died or was killed): read up to the last complete "
          "block, " +
          std::to_string(calls) + " calls");
    }
    if (!in.events.unlogged.empty()) notes.push_back(cut_note(in.events, *unfolded));
  }
  if (in.events.cut_rank >= 0) {
    bool any = false;
    for (const auto& evs : in.events.ranks) any = any || !evs.empty();
    if (!any)
      throw DiagnoseError(dir + ": no call is left to analyse: " +
                          (in.events.cut_by_timeline
                               ? "rank " + std::to_string(in.events.cut_rank) +
                                     "'s timeline reached its size bound before any call ended "
                                     "(record with a larger --timeline-max)"
                               : notes.back()));
  }
  return in;
}

void align_diagnose_events(const Trace& trace, DiagnoseInput& in, std::vector<std::string>& notes,
                           std::vector<ExitGapDrift>& drifts) {
  // Ranks whose timelines end early: their drift from the exits of global
  // synchronisations, before the clock condition is repaired.
  std::vector<int32_t> ended_early, unfitted;
  for (std::size_t r = 0; r < in.events.end_offset.size(); ++r)
    if (!in.events.end_offset[r]) ended_early.push_back(int32_t(r));
  drifts = align_by_exit_gaps(trace, in.events, unfitted);
  if (!ended_early.empty()) {
    std::ostringstream o;
    o << "the timelines of ranks " << human_ranks(ended_early)
      << " end without the clock offset measured at MPI_Finalize (the run did not get there)";
    std::vector<ExitGapDrift> top;
    std::vector<int32_t> flat;
    for (const auto& d : drifts) {
      if (d.applied)
        top.push_back(d);
      else
        flat.push_back(d.rank);
    }
    if (!top.empty()) {
      o << "; the drift of their clocks since the start offset was estimated from the exits of "
           "global synchronisations (constant exit gap) and corrected:";
      std::stable_sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
        return std::abs(a.slope) > std::abs(b.slope);
      });
      for (std::size_t i = 0; i < top.size() && i < 4; ++i)
        o << (i ? "," : "") << " rank " << top[i].rank << " " << std::showpos
          << std::llround(top[i].slope * 1e6) << std::noshowpos << " ppm over " << top[i].syncs;
      if (top.size() > 4) o << ", ...";
    }
    if (!flat.empty())
      o << "; ranks " << human_ranks(flat)
        << " show no drift beyond the scatter of their exits: not corrected";
    if (!unfitted.empty())
      o << "; ranks " << human_ranks(unfitted)
        << " reached fewer than 3 global synchronisations: their drift stays uncorrected";
    notes.push_back(o.str());
  }
  for (const auto& d : drifts)
    in.clock_uncertainty_ns = std::max(
        in.clock_uncertainty_ns, static_cast<int64_t>(std::llround(
                                     std::max(3 * d.residual_ns, d.inlier_max_ns) + d.offset_ns)));
  if (in.clock_uncertainty_ns > 0)
    notes.push_back("synchronisations are told with a clock tolerance of " +
                    std::to_string(in.clock_uncertainty_ns / 1000) +
                    " us more: what the estimated clocks may still be off (residual and offset)");
  in.clock_violations = repair_clock_condition(trace, in.events, 20, &*in.matched);
  if (const uint64_t v = in.clock_violations)
    notes.push_back(std::to_string(v) +
                    " receives ended before their send began (clock condition); they were "
                    "moved after it, as `tracefold analyze` does");
}

DiagnoseInput load_diagnose_events(const Trace& trace, const std::string& dir,
                                   std::vector<std::string>& notes,
                                   std::vector<ExitGapDrift>& drifts, UnfoldedRun* unfolded) {
  DiagnoseInput in = load_diagnose_timelines(trace, dir, notes, unfolded);
  in.matched = match_wait_input(trace, in.events);
  align_diagnose_events(trace, in, notes, drifts);
  return in;
}

namespace {
// Its findings (phases, imbalance, the causes inside computation) are per
// rank; per-thread diagnosis is not built, although the timeline and the
// samples now name each call's and each sample's thread.
std::string one_thread_message(const std::string& what) {
  return "diagnose takes traces of one thread per rank calling MPI; " + what +
         " (its findings are per rank; tracefold analyze finds wait states per (rank, thread) "
         "location)";
}
}  // namespace

RankSampleDigest read_rank_samples(const Trace& trace, const std::string& dir, int32_t r) {
  RankSampleDigest out;
  const std::string path = samples_path(dir, r);
  if (!fs::exists(path)) return out;
  try {
    out.samples = read_samples_file(path);
  } catch (const SamplesError& e) {
    throw DiagnoseError(e.what());
  }
  RankSamples& rs = out.samples;
  if (rs.rank != r || rs.world_size != trace.world_size)
    throw DiagnoseError(path + ": samples of rank " + std::to_string(rs.rank) + " of " +
                        std::to_string(rs.world_size) + " ranks, the trace has " +
                        std::to_string(trace.world_size) + " ranks");
  // A --sample-only run keeps no thread of its calls: its samples tell
  // whether another thread made any.
  for (const Sample& s : rs.samples)
    if (s.thread != 0 && s.in_mpi)
      throw DiagnoseError(one_thread_message("in this one, thread " + std::to_string(s.thread) +
                                             " of rank " + std::to_string(r) +
                                             " was sampled inside an MPI call (" + path + ")"));
  out.present = true;
  // Onto rank 0's clock, as the events are.
  RankTimelineFile tl;
  try {
    tl = read_timeline_file((fs::path(dir) / ("rank-" + std::to_string(r) + ".tft")).string());
  } catch (const TimelineError& e) {
    throw DiagnoseError(e.what());
  }
  for (Sample& s : rs.samples) s.time_ns = tl.to_global(s.time_ns);
  for (SamplePeriod& p : rs.periods) p.time_ns = tl.to_global(p.time_ns);
  return out;
}

void correct_drift(RankSamples& rs, int32_t rank, const std::vector<ExitGapDrift>& drifts) {
  for (const ExitGapDrift& g : drifts)
    if (g.rank == rank && g.applied) {
      for (Sample& s : rs.samples) s.time_ns = g.correct(s.time_ns);
      for (SamplePeriod& p : rs.periods) p.time_ns = g.correct(p.time_ns);
    }
}

SampleFacts sample_facts(const RankSampleDigest& d) {
  SampleFacts f;
  f.present = d.present;
  if (!d.present) return f;
  f.has_trailer = d.samples.has_trailer;
  f.period_ns = d.samples.period_ns;
  f.lowered = !d.samples.periods.empty();
  for (const SamplePeriod& p : d.samples.periods)
    f.slowest_ns = std::max(f.slowest_ns, p.period_ns);
  return f;
}

bool sample_notes(const std::vector<SampleFacts>& ranks, std::size_t unnamed,
                  const std::string& dir, std::vector<std::string>& notes) {
  std::vector<int32_t> missing, slowed;
  int64_t slowest = 0, asked = 0;
  bool any = false;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const SampleFacts& d = ranks[r];
    if (!d.present) {
      missing.push_back(int32_t(r));
      continue;
    }
    any = true;
    if (!d.has_trailer)
      notes.push_back("rank " + std::to_string(r) +
                      "'s samples end early (the rank died?): analysed up to the last block");
    if (d.lowered) {
      slowed.push_back(int32_t(r));
      asked = d.period_ns;
      slowest = std::max(slowest, d.slowest_ns);
    }
  }
  if (!any) {
    notes.push_back("no samples in " + dir +
                    ": causes are named by MPI call site (record with --sample to see inside "
                    "the computation)");
    return false;
  }
  if (!missing.empty())
    notes.push_back("no samples for ranks " + human_ranks(missing) +
                    ": their computation is named by MPI call site");
  if (!slowed.empty()) {
    std::ostringstream o;
    o << "the sampler lowered its rate during the run on "
      << (slowed.size() == 1 ? "rank " : "ranks ") << human_ranks(slowed)
      << " (its handler cost more than 5 % of the period): from " << double(asked) * 1e-6
      << " ms to up to " << double(slowest) * 1e-6
      << " ms; each sample counts for the period it was taken at";
    notes.push_back(o.str());
  }
  if (unnamed)
    notes.push_back(std::to_string(unnamed) +
                    " sampled frames have no symbols (stripped binaries?): they are named "
                    "module+offset, one place per address");
  return true;
}

void add_samples(DiagnoseInput& in, std::vector<RankSampleDigest>&& ranks,
                 const std::vector<ExitGapDrift>& drifts, std::size_t unnamed,
                 const std::string& dir, std::vector<std::string>& notes) {
  std::vector<SampleFacts> facts;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    facts.push_back(sample_facts(ranks[r]));
    if (ranks[r].present) correct_drift(ranks[r].samples, int32_t(r), drifts);
  }
  if (!sample_notes(facts, unnamed, dir, notes)) return;
  in.samples.resize(ranks.size());
  in.context_names.resize(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    in.samples[r] = std::move(ranks[r].samples);
    in.context_names[r] = std::move(ranks[r].names);
  }
}

}  // namespace tracefold::diagnose_detail

namespace tracefold {

Trace load_diagnose_recording(const std::string& trace_path, const std::string& dir,
                              UnfoldedRun& unfolded, bool tables_only) {
  std::error_code ec;
  if (std::filesystem::exists(trace_path, ec) || !is_unfolded_run(dir)) {
    Trace t = load_trace(trace_path);
    if (t.threads > 1)
      throw DiagnoseError(diagnose_detail::one_thread_message(
          "this one has " + std::to_string(t.threads) + " threads per rank calling MPI"));
    return t;
  }
  try {
    if (tables_only) {
      Trace t;
      t.world_size = read_event_log_header(event_log_path(dir, 0)).world_size;
      t.comms.define_world(t.world_size);
      return t;
    }
    unfolded = read_unfolded_run(dir);
  } catch (const EventLogError& e) {
    throw DiagnoseError(e.what());
  }
  return std::move(unfolded.tables);
}

DiagnoseInput load_diagnose_input(const Trace& trace, const std::string& dir,
                                  std::vector<std::string>& notes, UnfoldedRun* unfolded) {
  using namespace diagnose_detail;
  std::vector<ExitGapDrift> drifts;
  DiagnoseInput in = load_diagnose_events(trace, dir, notes, drifts, unfolded);
  std::vector<RankSampleDigest> ranks(std::size_t(trace.world_size));
  symbolize::Symbolizer sym;
  FrameMemo memo;
  std::set<FrameKey> unnamed;
  for (int32_t r = 0; r < trace.world_size; ++r) {
    RankSampleDigest& d = ranks[std::size_t(r)];
    d = read_rank_samples(trace, dir, r);
    if (d.present) d.names = name_contexts(d.samples, sym, memo, unnamed);
  }
  add_samples(in, std::move(ranks), drifts, unnamed.size(), dir, notes);
  return in;
}

}  // namespace tracefold
