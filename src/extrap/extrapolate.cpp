// extrapolate(): topology, alignment, then node by node (see extrapolate.hpp).
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/lcs_filter.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "internal.hpp"
#include "tracefold/merge.hpp"

namespace tracefold::extrap {

using namespace detail;

namespace {

void check_input(const ExtrapInput& in) {
  const Trace& t = in.trace;
  if (!t.lossy.empty())
    throw ExtrapError(in.name + ": lossy trace (" + t.lossy +
                      "): extrapolation needs lossless inputs");
  if (t.world_size < 1) throw ExtrapError(in.name + ": empty trace");
}

// The plugin path reads peers against the world only.
void check_world_only(const std::vector<ExtrapInput>& in) {
  for (const auto& x : in)
    for (const auto& [id, groups] : x.trace.comms.all())
      if (id != CommTable::kWorld)
        throw ExtrapError(x.name + ": communicator " + format_value(id) +
                          " (not MPI_COMM_WORLD): the plugin path extrapolates calls on the "
                          "world only");
}

// The communicator of a node's peers, for reading them as offsets on the
// grid (cells.cpp): nullptr for the world or a communicator that is the
// world under another id, else the dimensions of the one communicator
// every input's calls use. `pooled` is cleared when the calls use several
// (their peers are then fitted as plain numbers).
const std::vector<bool>* peers_comm(const std::vector<ExtrapInput>& in,
                                    const std::vector<const Node*>& nodes, const CommShapes& shapes,
                                    bool& pooled) {
  std::set<int64_t> ids;
  for (std::size_t k = 0; k < in.size(); ++k)
    if (const Elastic* comm = nodes[k]->field(FieldTable::comm()))
      for (const auto& e : comm->entries())
        for (int64_t v : e.values.to_vector())
          ids.insert(world_like_comm(in[k].trace, v) ? CommTable::kWorld : v);
  pooled = ids.size() <= 1;
  if (ids.empty() || *ids.begin() == CommTable::kWorld) return nullptr;
  const auto it = shapes.find(*ids.begin());
  if (it == shapes.end()) {
    pooled = false;
    return nullptr;
  }
  return &it->second;
}

// Fields whose values follow the rank's coordinates rather than its cell.
bool by_coordinates(FieldId f) {
  static const auto color = FieldTable::find("color"), key = FieldTable::find("key");
  return (color && f == *color) || (key && f == *key);
}

// The recorded MPI_Cart_create grid against the detected one (the rule is
// in docs/extrapolate.md): equal, or the recorded one also explains the
// endpoint groups (it wins the tie), or an error naming the call. Returns
// the grid to use and says where each size came from.
Topology cross_check_cart(const ExtrapInput& x, const TopologyDetection& det, std::string& source) {
  static const char* const kAxis[] = {"x", "y", "z"};
  const std::optional<RecordedCart> cart = recorded_cart(x.trace, x.name);
  Topology t = det.topology;
  if (!cart) {
    for (int d = 0; d < t.dims(); ++d)
      source += std::string(d ? ", " : "") + kAxis[d] + "=" +
                std::to_string(t.sizes[static_cast<std::size_t>(d)]) + " (endpoints)";
    return t;
  }
  const bool same = cart->topology.sizes == det.topology.sizes;
  if (!same && !grid_explains(det, cart->topology))
    throw ExtrapError(x.name + ": " + cart->node + ", field dims: MPI_Cart_create's grid " +
                      cart->topology.to_string() + " does not explain the " +
                      std::to_string(det.groups) + " endpoint patterns, which fit " +
                      det.topology.to_string() +
                      ": the ranks do not communicate along the recorded grid");
  t = cart->topology;
  for (int d = 0; d < t.dims(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    const std::string idx = std::to_string(cart->mpi_index[i]);
    source += std::string(d ? ", " : "") + kAxis[d] + "=" + std::to_string(t.sizes[i]) +
              " (MPI_Cart_create dims[" + idx + "], " +
              (same ? "the endpoints agree" : "the endpoints also fit it") + "; periods[" + idx +
              "]=" + (t.periodic[i] ? "1" : "0") +
              (same && t.periodic[i] != det.topology.periodic[i]
                   ? std::string(", the endpoints show ") +
                         (det.topology.periodic[i] ? "a" : "no") + " wrap-around"
                   : std::string()) +
              ")";
  }
  if (!same) source += "; detection alone would have chosen " + det.topology.to_string();
  return t;
}

std::string grid_text(const Topology& t) {
  std::string s = t.to_string();
  std::string wraps;
  static const char* const kAxis[] = {"x", "y", "z"};
  for (int i = 0; i < t.dims(); ++i)
    if (t.periodic[static_cast<std::size_t>(i)])
      wraps += std::string(wraps.empty() ? "" : ",") + kAxis[i];
  return s + (wraps.empty() ? "" : " (wraps around in " + wraps + ")");
}

// Whether some input has two ranks of one part of its grid with different
// values of the field (`per[k]` in input k): values that follow the data
// rather than the grid.
bool differ_inside_cells(const std::vector<GridInput>& grids,
                         const std::vector<const Elastic*>& per) {
  for (std::size_t k = 0; k < grids.size(); ++k) {
    if (!per[k]) continue;
    try {
      cell_sequences(grids[k], *per[k], "");
    } catch (const ExtrapError&) {
      return true;
    }
  }
  return false;
}

struct NodeWork {
  const std::vector<ExtrapInput>& in;
  const std::vector<GridInput>& grids;
  const Topology& target;
  std::vector<const Node*> nodes;  // one per input
  std::string label;
  std::vector<std::string>* explain;
  /// The dimensions of the peers' communicator (nullptr: the world).
  const std::vector<bool>* peer_keep = nullptr;

  Elastic elastic(const std::string& what, const std::function<const Elastic*(const Node&)>& get,
                  bool peer = false, bool peer_field = false) {
    std::vector<std::vector<const ValueSeq*>> per;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const Elastic* e = get(*nodes[k]);
      per.push_back(e ? cell_sequences(grids[k], *e, label + ", " + what)
                      : std::vector<const ValueSeq*>(grids[k].cell_rep.size(), nullptr));
    }
    std::vector<std::string> lines;
    Elastic out = extrapolate_elastic(grids, per, target, label + ", " + what, peer, &lines,
                                      peer_keep, peer_field);
    for (const auto& l : lines) explain->push_back("    " + what + ": " + l);
    return out;
  }
};

// A root that every rank of the node has alike in every input (the root
// of a collective is the same on all members): its numbers fitted over all
// inputs at once, since it does not depend on the cell (a Reduce to the
// row's last rank, S1 - 1, seen in in-between cells at two sizes only).
// nullopt for other fields or when ranks differ.
std::optional<Elastic> uniform_root(NodeWork& w, FieldId f, const Ranklist& ranks) {
  static const auto root = FieldTable::find("root");
  if (!root || f != *root) return std::nullopt;
  std::vector<SeqObservation> obs;
  for (std::size_t k = 0; k < w.nodes.size(); ++k) {
    const Elastic* e = w.nodes[k]->field(f);
    if (!e || e->entries().size() != 1 || !(e->entries()[0].ranks == w.nodes[k]->ranks))
      return std::nullopt;
    obs.push_back({&w.grids[k], &e->entries()[0].values});
  }
  std::string formula;
  ValueSeq seq =
      extrapolate_sequence(obs, 0, nullptr, w.target.sizes, w.label + ", field root", formula);
  w.explain->push_back("    field root: " + formula + " @ every rank (alike in every input)");
  Elastic out;
  out.entries().push_back({std::move(seq), ranks});
  return out;
}

// Extrapolates the aligned nodes of `in` (order as align_nodes gives it)
// into `out`, whose world and tables are set up by the caller.
void extrapolate_nodes(const std::vector<ExtrapInput>& in, const std::vector<GridInput>& grids,
                       const std::vector<std::vector<std::size_t>>& order, const Topology& target,
                       const CommShapes& shapes, Trace& out, ExtrapResult& res,
                       const ProgressFn& progress, bool model_counts) {
  for (std::size_t i = 0; i < order[0].size(); ++i) {
    report_progress(progress, i, order[0].size());
    NodeWork w{in, grids, target, {}, "", &res.explanation};
    for (std::size_t k = 0; k < in.size(); ++k) w.nodes.push_back(&in[k].trace.nodes[order[k][i]]);
    const Trace& t0 = in[0].trace;
    w.label = "node " + std::to_string(order[0][i]) + " (" + describe_node(t0, *w.nodes[0]) + ")";
    res.explanation.push_back(w.label + ":");
    Node node;
    node.key.op = w.nodes[0]->key.op;
    node.key.site = out.sites.intern(t0.sites.at(w.nodes[0]->key.site));
    node.count = w.elastic("count", [](const Node& n) { return &n.count; });
    node.ranks = node.count.ranks();
    if (node.ranks.empty()) {
      res.explanation.push_back("    no rank of the target has this node");
      continue;
    }
    // A loop whose trip count follows the grid (q - 1 pipeline stages on a
    // q x q grid) runs once per entry in the smallest input, where the
    // fold has no loop: read it as one iteration there, when the other
    // inputs agree on the body.
    std::size_t levels = 0, deepest = 0;
    for (std::size_t k = 0; k < in.size(); ++k)
      if (w.nodes[k]->loops.size() > levels) {
        levels = w.nodes[k]->loops.size();
        deepest = k;
      }
    std::vector<Node> padded(in.size());
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (w.nodes[k]->loops.size() == levels) continue;
      padded[k] = *w.nodes[k];
      for (std::size_t l = w.nodes[k]->loops.size(); l < levels; ++l) {
        const auto& m = w.nodes[deepest]->loops[l].members.entries();
        const auto runs = m.empty() ? std::vector<ValueSeq::Run>{} : m[0].values.runs();
        if (m.size() != 1 || runs.size() != 1 || runs[0].pattern.size() != 1)
          throw ExtrapError(in[k].name + ": " + w.label + " heads " +
                            std::to_string(w.nodes[k]->loops.size()) + " loops, in " +
                            in[deepest].name + " it heads " + std::to_string(levels) +
                            ", and the missing loop's body is not one fixed size: give inputs "
                            "in which the loop runs more than once per entry");
        padded[k].loops.push_back(
            single_iteration_level(*w.nodes[k], in[k].trace.world_size, runs[0].pattern[0]));
        res.explanation.push_back("    loop " + std::to_string(l) + " absent in " + in[k].name +
                                  ": read as one iteration per entry");
      }
      w.nodes[k] = &padded[k];
    }
    for (std::size_t l = 0; l < w.nodes[0]->loops.size(); ++l) {
      LoopLevel level;
      const std::string lv = "loop " + std::to_string(l);
      level.members =
          w.elastic(lv + " members", [l](const Node& n) { return &n.loops[l].members; });
      level.iters = w.elastic(lv + " iters", [l](const Node& n) { return &n.loops[l].iters; });
      node.loops.push_back(std::move(level));
    }
    std::vector<FieldId> fields;
    for (const Node* n : w.nodes)
      for (const auto& [f, e] : n->fields) fields.push_back(f);
    std::sort(fields.begin(), fields.end());
    fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
    bool pooled = true;
    w.peer_keep = peers_comm(in, w.nodes, shapes, pooled);
    static const auto cart_op = OpTable::find("MPI_Cart_create");
    // Count vectors that follow the data: refused, or drawn from the
    // model once the loop has the node's other fields (count_model.cpp).
    const bool vectors = has_count_vectors(node.key.op);
    bool modelled = false;
    for (FieldId f : fields) {
      if (modelled && is_count_vector(f)) continue;
      if (cart_op && node.key.op == *cart_op && FieldTable::name(f) == "dims") {
        // The grid itself: its sizes at the target are known, whatever
        // cells the inputs have.
        if (auto e = cart_dims_for_target(grids, w.nodes, node.ranks, target)) {
          res.explanation.push_back("    field dims: the target grid " + target.to_string() +
                                    " in MPI order");
          node.fields.emplace_back(f, std::move(*e));
          continue;
        }
      }
      if (auto e = uniform_root(w, f, node.ranks)) {
        node.fields.emplace_back(f, std::move(*e));
        continue;
      }
      if (by_coordinates(f)) {
        std::vector<const Elastic*> per;
        for (const Node* n : w.nodes) per.push_back(n->field(f));
        std::vector<std::string> lines;
        Elastic e = extrapolate_by_coordinates(grids, per, target,
                                               w.label + ", field " + FieldTable::name(f), &lines);
        for (const auto& l : lines)
          res.explanation.push_back("    field " + FieldTable::name(f) + ": " + l);
        if (!e.empty()) node.fields.emplace_back(f, std::move(e));
        continue;
      }
      Elastic e;
      try {
        e = w.elastic(
            "field " + FieldTable::name(f), [f](const Node& n) { return n.field(f); },
            FieldTable::role(f) == FieldRole::kPeer && pooled,
            FieldTable::role(f) == FieldRole::kPeer);
      } catch (const ExtrapError&) {
        // Numbers that differ inside a part of the grid may follow an
        // uneven division (remainder.cpp); peers never do.
        if (FieldTable::role(f) == FieldRole::kPeer) throw;
        std::vector<const Elastic*> per;
        for (const Node* n : w.nodes) per.push_back(n->field(f));
        std::vector<std::string> lines;
        auto r = extrapolate_by_remainder(grids, per, target, node.ranks, &lines);
        if (!r && vectors && is_count_vector(f) && differ_inside_cells(grids, per)) {
          if (!model_counts)
            throw CountModelError(count_vector_refusal(in, w.nodes, w.label, f, target.ranks()));
          modelled = true;
          continue;
        }
        if (!r) throw;
        for (const auto& l : lines)
          res.explanation.push_back("    field " + FieldTable::name(f) + ": " + l);
        e = std::move(*r);
      }
      if (!e.empty()) node.fields.emplace_back(f, std::move(e));
    }
    if (modelled) {
      std::erase_if(node.fields, [](const auto& fe) { return is_count_vector(fe.first); });
      for (auto& fe : model_count_vectors(in, w.nodes, w.label, node, target.ranks(),
                                          out.nodes.size(), res.explanation))
        node.fields.push_back(std::move(fe));
      std::sort(node.fields.begin(), node.fields.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      res.modelled_events += executions(node.count);
    }
    std::vector<std::vector<int64_t>> sizes;
    for (const auto& g : grids) sizes.push_back(g.topo.sizes);
    node.timings =
        extrapolate_timings(in, w.nodes, sizes, target, node.ranks.first(), out, res.explanation);
    out.nodes.push_back(std::move(node));
  }
  report_progress(progress, order[0].size(), order[0].size());
}

// The cell-by-cell path: each target cell from the inputs restricted to
// that cell, then the cells merged.
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
      res.trace = merge_traces(res.trace, part);
    }
  }
  report_progress(opts.progress, static_cast<std::size_t>(cells), static_cast<std::size_t>(cells));
}

}  // namespace

