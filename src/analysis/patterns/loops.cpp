// Occurrences of a per-process pattern as iterations of the folded
// trace's loops (issue item "report occurrences as calls and as loop
// iterations"): the folder already knows how often each loop ran, so the
// count need not be guessed from overlapping repeats.
#include <algorithm>
#include <map>
#include <string>

#include "tracefold/expand.hpp"
#include "tracefold/patterns.hpp"

namespace tracefold::patterns {

void LoopPlaces::note(const RankIterator& it) {
  const std::size_t depth = it.loop_depth();
  Place place;
  // Entries are new only at the inner end of the stack: an outer one was
  // noted with the first event inside it, so the walk stops at a known one.
  for (std::size_t d = depth; d-- > 0;) {
    const RankIterator::Loop l = it.loop(d);
    if (d + 1 == depth) {
      place.entry = static_cast<uint32_t>(l.entry);
      place.iteration = static_cast<uint32_t>(l.iteration);
    }
    if (l.entry < entries.size() && entries[l.entry].trips > 0) break;
    if (l.entry >= entries.size()) entries.resize(l.entry + 1);
    Entry& e = entries[l.entry];
    e.head = l.head;
    e.level = l.level;
    e.trips = l.trips;
    if (d > 0) {
      const RankIterator::Loop up = it.loop(d - 1);
      e.parent = static_cast<uint32_t>(up.entry);
      e.parent_iteration = up.iteration;
    }
  }
  events.push_back(place);
}

namespace {

// The (entry, iteration) pairs around an event, innermost first.
std::vector<std::pair<uint32_t, int64_t>> chain(const LoopPlaces& places, std::size_t event) {
  std::vector<std::pair<uint32_t, int64_t>> out;
  uint32_t e = places.events[event].entry;
  int64_t it = places.events[event].iteration;  // widened: parents' are int64_t
  while (e != LoopPlaces::kNone) {
    out.emplace_back(e, it);
    it = places.entries[e].parent_iteration;
    e = places.entries[e].parent;
  }
  return out;
}

}  // namespace

std::optional<ProcessPattern::Loop> loop_of(const ProcessPattern& p, const LoopPlaces& places) {
  const std::size_t len = p.symbols.size();
  if (len == 0 || p.positions.empty()) return std::nullopt;
  // Per entry of the loop, the iterations the occurrences cover, as spans.
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> covered;
  std::optional<std::pair<std::size_t, std::size_t>> loop;  // (head, level)
  for (std::size_t at : p.positions) {
    if (at + len > places.events.size()) return std::nullopt;
    const auto first = chain(places, at), last = chain(places, at + len - 1);
    // The innermost entry around both ends: the first of `last`'s that
    // `first` holds too.
    auto common = std::find_if(last.begin(), last.end(), [&](const auto& l) {
      return std::any_of(first.begin(), first.end(),
                         [&](const auto& f) { return f.first == l.first; });
    });
    if (common == last.end()) return std::nullopt;
    uint32_t entry = common->first;
    int64_t from = std::find_if(first.begin(), first.end(), [&](const auto& f) {
                     return f.first == entry;
                   })->second;
    int64_t to = common->second;
    // An occurrence that runs a whole entry of its loop (a pipeline's
    // blocks, a coarse solve's sweeps) is one iteration of the loop around
    // it: that is the loop it repeats with.
    while (from == 0 && to == places.entries[entry].trips - 1 &&
           places.entries[entry].parent != LoopPlaces::kNone) {
      from = to = places.entries[entry].parent_iteration;
      entry = places.entries[entry].parent;
    }
    const LoopPlaces::Entry& e = places.entries[entry];
    if (loop && *loop != std::pair{e.head, e.level}) return std::nullopt;
    loop = std::pair{e.head, e.level};
    covered[entry].emplace_back(from, to);
  }
  ProcessPattern::Loop out;
  for (auto& [entry, spans] : covered) {
    std::sort(spans.begin(), spans.end());
    int64_t reached = -1;  // the last iteration counted
    for (const auto& [from, to] : spans) {
      if (to > reached)
        out.iterations += static_cast<std::size_t>(to - std::max(from, reached + 1) + 1);
      reached = std::max(reached, to);
    }
    const int64_t trips = places.entries[entry].trips;
    if (!out.trips.empty() && out.trips.back().first == trips)
      ++out.trips.back().second;
    else
      out.trips.emplace_back(trips, 1);
  }
  return out;
}

std::string trips_text(const std::vector<std::pair<int64_t, std::size_t>>& trips) {
  std::string s;
  for (const auto& [v, n] : trips) {
    if (!s.empty()) s += ", ";
    s += std::to_string(v);
    if (n > 1) s += " x" + std::to_string(n);
  }
  return s;
}

}  // namespace tracefold::patterns
