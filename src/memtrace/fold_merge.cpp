// Merging the streams' traces (fold.hpp merge_threads): the sites'
// origins fitted across streams, the seed's EPRSD.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "fold.hpp"
#include "fold_codec.hpp"
#include "tracefold/merge.hpp"

namespace tracefold::memtrace {

using namespace fold_detail;

namespace {

// The value of a site's origin in each stream that uses it, fitted as
// a + b * thread + c * log + residual (the seed's EPRSD: a base linear in
// the thread and in the process). Each coefficient is the one most pairs of
// neighbouring streams agree on, so that streams that differ (the main
// thread among workers, a halo's edge ranks) only keep residuals of their
// own instead of spoiling the fit for the others.
struct Point {
  std::int64_t t = 0, r = 0, v = 0;  // thread in its log, log, value
};
struct Fit {
  std::int64_t a = 0, b = 0, c = 0;
};

std::int64_t mul(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y));
}

// The most frequent value (the first to reach the top count on a tie);
// `fallback` when there is none.
std::int64_t mode(const std::vector<std::int64_t>& v, std::int64_t fallback) {
  std::unordered_map<std::int64_t, std::size_t> n;
  std::int64_t best = fallback;
  std::size_t top = 0;
  for (std::int64_t x : v)
    if (std::size_t k = ++n[x]; k > top) {
      top = k;
      best = x;
    }
  return best;
}

// A slope from two points that differ by dx (> 0) in the coordinate, when
// it comes out whole.
void slope(std::vector<std::int64_t>& out, std::int64_t dx, std::int64_t dv) {
  if (dx > 0 && dv % dx == 0) out.push_back(dv / dx);
}

// pts sorted by (r, t).
Fit fit(const std::vector<Point>& pts) {
  Fit f;
  if (pts.empty()) return f;
  std::vector<std::int64_t> cand;
  for (std::size_t i = 1; i < pts.size(); i++)
    if (pts[i].r == pts[i - 1].r)
      slope(cand, pts[i].t - pts[i - 1].t, wrap_sub(pts[i].v, pts[i - 1].v));
  f.b = mode(cand, 0);
  // The log's slope between the same thread of consecutive logs.
  cand.clear();
  std::unordered_map<std::int64_t, const Point*> last;  // by thread
  for (const Point& p : pts) {
    auto [it, fresh] = last.emplace(p.t, &p);
    if (!fresh) {
      slope(cand, p.r - it->second->r, wrap_sub(p.v, it->second->v));
      it->second = &p;
    }
  }
  f.c = mode(cand, 0);
  cand.clear();
  for (const Point& p : pts) cand.push_back(wrap_sub(wrap_sub(p.v, mul(f.b, p.t)), mul(f.c, p.r)));
  f.a = mode(cand, 0);
  return f;
}

std::int64_t residual(const Point& p, const Fit& f) {
  return wrap_sub(wrap_sub(wrap_sub(p.v, f.a), mul(f.b, p.t)), mul(f.c, p.r));
}

Elastic one_value(std::int64_t v, std::int32_t rank) {
  ValueSeq seq;
  seq.push_back(v);
  return Elastic::of(std::move(seq), rank);
}

}  // namespace

