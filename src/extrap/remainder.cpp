// Values that follow an uneven division over one dimension of the grid:
// G points over S ranks give floor(G/S) to each and one more to the first
// G mod S (strong scaling of a domain whose side the rank count does not
// divide). Such a number differs inside one part of the grid, so the
// part-by-part fit refuses it; here it is read per rank against its
// coordinate along each dimension.
#include <algorithm>
#include <map>
#include <optional>

#include "internal.hpp"

namespace tracefold::extrap::detail {

namespace {

// One number of the sequence, as a law.
struct Law {
  bool step = false;  // else the same on every rank of an input, fitted by fit_value
  std::size_t dim = 0;
  int64_t unit = 0, total = 0;  // step: unit * (total div S + [x < total mod S])
  int64_t value = 0;            // not a step: the value at the target
  std::string formula;
};

// The number at `pos` of every rank of input k, by rank.
using PerRank = std::vector<std::vector<int64_t>>;  // [k][rank]

// The step law along `d`, if every input's values depend on the rank's
// coordinate along d only, as a step down by one unit after the first t
// coordinates, and the inputs agree on the unit and on the total.
std::optional<Law> step_along(const std::vector<GridInput>& grids, const PerRank& v,
                              std::size_t d) {
  Law law{true, d, 0, -1, 0, ""};
  std::vector<std::pair<int64_t, int64_t>> low_rem;  // per input: (low value, remainder)
  bool stepped = false;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const auto& sizes = grids[k].topo.sizes;
    int64_t stride = 1;
    for (std::size_t i = 0; i < d; ++i) stride *= sizes[i];
    const int64_t s = sizes[d];
    std::vector<std::optional<int64_t>> along(static_cast<std::size_t>(s));
    for (std::size_t r = 0; r < v[k].size(); ++r) {
      const auto x = static_cast<std::size_t>((static_cast<int64_t>(r) / stride) % s);
      if (along[x] && *along[x] != v[k][r]) return std::nullopt;  // depends on more than x
      along[x] = v[k][r];
    }
    const int64_t hi = *along[0], lo = *along[static_cast<std::size_t>(s - 1)];
    int64_t t = 0;
    while (t < s && *along[static_cast<std::size_t>(t)] == hi) ++t;
    for (int64_t x = t; x < s; ++x)
      if (*along[static_cast<std::size_t>(x)] != lo) return std::nullopt;
    if (t == s) t = 0;  // no step: an even division
    if (t > 0) {
      if (law.unit != 0 && hi - lo != law.unit) return std::nullopt;
      law.unit = hi - lo;
      stepped = true;
    }
    low_rem.emplace_back(lo, t);
  }
  if (!stepped || law.unit <= 0) return std::nullopt;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const auto [lo, t] = low_rem[k];
    if (lo % law.unit != 0) return std::nullopt;
    const int64_t total = lo / law.unit * grids[k].topo.sizes[d] + t;
    if (law.total >= 0 && total != law.total) return std::nullopt;
    law.total = total;
  }
  static const char* const kAxis[] = {"x", "y", "z"};
  const std::string u = law.unit == 1 ? "" : std::to_string(law.unit) + "*";
  const std::string s = "S" + std::to_string(d + 1), g = std::to_string(law.total);
  law.formula = "[" + u + "(" + g + " div " + s + ") + " + u + "(" + kAxis[d] + " < " + g +
                " mod " + s + ")]";
  return law;
}

}  // namespace

