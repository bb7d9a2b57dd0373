// Extrapolation through a plugin (plugin.hpp): the plugin's layout of each
// input and of the target, then every node's count, loop levels and fields
// fitted by the segmentation of plugin_fit.cpp, and its timings.
#include <algorithm>
#include <map>

#include "plugin_fit.hpp"
#include "tracefold/merge.hpp"

namespace tracefold::extrap::detail {

// A loop level that input k lacks because it ran once per entry (CG's
// reduction loop over L = 1 row partner): one iteration at every
// execution of the node, with the members count the other inputs show.
LoopLevel single_iteration_level(const Node& node, int32_t world, int64_t members) {
  std::map<int64_t, std::vector<int32_t>> by_exec;
  for (int32_t r = 0; r < world; ++r)
    if (const ValueSeq* c = node.count.for_rank(r)) by_exec[c->sum()].push_back(r);
  LoopLevel l;
  for (auto& [exec, ranks] : by_exec) {
    if (exec <= 0) continue;
    const Ranklist rl = Ranklist::from_ranks(ranks);
    l.iters.entries().push_back({ValueSeq::repeated(1, static_cast<uint64_t>(exec)), rl});
    l.members.entries().push_back({ValueSeq::repeated(members, static_cast<uint64_t>(exec)), rl});
  }
  return l;
}

void extrapolate_with_plugin(const std::vector<ExtrapInput>& in, const ExtrapPlugin& plugin,
                             const ExtrapOptions& opts, ExtrapResult& res) {
  std::vector<std::vector<int64_t>> sizes;
  std::string names;
  for (const auto& n : plugin.size_names()) names += (names.empty() ? "" : ", ") + n;
  for (const auto& x : in) {
    try {
      sizes.push_back(plugin.layout(x.trace.world_size));
    } catch (const PluginError& e) {
      throw ExtrapError(x.name + ": plugin " + plugin.name() + ": " + e.what());
    }
    std::string s;
    for (int64_t v : sizes.back()) s += (s.empty() ? "" : ", ") + std::to_string(v);
    res.explanation.push_back("input " + x.name + ": " + std::to_string(x.trace.world_size) +
                              " ranks, plugin " + plugin.name() + " layout (" + names + ") = (" +
                              s + ")");
  }
  std::vector<int64_t> target;
  try {
    target = plugin.layout(opts.ranks);
  } catch (const PluginError& e) {
    throw ExtrapError("--ranks " + std::to_string(opts.ranks) + ": plugin " + plugin.name() + ": " +
                      e.what());
  }
  if (opts.grid)
    throw ExtrapError("--grid does not apply with plugin " + plugin.name() +
                      ": the plugin gives the layout");
  res.target = Topology{target, std::vector<bool>(target.size(), false)};
  res.target_rule = "plugin " + plugin.name();
  res.input_grids.clear();
  for (const auto& s : sizes) res.input_grids.push_back({s, std::vector<bool>(s.size(), false)});
  std::string ts;
  for (int64_t v : target) ts += (ts.empty() ? "" : ", ") + std::to_string(v);
  res.explanation.push_back("target: " + std::to_string(opts.ranks) + " ranks, plugin " +
                            plugin.name() + " layout (" + names + ") = (" + ts +
                            "); formulas name them S1 = " + plugin.size_names().at(0) +
                            (target.size() > 1 ? ", S2 = " + plugin.size_names().at(1) : ""));

  const std::vector<std::vector<std::size_t>> order = align_nodes(in);
  const std::vector<PluginSequence> seqs = plugin.sequences();
  const PluginFitter f{in, plugin, seqs, sizes, target, opts.ranks};
  Trace& out = res.trace;
  out = Trace{};
  out.world_size = static_cast<int32_t>(opts.ranks);
  out.comms.define_world(out.world_size);
  for (std::size_t i = 0; i < order[0].size(); ++i) {
    report_progress(opts.progress, i, order[0].size());
    std::vector<const Node*> nodes;
    for (std::size_t k = 0; k < in.size(); ++k) nodes.push_back(&in[k].trace.nodes[order[k][i]]);
    const Trace& t0 = in[0].trace;
    const std::string label =
        "node " + std::to_string(order[0][i]) + " (" + describe_node(t0, *nodes[0]) + ")";
    res.explanation.push_back(label + ":");
    Node node;
    node.key.op = nodes[0]->key.op;
    node.key.site = out.sites.intern(t0.sites.at(nodes[0]->key.site));
    auto elastic = [&](const std::string& what, auto get, bool peer, bool structure) {
      std::vector<const Elastic*> per;
      for (const Node* n : nodes) per.push_back(get(*n));
      return fit_plugin_elastic(f, per, label + ", " + what, peer, structure, res.explanation);
    };
    node.count = elastic(
        "count", [](const Node& n) { return &n.count; }, false, true);
    node.ranks = node.count.ranks();
    if (node.ranks.empty()) continue;
    // Loop levels: an inner level some inputs lack ran once per entry there.
    std::size_t levels = 0, deepest = 0;
    for (std::size_t k = 0; k < nodes.size(); ++k)
      if (nodes[k]->loops.size() > levels) {
        levels = nodes[k]->loops.size();
        deepest = k;
      }
    std::vector<Node> padded(nodes.size());
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      if (nodes[k]->loops.size() == levels) continue;
      padded[k] = *nodes[k];
      for (std::size_t l = nodes[k]->loops.size(); l < levels; ++l) {
        const auto& m = nodes[deepest]->loops[l].members.entries();
        const auto runs = m.empty() ? std::vector<ValueSeq::Run>{} : m[0].values.runs();
        if (m.size() != 1 || runs.size() != 1 || runs[0].pattern.size() != 1)
          throw ExtrapError(in[k].name + ": " + label + " heads " +
                            std::to_string(nodes[k]->loops.size()) + " loops, " + in[deepest].name +
                            " " + std::to_string(levels) +
                            ", and the missing one's body is not one fixed size");
        padded[k].loops.push_back(
            single_iteration_level(*nodes[k], in[k].trace.world_size, runs[0].pattern[0]));
        res.explanation.push_back("    loop " + std::to_string(l) + " absent in " + in[k].name +
                                  ": read as one iteration per entry");
      }
      nodes[k] = &padded[k];
    }
    for (std::size_t l = 0; l < levels; ++l) {
      const std::string lv = "loop " + std::to_string(l);
      LoopLevel level;
      level.members = elastic(
          lv + " members", [l](const Node& n) { return &n.loops[l].members; }, false, true);
      level.iters = elastic(
          lv + " iters", [l](const Node& n) { return &n.loops[l].iters; }, false, true);
      node.loops.push_back(std::move(level));
    }
    std::vector<FieldId> fields;
    for (const Node* n : nodes)
      for (const auto& [fid, e] : n->fields) fields.push_back(fid);
    std::sort(fields.begin(), fields.end());
    fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
    for (FieldId fid : fields) {
      Elastic e = elastic(
          "field " + FieldTable::name(fid), [fid](const Node& n) { return n.field(fid); },
          FieldTable::role(fid) == FieldRole::kPeer, false);
      if (!e.empty()) node.fields.emplace_back(fid, std::move(e));
    }
    std::vector<bool> exact;
    node.timings = extrapolate_timings(in, nodes, sizes, res.target, node.ranks.first(), out,
                                       res.explanation, exact);
    match_calls(node.timings, exact, nodes, executions(node.count));
    out.nodes.push_back(std::move(node));
  }
  report_progress(opts.progress, order[0].size(), order[0].size());
  canonicalize_sites(out);
}

}  // namespace tracefold::extrap::detail
