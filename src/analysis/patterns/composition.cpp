// Compositions (find_compositions): global patterns of the same ranks that
// a loop runs one after the other, each once an iteration, in the same
// order every time:
// a Sweep3D-like code with one function per sweep direction has four
// wavefronts, one per function, and their order in the time step is a
// pattern of its own, which no single context shows.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns {

namespace {

// The shortest cycle `seq` repeats, at least twice and whole (a last
// iteration may stop early), with no global pattern twice in it; empty if
// none.
std::vector<int32_t> cycle_of(const std::vector<int32_t>& seq) {
  for (std::size_t len = 2; 2 * len <= seq.size(); ++len) {
    bool periodic = true;
    for (std::size_t i = len; i < seq.size() && periodic; ++i) periodic = seq[i] == seq[i - len];
    if (!periodic) continue;
    std::vector<int32_t> cycle(seq.begin(), seq.begin() + static_cast<std::ptrdiff_t>(len));
    std::vector<int32_t> sorted = cycle;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return {};
    return cycle;
  }
  return {};
}

}  // namespace

void find_compositions(Result& result) {
  const auto globals = static_cast<int32_t>(result.global.size());
  // Per (rank, per-process pattern): its global pattern, or -2 when it is in
  // several (the phases of one repeat: one loop, not a sequence).
  std::map<std::pair<int32_t, int32_t>, int32_t> global_of;
  for (int32_t g = 0; g < globals; ++g)
    for (const auto& key : result.global[static_cast<std::size_t>(g)].patterns) {
      auto [it, fresh] = global_of.try_emplace(key, g);
      if (!fresh && it->second != g) it->second = -2;
    }
  // A per-process pattern joined into another of its context (nested, or
  // making the same messages) is in no global pattern's list: it is in
  // that one's, the global pattern of its context's listed patterns.
  auto of = [&](const RankPatterns& group, int32_t rank, int32_t p) {
    if (auto it = global_of.find({rank, p}); it != global_of.end()) return it->second;
    int32_t found = -1;
    const std::string& context = group.patterns[static_cast<std::size_t>(p)].context;
    for (std::size_t q = 0; q < group.patterns.size(); ++q) {
      auto it = global_of.find({rank, static_cast<int32_t>(q)});
      if (it == global_of.end() || group.patterns[q].context != context) continue;
      if (found != -1 && found != it->second) return -2;
      found = it->second;
    }
    return found;
  };
  // Each group's first rank speaks for the group: its patterns' occurrences
  // in order of events, a run of one pattern's occurrences counted once
  // (a sweep's pipelined blocks are one sweep).
  std::map<std::vector<int32_t>, std::size_t> cycles;  // cycle -> its iterations, most seen
  for (const RankPatterns& group : result.groups) {
    if (group.ranks.size() == 0) continue;
    const int32_t rank = group.ranks.first();
    std::vector<std::pair<std::size_t, int32_t>> starts;  // (event, pattern)
    for (std::size_t p = 0; p < group.patterns.size(); ++p)
      for (std::size_t at : group.patterns[p].pattern.positions)
        starts.emplace_back(at, static_cast<int32_t>(p));
    std::sort(starts.begin(), starts.end());
    std::vector<int32_t> seq;
    int32_t last = -1;
    for (const auto& [at, p] : starts) {
      if (p == last) continue;
      last = p;
      const int32_t g = of(group, rank, p);
      if (g < 0) {
        seq.clear();  // a repeat of no global pattern, or of several: no sequence
        break;
      }
      seq.push_back(g);
    }
    const std::vector<int32_t> cycle = cycle_of(seq);
    if (cycle.empty()) continue;
    std::size_t& n = cycles[cycle];
    n = std::max(n, seq.size() / cycle.size());
  }
  // A composition is of patterns of the same ranks: a row's exchange and
  // a column's, which one rank makes in turn, are parts of one exchange
  // (a halo by caller, its helper's two contexts), not steps of a loop of
  // the whole.
  auto ranks_of = [&](int32_t g) {
    std::vector<int32_t> out;
    for (const auto& [rank, p] : result.global[static_cast<std::size_t>(g)].patterns)
      out.push_back(rank);
    out.erase(std::unique(out.begin(), out.end()), out.end());  // patterns are sorted
    return out;
  };
  for (const auto& [cycle, iterations] : cycles) {
    const std::vector<int32_t> ranks = ranks_of(cycle.front());
    if (!std::all_of(cycle.begin(), cycle.end(), [&](int32_t g) { return ranks_of(g) == ranks; }))
      continue;
    GlobalPattern comp;
    std::string children, order;
    for (int32_t g : cycle) {
      const GlobalPattern& child = result.global[static_cast<std::size_t>(g)];
      comp.patterns.insert(comp.patterns.end(), child.patterns.begin(), child.patterns.end());
      comp.edges.insert(comp.edges.end(), child.edges.begin(), child.edges.end());
      comp.messages += child.messages;
      children += (children.empty() ? "" : ", ") + child.shape.name;
      order += (order.empty() ? "G" : ", G") + std::to_string(g + 1);
    }
    std::sort(comp.patterns.begin(), comp.patterns.end());
    comp.patterns.erase(std::unique(comp.patterns.begin(), comp.patterns.end()),
                        comp.patterns.end());
    std::sort(comp.edges.begin(), comp.edges.end());
    comp.edges.erase(std::unique(comp.edges.begin(), comp.edges.end()), comp.edges.end());
    comp.shape.kind = ShapeKind::kComposition;
    comp.shape.name = "composition";
    comp.shape.params = {
        {"children", children}, {"order", order}, {"iterations", std::to_string(iterations)}};
    comp.shape.quality = 1;
    comp.shape.matched = comp.edges.size();
    result.global.push_back(std::move(comp));
  }
}

}  // namespace tracefold::patterns
