// Derived labels of user functions (seed 002, Section 5.2): a function whose
// time is mostly one kind of communication on every rank that runs it is a
// communication function of that kind, whatever its name. The seed derives
// them over the temporal context tree from internal MPI functions; here a
// sample inside an MPI call is labelled by the recorder's exact interval
// (collective, or waiting / transfer as the waits module split the call),
// and its user-code path is the MPI call's recorded call site.
#include <algorithm>
#include <map>

#include "internal.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::diagnose_detail {

namespace {

constexpr int kLabels = static_cast<int>(TimeLabel::kCount);

// One user frame of a call site, named as the samples' frames are.
std::string frame_function(const SymbolTables& t, const Frame& f) {
  if (system_module(t, f)) return "";
  const SourceFrames* s = t.symbols_of(f);
  return s ? function_names(*s) : "";
}

struct Counts {
  int64_t by[kLabels] = {};
  int64_t total = 0;
};

// Per path (user functions outermost first, joined by " | "), per rank.
using Tally = std::map<std::vector<std::string>, std::map<int32_t, Counts>>;

void add_path(Tally& tally, const std::vector<std::string>& path, int32_t rank, TimeLabel l,
              int64_t n) {
  std::vector<std::string> prefix;
  for (const std::string& f : path) {
    prefix.push_back(f);
    Counts& c = tally[prefix][rank];
    c.by[static_cast<int>(l)] += n;
    c.total += n;
  }
}

}  // namespace

void derive_labels(Context& c) {
  if (!c.have_samples) return;
  Tally tally;
  std::map<SiteId, std::vector<std::string>> site_paths;
  for (int32_t r = 0; r < c.size; ++r) {
    if (!c.sampled(r)) continue;
    // The rank's digest counted its samples per path and per (call site,
    // label) already: paths are vectors of strings, samples many.
    const RankDigest& dg = c.digests[std::size_t(r)];
    for (std::size_t i = 0; i < dg.paths.size(); ++i)
      add_path(tally, dg.paths[i], r, TimeLabel::kComputation, dg.path_periods[i]);
    for (const RankDigest::InCall& in : dg.in_calls) {
      if (in.site >= c.trace.sites.size()) continue;
      auto [sp, fresh] = site_paths.try_emplace(in.site);
      if (fresh) {
        const CallSite& site = c.trace.sites.at(in.site);
        for (auto f = site.frames.rbegin(); f != site.frames.rend(); ++f)
          if (std::string nm = frame_function(c.trace.symtab, *f); !nm.empty())
            sp->second.push_back(std::move(nm));
      }
      if (!sp->second.empty())
        add_path(tally, sp->second, r, static_cast<TimeLabel>(in.label), in.periods);
    }
  }
  const double need = c.opt.derived_share;
  std::map<std::vector<std::string>, std::string> label_of;
  for (const auto& [path, per_rank] : tally) {
    std::vector<int32_t> ranks;
    double lo[kLabels + 1], hi[kLabels + 1];
    std::fill(lo, lo + kLabels + 1, 1.0);
    std::fill(hi, hi + kLabels + 1, 0.0);
    int64_t samples = 0;
    for (const auto& [r, n] : per_rank) {
      if (n.total < int64_t(c.opt.derived_min_samples)) continue;
      ranks.push_back(r);
      samples += n.total;
      for (int l = 0; l <= kLabels; ++l) {
        // Index kLabels: communication, every label but computation.
        const int64_t v = l < kLabels ? n.by[l] : n.total - n.by[int(TimeLabel::kComputation)];
        const double share = double(v) / double(n.total);
        lo[l] = std::min(lo[l], share);
        hi[l] = std::max(hi[l], share);
      }
    }
    if (ranks.empty()) continue;
    // The most specific label that holds on every rank, then communication
    // as a whole (the label hierarchy's parent of the three).
    int chosen = -1;
    for (int l = 0; l < kLabels && chosen < 0; ++l)
      if (lo[l] >= need) chosen = l;
    if (chosen < 0 && lo[kLabels] >= need) chosen = kLabels;
    if (chosen < 0) continue;
    const std::string name =
        chosen < kLabels ? label_name(static_cast<TimeLabel>(chosen)) : "communication";
    label_of[path] = name;
    if (chosen == static_cast<int>(TimeLabel::kComputation)) continue;  // a user function's default
    // Only where the label starts: a callee of a wait function waits too.
    std::vector<std::string> parent(path.begin(), path.end() - 1);
    if (auto p = label_of.find(parent); p != label_of.end() && p->second == name) continue;
    DerivedLabel d;
    d.stack = path;
    d.function = path.back();
    d.label = name;
    d.min_share = lo[chosen];
    d.max_share = hi[chosen];
    d.samples = uint64_t(samples);
    d.ranks = std::move(ranks);
    c.rep.derived.push_back(std::move(d));
  }
  std::stable_sort(
      c.rep.derived.begin(), c.rep.derived.end(),
      [](const DerivedLabel& a, const DerivedLabel& b) { return a.samples > b.samples; });
}

}  // namespace tracefold::diagnose_detail
