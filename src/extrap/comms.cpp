// Communicators other than the world, and the recorded MPI_Cart_create grid.
//
// A stencil code's sub-communicators follow its grid: a Cartesian
// communicator over every rank (the world under another id), the rows or
// columns of the grid (MPI_Comm_split with the row as color, MPI_Cart_sub),
// a duplicate of one of these. Such a communicator is described by which
// dimensions its groups run along: each group is the ranks that share their
// coordinates in the other dimensions, in rank order. That description
// holds at every scale, so the target's groups follow from the target grid.
// The ids do not change with scale: the recorder names a communicator by
// its parent's id and its creation number.
//
// The split arguments (color, key) differ from rank to rank inside a cell,
// so they are read as affine functions of the rank's coordinates,
// b + a1*x + a2*y + a3*z, each coefficient fitted over the sizes.
#include <algorithm>
#include <map>

#include "internal.hpp"
#include "tracefold/extrap/scale_model.hpp"

namespace tracefold::extrap {

namespace {

const char* const kAxis[] = {"x", "y", "z"};

// A list field's values, one list per execution (the length comes first).
std::vector<std::vector<int64_t>> lists_of(const ValueSeq& seq) {
  const std::vector<int64_t> v = seq.to_vector();
  std::vector<std::vector<int64_t>> out;
  for (std::size_t i = 0; i < v.size();) {
    const int64_t n = v[i++];
    if (n < 0 || i + static_cast<std::size_t>(n) > v.size()) return {};
    out.emplace_back(v.begin() + static_cast<long>(i), v.begin() + static_cast<long>(i + n));
    i += static_cast<std::size_t>(n);
  }
  return out;
}

}  // namespace

std::optional<RecordedCart> recorded_cart(const Trace& trace, const std::string& name) {
  const auto op = OpTable::find("MPI_Cart_create");
  const auto dims_f = FieldTable::find("dims");
  const auto periods_f = FieldTable::find("periods");
  if (!op || !dims_f) return std::nullopt;
  std::optional<RecordedCart> found;
  std::vector<int64_t> found_dims, found_periods;
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const Node& n = trace.nodes[i];
    if (n.key.op != *op) continue;
    const std::string where =
        name + ": node " + std::to_string(i) + " (" + describe_node(trace, n) + ")";
    const Elastic* comm = n.field(FieldTable::comm());
    bool world = true;
    if (comm)
      for (const auto& e : comm->entries())
        for (int64_t v : e.values.to_vector()) world = world && v == CommTable::kWorld;
    const Elastic* d = n.field(*dims_f);
    const Elastic* p = periods_f ? n.field(*periods_f) : nullptr;
    if (!world || !d) continue;
    for (const auto& e : d->entries()) {
      const auto dl = lists_of(e.values);
      const ValueSeq* ps = p ? p->for_rank(e.ranks.first()) : nullptr;
      const auto pl = ps ? lists_of(*ps) : std::vector<std::vector<int64_t>>{};
      for (std::size_t call = 0; call < dl.size(); ++call) {
        const auto& dims = dl[call];
        int64_t prod = 1;
        for (int64_t x : dims) {
          if (x < 1 || is_sentinel(x))
            throw ExtrapError(where + ", field dims: " + format_value(x) + " is no dimension size");
          prod *= x;
        }
        if (prod != trace.world_size) continue;  // a grid of some ranks only
        const std::vector<int64_t> periods = call < pl.size() && pl[call].size() == dims.size()
                                                 ? pl[call]
                                                 : std::vector<int64_t>(dims.size());
        if (found) {
          if (dims != found_dims)
            throw ExtrapError(where + ", field dims: MPI_Cart_create grids of the whole world " +
                              "differ (" + found->node + " has other dims): which one the " +
                              "ranks are laid out on is not known");
          if (periods != found_periods)
            throw ExtrapError(where + ", field periods: MPI_Cart_create grids of the whole " +
                              "world differ in periods (against " + found->node + ")");
          continue;
        }
        RecordedCart c;
        c.node = "node " + std::to_string(i) + " (" + describe_node(trace, n) + ")";
        // The last Cartesian coordinate varies fastest in rank order.
        for (int j = static_cast<int>(dims.size()) - 1; j >= 0; --j) {
          if (dims[static_cast<std::size_t>(j)] == 1) continue;
          c.topology.sizes.push_back(dims[static_cast<std::size_t>(j)]);
          c.topology.periodic.push_back(periods[static_cast<std::size_t>(j)] != 0);
          c.mpi_index.push_back(j);
        }
        found = std::move(c);
        found_dims = dims;
        found_periods = periods;
      }
    }
  }
  return found;
}

