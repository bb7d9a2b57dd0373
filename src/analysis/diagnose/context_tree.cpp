// Temporal context trees (seed 002, Section 3): per rank, samples next to
// each other in time that share a prefix of their context share the nodes
// of that prefix, so every node is one stretch of the rank's time. The seed
// finds iterations from back edges of a control-flow graph; tracefold has
// the loops its recorder folded, so a context starts with the loop and
// iteration of the MPI call the time leads up to (core's RankIterator
// tells where each event is), then the sample's user-code functions, then
// the MPI call a sample fell into. The loops of the trace thus come first,
// outside the functions: they are found from MPI calls, not from code.
//
// The iteration layer also places a diagnosis in its loop: the instances
// of a phase's closing synchronisation that hold a loss are named by their
// iterations (Context::iterations_of).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "internal.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/export.hpp"

namespace tracefold::diagnose_detail {

LoopFacts loop_facts(const Trace& trace, const WaitInput& events) {
  LoopFacts f;
  f.at.resize(events.ranks.size());
  if (trace.nodes.empty()) return f;
  std::map<std::pair<std::size_t, std::size_t>, int32_t> index;
  // Where an event lies in one loop: remaining counts this iteration too.
  struct LoopPosition {
    std::size_t node = 0, level = 0;
    int64_t remaining = 0;
  };
  std::vector<LoopPosition> pos, prev;
  for (std::size_t r = 0; r < events.ranks.size(); ++r) {
    auto& at = f.at[r];
    at.resize(events.ranks[r].size());
    std::vector<uint32_t> entries(f.loops.size(), 0);
    // Per depth of the loop stack: its loop, entry and iterations.
    std::vector<int32_t> id;
    std::vector<uint32_t> entry;
    std::vector<int64_t> of;
    RankIterator it(trace, int32_t(r));
    Event ev;
    prev.clear();
    for (std::size_t k = 0; k < at.size() && it.next(ev); ++k) {
      pos.clear();
      for (std::size_t d = 0; d < it.loop_depth(); ++d) {
        const RankIterator::Loop l = it.loop(d);
        pos.push_back({l.head, l.level, l.trips - l.iteration});
      }
      // The depths that go on with the previous event's entry: a loop
      // moved on to its next iteration enters the loops inside it anew.
      std::size_t same = 0;
      while (same < pos.size() && same < prev.size()) {
        const auto &a = pos[same], &b = prev[same];
        if (a.node != b.node || a.level != b.level || a.remaining > b.remaining) break;
        ++same;
        if (a.remaining != b.remaining) break;
      }
      id.resize(pos.size()), entry.resize(pos.size()), of.resize(pos.size());
      for (std::size_t d = same; d < pos.size(); ++d) {
        auto [i, fresh] = index.try_emplace({pos[d].node, pos[d].level}, int32_t(f.loops.size()));
        if (fresh) f.loops.push_back({pos[d].node, pos[d].level, d > 0 ? id[d - 1] : -1});
        entries.resize(f.loops.size(), 0);
        id[d] = i->second;
        entry[d] = ++entries[std::size_t(i->second)];
        of[d] = pos[d].remaining;
      }
      if (!pos.empty()) {
        const std::size_t d = pos.size() - 1;
        at[k] = {id[d], entry[d], of[d] - pos[d].remaining + 1, of[d]};
      }
      std::swap(pos, prev);
    }
  }
  return f;
}

namespace {

// One element of a context: (kind, what, loop entry).
using Elem = std::tuple<uint8_t, int64_t, uint32_t>;

struct Item {
  int64_t t0, t1;
  bool sample;
  std::vector<Elem> path;
  /// Its first `merge` elements may share the previous item's nodes; the
  /// others are new calls even where the names agree (the sample's LCA
  /// marker says those frames were left and entered again in between).
  std::size_t merge = SIZE_MAX;
};

}  // namespace

void build_tree(const RankSamples& rs, const std::vector<uint32_t>& in_time_order,
                const std::vector<std::vector<std::string>>& paths,
                const std::vector<std::vector<uint16_t>>& depths,
                const std::vector<EventSpan>& events, const DigestParams& p, RankDigest& d) {
  std::map<std::string, int64_t> frame_index;
  auto loops_of = [&](std::size_t k, std::vector<Elem>& path) {
    if (k >= events.size() || events[k].loop < 0) return;
    path.emplace_back(TreeNode::kLoop, events[k].loop, events[k].entry);
    path.emplace_back(TreeNode::kIteration, events[k].iteration, 0);
  };
  // Events mark their iterations even where no sample fell: an item each,
  // merged in time order with the samples.
  std::vector<Item> items;
  for (std::size_t k = 0; k < events.size(); ++k) {
    if (events[k].loop < 0 || is_environment(events[k].op)) continue;
    Item it{std::max(events[k].compute_start_ns, p.run_start), events[k].end_ns, false, {}};
    loops_of(k, it.path);
    items.push_back(std::move(it));
  }
  for (uint32_t i : in_time_order) {
    const Sample& s = rs.samples[i];
    if (s.time_ns < p.run_start || s.time_ns >= p.run_end) continue;
    Item it{s.time_ns, s.time_ns + p.period_ns, true, {}};
    // The event the sample's time leads up to (or falls in).
    // The recorder numbers it with that event; by time where it does not.
    std::size_t k = s.mpi_event;
    if (k >= events.size() || events[k].end_ns < s.time_ns)
      k = std::size_t(std::upper_bound(events.begin(), events.end(), s.time_ns,
                                       [](int64_t t, const EventSpan& x) { return t < x.end_ns; }) -
                      events.begin());
    loops_of(k, it.path);
    if (s.context < paths.size())
      for (std::size_t f = 0; f < paths[s.context].size(); ++f) {
        auto [fi, fresh] = frame_index.try_emplace(paths[s.context][f], int64_t(d.frames.size()));
        if (fresh) d.frames.push_back(paths[s.context][f]);
        // 0: the marker is unknown, and names alone decide.
        if (s.lca_depth > 0 && it.merge == SIZE_MAX && s.context < depths.size() &&
            f < depths[s.context].size() && depths[s.context][f] > s.lca_depth)
          it.merge = it.path.size();
        it.path.emplace_back(TreeNode::kFrame, fi->second, 0);
      }
    if (s.in_mpi && k < events.size() && s.time_ns >= events[k].start_ns)
      it.path.emplace_back(TreeNode::kCall, int64_t(events[k].op), 0);
    items.push_back(std::move(it));
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.t0 < b.t0; });

