// Cell-by-cell extrapolation, for programs whose merged node lists differ
// between rank counts.
//
// The cross-rank merge joins the folds of the ranks it meets, and which
// cells of the grid exist at a count decides what it meets: a wavefront
// sweep's corner, edge and interior ranks skip different receives, so the
// merged node lists of its 4-, 9- and 16-rank traces differ although every
// rank's own fold is the same at every count. Two ranks of one cell may
// even sit in different nodes, matched with different neighbours. A merge
// keeps each rank's own sub-list, so one rank of the cell, read out of the
// merged trace, gives back its own fold; with the other ranks of the cell
// checked to hold the same, it stands for the cell. Those align across the
// inputs, and the target's cells, extrapolated one at a time, are merged
// into one trace.
#include <algorithm>
#include <cmath>

#include "internal.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/progress.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold::extrap::detail {

// `rank`'s sub-list of `trace`, its values given to `as`.
std::vector<Node> rank_nodes(const Trace& trace, int32_t rank, const Ranklist& as) {
  std::vector<Node> out;
  auto one = [&](const Elastic& e) {
    Elastic x;
    if (const ValueSeq* v = e.for_rank(rank)) x.entries().push_back({*v, as});
    return x;
  };
  for (const Node& n : trace.nodes) {
    if (!n.ranks.contains(rank)) continue;
    Node r;
    r.key = n.key;
    r.count = one(n.count);
    r.ranks = as;
    // The merge gives a node the loop levels of its deepest rank; a rank's
    // own stack is the prefix it has values for (as RankIterator reads it).
    for (const LoopLevel& l : n.loops) {
      LoopLevel x{one(l.members), one(l.iters)};
      if (x.members.empty() || x.iters.empty()) break;
      r.loops.push_back(std::move(x));
    }
    for (const auto& [f, e] : n.fields) {
      Elastic x = one(e);
      if (!x.empty()) r.fields.emplace_back(f, std::move(x));
    }
    r.timings = n.timings;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// A node's histograms pool its ranks, and a cell's share of them is not
// recorded apart, so the cell gets its share of the executions.
Histogram scaled(const Histogram& h, double f) {
  if (h.empty()) return h;
  Histogram::Parts p = h.parts();
  std::vector<Histogram::Bin> bins;
  p.count = 0;
  p.sum = 0;
  for (Histogram::Bin b : p.bins) {
    const auto c = static_cast<uint64_t>(std::llround(static_cast<double>(b.count) * f));
    if (c == 0) continue;
    b.sum = static_cast<int64_t>(std::llround(
        static_cast<double>(b.sum) / static_cast<double>(b.count) * static_cast<double>(c)));
    b.count = c;
    p.count += c;
    p.sum += b.sum;
    bins.push_back(b);
  }
  if (bins.empty()) return Histogram{};
  p.bins = std::move(bins);
  return Histogram::from_parts(std::move(p));
}

}  // namespace

void scale_timings(Node& node, double f) {
  for (Timing& t : node.timings) {
    t.compute = scaled(t.compute, f);
    t.comm = scaled(t.comm, f);
    for (auto& [name, h] : t.stats) h = scaled(h, f);
  }
}

namespace {

bool same_elastic(const Elastic& a, const Elastic& b) {
  if (a.entries().size() != b.entries().size()) return false;
  for (std::size_t i = 0; i < a.entries().size(); ++i)
    if (!a.entries()[i].values.equals(b.entries()[i].values)) return false;
  return true;
}

// Where two ranks' sub-lists first differ, or -1.
long first_difference(const Trace& t, const std::vector<Node>& a, const std::vector<Node>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const Node& x = a[i];
    const Node& y = b[i];
    bool same = x.key.op == y.key.op && t.sites.at(x.key.site) == t.sites.at(y.key.site) &&
                same_elastic(x.count, y.count) && x.loops.size() == y.loops.size() &&
                x.fields.size() == y.fields.size();
    for (std::size_t l = 0; same && l < x.loops.size(); ++l)
      same = same_elastic(x.loops[l].members, y.loops[l].members) &&
             same_elastic(x.loops[l].iters, y.loops[l].iters);
    for (std::size_t f = 0; same && f < x.fields.size(); ++f)
      same = x.fields[f].first == y.fields[f].first &&
             same_elastic(x.fields[f].second, y.fields[f].second);
    if (!same) return static_cast<long>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<long>(n);
}

}  // namespace

Trace restrict_to_cell(const Trace& trace, const GridInput& g, int cell, const std::string& name) {
  Trace out = same_header(trace);
  const int32_t rep = g.cell_rep[static_cast<std::size_t>(cell)];
  if (rep < 0) return out;
  std::vector<int32_t> members;
  for (std::size_t r = 0; r < g.cell_of_rank.size(); ++r)
    if (g.cell_of_rank[r] == cell) members.push_back(static_cast<int32_t>(r));
  const Ranklist all = Ranklist::from_ranks(members);
  out.nodes = rank_nodes(trace, rep, all);
  std::size_t j = 0;
  for (const Node& n : trace.nodes) {
    if (!n.ranks.contains(rep)) continue;
    Node& mine = out.nodes[j++];
    const int64_t total = executions(n.count);
    const double f =
        total > 0 ? static_cast<double>(executions(mine.count)) / static_cast<double>(total) : 0.0;
    scale_timings(mine, f);
  }
  for (int32_t r : members) {
    if (r == rep) continue;
    const long at = first_difference(trace, out.nodes, rank_nodes(trace, r, all));
    if (at >= 0)
      throw ExtrapError(name + ": ranks " + std::to_string(rep) + " and " + std::to_string(r) +
                        " lie in the same part of the " + g.topo.to_string() + " grid (" +
                        cell_name(g.topo, cell) + ") but their calls differ from their " +
                        std::to_string(at + 1) +
                        "th node on: their calls depend on more than whether a rank is "
                        "first, in between or last along each dimension; give --grid if "
                        "another grid keeps these ranks apart, or write a plugin "
                        "(docs/extrapolate.md, Plugins)");
  }
  return out;
}

int64_t executions(const Elastic& count) {
  int64_t total = 0;
  for (const auto& e : count.entries())
    total += e.values.sum() * static_cast<int64_t>(e.ranks.size());
  return total;
}

void extrapolate_by_cell(const std::vector<ExtrapInput>& in, const std::vector<GridInput>& grids,
                         const CommShapes& shapes, ExtrapResult& res, const ExtrapOptions& opts) {
  const Topology& target = res.target;
  const int cells = cell_count(target);
  bool first = true;
  for (int c = 0; c < cells; ++c) {
    report_progress(opts.progress, static_cast<std::size_t>(c), static_cast<std::size_t>(cells));
    if (cell_ranks(target, c).empty()) continue;
    std::vector<ExtrapInput> cin;
    std::vector<const GridInput*> from;
    cin.reserve(in.size());
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (grids[k].cell_rep[static_cast<std::size_t>(c)] < 0) continue;
      cin.push_back({in[k].name, restrict_to_cell(in[k].trace, grids[k], c, in[k].name)});
      from.push_back(&grids[k]);
    }
    const std::string where = "ranks at " + cell_name(target, c);
    if (cin.empty())
      throw ExtrapError(where +
                        ": no input has ranks there (every input's grid is too small in some "
                        "dimension): record a run with at least 3 ranks along each dimension");
    // Read apart from the other parts, one input's values would pass as
    // constants: nothing says how they scale.
    if (cin.size() == 1)
      throw ExtrapError(where + ": only " + cin[0].name +
                        " has ranks there, and cell by cell one input cannot show how their "
                        "values scale: give inputs in which every part of the grid appears at "
                        "two sizes (at least 3 ranks along each dimension in two of them)");
    std::vector<GridInput> cg;
    for (std::size_t j = 0; j < cin.size(); ++j)
      cg.push_back(make_grid_input(cin[j], from[j]->topo));
    std::vector<std::vector<std::size_t>> order;
    try {
      order = align_nodes(cin);
    } catch (const ExtrapError& e) {
      throw ExtrapError(where + ": " + e.what());
    }
    res.explanation.push_back(where + " (" + std::to_string(cin.size()) + " inputs, " +
                              std::to_string(order[0].size()) + " nodes):");
    Trace part;
    part.world_size = static_cast<int32_t>(opts.ranks);
    part.comms.define_world(part.world_size);
    try {
      extrapolate_nodes(cin, cg, order, target, shapes, part, res, {}, opts.model_counts);
    } catch (const ExtrapError& e) {
      throw ExtrapError(where + ": " + e.what());
    }
    if (part.nodes.empty()) continue;
    canonicalize_sites(part);  // the merge expects timing blocks sorted by predecessor
    if (first) {
      res.trace = std::move(part);
      first = false;
    } else {
      res.trace = merge_traces(std::move(res.trace), std::move(part));
    }
  }
  report_progress(opts.progress, static_cast<std::size_t>(cells), static_cast<std::size_t>(cells));
}

}  // namespace tracefold::extrap::detail