namespace detail {

CommShapes comm_shapes(const GridInput& g) {
  const Trace& t = g.input->trace;
  const auto p = static_cast<std::size_t>(t.world_size);
  CommShapes out;
  for (const auto& [id, groups] : t.comms.all()) {
    if (id == CommTable::kWorld) continue;
    const std::string what = g.input->name + ": communicator " + format_value(id);
    std::vector<bool> keep(g.topo.sizes.size(), false);
    std::size_t covered = 0;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const auto& m = groups[gi].members;
      covered += m.size();
      const auto first = g.topo.coords(m.at(0));
      std::vector<bool> k(keep.size(), false);
      int64_t full = 1;
      for (std::size_t i = 1; i < m.size(); ++i) {
        if (m[i] <= m[i - 1])
          throw ExtrapError(what + ": its members are not in rank order (" +
                            std::to_string(m[i - 1]) + " before " + std::to_string(m[i]) +
                            "): reordered communicators are not extrapolated");
        const auto c = g.topo.coords(m[i]);
        for (std::size_t d = 0; d < c.size(); ++d) k[d] = k[d] || c[d] != first[d];
      }
      for (std::size_t d = 0; d < k.size(); ++d)
        if (k[d]) full *= g.topo.sizes[d];
      if (gi == 0) keep = k;
      if (k != keep || static_cast<int64_t>(m.size()) != full)
        throw ExtrapError(what + ": its group of ranks " + std::to_string(m.front()) + ".." +
                          std::to_string(m.back()) + " (" + std::to_string(m.size()) +
                          " ranks) is not a whole row, column, plane or the whole of the " +
                          g.topo.to_string() +
                          " grid: only communicators that follow the grid are extrapolated");
    }
    if (covered != p)
      throw ExtrapError(what + ": its groups hold " + std::to_string(covered) + " of the " +
                        std::to_string(p) +
                        " ranks (some ranks have none, e.g. MPI_UNDEFINED colors or "
                        "MPI_Comm_create over part of the ranks): not extrapolated yet");
    out.emplace(id, keep);
  }
  return out;
}

std::optional<CommGrid> grid_from_comms(const Trace& t) {
  const int64_t p = t.world_size;
  for (const auto& [id, groups] : t.comms.all()) {
    if (id == CommTable::kWorld || groups.empty()) continue;
    const auto len = static_cast<int64_t>(groups[0].members.size());
    if (len < 2 || len >= p || p % len != 0 || static_cast<int64_t>(groups.size()) != p / len)
      continue;
    // Every group a run of `len` consecutive ranks starting at a multiple
    // of len: the rows of a row-major grid len wide.
    const bool rows = std::all_of(groups.begin(), groups.end(), [len](const CommGroup& g) {
      const int32_t first = g.members.at(0);
      return first % len == 0 && g.members == MemberList::run(first, 1, len);
    });
    if (rows) return CommGrid{Topology{{len, p / len}, {false, false}}, id};
  }
  return std::nullopt;
}

CommShapes common_comm_shapes(const std::vector<GridInput>& grids) {
  CommShapes shared;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    CommShapes s = comm_shapes(grids[k]);
    if (k == 0) {
      shared = std::move(s);
      continue;
    }
    for (const auto& [id, keep] : s) {
      const auto it = shared.find(id);
      if (it == shared.end())
        throw ExtrapError(grids[k].input->name + ": communicator " + format_value(id) +
                          " has no counterpart in " + grids[0].input->name +
                          " (made by a call that runs at some rank counts only?)");
      if (it->second != keep)
        throw ExtrapError(grids[k].input->name + ": communicator " + format_value(id) +
                          " runs along " + shape_name(keep) + ", in " + grids[0].input->name +
                          " along " + shape_name(it->second));
    }
    for (const auto& [id, keep] : shared)
      if (!s.count(id))
        throw ExtrapError(grids[0].input->name + ": communicator " + format_value(id) +
                          " has no counterpart in " + grids[k].input->name);
  }
  return shared;
}

std::string shape_name(const std::vector<bool>& keep) {
  std::string s;
  for (std::size_t d = 0; d < keep.size(); ++d)
    if (keep[d]) s += (s.empty() ? "" : ",") + std::string(d < 3 ? kAxis[d] : "?");
  if (s.empty()) return "no dimension (one rank each)";
  if (std::find(keep.begin(), keep.end(), false) == keep.end()) return s + " (the whole grid)";
  return s;
}