  // The open nodes: the previous item's context (UINT32_MAX: not kept).
  std::vector<std::pair<Elem, uint32_t>> open;
  for (const Item& it : items) {
    std::size_t same = 0;
    while (same < open.size() && same < it.path.size() && same < it.merge &&
           open[same].first == it.path[same])
      ++same;
    // An event's iteration leaves the computation inside it open: the
    // functions that run on after the call are the same calls.
    if (it.sample || same < it.path.size()) open.resize(same);
    for (std::size_t i = same; i < it.path.size(); ++i) {
      const uint32_t parent = i == 0 ? UINT32_MAX : open[i - 1].second;
      uint32_t at = UINT32_MAX;
      if (d.tree.size() < kTreeNodes && (i == 0 || parent != UINT32_MAX)) {
        at = uint32_t(d.tree.size());
        TreeNode n;
        n.parent = parent;
        n.kind = std::get<0>(it.path[i]);
        n.what = std::get<1>(it.path[i]);
        n.start_ns = it.t0;
        n.end_ns = it.t1;
        d.tree.push_back(n);
      } else {
        ++d.tree_left_out;
      }
      open.emplace_back(it.path[i], at);
    }
    for (std::size_t i = 0; i < it.path.size(); ++i) {
      const uint32_t at = open[i].second;
      if (at == UINT32_MAX) continue;
      TreeNode& n = d.tree[at];
      n.end_ns = std::max(n.end_ns, it.t1);
      if (it.sample) ++n.samples;
    }
  }
}

