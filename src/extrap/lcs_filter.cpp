// The weighted LCS filter (lcs_filter.hpp).
#include "tracefold/extrap/lcs_filter.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "tracefold/expand.hpp"
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/request_cut.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"

namespace tracefold::extrap {

namespace {

// One call site as one rank sees it: every node of the rank with that
// operation and call site (the fold may give one site several nodes, in
// different loops, and the rank must keep or drop the site whole). Keys
// hold the call-site signature, not the site id: the inputs number their
// sites independently.
struct Item {
  std::string key;
  std::vector<const Node*> nodes;
  uint64_t weight = 0;  // events of the rank at this call site
};
using Sequence = std::vector<Item>;

std::string key_of(const Trace& t, const Node& n) {
  return OpTable::name(n.key.op) + " " + SiteTable::format(t.sites.at(n.key.site));
}

// The rank's call sites in the order it first reaches them.
Sequence measure(const Trace& t, int32_t rank) {
  Sequence s;
  std::unordered_map<const Node*, std::size_t> at;
  std::unordered_map<std::string, std::size_t> by_key;
  RankIterator it(t, rank);
  Event e;
  while (it.next(e)) {
    const Node* n = it.current_node();
    auto pos = at.find(n);
    if (pos == at.end()) {
      auto [k, fresh] = by_key.emplace(key_of(t, *n), s.size());
      if (fresh) s.push_back({k->first, {}, 0});
      s[k->second].nodes.push_back(n);
      pos = at.emplace(n, k->second).first;
    }
    ++s[pos->second].weight;
  }
  return s;
}

// Pairs (i, j) of equal keys, increasing in both, of the largest total
// weight a[i].weight + b[j].weight: heavy nodes (loop bodies) win over
// light ones when the two orders disagree.
std::vector<std::pair<std::size_t, std::size_t>> weighted_lcs(const Sequence& a,
                                                              const Sequence& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<uint64_t> best((n + 1) * (m + 1), 0);
  auto at = [&](std::size_t i, std::size_t j) -> uint64_t& { return best[i * (m + 1) + j]; };
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;) {
      uint64_t v = std::max(at(i + 1, j), at(i, j + 1));
      if (a[i].key == b[j].key) v = std::max(v, at(i + 1, j + 1) + a[i].weight + b[j].weight);
      at(i, j) = v;
    }
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t i = 0, j = 0; i < n && j < m;) {
    if (a[i].key == b[j].key && at(i, j) == at(i + 1, j + 1) + a[i].weight + b[j].weight) {
      pairs.emplace_back(i, j);
      ++i;
      ++j;
    } else if (at(i, j) == at(i + 1, j)) {
      ++i;
    } else {
      ++j;
    }
  }
  return pairs;
}

// The part of `ref` that `s` shares, weights summed (pass 1).
Sequence narrow(const Sequence& ref, const Sequence& s) {
  Sequence out;
  for (auto [i, j] : weighted_lcs(ref, s))
    out.push_back({ref[i].key, {}, ref[i].weight + s[j].weight});
  return out;
}

}  // namespace

std::vector<Trace> lcs_filter(const std::vector<const Trace*>& traces,
                              const std::vector<std::string>& names,
                              std::vector<FilterReport>& reports) {
  // Pass 1: measure every rank, fold the reference over ranks, then inputs.
  std::vector<std::vector<Sequence>> seqs(traces.size());
  Sequence common;
  for (std::size_t k = 0; k < traces.size(); ++k) {
    Sequence ref;
    for (int32_t r = 0; r < traces[k]->world_size; ++r) {
      seqs[k].push_back(measure(*traces[k], r));
      ref = r == 0 ? seqs[k].back() : narrow(ref, seqs[k].back());
    }
    common = k == 0 ? ref : narrow(common, ref);
  }
  if (common.empty())
    throw ExtrapError(
        "weighted LCS: the inputs have no event in common on all ranks (no call site that every "
        "rank of every input reaches): name the pattern to keep with --snippet instead");

  // Pass 2: cut each rank down to its nodes aligned with the reference.
  std::vector<Trace> out;
  reports.clear();
  for (std::size_t k = 0; k < traces.size(); ++k) {
    const Trace& trace = *traces[k];
    const int32_t p = trace.world_size;
    FilterReport rep;
    rep.filter = "weighted LCS";
    rep.name = names[k];
    rep.kept.assign(static_cast<std::size_t>(p), 0);
    rep.dropped.assign(static_cast<std::size_t>(p), 0);
    std::vector<Trace> per_rank;
    for (int32_t r = 0; r < p; ++r) {
      const Sequence& s = seqs[k][static_cast<std::size_t>(r)];
      std::unordered_set<const Node*> keep;
      for (auto [i, j] : weighted_lcs(s, common)) keep.insert(s[i].nodes.begin(), s[i].nodes.end());
      Folder folder(r);
      RequestCut cut;
      RankIterator it(trace, r);
      Event e;
      while (it.next(e)) {
        if (cut.pass(e, keep.count(it.current_node()) > 0)) {
          encode_relative(e, r, trace.comms);
          folder.append(e);
          ++rep.kept[static_cast<std::size_t>(r)];
        } else {
          ++rep.dropped[static_cast<std::size_t>(r)];
        }
      }
      rep.links_cut += cut.links_cut();
      per_rank.push_back(folder.finish(p, trace.sites, trace.comms));
    }
    Trace t = reduce_traces(std::move(per_rank));
    t.symtab = trace.symtab;
    out.push_back(std::move(t));
    reports.push_back(std::move(rep));
  }
  return out;
}

}  // namespace tracefold::extrap