void define_target_comms(const CommShapes& shapes, const Topology& target, CommTable& out) {
  const int64_t n = target.ranks();
  for (const auto& [id, keep] : shapes) {
    // Group index: the coordinates outside `keep`, row-major.
    std::map<int64_t, MemberList> groups;
    for (int64_t r = 0; r < n; ++r) {
      const auto c = target.coords(r);
      int64_t key = 0, stride = 1;
      for (std::size_t d = 0; d < c.size(); ++d) {
        if (keep[d]) continue;
        key += c[d] * stride;
        stride *= target.sizes[d];
      }
      groups[key].push_back(static_cast<int32_t>(r));
    }
    for (auto& [key, members] : groups) out.define(id, CommGroup{std::move(members)});
  }
}

Elastic extrapolate_by_coordinates(const std::vector<GridInput>& grids,
                                   const std::vector<const Elastic*>& per_input,
                                   const Topology& target, const std::string& what,
                                   std::vector<std::string>* explain) {
  const std::size_t dims = target.sizes.size();
  // coef[k][i]: input k's coefficients (b, a1, ..., ad) at position i.
  std::vector<std::vector<std::vector<int64_t>>> coef(grids.size());
  std::size_t length = 0;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const GridInput& g = grids[k];
    const std::string where = g.input->name + ": " + what;
    const int32_t p = g.input->trace.world_size;
    std::vector<std::vector<int64_t>> v(static_cast<std::size_t>(p));
    for (int32_t r = 0; r < p; ++r) {
      const ValueSeq* s = per_input[k] ? per_input[k]->for_rank(r) : nullptr;
      if (!s)
        throw ExtrapError(where + ": rank " + std::to_string(r) +
                          " has no value: values that differ by rank are extrapolated only "
                          "when every rank has them");
      v[static_cast<std::size_t>(r)] = s->to_vector();
      if (v[static_cast<std::size_t>(r)].size() != v[0].size())
        throw ExtrapError(where + ": ranks 0 and " + std::to_string(r) + " have " +
                          std::to_string(v[0].size()) + " and " +
                          std::to_string(v[static_cast<std::size_t>(r)].size()) + " values");
    }
    if (k > 0 && v[0].size() != length)
      throw ExtrapError(where + ": " + std::to_string(v[0].size()) + " values per rank, " +
                        std::to_string(length) + " in " + grids[0].input->name);
    length = v[0].size();
    for (std::size_t i = 0; i < length; ++i) {
      std::vector<int64_t> c{v[0][i]};
      int64_t stride = 1;
      for (std::size_t d = 0; d < dims; ++d) {
        c.push_back(v[static_cast<std::size_t>(stride)][i] - v[0][i]);
        stride *= g.topo.sizes[d];
      }
      for (int32_t r = 0; r < p; ++r) {
        const auto x = g.topo.coords(r);
        int64_t want = c[0];
        for (std::size_t d = 0; d < dims; ++d) want += c[d + 1] * x[d];
        const int64_t got = v[static_cast<std::size_t>(r)][i];
        const bool sentinel = is_sentinel(got) || is_sentinel(v[0][i]);
        if (sentinel ? got != v[0][i] : got != want)
          throw ExtrapError(where + ": rank " + std::to_string(r) + " has " + format_value(got) +
                            ", not " + format_value(want) +
                            " as an affine function of its grid coordinates would give "
                            "(value " +
                            std::to_string(i) + " of each rank)");
      }
      if (is_sentinel(v[0][i]))
        for (std::size_t d = 0; d < dims; ++d) c[d + 1] = 0;
      coef[k].push_back(std::move(c));
    }
  }
  // Each coefficient across the inputs.
  std::vector<std::vector<int64_t>> at(length);
  std::string text;
  for (std::size_t i = 0; i < length; ++i) {
    std::string term_text;
    for (std::size_t j = 0; j <= dims; ++j) {
      std::vector<Observation> obs;
      std::string seen;
      bool sentinel = false;
      for (std::size_t k = 0; k < grids.size(); ++k) {
        obs.push_back({grids[k].topo.sizes, coef[k][i][j]});
        sentinel = sentinel || is_sentinel(coef[k][i][j]);
        seen += (k ? ", " : "") + format_value(coef[k][i][j]) + " in " + grids[k].input->name;
      }
      const std::string part = j == 0 ? "constant" : std::string("coefficient of ") + kAxis[j - 1];
      int64_t value = 0;
      std::string formula;
      if (sentinel) {
        for (const auto& o : obs)
          if (o.value != obs[0].value)
            throw ExtrapError(what + ", " + part + ": values " + seen +
                              " mix ranks and MPI constants");
        value = obs[0].value;
        formula = format_value(value);
      } else {
        const ValueFit f = fit_value(obs, target.sizes);
        if (f.status != ValueFit::Status::kOk)
          throw ExtrapError(what + ", " + part + ": values " + seen +
                            (f.status == ValueFit::Status::kUndetermined
                                 ? " do not determine the value at " + target.to_string()
                             : f.status == ValueFit::Status::kNotInteger
                                 ? " extrapolate to a fraction at " + target.to_string()
                                 : std::string(" fit no function of the grid sizes")));
        value = f.value;
        formula = f.formula;
      }
      at[i].push_back(value);
      if (j == 0)
        term_text = formula;
      else if (formula != "0")
        term_text += " + [" + formula + "]*" + kAxis[j - 1];
    }
    if (i < 8) text += (i ? " " : "") + std::string("<") + term_text + ">";
  }
  if (length > 8) text += " ...";
  if (explain) explain->push_back(text + " @ every rank, by its coordinates");
  // Ranks with equal values share an entry. The ranks come in ascending
  // order, so each entry's ranklist grows at its end, as runs: a column's
  // key is one run, not one interval per row.
  std::map<std::vector<int64_t>, Ranklist> by_values;
  const int64_t n = target.ranks();
  std::vector<int64_t> x(dims, 0), vals(at.size());
  for (int64_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < at.size(); ++i) {
      int64_t v = at[i][0];
      if (!is_sentinel(v))
        for (std::size_t d = 0; d < dims; ++d) v += at[i][d + 1] * x[d];
      vals[i] = v;
    }
    by_values[vals].insert(static_cast<int32_t>(r));
    for (std::size_t d = 0; d < dims && ++x[d] == target.sizes[d]; ++d) x[d] = 0;
  }
  Elastic out;
  for (auto& [values, ranks] : by_values) {
    ValueSeq s;
    for (int64_t v : values) s.push_back(v);
    out.entries().push_back({std::move(s), std::move(ranks)});
  }
  out.sort_entries();
  return out;
}