std::string Context::loop_label(int32_t loop) const {
  if (loop < 0 || std::size_t(loop) >= loops.loops.size()) return "a loop";
  const Node& n = trace.nodes.at(loops.loops[std::size_t(loop)].node);
  Event ev;
  ev.op = n.key.op;
  ev.site = n.key.site;
  return "the loop starting at " + call_label(ev);
}

std::string Context::iterations_of(const std::vector<std::pair<std::size_t, double>>& instances,
                                   double noise_s) const {
  // Rank 0's closing call places the instance: every rank's is the same
  // iteration of a loop they all make.
  std::vector<LossAt> losses;
  for (const auto& [i, v] : instances)
    if (i < syncs.size()) losses.push_back({0, syncs[i].ev[0], v});
  return iterations_where(losses, noise_s);
}

namespace {
// How small the typical loss of the iterations below the bar must be, against
// that of those above it, for the loss to be placed in the latter.
constexpr double kSpreadShare = 0.25;

struct Hit {
  uint32_t entry;
  int64_t iteration;
  double seconds;
};

// Where a loss lies in the loops from its sums per loop iteration
// (`by_loop`: each loop's iterations in the order first met; `loss`: per
// loop). `extent(loop, of, entries)` gives the loop's iterations per entry
// and its entries on the ranks of the loss.
std::string place_in_loops(
    const Context& c, std::map<int32_t, std::vector<Hit>>& by_loop, std::map<int32_t, double>& loss,
    const std::function<void(int32_t, int64_t&, std::set<uint32_t>&)>& extent, double noise_s) {
  if (by_loop.empty()) return "";
  // The loop holding most of the loss, and its iterations that hold a good
  // part of it: at least half the typical loss of the iterations above the
  // mean (their median: one iteration a loaded machine delayed does not
  // raise the bar), and above the noise.
  int32_t loop = by_loop.begin()->first;
  for (const auto& [l, sum] : loss)
    if (sum > loss[loop]) loop = l;
  const std::vector<Hit>& hits = by_loop[loop];
  double mean = 0;
  for (const Hit& h : hits) mean += h.seconds;
  mean /= double(hits.size());
  std::vector<double> high;
  for (const Hit& h : hits)
    if (h.seconds >= mean) high.push_back(h.seconds);
  if (high.empty() || mean <= 0) return "";
  std::nth_element(high.begin(), high.begin() + std::ptrdiff_t(high.size() / 2), high.end());
  const double bar = std::max(0.5 * high[high.size() / 2], noise_s);
  // A loss in every iteration that only a loaded machine's jitter makes
  // uneven (the time of frequent or large calls) is in all of them: the
  // iterations below the bar hold a typical loss of the order of those
  // above it, where a loss of some iterations leaves the others near 0.
  std::vector<double> above, below;
  for (const Hit& h : hits) (h.seconds >= bar ? above : below).push_back(h.seconds);
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const bool spread =
      !below.empty() && !above.empty() && median(below) >= kSpreadShare * median(above);
  std::vector<int64_t> its;
  std::set<uint32_t> hit_entries;
  for (const Hit& h : hits)
    if (spread || h.seconds >= bar) its.push_back(h.iteration), hit_entries.insert(h.entry);
  std::sort(its.begin(), its.end());
  its.erase(std::unique(its.begin(), its.end()), its.end());
  if (its.empty()) return "";
  // Iterations of an entry and entries of the loop, on the ranks of the loss.
  int64_t of = 0;
  std::set<uint32_t> entries;
  extent(loop, of, entries);
  std::ostringstream o;
  if (int64_t(its.size()) == of) {
    o << "in all " << of << " iterations of " << c.loop_label(loop);
  } else {
    o << "in iteration" << (its.size() == 1 ? " " : "s ");
    std::size_t ranges = 0;
    for (std::size_t i = 0; i < its.size();) {
      std::size_t j = i;
      while (j + 1 < its.size() && its[j + 1] == its[j] + 1) ++j;
      if (ranges == 6) {
        o << ", ...";
        break;
      }
      o << (ranges++ ? ", " : "") << its[i];
      if (j > i) o << "\u2013" << its[j];
      i = j + 1;
    }
    o << " of " << of << " of " << c.loop_label(loop);
  }
  if (entries.size() > 1)
    o << ", in " << hit_entries.size() << " of its " << entries.size() << " entries";
  return o.str();
}

}  // namespace

