// Per-rank digests (internal.hpp, RankDigest): what the diagnosis needs of
// one recorded rank's samples, made where the samples are read. The serial
// diagnosis digests every rank itself; the parallel one (parallel/) digests
// each rank on the analysis rank that reads it and sends only the digest,
// so no analysis rank holds every rank's samples.
#include <algorithm>
#include <map>
#include <sstream>

#include "internal.hpp"
#include "tracefold/export.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::diagnose_detail {

namespace {

// How many sampling periods of its file sample `s` stands for: 1, or more
// where the sampler lowered its rate during the run.
int64_t sample_periods(const RankSamples& rs, const Sample& s) {
  if (rs.periods.empty() || rs.period_ns <= 0) return 1;
  return std::max<int64_t>(1, rs.period_at(s.thread, s.time_ns) / rs.period_ns);
}

// Each context's user-code path (function names outermost first, system
// frames left out: their names are ""), and (`depths`) each of its frames'
// depth in the whole context (outermost 1), which LCA markers count in.
std::vector<std::vector<std::string>> context_paths(const RankSamples& rs,
                                                    const std::vector<std::string>& names,
                                                    std::vector<std::vector<uint16_t>>* depths) {
  auto name = [&](uint32_t ctx) -> std::string {
    if (!names.empty()) return ctx < names.size() ? names[ctx] : "";
    const SampleContext& sc = rs.contexts[ctx];
    std::ostringstream o;
    o << (sc.module < rs.modules.size() ? rs.modules[sc.module].name : "?") << "+0x" << std::hex
      << sc.offset;
    return o.str();
  };
  std::vector<std::vector<std::string>> paths(rs.contexts.size());
  if (depths) depths->assign(rs.contexts.size(), {});
  std::vector<uint16_t> up;  // distance from ctx of each named frame
  for (uint32_t ctx = 1; ctx < rs.contexts.size(); ++ctx) {
    std::vector<std::string>& path = paths[ctx];
    up.clear();
    // A tree read from a file is checked to have parents before children;
    // the bound guards against a cycle all the same.
    uint32_t n = 0;
    for (uint32_t at = ctx; at != 0 && at < rs.contexts.size() && n < 4096;
         at = rs.contexts[at].parent, ++n) {
      std::string nm = name(at);
      if (!nm.empty()) path.push_back(std::move(nm)), up.push_back(uint16_t(n));
    }
    std::reverse(path.begin(), path.end());
    if (depths)
      for (auto u = up.rbegin(); u != up.rend(); ++u) (*depths)[ctx].push_back(uint16_t(n - *u));
  }
  return paths;
}

// Samples that stop while the rank still computes (the file's size bound,
// a rank that died) would leave that computation without a place. Samples
// dropped while later ones were kept (the loader busy, a ring full) are
// gaps, not an end, and so is a last wait with no samples (processor-time
// samples of a blocked rank).
void find_end(const RankSamples& rs, const std::vector<EventSpan>& evs, const DigestParams& p,
              RankDigest& d) {
  if (rs.has_trailer && rs.dropped == 0) return;
  int64_t last = INT64_MIN, periods = 1;
  for (const Sample& smp : rs.samples)
    if (smp.time_ns > last) last = smp.time_ns, periods = sample_periods(rs, smp);
  const int64_t end = last == INT64_MIN ? INT64_MIN : last + p.period_ns * periods;
  bool computes = false;
  for (auto k = evs.size(); k-- > 0 && !computes && evs[k].start_ns > end;)
    computes = evs[k].start_ns - std::max(evs[k].compute_start_ns, end) >= p.period_ns;
  if (!computes) return;
  d.samples_end = end;
  // A file without a trailer has its note from the reader already.
  if (rs.has_trailer) d.cut = true, d.cut_last = last;
}

// The label of a sample at `t` inside event `e`: collective
// synchronisation, else waiting for the first `waited` ns, then transfer.
TimeLabel label_in_call(const EventSpan& e, int64_t t) {
  if (op_traits(e.op).collective()) return TimeLabel::kCollectiveSync;
  return t - e.start_ns < e.waited_ns ? TimeLabel::kWait : TimeLabel::kTransfer;
}

}  // namespace

