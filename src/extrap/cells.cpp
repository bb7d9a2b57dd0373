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
                      ": the values depend on more than whether a rank is first, in between or "
                      "last along each dimension (a remainder of an uneven division given to "
                      "the first ranks does that): record sizes that divide evenly over every "
                      "input's grid, give --grid if another grid keeps these ranks apart, or "
                      "write a plugin (docs/extrapolate.md, Plugins)");
  }
  return out;
}

namespace detail {

namespace {

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
  auto listing = [&] { return values_listing(obs, values); };
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
  // A constant over inputs that leave some dimension at one size says
  // nothing about that dimension: the other parts decide (parts.hpp).
  if (pool) {
    const PartCheck check{pool->borrow, false, varying};
    if (auto law = law_from_other_parts(obs, cell, values, f, *pool, at, target, what, check)) {
      formula = law->fit.formula + " (from " + cell_name(Topology{target, {}}, law->cell) + ")";
      return law->fit.value;
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
                        Topology{target, {}}.to_string() + " (" + f.formula +
                        "): the program cannot divide its data that way there; give a rank "
                        "count at which the law is a whole number, or inputs that show how "
                        "the program rounds (a plugin otherwise)");
    case ValueFit::Status::kInconsistent:
      throw ExtrapError(what + ": values " + listing() +
                        " are inconsistent: no function of the grid sizes fits them (first "
                        "contradiction: " +
                        obs[f.bad_observation].grid->input->name +
                        "); the laws known are constants, c/S, c/S^k, c*S, sums of products "
                        "of the sizes, uneven divisions and, on a 1-D grid of square sizes, "
                        "c*sqrt(S), c/sqrt(S) and a + b*sqrt(S): check that every input ran the "
                        "same problem (the same arguments), or write a plugin for this law "
                        "(docs/extrapolate.md, Plugins)");
    case ValueFit::Status::kNoData:
      break;
  }
  throw ExtrapError(what + ": no values");
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
  if (pool && obs.size() == 1) varying = varying_part(*pool, Topology{target, {}});
  if (same_shape) {
    std::vector<ValueSeq::Run> out(runs[0].size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (i) text << ' ';
      const bool group = runs[0][i].pattern.size() > 1;
      if (group) text << '(';
      for (std::size_t j = 0; j < runs[0][i].pattern.size(); ++j) {
        std::vector<int64_t> v;
        for (const auto& r : runs) v.push_back(r[i].pattern[j]);
        const Locator at = pattern_position(i, j);
        out[i].pattern.push_back(fit_number(obs, cell, pool, &at, v, target, what, f, &varying));
        text << (j ? " " : "") << bracket(f);
      }
      if (group) text << ')';
      std::vector<int64_t> reps;
      for (const auto& r : runs) reps.push_back(static_cast<int64_t>(r[i].reps));
      const Locator rep_at = repeat_position(i);
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
    const Locator at = index_position(i);
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
    const PeerPool pool{{&grids, &per_input}, keep, peer, !peer && !peer_field};
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