std::string Context::iterations_where(const std::vector<LossAt>& losses, double noise_s) const {
  // Per loop, its iterations in the order first met, each with the loss of
  // every rank and event in it.
  std::map<int32_t, std::vector<Hit>> by_loop;
  std::map<std::tuple<int32_t, uint32_t, int64_t>, std::size_t> hit_of;
  std::map<int32_t, double> loss;
  std::set<int32_t> ranks;
  for (const LossAt& l : losses) {
    if (std::size_t(l.rank) >= loops.at.size()) continue;
    const auto& at = loops.at[std::size_t(l.rank)];
    if (l.event >= at.size()) continue;
    const LoopAt& a = at[l.event];
    if (a.loop < 0) continue;
    std::vector<Hit>& hits = by_loop[a.loop];
    auto [h, fresh] = hit_of.try_emplace({a.loop, a.entry, a.iteration}, hits.size());
    if (fresh) hits.push_back({a.entry, a.iteration, 0});
    hits[h->second].seconds += l.seconds;
    loss[a.loop] += l.seconds;
    ranks.insert(l.rank);
  }
  return place_in_loops(
      *this, by_loop, loss,
      [&](int32_t loop, int64_t& of, std::set<uint32_t>& entries) {
        for (const int32_t r : ranks)
          for (const LoopAt& a : loops.at[std::size_t(r)])
            if (a.loop == loop) of = std::max(of, a.of), entries.insert(a.entry);
      },
      noise_s);
}

std::string Context::iterations_summed(const std::vector<IterationLoss>& hits,
                                       const std::vector<int32_t>& ranks, double noise_s) const {
  std::map<int32_t, std::vector<Hit>> by_loop;
  std::map<int32_t, double> loss;
  for (const IterationLoss& h : hits) {
    if (h.loop < 0) continue;
    by_loop[h.loop].push_back({h.entry, h.iteration, h.seconds});
    loss[h.loop] += h.seconds;
  }
  if (by_loop.empty()) return "";
  return place_in_loops(
      *this, by_loop, loss,
      [&](int32_t loop, int64_t& of, std::set<uint32_t>& entries) {
        // reduced.entries is in rank order, as `ranks` is.
        auto r = ranks.begin();
        for (const LoopEntrySpan& e : reduced.entries) {
          while (r != ranks.end() && *r < e.rank) ++r;
          if (r == ranks.end()) break;
          if (*r == e.rank && e.loop == loop) of = std::max(of, e.of), entries.insert(e.entry);
        }
      },
      noise_s);
}

void name_trees(Context& c) {
  constexpr int32_t kRanks = 4;
  for (int32_t r = 0; r < c.size && r < kRanks; ++r) {
    if (!c.sampled(r)) continue;
    const RankDigest& d = c.digests[std::size_t(r)];
    ContextTree t;
    t.rank = r;
    t.left_out = d.tree_left_out;
    for (const TreeNode& n : d.tree) {
      ContextTreeNode o;
      switch (n.kind) {
        case TreeNode::kLoop:
          o.label = c.loop_label(int32_t(n.what));
          o.label.erase(0, 4);  // "the "
          break;
        case TreeNode::kIteration:
          o.label = "iteration " + std::to_string(n.what);
          break;
        case TreeNode::kFrame:
          o.label = std::size_t(n.what) < d.frames.size() ? d.frames[std::size_t(n.what)] : "?";
          break;
        default:
          o.label = OpTable::name(OpId(n.what));
      }
      o.parent = n.parent == UINT32_MAX ? -1 : int32_t(n.parent);
      o.start_ns = n.start_ns - c.run_start;
      o.end_ns = n.end_ns - c.run_start;
      o.samples = n.samples;
      t.nodes.push_back(std::move(o));
    }
    c.rep.trees.push_back(std::move(t));
  }
}

}  // namespace tracefold::diagnose_detail