int64_t run_period(const std::vector<int64_t>& periods) {
  int64_t out = 0;
  for (int64_t p : periods)
    if (p > 0) out = p;
  return out;
}

EventFacts event_facts(const Trace& trace, const WaitInput& events, const MatchResult* matched) {
  EventFacts f;
  WaitOptions wo;
  wo.keep_instances = true;
  wo.matched = matched;
  wo.causes = false;  // the diagnosis needs who waited for whom, not the critical path
  f.waits = analyze_waits(trace, events, wo);
  // Bytes per event: a completion gets its requests' bytes too, which is
  // where a nonblocking transfer ends.
  const std::size_t P = events.ranks.size();
  f.waited.resize(P);
  f.bytes.resize(P);
  for (std::size_t r = 0; r < P; ++r) {
    const auto& evs = events.ranks[r];
    f.waited[r].assign(evs.size(), 0);
    auto& bytes = f.bytes[r];
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
  for (const WaitInstance& w : f.waits.instances) {
    auto& row = f.waited[std::size_t(w.waiter)];
    if (w.event < row.size()) row[w.event] += std::llround(w.seconds * 1e9);
  }
  std::tie(f.run_start, f.run_end) = run_bounds(events);
  f.loops = loop_facts(trace, events);
  return f;
}

std::vector<EventSpan> event_spans(const WaitInput& events, const EventFacts& f, int32_t rank) {
  const auto& evs = events.ranks[std::size_t(rank)];
  std::vector<EventSpan> out(evs.size());
  const auto* loops =
      std::size_t(rank) < f.loops.at.size() ? &f.loops.at[std::size_t(rank)] : nullptr;
  for (std::size_t k = 0; k < evs.size(); ++k) {
    out[k] = {evs[k].compute_start_ns,        evs[k].start_ns, evs[k].end_ns,
              f.waited[std::size_t(rank)][k], evs[k].ev.op,    evs[k].ev.site};
    if (loops && k < loops->size()) {
      const LoopAt& a = (*loops)[k];
      out[k].loop = a.loop, out[k].entry = a.entry, out[k].iteration = a.iteration;
      out[k].of = a.of;
    }
    out[k].bytes = f.bytes[std::size_t(rank)][k];
  }
  return out;
}

DigestParams digest_params(const EventFacts& f, int64_t period_ns) {
  DigestParams p;
  p.run_start = f.run_start;
  p.run_end = f.run_end;
  // Without samples, "frequent" still needs a time scale: the default period.
  p.period_ns = period_ns > 0 ? period_ns : 5000000;
  p.bin_ns = picture_bin_ns(f.run_end - f.run_start);
  return p;
}

RankDigest digest_rank(const RankSamples& rs, const std::vector<std::string>& names,
                       const std::vector<EventSpan>& evs, const DigestParams& p) {
  RankDigest d;
  d.samples = rs.samples.size();
  d.period_ns = rs.period_ns;
  d.sampled = rs.period_ns > 0;
  // The main thread's computation samples in time order.
  std::vector<uint32_t> comp;
  for (uint32_t i = 0; i < rs.samples.size(); ++i)
    if (rs.samples[i].thread == 0 && !rs.samples[i].in_mpi) {
      comp.push_back(i);
      d.max_periods = std::max(d.max_periods, sample_periods(rs, rs.samples[i]));
    }
  if (!d.sampled) return d;
  std::stable_sort(comp.begin(), comp.end(), [&](uint32_t a, uint32_t b) {
    return rs.samples[a].time_ns < rs.samples[b].time_ns;
  });
  find_end(rs, evs, p, d);

  // Each context's place key, as an index into d.keys (equal keys share one).
  std::vector<std::vector<uint16_t>> depths;
  const std::vector<std::vector<std::string>> paths = context_paths(rs, names, &depths);
  std::vector<uint32_t> key_of(rs.contexts.size(), 0);
  {
    std::map<std::string, uint32_t> index{{"", 0}};
    d.keys.push_back("");
    for (uint32_t ctx = 1; ctx < rs.contexts.size(); ++ctx) {
      std::string key;
      for (const std::string& f : paths[ctx]) key += (key.empty() ? "" : " > ") + f;
      auto [it, fresh] = index.try_emplace(key, uint32_t(d.keys.size()));
      if (fresh) d.keys.push_back(key);
      key_of[ctx] = it->second;
    }
  }
  auto key = [&](uint32_t ctx) { return ctx < key_of.size() ? key_of[ctx] : 0u; };

  // The computation gap before each event (from the run's start on).
  d.gap_at.assign(evs.size() + 1, 0);
  std::vector<std::pair<uint32_t, int64_t>> here;
  for (std::size_t k = 0; k < evs.size(); ++k) {
    d.gap_at[k] = uint32_t(d.gaps.size());
    const int64_t from = std::max(evs[k].compute_start_ns, p.run_start), to = evs[k].start_ns;
    if (to <= from) continue;
    auto lo = std::lower_bound(comp.begin(), comp.end(), from,
                               [&](uint32_t i, int64_t t) { return rs.samples[i].time_ns < t; });
    here.clear();
    for (auto it = lo; it != comp.end() && rs.samples[*it].time_ns < to; ++it)
      here.emplace_back(key(rs.samples[*it].context), sample_periods(rs, rs.samples[*it]));
    std::sort(here.begin(), here.end());
    for (std::size_t i = 0; i < here.size();) {
      int64_t periods = 0;
      std::size_t j = i;
      for (; j < here.size() && here[j].first == here[i].first; ++j) periods += here[j].second;
      d.gaps.emplace_back(here[i].first, periods);
      i = j;
    }
  }
  d.gap_at[evs.size()] = uint32_t(d.gaps.size());

  {
    std::vector<uint32_t> main;
    for (uint32_t i = 0; i < rs.samples.size(); ++i)
      if (rs.samples[i].thread == 0) main.push_back(i);
    std::stable_sort(main.begin(), main.end(), [&](uint32_t a, uint32_t b) {
      return rs.samples[a].time_ns < rs.samples[b].time_ns;
    });
    build_tree(rs, main, paths, depths, evs, p, d);
  }

  // Derived labels: computation per path, MPI calls per (site, label).
  std::map<std::vector<std::string>, int64_t> per_path;
  std::map<std::pair<SiteId, int>, int64_t> in_site;
  for (const Sample& s : rs.samples) {
    if (s.thread != 0) continue;
    if (!s.in_mpi) {
      if (s.context < paths.size() && !paths[s.context].empty())
        per_path[paths[s.context]] += sample_periods(rs, s);
      continue;
    }
    // The call it fell into, by time (the last one started before it).
    auto it = std::upper_bound(evs.begin(), evs.end(), s.time_ns,
                               [](int64_t t, const EventSpan& e) { return t < e.start_ns; });
    if (it == evs.begin()) continue;
    const EventSpan& e = *(it - 1);
    if (s.time_ns > e.end_ns || is_environment(e.op)) continue;
    in_site[{e.site, static_cast<int>(label_in_call(e, s.time_ns))}] += sample_periods(rs, s);
  }
  for (auto& [path, n] : per_path) {
    d.paths.push_back(path);
    d.path_periods.push_back(n);
  }
  for (const auto& [k, n] : in_site) d.in_calls.push_back({k.first, uint8_t(k.second), n});

  // The picture's bins each context key's samples cover (cause marks).
  if (p.bin_ns > 0) {
    std::vector<std::pair<uint32_t, uint32_t>> bins;
    for (uint32_t i : comp) {
      const Sample& s = rs.samples[i];
      if (s.context >= rs.contexts.size()) continue;
      const int64_t from = std::max(s.time_ns, p.run_start) - p.run_start;
      const int64_t to =
          std::min(s.time_ns + p.period_ns * sample_periods(rs, s), p.run_end) - p.run_start;
      if (to <= from) continue;
      const int64_t b1 = std::min<int64_t>((to - 1) / p.bin_ns, kPictureBins - 1);
      for (int64_t b = from / p.bin_ns; b <= b1; ++b)
        bins.emplace_back(key(s.context), uint32_t(b));
    }
    std::sort(bins.begin(), bins.end());
    bins.erase(std::unique(bins.begin(), bins.end()), bins.end());
    d.bins = std::move(bins);
  }
  return d;
}

}  // namespace tracefold::diagnose_detail
