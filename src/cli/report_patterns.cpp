// What `tracefold report` shows of `tracefold patterns`: the global
// patterns found with the default options, turned into the plain data the
// report writer reads (tracefold/report_patterns.hpp).
#include <algorithm>
#include <map>
#include <set>

#include "cli.hpp"
#include "one_thread.hpp"
#include "tracefold/analysis_basic.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/patterns.hpp"
#include "tracefold/report_patterns.hpp"

namespace tracefold::cli {

namespace {

// The first of a shape's grid parameters (a multilevel shape lists one
// grid per level; the finest comes first).
std::vector<int32_t> grid_of(const patterns::Shape& s) {
  std::string g = s.param("grid");
  if (g.empty()) g = s.param("grid per level");
  return parse_grid(g.substr(0, g.find(',')));
}

}  // namespace

PatternsReport patterns_for_report(const Trace& t, bool raw_sites) {
  // The report shows this refusal in place of the section.
  one_thread_per_rank(t, "patterns", kPatternsNeedRanks);
  PatternsReport rep;
  rep.world_size = t.world_size;
  // As `tracefold patterns` does by default: the function of the call, or
  // without symbols the call site's label.
  auto context_of = [&](SiteId site) -> std::string {
    const CallSite& cs = t.sites.at(site);
    if (!raw_sites)
      if (const SourceFrame* f = innermost_source(t.symtab, cs); f && !f->function.empty())
        return f->function;
    return site_label(t.symtab, cs, {raw_sites});
  };
  const patterns::Result r = patterns::find_process_patterns(t, patterns::Options{}, context_of);

  // Point-to-point call sites by context, with their time from the
  // histograms: what a pattern's context spends in its exchanges.
  struct Sites {
    std::set<std::string> places;
    int64_t ns = 0;
  };
  std::map<std::string, Sites> by_context;
  int64_t in_calls = 0;
  for (const StatsRow& row : compute_stats(t)) {
    in_calls += row.time.sum();
    if (!op_traits(row.key.op).point_to_point()) continue;
    Sites& s = by_context[context_of(row.key.site)];
    s.ns += row.time.sum();
    const CallSite& cs = t.sites.at(row.key.site);
    if (const SourceFrame* f = innermost_source(t.symtab, cs); f && !f->file.empty() && f->line)
      s.places.insert(f->file.substr(f->file.rfind('/') + 1) + ":" + std::to_string(f->line));
  }

  for (const patterns::GlobalPattern& g : r.global) {
    ReportPattern p;
    p.title = g.shape.title();
    p.params = g.shape.params;
    p.classified = g.shape.kind != patterns::ShapeKind::kUnclassified;
    p.quality = g.shape.quality;
    p.matched = g.shape.matched;
    p.total_edges = g.shape.matched + g.shape.missing.size() + g.shape.extra.size();
    std::set<std::string> contexts;
    for (const auto& [rank, index] : g.patterns) {
      p.ranks.insert(rank);
      for (const patterns::RankPatterns& grp : r.groups)
        if (grp.ranks.contains(rank) && std::size_t(index) < grp.patterns.size())
          contexts.insert(grp.patterns[std::size_t(index)].context);
    }
    p.contexts.assign(contexts.begin(), contexts.end());
    int64_t ns = 0;
    std::set<std::string> places;
    for (const std::string& c : contexts)
      if (auto it = by_context.find(c); it != by_context.end()) {
        ns += it->second.ns;
        places.insert(it->second.places.begin(), it->second.places.end());
      }
    constexpr std::size_t kMaxPlaces = 6;
    for (const std::string& s : places)
      if (p.sites.size() < kMaxPlaces) p.sites.push_back(s);
    if (places.size() > kMaxPlaces)
      p.sites.push_back("... (" + std::to_string(places.size()) + " call sites)");
    if (in_calls > 0 && ns > 0) p.time_share = 100.0 * double(ns) / double(in_calls);
    for (const patterns::GlobalPattern::Order& o : g.order)
      p.occurrences = std::max(p.occurrences, o.occurrences);
    p.messages = g.messages;
    for (const patterns::Channel& c : g.channels) p.bytes += c.bytes;
    for (const patterns::ChannelClass& k : g.channel_classes) p.bytes += k.bytes * k.senders.size();
    p.grid = grid_of(g.shape);
    p.edges = g.edges;
    rep.patterns.push_back(std::move(p));
  }
  // Most bytes first, then most messages: where the traffic is.
  std::stable_sort(rep.patterns.begin(), rep.patterns.end(), [](const auto& a, const auto& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.messages > b.messages;
  });
  return rep;
}

}  // namespace tracefold::cli
