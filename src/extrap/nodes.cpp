// Node-by-node extrapolation: every aligned node's execution counts,
// loops, fields and timings at the target, each field by the law that
// explains it (cells.cpp, remainder.cpp, comms.cpp, count_model.cpp).
#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "internal.hpp"
#include "tracefold/progress.hpp"

namespace tracefold::extrap::detail {

namespace {

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

}  // namespace

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
    std::vector<bool> exact;
    node.timings = extrapolate_timings(in, w.nodes, sizes, target, node.ranks.first(), out,
                                       res.explanation, exact);
    match_calls(node.timings, exact, w.nodes, executions(node.count));
    out.nodes.push_back(std::move(node));
  }
  report_progress(progress, order[0].size(), order[0].size());
}

}  // namespace tracefold::extrap::detail
