// Alignment of matching nodes across input traces (seed 000, 3.2.2).
//
// Merging puts the nodes of rank groups that share no call (the branches
// of the seed's Algorithm 1) side by side in an order that depends on the
// merge tree, so it can differ between rank counts. Any order of such
// nodes expands to the same events per rank: a rank's own sub-list keeps
// its order as long as nodes sharing a rank keep theirs. So when the
// inputs' node lists differ, each is first put in one canonical order, a
// topological sort of "shares a rank with an earlier node" that takes the
// node with the lowest leading rank first; group k of one input then meets
// group k of another, as the seed's reordering by leading rank does.
#include <queue>

#include "tracefold/extrap/grid.hpp"

namespace tracefold::extrap {

namespace {

struct CallKey {
  OpId op;
  const CallSite* site;
  bool operator==(const CallKey& o) const { return op == o.op && *site == *o.site; }
};

CallKey key_of(const Trace& t, const Node& n) {
  return {n.key.op, &t.sites.at(n.key.site)};
}

std::vector<std::size_t> canonical_order(const Trace& t) {
  const std::size_t n = t.nodes.size();
  std::vector<std::vector<std::size_t>> after(n);
  std::vector<std::size_t> waiting(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (t.nodes[i].ranks.intersects(t.nodes[j].ranks)) {
        after[j].push_back(i);
        ++waiting[i];
      }
  using Item = std::pair<int64_t, std::size_t>;  // (leading rank, index)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  auto lead = [&](std::size_t i) -> int64_t {
    return t.nodes[i].ranks.empty() ? -1 : t.nodes[i].ranks.first();
  };
  for (std::size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.emplace(lead(i), i);
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t i = ready.top().second;
    ready.pop();
    order.push_back(i);
    for (std::size_t k : after[i])
      if (--waiting[k] == 0) ready.emplace(lead(k), k);
  }
  return order;
}

bool same_calls(const std::vector<ExtrapInput>& in,
                const std::vector<std::vector<std::size_t>>& order) {
  for (std::size_t k = 1; k < in.size(); ++k) {
    if (order[k].size() != order[0].size()) return false;
    for (std::size_t i = 0; i < order[0].size(); ++i)
      if (!(key_of(in[k].trace, in[k].trace.nodes[order[k][i]]) ==
            key_of(in[0].trace, in[0].trace.nodes[order[0][i]])))
        return false;
  }
  return true;
}

}  // namespace

std::string describe_node(const Trace& trace, const Node& node) {
  return OpTable::name(node.key.op) + " at " +
         site_label(trace.symtab, trace.sites.at(node.key.site));
}

std::vector<std::vector<std::size_t>> align_nodes(const std::vector<ExtrapInput>& in) {
  std::vector<std::vector<std::size_t>> order(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    order[k].resize(in[k].trace.nodes.size());
    for (std::size_t i = 0; i < order[k].size(); ++i) order[k][i] = i;
  }
  if (same_calls(in, order)) return order;
  for (std::size_t k = 0; k < in.size(); ++k) order[k] = canonical_order(in[k].trace);
  if (same_calls(in, order)) return order;
  // Name the first difference against the first input.
  const Trace& a = in[0].trace;
  for (std::size_t k = 1; k < in.size(); ++k) {
    const Trace& b = in[k].trace;
    const std::size_t n = std::min(order[0].size(), order[k].size());
    for (std::size_t i = 0; i < n; ++i) {
      const Node& na = a.nodes[order[0][i]];
      const Node& nb = b.nodes[order[k][i]];
      if (key_of(a, na) == key_of(b, nb)) continue;
      throw ExtrapError(in[k].name + ": node " + std::to_string(order[k][i]) + " (" +
                        describe_node(b, nb) + ") does not match node " +
                        std::to_string(order[0][i]) + " of " + in[0].name + " (" +
                        describe_node(a, na) +
                        "): the inputs are not traces of the same program, or a call happens at "
                        "some rank counts only");
    }
    if (order[0].size() != order[k].size()) {
      const bool longer = order[k].size() > order[0].size();
      const ExtrapInput& big = longer ? in[k] : in[0];
      const std::size_t extra = (longer ? order[k] : order[0])[n];
      throw ExtrapError(big.name + ": node " + std::to_string(extra) + " (" +
                        describe_node(big.trace, big.trace.nodes[extra]) +
                        ") has no counterpart in " + (longer ? in[0].name : in[k].name) + " (" +
                        std::to_string(order[0].size()) + " nodes against " +
                        std::to_string(order[k].size()) + ")");
    }
  }
  return order;
}

}  // namespace tracefold::extrap
