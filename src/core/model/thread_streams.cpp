#include "tracefold/thread_streams.hpp"

#include <algorithm>

#include "tracefold/trace_query.hpp"

namespace tracefold {

namespace {

// One interval as a section (sections keep the ranklist's run form, so a
// million-rank range stays one section).
Ranklist::Section interval(int32_t a, int32_t b) {
  Ranklist::Section s;
  s.start = a;
  if (b > a) s.dims.push_back({b - a + 1, 1});
  return s;
}

Elastic project(const Elastic& e, int32_t lo, int32_t p) {
  Elastic out;
  for (const ElasticEntry& en : e.entries()) {
    Ranklist ranks = project_locations(en.ranks, lo, p);
    if (!ranks.empty()) out.entries().push_back({en.values, std::move(ranks)});
  }
  return out;
}

Elastic shift(const Elastic& e, int32_t by) {
  Elastic out;
  for (const ElasticEntry& en : e.entries())
    out.entries().push_back({en.values, shift_ranks(en.ranks, by)});
  return out;
}

Histogram shift(const Histogram& h, int32_t by) {
  if (h.empty()) return h;
  Histogram::Parts p = h.parts();
  if (p.min_rank >= 0) p.min_rank += by;
  if (p.max_rank >= 0) p.max_rank += by;
  return Histogram::from_parts(std::move(p));
}

}  // namespace

Ranklist project_locations(const Ranklist& locations, int32_t lo, int32_t p) {
  std::vector<Ranklist::Section> kept;
  const int64_t hi = int64_t{lo} + p - 1;
  locations.for_each_interval([&](int32_t a, int32_t b) {
    const int64_t x = std::max<int64_t>(a, lo), y = std::min<int64_t>(b, hi);
    if (x <= y)
      kept.push_back(interval(static_cast<int32_t>(x - lo), static_cast<int32_t>(y - lo)));
  });
  return Ranklist::from_sections(kept);
}

Ranklist shift_ranks(const Ranklist& ranks, int32_t by) {
  if (by == 0) return ranks;
  std::vector<Ranklist::Section> s = ranks.sections();
  for (Ranklist::Section& x : s) x.start += by;
  return Ranklist::from_sections(s);
}

Trace thread_stream(const Trace& trace, int32_t thread, std::vector<std::size_t>* origin) {
  const int32_t p = trace.world_size, lo = thread * p;
  Trace out = same_header(trace);
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const Node& n = trace.nodes[i];
    Ranklist ranks = project_locations(n.ranks, lo, p);
    if (ranks.empty()) continue;
    Node m;
    m.key = n.key;
    m.ranks = std::move(ranks);
    for (const LoopLevel& l : n.loops)
      m.loops.push_back({project(l.members, lo, p), project(l.iters, lo, p)});
    m.count = project(n.count, lo, p);
    for (const auto& [f, e] : n.fields) m.fields.emplace_back(f, project(e, lo, p));
    m.timings = n.timings;
    out.nodes.push_back(std::move(m));
    if (origin) origin->push_back(i);
  }
  return out;
}

void append_thread_stream(Trace& into, const Trace& stream, int32_t thread) {
  const int32_t by = thread * into.world_size;
  into.threads = std::max(into.threads, thread + 1);
  into.comms.merge(stream.comms);
  auto site = [&](EventKey k) {
    if (!is_pred_marker(k)) k.site = into.sites.intern(stream.sites.at(k.site));
    return k;
  };
  for (const Node& n : stream.nodes) {
    Node m;
    m.key = site(n.key);
    m.ranks = shift_ranks(n.ranks, by);
    for (const LoopLevel& l : n.loops)
      m.loops.push_back({shift(l.members, by), shift(l.iters, by)});
    m.count = shift(n.count, by);
    for (const auto& [f, e] : n.fields) m.fields.emplace_back(f, shift(e, by));
    for (const Timing& t : n.timings) {
      Timing u;
      u.pred = site(t.pred);
      u.compute = shift(t.compute, by);
      u.comm = shift(t.comm, by);
      for (const auto& [name, h] : t.stats) u.stats.emplace_back(name, shift(h, by));
      m.timings.push_back(std::move(u));
    }
    // Timings are kept sorted by predecessor, whose site ids changed.
    std::sort(m.timings.begin(), m.timings.end(),
              [](const Timing& a, const Timing& b) { return a.pred < b.pred; });
    into.nodes.push_back(std::move(m));
  }
}

}  // namespace tracefold
