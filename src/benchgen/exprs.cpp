// Rank predicates and peer expressions (exprs.hpp).
#include "exprs.hpp"

#include <algorithm>
#include <vector>

namespace tracefold::benchgen {

ExprSyntax ExprSyntax::conceptual() {
  ExprSyntax s;
  s.rank = "t";
  s.size = "num_tasks";
  s.and_op = "/\\";
  s.or_op = "\\/";
  s.not_op = "not ";
  s.mod = "mod";
  s.eq = "=";
  s.ne = "<>";
  s.truth = "0 = 0";
  s.falsity = "0 = 1";
  return s;
}

namespace {

std::string num(int64_t v) {
  return std::to_string(v);
}

std::string join(const std::vector<std::string>& parts, const std::string& op) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += " " + op + " ";
    out += p;
  }
  return out;
}

// Membership of one regular section. A multi-dimensional section is
// decomposed digit by digit (offset / stride of each dimension), which is
// exact when every dimension's block fits inside the stride of the one
// around it, as canonical sections do; otherwise nullopt-like "" and the
// caller falls back to intervals.
std::string section_predicate(const Ranklist::Section& s, int32_t world, const ExprSyntax& syn) {
  const std::string& r = syn.rank;
  if (s.dims.empty()) return r + " " + syn.eq + " " + num(s.start);
  if (s.dims.size() == 1) {
    auto [count, stride] = s.dims[0];
    int64_t lo = s.start, hi = s.start + int64_t{count - 1} * stride;
    if (stride < 0) {
      std::swap(lo, hi);
      stride = -stride;
    }
    std::vector<std::string> parts;
    if (stride > 1)
      parts.push_back(r + " " + syn.mod + " " + num(stride) + " " + syn.eq + " " +
                      num(lo % stride));
    // Bounds the stride already implies are left out.
    if (lo >= (stride > 1 ? stride : 1)) parts.push_back(r + " >= " + num(lo));
    if (hi + stride <= world - 1 || (stride == 1 && hi < world - 1))
      parts.push_back(r + " <= " + num(hi));
    if (parts.empty()) return syn.truth;
    return join(parts, syn.and_op);
  }
  for (std::size_t k = 0; k + 1 < s.dims.size(); ++k) {
    const auto [ci, si] = s.dims[k + 1];
    if (si <= 0 || s.dims[k].second <= 0 || int64_t{ci - 1} * si >= s.dims[k].second) return "";
  }
  if (s.dims.back().second <= 0) return "";
  // d = rank - start; for each dimension: digit = d / stride < count, then
  // d %= stride; the innermost remainder must be 0 (nothing to check for a
  // stride of 1).
  std::vector<std::string> parts;
  std::string cur = r;
  if (s.start > 0) {
    parts.push_back(r + " >= " + num(s.start));
    cur = "(" + r + " - " + num(s.start) + ")";
  }
  for (std::size_t k = 0; k < s.dims.size(); ++k) {
    const auto [count, stride] = s.dims[k];
    if (stride == 1 && k + 1 == s.dims.size()) {
      parts.push_back(cur + " < " + num(count));
      return join(parts, syn.and_op);
    }
    parts.push_back(cur + " / " + num(stride) + " < " + num(count));
    cur = "(" + cur + " " + syn.mod + " " + num(stride) + ")";
  }
  parts.push_back(cur + " " + syn.eq + " 0");
  return join(parts, syn.and_op);
}

std::string set_predicate(const Ranklist& set, int32_t world, const ExprSyntax& syn) {
  if (set.empty()) return syn.falsity;
  if (set == Ranklist::range(0, world)) return syn.truth;
  std::vector<std::string> alts;
  for (const auto& s : set.sections()) {
    std::string p = section_predicate(s, world, syn);
    if (p.empty()) {
      // Not decomposable: its ranks as intervals.
      const Ranklist ranks = Ranklist::from_sections({s});
      for (const auto& [lo, hi] : ranks.intervals())
        alts.push_back(lo == hi ? syn.rank + " " + syn.eq + " " + num(lo)
                                : "(" + syn.rank + " >= " + num(lo) + " " + syn.and_op + " " +
                                      syn.rank + " <= " + num(hi) + ")");
      continue;
    }
    alts.push_back(p);
  }
  if (alts.size() == 1) return alts[0];
  for (auto& a : alts)
    if (a.find(' ' + syn.and_op + ' ') != std::string::npos) a = "(" + a + ")";
  return join(alts, syn.or_op);
}

Ranklist complement(const Ranklist& set, int32_t world) {
  Ranklist out;
  int32_t next = 0;
  for (const auto& [lo, hi] : set.intervals()) {
    if (lo > next) out.unite(Ranklist::range(next, lo - next));
    next = hi + 1;
  }
  if (next < world) out.unite(Ranklist::range(next, world - next));
  return out;
}

Ranklist intersect(const Ranklist& a, const Ranklist& b) {
  Ranklist out;
  const auto& x = a.intervals();
  const auto& y = b.intervals();
  for (std::size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    const int32_t lo = std::max(x[i].first, y[j].first), hi = std::min(x[i].second, y[j].second);
    if (lo <= hi) out.unite(Ranklist::range(lo, hi - lo + 1));
    (x[i].second < y[j].second) ? ++i : ++j;
  }
  return out;
}

std::string negated(const Ranklist& set, int32_t world, const ExprSyntax& syn) {
  if (set.size() == 1) return syn.rank + " " + syn.ne + " " + num(set.first());
  const std::string p = set_predicate(set, world, syn);
  return syn.not_op + "(" + p + ")";
}

}  // namespace

std::string rank_predicate(const Ranklist& ranks, const Ranklist& universe, int32_t world,
                           const ExprSyntax& syn) {
  const Ranklist inside = intersect(ranks, universe);
  if (inside == universe) return syn.truth;
  if (inside.empty()) return syn.falsity;
  // Ranks outside the universe may go either way: try the set alone and
  // the set with every outsider, each straight or negated; keep the
  // shortest text.
  const Ranklist outside = complement(universe, world);
  std::vector<std::string> options;
  for (const Ranklist& s : {inside, inside.united(outside)}) {
    options.push_back(set_predicate(s, world, syn));
    const Ranklist c = complement(s, world);
    if (!c.empty()) options.push_back(negated(c, world, syn));
  }
  return *std::min_element(
      options.begin(), options.end(),
      [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
}

std::string peer_expression(int64_t offset, int64_t comm_size, const ExprSyntax& syn,
                            const std::string& rank_name, const std::string& size_name) {
  const std::string& r = rank_name.empty() ? syn.rank : rank_name;
  const std::string& n = size_name.empty() ? syn.size : size_name;
  if (comm_size > 0) offset = ((offset % comm_size) + comm_size) % comm_size;
  if (offset == 0) return r;
  // Offsets past half the size read better as steps down.
  if (comm_size > 0 && offset > comm_size / 2)
    return "(" + r + " + " + n + " - " + num(comm_size - offset) + ") " + syn.mod + " " + n;
  return "(" + r + " + " + num(offset) + ") " + syn.mod + " " + n;
}

}  // namespace tracefold::benchgen