std::optional<Elastic> cart_dims_for_target(const std::vector<GridInput>& grids,
                                            const std::vector<const Node*>& nodes,
                                            const Ranklist& ranks, const Topology& target) {
  std::vector<int> index;
  std::size_t length = 0, calls = 0;
  for (std::size_t k = 0; k < grids.size(); ++k) {
    const GridInput& g = grids[k];
    const auto cart = recorded_cart(g.input->trace, g.input->name);
    const auto f = FieldTable::find("dims");
    const Elastic* e = f ? nodes[k]->field(*f) : nullptr;
    if (!cart || !e || cart->topology.sizes != g.topo.sizes) return std::nullopt;
    if (k == 0) index = cart->mpi_index;
    if (cart->mpi_index != index) return std::nullopt;
    for (const auto& entry : e->entries()) {
      const auto lists = lists_of(entry.values);
      if (k == 0 && &entry == &e->entries().front()) {
        calls = lists.size();
        length = lists.empty() ? 0 : lists[0].size();
      }
      if (lists.size() != calls || calls == 0) return std::nullopt;
      for (const auto& l : lists) {
        if (l.size() != length) return std::nullopt;
        std::vector<int64_t> want(length, 1);
        for (std::size_t d = 0; d < index.size(); ++d)
          want.at(static_cast<std::size_t>(index[d])) = g.topo.sizes[d];
        if (l != want) return std::nullopt;
      }
    }
  }
  std::vector<int64_t> dims(length, 1);
  for (std::size_t d = 0; d < index.size(); ++d)
    dims.at(static_cast<std::size_t>(index[d])) = target.sizes[d];
  ValueSeq seq;
  for (std::size_t c = 0; c < calls; ++c) {
    seq.push_back(static_cast<int64_t>(length));
    for (int64_t x : dims) seq.push_back(x);
  }
  Elastic out;
  out.entries().push_back({std::move(seq), ranks});
  return out;
}

}  // namespace detail
}  // namespace tracefold::extrap
