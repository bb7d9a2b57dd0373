// What `tracefold report` shows of `tracefold patterns`: the global
// patterns found with the default options, turned into the plain data the
// report writer reads (tracefold/report_patterns.hpp). A trace with threads
// is analysed per thread class, as the command does (docs/patterns.md,
// "Threads").
#include <algorithm>
#include <map>
#include <set>

#include "cli.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/patterns.hpp"
#include "tracefold/report_patterns.hpp"
#include "tracefold/thread_streams.hpp"

namespace tracefold::cli {

namespace {

// The first of a shape's grid parameters (a multilevel shape lists one
// grid per level; the finest comes first).
std::vector<int32_t> grid_of(const patterns::Shape& s) {
  std::string g = s.param("grid");
  if (g.empty()) g = s.param("grid per level");
  return parse_grid(g.substr(0, g.find(',')));
}

// Point-to-point call sites of one context, with their time from the
// histograms: what a pattern's context spends in its exchanges.
struct Sites {
  std::set<std::string> places;
  double ns = 0;
};
using ContextSites = std::map<std::string, Sites>;

// One thread class's global patterns, appended to `rep`.
void add_class(PatternsReport& rep, const Trace& stream, int32_t thread,
               const ContextSites& by_context, int64_t in_calls,
               const std::function<std::string(SiteId)>& context_of) {
  const patterns::Result r =
      patterns::find_process_patterns(stream, patterns::Options{}, context_of);
  for (const patterns::GlobalPattern& g : r.global) {
    ReportPattern p;
    p.thread = thread;
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
    double ns = 0;
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
    if (in_calls > 0 && ns > 0) p.time_share = 100.0 * ns / double(in_calls);
    for (const patterns::GlobalPattern::Order& o : g.order)
      p.occurrences = std::max(p.occurrences, o.occurrences);
    p.messages = g.messages;
    for (const patterns::Channel& c : g.channels) p.bytes += c.bytes;
    for (const patterns::ChannelClass& k : g.channel_classes) p.bytes += k.bytes * k.senders.size();
    p.grid = grid_of(g.shape);
    p.edges = g.edges;
    rep.patterns.push_back(std::move(p));
  }
}

}  // namespace

PatternsReport patterns_for_report(const Trace& t, bool raw_sites) {
  PatternsReport rep;
  rep.world_size = t.world_size;
  rep.threads = std::max(t.threads, 1);
  // As `tracefold patterns` does: each thread class alone, refused (the
  // report shows why) when two threads of a rank share a channel.
  std::vector<Trace> streams;
  if (rep.threads > 1) streams = patterns::thread_classes(t);
  // As `tracefold patterns` does by default: the function of the call, or
  // without symbols the call site's label. A thread stream keeps the
  // trace's site and symbol tables, so one naming serves every class.
  auto context_of = [&](SiteId site) -> std::string {
    const CallSite& cs = t.sites.at(site);
    if (!raw_sites)
      if (const SourceFrame* f = innermost_source(t.symtab, cs); f && !f->function.empty())
        return f->function;
    return site_label(t.symtab, cs, {raw_sites});
  };

  // The time of each class's point-to-point calls by context, out of the
  // whole run's time in MPI calls. A node's histograms merge every
  // location that has it, and the threads of one index that run the same
  // code share nodes: a node's time goes to each class by its share of the
  // node's locations, so that no time counts twice.
  std::vector<ContextSites> by_context(static_cast<std::size_t>(rep.threads));
  int64_t in_calls = 0;
  for (const Node& n : t.nodes) {
    int64_t ns = 0;
    for (const Timing& tm : n.timings) ns += tm.comm.sum();
    in_calls += ns;
    if (!op_traits(n.key.op).point_to_point() || n.ranks.empty()) continue;
    const std::string context = context_of(n.key.site);
    std::string place;
    const CallSite& cs = t.sites.at(n.key.site);
    if (const SourceFrame* f = innermost_source(t.symtab, cs); f && !f->file.empty() && f->line)
      place = f->file.substr(f->file.rfind('/') + 1) + ":" + std::to_string(f->line);
    for (int32_t k = 0; k < rep.threads; ++k) {
      const std::size_t here =
          rep.threads == 1 ? n.ranks.size()
                           : project_locations(n.ranks, k * t.world_size, t.world_size).size();
      if (here == 0) continue;
      Sites& s = by_context[std::size_t(k)][context];
      s.ns +=
          here == n.ranks.size() ? double(ns) : double(ns) * double(here) / double(n.ranks.size());
      if (!place.empty()) s.places.insert(place);
    }
  }

  for (int32_t k = 0; k < rep.threads; ++k)
    add_class(rep, rep.threads > 1 ? streams[std::size_t(k)] : t, k, by_context[std::size_t(k)],
              in_calls, context_of);
  // Most bytes first, then most messages: where the traffic is, whichever
  // thread makes it.
  std::stable_sort(rep.patterns.begin(), rep.patterns.end(), [](const auto& a, const auto& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.messages > b.messages;
  });
  return rep;
}

}  // namespace tracefold::cli