std::optional<Elastic> extrapolate_by_remainder(const std::vector<GridInput>& grids,
                                                const std::vector<const Elastic*>& per_input,
                                                const Topology& target, const Ranklist& ranks,
                                                std::vector<std::string>* explain) {
  if (grids.size() < 2 || static_cast<int64_t>(ranks.size()) != target.ranks()) return std::nullopt;
  // Every rank of every input has the field, in sequences of one length
  // (compared value by value: equal values fold into other runs on
  // different ranks, 33 33 33 33 where the next rank has 17 17 33 33).
  constexpr uint64_t kMaxValues = 1u << 16;
  std::vector<std::vector<std::vector<int64_t>>> flat(grids.size());  // [k][rank][pos]
  for (std::size_t k = 0; k < grids.size(); ++k) {
    if (!per_input[k]) return std::nullopt;
    const int32_t p = grids[k].input->trace.world_size;
    for (int32_t r = 0; r < p; ++r) {
      const ValueSeq* seq = per_input[k]->for_rank(r);
      if (!seq || seq->size() > kMaxValues ||
          (!flat[0].empty() && seq->size() != flat[0][0].size()))
        return std::nullopt;
      std::vector<int64_t> numbers = seq->to_vector();
      for (int64_t x : numbers)
        if (is_sentinel(x)) return std::nullopt;
      flat[k].push_back(std::move(numbers));
    }
  }
  const std::size_t count = flat[0][0].size();
  std::vector<Law> laws;
  bool any_step = false;
  for (std::size_t pos = 0; pos < count; ++pos) {
    PerRank v(grids.size());
    bool uniform = true;  // the same on every rank of each input
    std::vector<Observation> obs;
    for (std::size_t k = 0; k < grids.size(); ++k) {
      for (const auto& numbers : flat[k]) {
        v[k].push_back(numbers[pos]);
        uniform = uniform && numbers[pos] == flat[k][0][pos];
      }
      obs.push_back({grids[k].topo.sizes, flat[k][0][pos]});
    }
    if (uniform) {
      const ValueFit f = fit_value(obs, target.sizes);
      if (f.status != ValueFit::Status::kOk) return std::nullopt;
      laws.push_back(Law{false, 0, 0, 0, f.value, f.formula});
      continue;
    }
    std::optional<Law> law;
    for (std::size_t d = 0; d < target.sizes.size() && !law; ++d) law = step_along(grids, v, d);
    if (!law) return std::nullopt;
    laws.push_back(*law);
    any_step = true;
  }
  if (!any_step) return std::nullopt;

  // The target's ranks fall into boxes by which side of each used
  // dimension's remainder they lie on; each box gets one sequence.
  const auto& sizes = target.sizes;
  std::vector<int64_t> rem(sizes.size(), 0);
  for (const Law& l : laws)
    if (l.step) rem[l.dim] = l.total % sizes[l.dim];
  Elastic out;
  const int dims = target.dims();
  for (int mask = 0; mask < (1 << dims); ++mask) {
    // bit d set: the ranks at x_d >= rem[d] (all of them where rem[d] = 0)
    Ranklist::Section sec;
    int64_t start = 0, stride = 1;
    std::vector<std::pair<int32_t, int32_t>> box;
    bool empty = false;
    for (int d = 0; d < dims; ++d) {
      const auto i = static_cast<std::size_t>(d);
      const bool high = mask & (1 << d);
      const int64_t lo = high ? rem[i] : 0, n = high ? sizes[i] - rem[i] : rem[i];
      if (n <= 0) empty = true;
      start += lo * stride;
      box.emplace_back(static_cast<int32_t>(n), static_cast<int32_t>(stride));
      stride *= sizes[i];
    }
    if (empty) continue;
    ValueSeq seq;
    for (const Law& l : laws) {
      if (!l.step) {
        seq.push_back(l.value);
        continue;
      }
      const int64_t s = sizes[l.dim];
      const bool first_ones = !(mask & (1 << l.dim)) && rem[l.dim] > 0;
      seq.push_back(l.unit * (l.total / s + (first_ones ? 1 : 0)));
    }
    sec.start = static_cast<int32_t>(start);
    sec.dims.assign(box.rbegin(), box.rend());
    const Ranklist where = Ranklist::from_sections({sec});
    // Boxes whose numbers coincide (a law of another dimension) share an entry.
    bool joined = false;
    for (auto& e : out.entries())
      if (e.values.equals(seq)) {
        e.ranks.unite(where);
        joined = true;
      }
    if (!joined) out.entries().push_back({std::move(seq), where});
  }
  out.sort_entries();
  if (explain) {
    // one of each law, in order of first use
    std::string text;
    std::vector<std::string> seen;
    for (const Law& l : laws)
      if (std::find(seen.begin(), seen.end(), l.formula) == seen.end()) {
        seen.push_back(l.formula);
        text += (text.empty() ? "" : ", ") + l.formula;
      }
    explain->push_back("by remainder along a dimension (values differ inside parts): " + text);
  }
  return out;
}

}  // namespace tracefold::extrap::detail