Trace merge_threads(std::vector<Trace> traces, const std::vector<std::vector<SiteOrigin>>& origins,
                    std::uint32_t per_log) {
  if (origins.size() != traces.size())
    throw std::invalid_argument("merge_threads: one origin list per thread");
  const auto coords = [per_log](std::size_t s) {
    const auto si = static_cast<std::int64_t>(s);
    return per_log ? std::pair{si % per_log, si / per_log} : std::pair{si, std::int64_t{0}};
  };
  // With several logs, each process's heap blocks lie wherever its
  // allocator put them, shifted by what the MPI library allocated before:
  // a shift per log (the lowest heap base its streams use) takes that out
  // of every heap site's base, which then fits across the logs.
  std::vector<std::int64_t> shift(traces.size(), 0);
  const auto is_heap = [&](std::size_t t, SiteId s) {
    const auto k = decode_site(traces[t].sites.at(s));
    return k && k->kind == AddrKind::Heap;
  };
  if (per_log)
    for (std::size_t l = 0; l < traces.size(); l += per_log) {
      bool any = false;
      std::int64_t low = 0;
      for (std::size_t t = l; t < l + per_log; t++)
        for (const SiteOrigin& o : origins[t])
          if (is_heap(t, o.site) && (!any || o.values[1] < low)) {
            low = o.values[1];
            any = true;
          }
      // From the first log's: the first log's bases stay in the fitted a,
      // and the others' shifts are the small differences between processes.
      std::fill(shift.begin() + static_cast<std::ptrdiff_t>(l),
                shift.begin() + static_cast<std::ptrdiff_t>(l + per_log),
                l == 0 ? low : wrap_sub(low, shift[0]));
    }
  std::fill(shift.begin(), shift.begin() + per_log, 0);
  // Per site and value, the points of the streams that use the site.
  std::vector<std::array<std::vector<Point>, 3>> points;
  for (std::size_t t = 0; t < origins.size(); t++) {
    const auto [ti, ri] = coords(t);
    for (const SiteOrigin& o : origins[t]) {
      if (o.site >= points.size()) points.resize(o.site + 1);
      for (std::size_t k = 0; k < 3; k++) {
        std::int64_t v = o.values[k];
        if (k == 1 && is_heap(t, o.site)) v = wrap_sub(v, shift[t]);
        points[o.site][k].push_back({ti, ri, v});
      }
    }
  }
  std::vector<std::array<Fit, 3>> fits(points.size());
  for (std::size_t s = 0; s < points.size(); s++)
    for (std::size_t k = 0; k < 3; k++) fits[s][k] = fit(points[s][k]);
  const Fields& f = fields();
  const FieldId ids[3][4] = {{f.off, f.offa, f.offb, f.offc},
                             {f.dbase, f.dbasea, f.dbaseb, f.dbasec},
                             {f.own, f.owna, f.ownb, f.ownc}};
  for (std::size_t t = 0; t < traces.size(); t++) {
    const auto rank = static_cast<std::int32_t>(t);
    const auto [ti, ri] = coords(t);
    std::vector<Node> head;
    if (per_log) {
      Node n;
      n.key = {origin_op(), traces[t].sites.intern(stream_site())};
      n.ranks = Ranklist::single(rank);
      n.count = one_value(1, rank);
      n.fields.emplace_back(f.dbase, one_value(shift[t], rank));
      n.fields.emplace_back(f.per, one_value(per_log, rank));
      std::sort(n.fields.begin(), n.fields.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      head.push_back(std::move(n));
    }
    for (const SiteOrigin& o : origins[t]) {
      Node n;
      n.key = {origin_op(), o.site};
      n.ranks = Ranklist::single(rank);
      n.count = one_value(1, rank);
      for (std::size_t k = 0; k < 3; k++) {
        const Fit& fk = fits[o.site][k];
        std::int64_t v = o.values[k];
        if (k == 1 && per_log && is_heap(t, o.site)) v = wrap_sub(v, shift[t]);
        n.fields.emplace_back(ids[k][0], one_value(residual({ti, ri, v}, fk), rank));
        n.fields.emplace_back(ids[k][1], one_value(fk.a, rank));
        n.fields.emplace_back(ids[k][2], one_value(fk.b, rank));
        if (per_log) n.fields.emplace_back(ids[k][3], one_value(fk.c, rank));
      }
      std::sort(n.fields.begin(), n.fields.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      head.push_back(std::move(n));
    }
    traces[t].nodes.insert(traces[t].nodes.begin(), std::make_move_iterator(head.begin()),
                           std::make_move_iterator(head.end()));
  }
  if (per_log) {
    // The same thread of every log first: the merge matches node lists
    // pairwise along a tree, and a tree that pairs a main thread with a
    // worker leaves alike streams matched to different nodes.
    std::vector<Trace> by_thread;
    by_thread.reserve(traces.size());
    for (std::size_t t = 0; t < per_log; t++)
      for (std::size_t s = t; s < traces.size(); s += per_log)
        by_thread.push_back(std::move(traces[s]));
    traces = std::move(by_thread);
  }
  return reduce_traces(std::move(traces));
}

}  // namespace tracefold::memtrace