namespace {

// The row-major stencil path: topology, alignment, node by node or cell by cell.
ExtrapResult extrapolate_row_major(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts);
// extrapolate() without the symbol tables.
ExtrapResult extrapolate_calls(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts);

}  // namespace

ExtrapResult extrapolate(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts) {
  // Checked first: a disagreement here is found before any work is done.
  SymbolTables symbols = common_symbols(in);
  ExtrapResult res = extrapolate_calls(in, opts);
  res.trace.symtab = std::move(symbols);
  res.trace.symtab.prune(res.trace.sites);
  return res;
}

namespace {

ExtrapResult extrapolate_calls(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts) {
  if (in.size() < 2)
    throw ExtrapError(
        "extrapolation needs traces of at least two rank counts (a d-dimensional "
        "grid needs d+1)");
  if (opts.ranks < 1) throw ExtrapError("--ranks must be at least 1");
  if (opts.ranks > INT32_MAX) throw ExtrapError("--ranks must fit an MPI rank (at most 2^31-1)");
  std::map<int32_t, std::string> by_size;
  for (const auto& x : in) {
    check_input(x);
    auto [it, fresh] = by_size.emplace(x.trace.world_size, x.name);
    if (!fresh)
      throw ExtrapError(x.name + " and " + it->second + " both have " +
                        std::to_string(x.trace.world_size) +
                        " ranks: give traces of different rank counts");
  }

  if (opts.snippet) {
    // Lossy: extrapolate the filtered traces, then mark the output.
    std::vector<ExtrapInput> filtered;
    std::vector<FilterReport> reports;
    for (const auto& x : in) {
      check_input(x);
      reports.emplace_back();
      filtered.push_back({x.name, filter_trace(x.trace, *opts.snippet, x.name, reports.back())});
      filtered.back().trace.lossy.clear();
    }
    ExtrapOptions plain = opts;
    plain.snippet.reset();
    ExtrapResult res = extrapolate(filtered, plain);  // the LCS, if asked, runs in there
    res.trace.lossy = "snippet filter " + opts.snippet->source +
                      (res.trace.lossy.empty() ? "" : ", then " + res.trace.lossy);
    reports.insert(reports.end(), res.filtered.begin(), res.filtered.end());
    res.filtered = std::move(reports);
    return res;
  }
  if (opts.weighted_lcs) {
    std::vector<const Trace*> traces;
    std::vector<std::string> names;
    for (const auto& x : in) {
      check_input(x);
      traces.push_back(&x.trace);
      names.push_back(x.name);
    }
    std::vector<FilterReport> reports;
    std::vector<Trace> cut = lcs_filter(traces, names, reports);
    std::vector<ExtrapInput> filtered;
    for (std::size_t k = 0; k < in.size(); ++k) filtered.push_back({in[k].name, std::move(cut[k])});
    ExtrapOptions plain = opts;
    plain.weighted_lcs = false;
    ExtrapResult res = extrapolate(filtered, plain);
    res.trace.lossy =
        "weighted LCS filter" + (res.trace.lossy.empty() ? "" : ", then " + res.trace.lossy);
    res.filtered = std::move(reports);
    return res;
  }
  if (!opts.plugin.empty()) {
    const ExtrapPlugin* p = find_plugin(opts.plugin);
    if (!p) {
      std::string known;
      for (const ExtrapPlugin* q : registered_plugins())
        known += (known.empty() ? "" : ", ") + q->name();
      throw ExtrapError("--plugin " + opts.plugin +
                        ": no such extrapolation plugin (registered: " + known + ")");
    }
    ExtrapResult res;
    check_world_only(in);
    extrapolate_with_plugin(in, *p, opts, res);
    return res;
  }
  try {
    return extrapolate_row_major(in, opts);
  } catch (const ExtrapError& e) {
    if (!opts.try_plugins || dynamic_cast<const CountModelError*>(&e)) throw;
    // Not a row-major stencil, or not one the inputs pin down: a plugin
    // whose layout takes every input and the target may explain it.
    std::string tried;
    for (const ExtrapPlugin* p : registered_plugins()) {
      // A plugin whose pattern does not exist at some input's rank count
      // is no candidate, and its reason would only bury the stencil
      // path's error.
      const bool fits = std::all_of(in.begin(), in.end(), [p](const ExtrapInput& x) {
        try {
          p->layout(x.trace.world_size);
          return true;
        } catch (const PluginError&) {
          return false;
        }
      });
      if (!fits) continue;
      ExtrapResult res;
      try {
        check_world_only(in);
        extrapolate_with_plugin(in, *p, opts, res);
      } catch (const ExtrapError& pe) {
        tried += "; plugin " + p->name() + ": " + pe.what();
        continue;
      }
      res.explanation.insert(res.explanation.begin(), "the row-major stencil path failed (" +
                                                          std::string(e.what()) + "): plugin " +
                                                          p->name() + " explains the pattern");
      return res;
    }
    throw ExtrapError(std::string(e.what()) +
                      (tried.empty() ? std::string() : " (also tried" + tried + ")"));
  }
}

ExtrapResult extrapolate_row_major(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts) {
  ExtrapResult res;
  // 1. Topology of every input, then of the target.
  std::vector<GridInput> grids;
  std::vector<TopologyDetection> dets;
  std::vector<std::vector<std::vector<int64_t>>> endpoints;
  std::vector<std::string> from_comm(in.size());
  int most = 1;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const ExtrapInput& x = in[k];
    endpoints.push_back(relative_endpoints(x.trace, true));
    try {
      dets.push_back(detect_topology(endpoints.back()));
    } catch (const std::runtime_error& e) {
      throw ExtrapError(x.name + ": " + e.what() + no_grid_detail(x.trace, endpoints.back()));
    }
    // Peers that are alike on every rank (collectives only) fit any grid;
    // a communicator whose groups are rows says which one.
    TopologyDetection& det = dets.back();
    if (det.groups == 1 && det.topology.dims() == 1)
      if (auto cg = grid_from_comms(x.trace)) {
        det.topology = cg->topology;
        det.critical = corner_ranks(det.topology);
        det.alternatives.clear();
        from_comm[k] = "groups of communicator " + format_value(cg->comm);
      }
    most = std::max(most, det.topology.dims());
  }
  int dims = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const ExtrapInput& x = in[k];
    TopologyDetection& det = dets[k];
    std::string fewer;
    if (det.topology.dims() < most) {
      // The fewest dimensions win within one input, but a small run may
      // not show them all: at 2x2 or 2x2x2 every rank of a periodic or
      // multipartition code can have the same partners modulo P, which a
      // ring of 4 or 8 explains as well. When a grid of the other inputs'
      // dimensions also explains this input's peers, that grid is the one.
      try {
        TopologyDetection wider = detect_topology(endpoints[k], most);
        fewer = " (the peers also fit " + det.topology.to_string() + ", " +
                std::to_string(det.topology.dims()) + "-D; taken " + std::to_string(most) +
                "-D like the other inputs)";
        det = std::move(wider);
      } catch (const std::runtime_error&) {
        // keep it: the dimensionality check below names the input
      }
    }
    std::string source;
    det.topology = cross_check_cart(x, det, source);
    if (!from_comm[k].empty())
      for (std::size_t at; (at = source.find("(endpoints)")) != std::string::npos;)
        source.replace(at, 11, "(" + from_comm[k] + ")");
    dims = std::max(dims, det.topology.dims());
    std::string critical;
    for (int64_t r : det.critical) critical += " " + std::to_string(r);
    res.explanation.push_back(
        "input " + x.name + ": " + std::to_string(x.trace.world_size) + " ranks, grid " +
        grid_text(det.topology) + ", " + std::to_string(det.groups) +
        " endpoint patterns, critical nodes" + critical +
        (det.alternatives.empty() ? std::string() : ", also fits " + det.alternatives.front()) +
        fewer + "; sizes: " + source);
    grids.push_back(make_grid_input(x, det.topology));
    res.input_grids.push_back(det.topology);
  }
  for (const auto& g : grids)
    if (g.topo.dims() != dims)
      throw ExtrapError(g.input->name + ": its " + std::to_string(g.input->trace.world_size) +
                        " ranks form a " + std::to_string(g.topo.dims()) + "-D grid (" +
                        g.topo.to_string() + ") while other inputs are " + std::to_string(dims) +
                        "-D: use rank counts that give every dimension at least 2 ranks");
  if (in.size() < static_cast<std::size_t>(dims) + 1)
    throw ExtrapError("a " + std::to_string(dims) + "-D grid needs traces of at least " +
                      std::to_string(dims + 1) + " rank counts, got " + std::to_string(in.size()) +
                      ": record the program at " + std::to_string(dims + 1 - in.size()) +
                      " more rank count(s) (a law over " + std::to_string(dims) +
                      " sizes has up to " + std::to_string(dims + 1) + " coefficients)");
  res.target = choose_target(grids, opts, res.target_rule);
  for (int64_t s : res.target.sizes)
    if (s < 2)
      throw ExtrapError("target grid " + res.target.to_string() +
                        " has a dimension of 1 rank; the inputs' grids have at least 2");
  res.explanation.push_back("target: " + std::to_string(opts.ranks) + " ranks, grid " +
                            res.target.to_string() + " (" + res.target_rule + ")");

  // Communicators other than the world must follow the grid (comms.cpp).
  const CommShapes shapes = common_comm_shapes(grids);
  for (const auto& [id, keep] : shapes)
    res.explanation.push_back("communicator " + format_value(id) + ": groups along " +
                              shape_name(keep));

  // 2. Alignment of the whole node lists, else cell by cell (per_cell.cpp).
  std::vector<std::vector<std::size_t>> order;
  std::string whole_error;
  try {
    order = align_nodes(in);
  } catch (const ExtrapError& e) {
    whole_error = e.what();
  }
  Trace& out = res.trace;
  out.world_size = static_cast<int32_t>(opts.ranks);
  out.comms.define_world(out.world_size);
  if (whole_error.empty()) {
    // 3 and 4. Node by node.
    extrapolate_nodes(in, grids, order, res.target, shapes, out, res, opts.progress,
                      opts.model_counts);
  } else {
    res.explanation.push_back("the merged node lists differ between the inputs (" + whole_error +
                              "): extrapolating cell by cell");
    extrapolate_by_cell(in, grids, shapes, res, opts);
  }
  define_target_comms(shapes, res.target, out.comms);
  canonicalize_sites(out);
  if (res.modelled_events > 0) {
    for (const Node& n : out.nodes) res.events += executions(n.count);
    char share[32];
    std::snprintf(share, sizeof share, "%.2f",
                  100.0 * static_cast<double>(res.modelled_events) /
                      static_cast<double>(std::max<int64_t>(res.events, 1)));
    out.lossy = "statistical count model (" + std::string(share) + " % of events modelled)";
  }
  return res;
}

}  // namespace

}  // namespace tracefold::extrap
