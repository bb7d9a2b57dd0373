// Parts of the grid seen at one size (tracefold/extrap/parts.hpp).
#include "tracefold/extrap/parts.hpp"

#include <algorithm>

#include "tracefold/extrap/extrapolate.hpp"

namespace tracefold::extrap {

namespace {

// The same number in another part, fitted over the inputs that have it.
struct SiblingLaw {
  int cell = 0;
  std::vector<Observation> obs;
  ValueFit fit;          // at the target
  bool changes = false;  // its values differ between the inputs
};

std::vector<SiblingLaw> sibling_laws(const std::vector<SeqObservation>& obs, int cell,
                                     const PartPool& pool, const Locator& at,
                                     const std::vector<int64_t>& target) {
  std::vector<SiblingLaw> out;
  const auto cells = static_cast<int>((*pool.per_input)[0].size());
  for (int c = 0; c < cells; ++c) {
    if (c == cell) continue;
    SiblingLaw law;
    law.cell = c;
    for (std::size_t k = 0; k < pool.grids->size(); ++k) {
      const ValueSeq* other = (*pool.per_input)[k][static_cast<std::size_t>(c)];
      if (!other) continue;
      // The position is defined on this input's sequence of the part when
      // it has the part (the reps of a run may differ between inputs).
      const ValueSeq* ref = obs[0].seq;
      for (const auto& o : obs)
        if (o.grid == &(*pool.grids)[k]) ref = o.seq;
      const std::optional<int64_t> v = at(*ref, *other);
      if (!v || is_sentinel(*v)) continue;
      law.obs.push_back({(*pool.grids)[k].topo.sizes, *v});
      law.changes = law.changes || *v != law.obs[0].value;
    }
    if (law.obs.empty()) continue;
    law.fit = fit_value(law.obs, target);
    out.push_back(std::move(law));
  }
  return out;
}

bool scale_dependent(const ValueFit& f) {
  return f.status == ValueFit::Status::kOk && f.formula.find('S') != std::string::npos;
}

// Whether `law` gives `values` at the sizes of `obs` (it explains them).
bool reproduces(const SiblingLaw& law, const std::vector<SeqObservation>& obs,
                const std::vector<int64_t>& values) {
  for (std::size_t k = 0; k < obs.size(); ++k) {
    const ValueFit f = fit_value(law.obs, obs[k].grid->topo.sizes);
    if (f.status != ValueFit::Status::kOk || f.value != values[k]) return false;
  }
  return true;
}

}  // namespace

std::string clip(const std::string& s) {
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

Locator pattern_position(std::size_t i, std::size_t j) {
  return [i, j](const ValueSeq& ref, const ValueSeq& other) -> std::optional<int64_t> {
    const auto a = ref.runs(), b = other.runs();
    bool same = a.size() == b.size();
    for (std::size_t q = 0; same && q < a.size(); ++q)
      same = a[q].pattern.size() == b[q].pattern.size() && a[q].reps == b[q].reps;
    if (same) return b[i].pattern[j];
    if (other.size() != ref.size() || other.size() > 4096) return std::nullopt;
    std::size_t idx = j;
    for (std::size_t q = 0; q < i; ++q) idx += a[q].pattern.size() * a[q].reps;
    return other.to_vector()[idx];
  };
}

Locator repeat_position(std::size_t i) {
  return [i](const ValueSeq& ref, const ValueSeq& other) -> std::optional<int64_t> {
    const auto a = ref.runs(), b = other.runs();
    bool same = a.size() == b.size();
    for (std::size_t q = 0; same && q < a.size(); ++q)
      same = a[q].pattern.size() == b[q].pattern.size();
    if (!same) return std::nullopt;
    return static_cast<int64_t>(b[i].reps);
  };
}

Locator index_position(std::size_t i) {
  // Short sequences only: each look expands the other sequence.
  return [i](const ValueSeq& ref, const ValueSeq& other) -> std::optional<int64_t> {
    if (other.size() != ref.size() || other.size() > 4096) return std::nullopt;
    return other.to_vector()[i];
  };
}

bool some_dimension_unvaried(const std::vector<SeqObservation>& obs) {
  const std::vector<int64_t>& s0 = obs[0].grid->topo.sizes;
  for (std::size_t d = 0; d < s0.size(); ++d) {
    bool same = true;
    for (const auto& o : obs) same = same && o.grid->topo.sizes[d] == s0[d];
    if (same) return true;
  }
  return false;
}

bool folds_coarser(const std::vector<SeqObservation>& obs, const PartPool& pool) {
  auto shape = [](const ValueSeq& v) {
    std::vector<std::pair<std::size_t, uint64_t>> out;
    for (const auto& r : v.runs()) out.emplace_back(r.pattern.size(), r.reps);
    return out;
  };
  for (const auto& o : obs) {
    if (o.seq->size() > 4096) continue;
    const auto own = shape(*o.seq);
    for (const auto& seqs : *pool.per_input)
      for (const ValueSeq* s : seqs)
        if (s && s != o.seq && s->size() == o.seq->size() && shape(*s) != own) return true;
  }
  return false;
}

std::string varying_part(const PartPool& pool, const Topology& grid, bool shapes) {
  auto alike = [shapes](const ValueSeq& a, const ValueSeq& b) {
    if (!shapes) return a.equals(b);
    const auto x = a.runs(), y = b.runs();
    bool same = x.size() == y.size();
    for (std::size_t q = 0; same && q < x.size(); ++q)
      same = x[q].pattern.size() == y[q].pattern.size() && x[q].reps == y[q].reps;
    return same;
  };
  const auto cells = pool.per_input->empty() ? 0 : (*pool.per_input)[0].size();
  for (std::size_t c = 0; c < cells; ++c) {
    const ValueSeq* first = nullptr;
    std::size_t first_k = 0;
    for (std::size_t k = 0; k < pool.grids->size(); ++k) {
      const ValueSeq* s = (*pool.per_input)[k][c];
      if (!s) continue;
      if (!first) {
        first = s;
        first_k = k;
      } else if (!alike(*s, *first)) {
        auto name = [&](std::size_t q) {
          return (*pool.grids)[q].input->name + " (" + (*pool.grids)[q].topo.to_string() + ")";
        };
        return cell_name(grid, static_cast<int>(c)) + ": '" + clip(first->to_string()) + "' in " +
               name(first_k) + ", '" + clip(s->to_string()) + "' in " + name(k);
      }
    }
  }
  return "";
}

std::string values_listing(const std::vector<SeqObservation>& obs,
                           const std::vector<int64_t>& values) {
  std::string s;
  for (std::size_t k = 0; k < obs.size(); ++k)
    s += (k ? ", " : "") + format_value(values[k]) + " in " + obs[k].grid->input->name + " (" +
         obs[k].grid->topo.to_string() + ")";
  return s;
}

std::optional<BorrowedLaw> law_from_other_parts(const std::vector<SeqObservation>& obs, int cell,
                                                const std::vector<int64_t>& values,
                                                const ValueFit& own, const PartPool& pool,
                                                const Locator* at,
                                                const std::vector<int64_t>& target,
                                                const std::string& what, const PartCheck& check) {
  const bool constant = own.status == ValueFit::Status::kOk && !scale_dependent(own);
  // A part whose own inputs fit several laws (a middle column seen at 3x3
  // and 4x4 only: 4 and 6 fit 2*S1 - 2 and 2*S2 - 2 and ...) is decided
  // the same way: by the law of another part that gives its values.
  const bool undetermined = own.status == ValueFit::Status::kUndetermined;
  // A law of its own that changes with the grid, from inputs that leave a
  // dimension at one size (4096/S1 from 2 rows of 4 and 4x4), may miss how
  // the number follows that dimension (65536/(S1*S2^2) in the parts seen
  // at every size): such a law is checked against the fully seen parts.
  const bool partial = own.status == ValueFit::Status::kOk && scale_dependent(own) &&
                       obs.size() > 1 && some_dimension_unvaried(obs);
  if (!undetermined && !partial &&
      (!constant || !(obs.size() == 1 || some_dimension_unvaried(obs))))
    return std::nullopt;
  const Topology grid{target, {}};
  const std::vector<SiblingLaw> laws =
      at ? sibling_laws(obs, cell, pool, *at, target) : std::vector<SiblingLaw>{};
  std::vector<const SiblingLaw*> fitting;
  if (check.borrow)
    for (const auto& l : laws)
      if (scale_dependent(l.fit) && reproduces(l, obs, values)) fitting.push_back(&l);
  // Laws of parts seen at two sizes of every dimension go first: another
  // part's law from partial inputs is no better than this part's own.
  const auto varies_all = [](const SiblingLaw* l) {
    for (std::size_t d = 0; d < l->obs[0].sizes.size(); ++d) {
      bool same = true;
      for (const auto& o : l->obs) same = same && o.sizes[d] == l->obs[0].sizes[d];
      if (same) return false;
    }
    return true;
  };
  if (std::any_of(fitting.begin(), fitting.end(), varies_all))
    std::erase_if(fitting, [&](const SiblingLaw* l) { return !varies_all(l); });
  else if (partial)
    return std::nullopt;  // nothing better known: its own law stands
  auto law_text = [&](const SiblingLaw& l) {
    std::string s = cell_name(grid, l.cell) + ": ";
    for (std::size_t k = 0; k < l.obs.size(); ++k)
      s += (k ? ", " : "") + format_value(l.obs[k].value) + " at " +
           Topology{l.obs[k].sizes, {}}.to_string();
    return s + (l.fit.status == ValueFit::Status::kOk ? " (" + l.fit.formula + ")" : "");
  };
  if (!fitting.empty()) {
    std::string laws_seen;
    bool agree = true;
    for (const SiblingLaw* l : fitting) {
      agree = agree && l->fit.value == fitting[0]->fit.value &&
              (!check.same_law || l->fit.formula == fitting[0]->fit.formula);
      laws_seen += "; " + law_text(*l);
    }
    if (!agree)
      throw ExtrapError(what + ": values " + values_listing(obs, values) +
                        " do not show how the number scales, and the other parts that "
                        "explain them disagree" +
                        (check.same_law ? "" : " at " + grid.to_string()) + laws_seen +
                        ": give inputs in which this part appears at two sizes of every "
                        "dimension");
    return BorrowedLaw{fitting[0]->fit, fitting[0]->cell};
  }
  if (obs.size() == 1) {
    const SiblingLaw* changing = nullptr;
    for (const auto& l : laws)
      if (l.changes && !changing) changing = &l;
    const bool varying = check.varying && !check.varying->empty();
    if (changing || (laws.empty() && varying))
      throw ExtrapError(what + ": seen in one input only (" + values_listing(obs, values) +
                        ") while the same field changes with the grid in other parts (" +
                        (changing ? law_text(*changing) : *check.varying) +
                        "): one input cannot show how it scales; give inputs in which this "
                        "part appears at two sizes (at least 3 ranks along each dimension in "
                        "two of them)");
  }
  return std::nullopt;
}

}  // namespace tracefold::extrap
