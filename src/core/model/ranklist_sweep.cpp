#include "tracefold/ranklist_sweep.hpp"

#include <algorithm>
#include <unordered_map>

namespace tracefold {

namespace {

// Whether two of the lists below `limit` share a rank. Their intervals are
// merged in start order (a heap of one cursor per list: no copy of the
// intervals, which can be millions); an interval that starts at or before
// the furthest end so far overlaps the interval that reached there, and
// that one belongs to another list: the intervals of one list are disjoint.
bool overlap_below(const std::vector<const Ranklist*>& lists, std::size_t limit) {
  struct Cursor {
    int32_t lo;
    Ranklist::IntervalCursor at;
  };
  auto later = [](const Cursor& a, const Cursor& b) { return a.lo > b.lo; };
  std::vector<Cursor> heap;
  for (std::size_t i = 0; i < limit; ++i)
    if (!lists[i]->empty())
      heap.push_back(Cursor{lists[i]->first(), Ranklist::IntervalCursor(*lists[i])});
  std::make_heap(heap.begin(), heap.end(), later);
  int64_t reach = -1;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Cursor& c = heap.back();
    if (c.lo <= reach) return true;
    reach = std::max<int64_t>(reach, (*c.at).second);
    c.at.next();
    if (c.at.done()) {
      heap.pop_back();
    } else {
      c.lo = (*c.at).first;
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  return false;
}

struct SignatureHash {
  std::size_t operator()(const std::vector<int32_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (int32_t x : v) h = (h ^ static_cast<uint32_t>(x)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

}  // namespace

std::size_t first_overlapping(const std::vector<const Ranklist*>& lists) {
  const std::size_t n = lists.size();
  if (!overlap_below(lists, n)) return n;
  // Lists 0..k-1 overlapping is monotone in k: the first k at which they
  // do, less one, is the first list to meet an earlier one.
  std::size_t lo = 1, hi = n;  // overlap below hi, none below lo
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (overlap_below(lists, mid) ? hi : lo) = mid;
  }
  return hi - 1;
}

std::vector<RankClass> split_ranks(const Ranklist& ranks,
                                   const std::vector<std::vector<const Ranklist*>>& groups) {
  // Where a ranklist starts or ends: `entry` is its index in the group, or
  // -1 for an end (one past the interval). Group `inside` is `ranks` itself.
  struct Edge {
    int64_t at;
    uint32_t group;
    int32_t entry;
  };
  // Groups of the same ranklists split alike (a trace repeats its nodes'
  // ranks in their values, and nodes of one loop body share their ranks):
  // each distinct group is swept once.
  std::vector<const std::vector<const Ranklist*>*> distinct;
  {
    std::unordered_map<uint64_t, std::vector<std::size_t>> by_hash;
    auto same = [](const std::vector<const Ranklist*>& a, const std::vector<const Ranklist*>& b) {
      if (a.size() != b.size()) return false;
      for (std::size_t k = 0; k < a.size(); ++k)
        if (a[k] != b[k] && !(*a[k] == *b[k])) return false;
      return true;
    };
    for (const auto& g : groups) {
      uint64_t h = 1469598103934665603ull;
      for (const Ranklist* l : g) {
        l->for_each_interval([&h](int32_t lo, int32_t hi) {
          h = ((h ^ static_cast<uint32_t>(lo)) * 1099511628211ull ^ static_cast<uint32_t>(hi)) *
              1099511628211ull;
        });
        h = (h ^ 0xffffffffull) * 1099511628211ull;  // where one entry ends
      }
      auto& seen = by_hash[h];
      if (std::none_of(seen.begin(), seen.end(),
                       [&](std::size_t d) { return same(*distinct[d], g); })) {
        seen.push_back(distinct.size());
        distinct.push_back(&g);
      }
    }
  }
  const auto inside = static_cast<uint32_t>(distinct.size());
  std::vector<Edge> edges;
  auto add = [&](const Ranklist& list, uint32_t group, int32_t entry) {
    list.for_each_interval([&](int32_t lo, int32_t hi) {
      edges.push_back(Edge{lo, group, entry});
      edges.push_back(Edge{static_cast<int64_t>(hi) + 1, group, -1});
    });
  };
  for (std::size_t g = 0; g < distinct.size(); ++g)
    for (std::size_t e = 0; e < distinct[g]->size(); ++e)
      add(*(*distinct[g])[e], static_cast<uint32_t>(g), static_cast<int32_t>(e));
  add(ranks, inside, 0);
  // Ends first where an entry of a group ends and another one starts.
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    if (a.at != b.at) return a.at < b.at;
    return a.entry < b.entry;
  });

  std::vector<int32_t> current(distinct.size(), -1);
  bool in_ranks = false;
  std::unordered_map<std::vector<int32_t>, std::size_t, SignatureHash> index;
  std::vector<RankClass> classes;
  for (std::size_t i = 0; i < edges.size();) {
    const int64_t at = edges[i].at;
    for (; i < edges.size() && edges[i].at == at; ++i) {
      if (edges[i].group == inside)
        in_ranks = edges[i].entry >= 0;
      else
        current[edges[i].group] = edges[i].entry;
    }
    // Every interval's end is an edge, so ranks past the last edge are in
    // no list and not in `ranks`.
    if (!in_ranks || i == edges.size()) continue;
    const auto span = static_cast<uint64_t>(edges[i].at - at);
    auto [it, added] = index.try_emplace(current, classes.size());
    if (added) classes.push_back(RankClass{static_cast<int32_t>(at), 0});
    classes[it->second].size += span;
  }
  return classes;
}

}  // namespace tracefold
