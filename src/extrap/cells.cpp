// Parameters cell by cell (seed 000, 3.2.3).
//
// The ranks of one cell of the grid (a corner, an edge, a face, the
// interior) behave alike in a stencil code, and with peers stored relative
// to the caller they hold the same value sequences. So a node's elastic
// values are read per cell, each number of a cell's sequence is fitted
// across the inputs as a function of the sizes (scale_model.hpp), and the
// target's cells get the fitted sequences. The ranklists of the output are
// the target's cells: boxes whose start, lengths and strides are the
// linear forms of the sizes the seed extrapolates field by field.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "internal.hpp"
#include "tracefold/extrap/scale_model.hpp"

namespace tracefold::extrap {

GridInput make_grid_input(const ExtrapInput& input, const Topology& topo) {
  GridInput g;
  g.input = &input;
  g.topo = topo;
  const int32_t p = input.trace.world_size;
  g.cell_of_rank.resize(static_cast<std::size_t>(p));
  g.cell_rep.assign(static_cast<std::size_t>(cell_count(topo)), -1);
  g.cell_last = g.cell_rep;
  for (int32_t r = p - 1; r >= 0; --r) {
    const int c = cell_of(topo, r);
    g.cell_of_rank[static_cast<std::size_t>(r)] = c;
    g.cell_rep[static_cast<std::size_t>(c)] = r;  // ends as the lowest rank
    if (g.cell_last[static_cast<std::size_t>(c)] < 0) g.cell_last[static_cast<std::size_t>(c)] = r;
  }
  return g;
}

std::vector<const ValueSeq*> cell_sequences(const GridInput& g, const Elastic& e,
                                            const std::string& what) {
  const int32_t p = g.input->trace.world_size;
  std::vector<int> entry_of(static_cast<std::size_t>(p), -1);
  for (std::size_t i = 0; i < e.entries().size(); ++i)
    e.entries()[i].ranks.for_each([&](int32_t r) {
      if (r < p) entry_of[static_cast<std::size_t>(r)] = static_cast<int>(i);
    });
  std::vector<const ValueSeq*> out(g.cell_rep.size(), nullptr);
  for (int32_t r = 0; r < p; ++r) {
    const int c = g.cell_of_rank[static_cast<std::size_t>(r)];
    const int rep = g.cell_rep[static_cast<std::size_t>(c)];
    const int mine = entry_of[static_cast<std::size_t>(r)];
    const int theirs = entry_of[static_cast<std::size_t>(rep)];
    if (mine == theirs) {
      if (mine >= 0)
        out[static_cast<std::size_t>(c)] = &e.entries()[static_cast<std::size_t>(mine)].values;
      continue;
    }
    auto text = [&](int idx) {
      return idx < 0 ? std::string("nothing")
                     : "'" + e.entries()[static_cast<std::size_t>(idx)].values.to_string() + "'";
    };
    throw ExtrapError(g.input->name + ": " + what + ": ranks " + std::to_string(rep) + " and " +
                      std::to_string(r) + " lie in the same part of the " + g.topo.to_string() +
                      " grid (" + cell_name(g.topo, c) + ") but have " + text(theirs) + " and " +
                      text(mine) +
                      ": the pattern is not a row-major stencil (a plugin would be needed)");
  }
  return out;
}

namespace detail {

namespace {

std::string clip(const std::string& s) {
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

// The coordinate offsets (peer minus caller, per dimension) of relative
// peer `rel` seen from `rank`, in a communicator whose groups run along
// the dimensions of `keep` (nullptr: the world): one offset per such
// dimension, the caller and the peer numbered row-major within the group.
std::vector<int64_t> offsets_of(const Topology& t, int64_t rank, int64_t rel,
                                const std::vector<bool>* keep) {
  std::vector<int64_t> sizes, coords;
  for (std::size_t d = 0; d < t.sizes.size(); ++d) {
    const int64_t s = t.sizes[d];
    if (!keep || (*keep)[d]) {
      sizes.push_back(s);
      coords.push_back(rank % s);
    }
    rank /= s;
  }
  int64_t p = 1, a = 0;
  for (std::size_t i = sizes.size(); i-- > 0;) a = a * sizes[i] + coords[i];
  for (int64_t s : sizes) p *= s;
  int64_t b = (a + rel) % p;
  std::vector<int64_t> o;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    o.push_back(b % sizes[i] - coords[i]);
    b /= sizes[i];
  }
  return o;
}

// The number at the position being fitted, read from another cell's
// sequence of the same input (nullopt: that sequence is shaped differently).
using Locator = std::function<std::optional<int64_t>(const ValueSeq& ref, const ValueSeq& other)>;

// A relative peer as coordinate offsets, one per dimension, each fitted
// over that dimension's size only. On a row-major grid a cell's partner is
// a fixed step, or a wrap of Sd - 1, in each dimension, and the offset in
// dimension d depends only on whether the cell is first, in between or
// last along d. So the offsets along d are pooled over every cell of the
// same class along d (at the same position of equally shaped sequences):
// the interior of a 3-D grid, seen only at 27 ranks, gets its offsets from
// the faces seen at 12 and 18. An offset that is the same for the first
// and the last rank of an in-between box lies in [-1, 1] for every size,
// so it is a constant; at the first or last coordinate it must be
// confirmed at two sizes of its dimension (1 at a size of 2 may be a step
// or a wrap). Used only when the peer as one number cannot be decided;
// nullopt when this does not decide it either.
std::optional<int64_t> fit_offsets(const std::vector<SeqObservation>& obs, int cell,
                                   const PeerPool& pool, const Locator& at,
                                   const std::vector<int64_t>& values,
                                   const std::vector<int64_t>& target, std::string& formula) {
  const std::size_t dims = target.size();
  const std::vector<bool>* keep = pool.keep;
  int64_t rel = 0, stride = 1, p = 1;
  for (std::size_t d = 0; d < dims; ++d)
    if (!keep || (*keep)[d]) p *= target[d];
  std::string text;
  int weight = 1;
  std::size_t kd = 0;  // index of d among the communicator's dimensions
  for (std::size_t d = 0; d < dims; ++d, weight *= 3) {
    if (keep && !(*keep)[d]) continue;
    const int cls = cell / weight % 3;
    std::vector<Observation> o;
    std::set<int64_t> sizes;
    for (std::size_t k = 0; k < pool.grids->size(); ++k) {
      const GridInput& g = (*pool.grids)[k];
      const auto& seqs = (*pool.per_input)[k];
      // This input's own sequence of the cell, else any input's, as the
      // reference for the position.
      std::optional<int64_t> own;
      const ValueSeq* ref = obs[0].seq;
      for (std::size_t q = 0; q < obs.size(); ++q)
        if (obs[q].grid == &g) {
          own = values[q];
          ref = obs[q].seq;
        }
      for (int c = 0; c < static_cast<int>(g.cell_rep.size()); ++c) {
        if (c / weight % 3 != cls || g.cell_rep[static_cast<std::size_t>(c)] < 0) continue;
        std::optional<int64_t> v;
        if (c == cell)
          v = own;
        else if (seqs[static_cast<std::size_t>(c)])
          v = at(*ref, *seqs[static_cast<std::size_t>(c)]);
        if (!v || is_sentinel(*v)) continue;
        const auto lo = offsets_of(g.topo, g.cell_rep[static_cast<std::size_t>(c)], *v, keep);
        if (offsets_of(g.topo, g.cell_last[static_cast<std::size_t>(c)], *v, keep) != lo) {
          if (c == cell) return std::nullopt;  // not one step for the whole box
          continue;
        }
        o.push_back({{g.topo.sizes[d]}, lo[kd]});
        sizes.insert(g.topo.sizes[d]);
      }
    }
    if (o.empty()) return std::nullopt;
    const ValueFit f = fit_value(o, {target[d]});
    if (f.status != ValueFit::Status::kOk || f.value <= -target[d] || f.value >= target[d])
      return std::nullopt;
    const bool constant = f.formula.find('S') == std::string::npos;
    if (cls == 1 ? !constant : sizes.size() < 2) return std::nullopt;
    rel += f.value * stride;
    stride *= target[d];
    std::string fd = f.formula;
    for (std::size_t i = 0; (i = fd.find("S1", i)) != std::string::npos; i += 2)
      fd[i + 1] = static_cast<char>('1' + d);
    static const char* const kAxis[] = {"x", "y", "z"};
    text += std::string(kd ? " " : "") + (d < 3 ? kAxis[d] : "?") + ":" + fd;
    ++kd;
  }
  formula = "<" + text + ">";
  return ((rel % p) + p) % p;
}

// The same number (at the position `at` finds) in the other cells of the
// pool, each cell fitted over the inputs that have it.
struct SiblingLaw {
  int cell = 0;
  std::vector<Observation> obs;
  ValueFit fit;          // at the target
  bool changes = false;  // its values differ between the inputs
};

std::vector<SiblingLaw> sibling_laws(const std::vector<SeqObservation>& obs, int cell,
                                     const PeerPool& pool, const Locator& at,
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
      // The position is defined on this input's sequence of the cell when
      // it has the cell (the reps of a run may differ between inputs).
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

// Whether the cell's own inputs leave some dimension at one size: a
// constant fitted over them says nothing about that dimension.
bool some_dimension_unvaried(const std::vector<SeqObservation>& obs) {
  const std::vector<int64_t>& s0 = obs[0].grid->topo.sizes;
  for (std::size_t d = 0; d < s0.size(); ++d) {
    bool same = true;
    for (const auto& o : obs) same = same && o.grid->topo.sizes[d] == s0[d];
    if (same) return true;
  }
  return false;
}

// One number across the inputs. `at` finds the same number in another
// cell's sequence (for fit_offsets with a peer pool, and for the other
// cells' laws); `varying` names a cell whose sequence changes between the
// inputs, for a cell seen in one input whose position `at` cannot match.
int64_t fit_number(const std::vector<SeqObservation>& obs, int cell, const PeerPool* pool,
                   const Locator* at, const std::vector<int64_t>& values,
                   const std::vector<int64_t>& target, const std::string& what,
                   std::string& formula, const std::string* varying = nullptr) {
  bool any_sentinel = false, same = true;
  for (int64_t v : values) {
    any_sentinel = any_sentinel || is_sentinel(v);
    same = same && v == values[0];
  }
  auto listing = [&] {
    std::string s;
    for (std::size_t k = 0; k < obs.size(); ++k)
      s += (k ? ", " : "") + format_value(values[k]) + " in " + obs[k].grid->input->name + " (" +
           obs[k].grid->topo.to_string() + ")";
    return s;
  };
  if (any_sentinel) {
    if (!same) throw ExtrapError(what + ": values " + listing() + " mix ranks and MPI constants");
    formula = format_value(values[0]);
    return values[0];
  }
  std::vector<Observation> o;
  for (std::size_t k = 0; k < obs.size(); ++k) o.push_back({obs[k].grid->topo.sizes, values[k]});
  // A peer is first read as coordinate offsets: they are confirmed per
  // dimension, where one number seen in one input would pass as a constant.
  if (pool && pool->peer && at)
    if (auto v = fit_offsets(obs, cell, *pool, *at, values, target, formula)) return *v;
  const ValueFit f = fit_value(o, target);
  // A constant from inputs that leave some dimension at one size (a part
  // of the grid seen in one input only, or at one size of a dimension) is
  // no evidence that the number does not depend on that dimension. The
  // same number in the other parts decides: a law that changes with the
  // grid there and also gives this part's values is taken (strong scaling
  // on 4, 6, 9 ranks: the middle columns, seen at 9 only, send 360/S2
  // values like the first and last columns); laws that disagree, or a
  // part seen once whose number changes elsewhere under no law that
  // explains it, are an error.
  const bool constant = f.status == ValueFit::Status::kOk && !scale_dependent(f);
  if (constant && pool && (obs.size() == 1 || some_dimension_unvaried(obs))) {
    const Topology grid{target, {}};
    const std::vector<SiblingLaw> laws =
        at ? sibling_laws(obs, cell, *pool, *at, target) : std::vector<SiblingLaw>{};
    std::vector<const SiblingLaw*> fitting;
    if (pool->borrow)
      for (const auto& l : laws)
        if (scale_dependent(l.fit) && reproduces(l, obs, values)) fitting.push_back(&l);
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
        agree = agree && l->fit.value == fitting[0]->fit.value;
        laws_seen += "; " + law_text(*l);
      }
      if (!agree)
        throw ExtrapError(what + ": values " + listing() +
                          " do not show how the number scales, and the other parts that "
                          "explain them disagree at " +
                          grid.to_string() + laws_seen +
                          ": give inputs in which this part appears at two sizes of every "
                          "dimension");
      formula = fitting[0]->fit.formula + " (from " + cell_name(grid, fitting[0]->cell) + ")";
      return fitting[0]->fit.value;
    }
    if (obs.size() == 1) {
      const SiblingLaw* changing = nullptr;
      for (const auto& l : laws)
        if (l.changes && !changing) changing = &l;
      if (changing || (laws.empty() && varying && !varying->empty()))
        throw ExtrapError(
            what + ": seen in one input only (" + listing() +
            ") while the same field changes with the grid in other parts (" +
            (changing ? law_text(*changing) : *varying) +
            "): one input cannot show how it scales; give inputs in which this part "
            "appears at two sizes (at least 3 ranks along each dimension in two of them)");
    }
  }
  switch (f.status) {
    case ValueFit::Status::kOk:
      formula = f.formula;
      return f.value;
    case ValueFit::Status::kUndetermined:
      throw ExtrapError(what + ": values " + listing() + " do not determine the value at " +
                        Topology{target, {}}.to_string() + " (" + f.formula +
                        " fits them, among others): give inputs at more, or more varied, rank "
                        "counts (a d-D grid needs d+1 with at least 3 ranks along each "
                        "dimension)");
    case ValueFit::Status::kNotInteger:
      throw ExtrapError(what + ": values " + listing() + " extrapolate to a fraction at " +
                        Topology{target, {}}.to_string() + " (" + f.formula + ")");
    case ValueFit::Status::kInconsistent:
      throw ExtrapError(what + ": values " + listing() +
                        " are inconsistent: no function of the grid sizes fits them (first "
                        "contradiction: " +
                        obs[f.bad_observation].grid->input->name + ")");
    case ValueFit::Status::kNoData:
      break;
  }
  throw ExtrapError(what + ": no values");
}

// For a cell seen in one input: the first other cell whose sequence of
// the field differs between the inputs that have it ("" when none), for
// fit_number's refusal when no position can be matched.
std::string varying_cell(const PeerPool& pool, const Topology& grid) {
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
      } else if (!s->equals(*first)) {
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

// Whether some other cell, in any input, has a sequence of the field as
// long as the cell's but folded into other runs.
bool folds_coarser(const std::vector<SeqObservation>& obs, const PeerPool& pool) {
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

std::string bracket(const std::string& formula) {
  const bool plain = formula.find_first_of(" */") == std::string::npos;
  return plain ? formula : "[" + formula + "]";
}

}  // namespace

ValueSeq extrapolate_sequence(const std::vector<SeqObservation>& obs, int cell,
                              const PeerPool* pool, const std::vector<int64_t>& target,
                              const std::string& what, std::string& formula) {
  std::vector<std::vector<ValueSeq::Run>> runs;
  for (const auto& o : obs) {
    if (o.seq->is_histogram())
      throw ExtrapError(o.grid->input->name + ": " + what +
                        ": lossy value histograms are not extrapolated");
    runs.push_back(o.seq->runs());
  }
  bool same_shape = true;
  for (const auto& r : runs) {
    same_shape = same_shape && r.size() == runs[0].size();
    for (std::size_t i = 0; same_shape && i < r.size(); ++i)
      same_shape = r[i].pattern.size() == runs[0][i].pattern.size();
  }
  // A cell whose values are read against the other cells' (seen at one
  // size of some dimension) and folds coarser than one of them: its
  // values coincide where theirs differ (240 west and north at 3x3 where
  // the corners send 360 and 240 at 2x3), so one number of its runs would
  // stand for several roles. Compared value by value instead.
  if (same_shape && pool && (obs.size() == 1 || some_dimension_unvaried(obs)) &&
      folds_coarser(obs, *pool))
    same_shape = false;
  std::ostringstream text;
  std::string f;
  // A cell seen in one input: whether the field changes elsewhere, for
  // numbers whose position no other cell's sequence shows.
  std::string varying;
  if (pool && obs.size() == 1) varying = varying_cell(*pool, Topology{target, {}});
  if (same_shape) {
    std::vector<ValueSeq::Run> out(runs[0].size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (i) text << ' ';
      const bool group = runs[0][i].pattern.size() > 1;
      if (group) text << '(';
      for (std::size_t j = 0; j < runs[0][i].pattern.size(); ++j) {
        std::vector<int64_t> v;
        for (const auto& r : runs) v.push_back(r[i].pattern[j]);
        // Another cell's number here: same runs and pattern lengths, or
        // else the same index in an equally long (short) sequence.
        const Locator at = [i, j](const ValueSeq& ref,
                                  const ValueSeq& other) -> std::optional<int64_t> {
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
        out[i].pattern.push_back(fit_number(obs, cell, pool, &at, v, target, what, f, &varying));
        text << (j ? " " : "") << bracket(f);
      }
      if (group) text << ')';
      std::vector<int64_t> reps;
      for (const auto& r : runs) reps.push_back(static_cast<int64_t>(r[i].reps));
      const Locator rep_at = [i](const ValueSeq& ref,
                                 const ValueSeq& other) -> std::optional<int64_t> {
        const auto a = ref.runs(), b = other.runs();
        bool same = a.size() == b.size();
        for (std::size_t q = 0; same && q < a.size(); ++q)
          same = a[q].pattern.size() == b[q].pattern.size();
        if (!same) return std::nullopt;
        return static_cast<int64_t>(b[i].reps);
      };
      PeerPool plain;  // repeat counts are no peers
      if (pool) {
        plain = *pool;
        plain.peer = false;
        plain.borrow = true;
      }
      const int64_t n = fit_number(obs, cell, pool ? &plain : nullptr, &rep_at, reps, target,
                                   what + " (repeat count)", f, &varying);
      if (n < 1)
        throw ExtrapError(what + ": a repeat count extrapolates to " + std::to_string(n) + " (" +
                          f + ")");
      out[i].reps = static_cast<uint64_t>(n);
      if (n != 1 || f != "1") text << '*' << bracket(f);
    }
    formula = text.str();
    return ValueSeq::from_runs(std::move(out), false);
  }
  // Folded differently (values that coincide at one size fold together):
  // compare value by value when the sequences are equally long.
  constexpr uint64_t kMaxElementwise = uint64_t{1} << 20;
  bool same_length = true;
  for (const auto& o : obs) same_length = same_length && o.seq->size() == obs[0].seq->size();
  if (!same_length || obs[0].seq->size() > kMaxElementwise) {
    std::string listing;
    for (const auto& o : obs)
      listing += "\n  " + o.grid->input->name + ": " + clip(o.seq->to_string());
    throw ExtrapError(what + ": the value sequences differ in structure and length:" + listing);
  }
  std::vector<std::vector<int64_t>> all;
  for (const auto& o : obs) all.push_back(o.seq->to_vector());
  ValueSeq out;
  for (std::size_t i = 0; i < all[0].size(); ++i) {
    std::vector<int64_t> v;
    for (const auto& a : all) v.push_back(a[i]);
    // Another cell's number here: the i-th of an equally long sequence
    // (short sequences only: each look expands the other sequence).
    const Locator at = [i](const ValueSeq& ref, const ValueSeq& other) -> std::optional<int64_t> {
      if (other.size() != ref.size() || other.size() > 4096) return std::nullopt;
      return other.to_vector()[i];
    };
    // Each look expands the other sequence: long ones are matched for
    // peers only (as before), other fields skip the other cells' laws.
    const bool look = (pool && pool->peer) || all[0].size() <= 256;
    out.push_back(fit_number(obs, cell, pool, look ? &at : nullptr, v, target, what, f, &varying));
    if (i < 16) text << (i ? " " : "") << bracket(f);
  }
  if (all[0].size() > 16) text << " ...";
  formula = text.str();
  return out;
}

Elastic extrapolate_elastic(const std::vector<GridInput>& grids,
                            const std::vector<std::vector<const ValueSeq*>>& per_input,
                            const Topology& target, const std::string& what, bool peer,
                            std::vector<std::string>* explain, const std::vector<bool>* keep,
                            bool peer_field) {
  Elastic out;
  std::map<std::string, std::string> cells_by_formula;
  const int cells = cell_count(target);
  for (int c = 0; c < cells; ++c) {
    const Ranklist ranks = cell_ranks(target, c);
    if (ranks.empty()) continue;
    const std::string where = what + ", ranks at " + cell_name(target, c);
    std::vector<SeqObservation> obs;
    std::size_t present = 0;
    for (std::size_t k = 0; k < grids.size(); ++k) {
      if (grids[k].cell_rep[static_cast<std::size_t>(c)] < 0) continue;
      const ValueSeq* s = per_input[k][static_cast<std::size_t>(c)];
      obs.push_back({&grids[k], s});
      present += s != nullptr;
    }
    if (obs.empty())
      throw ExtrapError(where +
                        ": no input has ranks there (every input's grid is too small "
                        "in some dimension): record a run with at least 3 ranks along "
                        "each dimension");
    if (present == 0) continue;
    if (present != obs.size()) {
      std::string have, lack;
      for (const auto& o : obs) (o.seq ? have : lack) += " " + o.grid->input->name;
      throw ExtrapError(where + ": present in" + have + " but not in" + lack);
    }
    std::string formula;
    const PeerPool pool{&grids, &per_input, keep, peer, !peer && !peer_field};
    ValueSeq seq = extrapolate_sequence(obs, c, &pool, target.sizes, where, formula);
    auto& names = cells_by_formula[formula];
    names += (names.empty() ? "" : ", ") + cell_name(target, c);
    bool merged = false;
    for (auto& e : out.entries())
      if (e.values.equals(seq)) {
        e.ranks.unite(ranks);
        merged = true;
        break;
      }
    if (!merged) out.entries().push_back({std::move(seq), ranks});
  }
  out.sort_entries();
  if (explain)
    for (const auto& [formula, names] : cells_by_formula)
      explain->push_back(formula + " @ " + names);
  return out;
}

}  // namespace detail
}  // namespace tracefold::extrap
