// The parametric model (parametric.hpp): grids, aligned nodes and per-cell
// values from the extrapolation library; the values' models are fitted
// here, a part of the grid seen at one size checked against the other
// parts as extrapolation does (extrap/parts.hpp), and then checked
// against every rank of every input.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "compute_time.hpp"
#include "gen.hpp"
#include "parametric.hpp"
#include "tracefold/extrap/grid.hpp"
#include "tracefold/extrap/parts.hpp"
#include "tracefold/extrap/scale_model.hpp"
#include "tracefold/extrap/timing_models.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold::benchgen::param {

using extrap::ExtrapInput;
using extrap::GridInput;
using extrap::Topology;

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw bench::BenchError(what);
}

int64_t positive_mod(int64_t a, int64_t m) {
  return ((a % m) + m) % m;
}

std::string sizes_text(const std::vector<int64_t>& s) {
  std::string out;
  for (std::size_t i = s.size(); i-- > 0;) out += std::to_string(s[i]) + (i ? "x" : "");
  return out;
}

// The value of execution `i` of a sequence whose repeat counts are
// constants (by_value's), `i` below its length.
const Expr& element(const SymSeq& seq, uint64_t i) {
  for (const SymRun& run : seq) {
    const auto n = static_cast<uint64_t>(*evaluate(run.reps, {}, 0)) * run.pattern.size();
    if (i < n) return run.pattern[i % run.pattern.size()];
    i -= n;
  }
  return seq.back().pattern[i % seq.back().pattern.size()];
}

struct Fitter {
  const std::vector<ExtrapInput>& in;
  const std::vector<GridInput>& grids;
  int dims;
  std::vector<int64_t> target;  // any sizes: fit_value needs one; the largest input's

  // A part's number is also read against the same number in the other
  // parts (extrap/parts.hpp): a constant fitted over inputs that leave a
  // dimension at one size takes their law, or generation stops.
  struct Parts {
    const std::vector<extrap::SeqObservation>* obs;  // the part's inputs, in input order
    const extrap::PartPool* pool;
    extrap::Locator at;
    bool borrow;
    const std::string* varying;
  };

  // One number of a cell's sequence as seen by each input that has the
  // cell (`vals[k]`, nullopt for inputs without it).
  Expr number(const std::vector<std::optional<int64_t>>& vals, bool peer, int cell,
              const std::string& what, const Parts& parts) {
    std::vector<std::size_t> seen;
    for (std::size_t k = 0; k < vals.size(); ++k)
      if (vals[k]) seen.push_back(k);
    auto values_text = [&] {
      std::string s;
      for (std::size_t k : seen)
        s += (s.empty() ? "" : ", ") + std::to_string(*vals[k]) + " at " +
             sizes_text(grids[k].topo.sizes);
      return s;
    };
    const int64_t v0 = *vals[seen[0]];
    if (std::any_of(seen.begin(), seen.end(),
                    [&](std::size_t k) { return is_sentinel(*vals[k]); })) {
      for (std::size_t k : seen)
        if (*vals[k] != v0)
          fail(what + ": values " + values_text() + " mix MPI constants and numbers");
      return Expr::constant(v0);
    }
    if (peer) {
      // A coordinate offset, the same at every size, first.
      Expr e;
      e.kind = Expr::Kind::kPeerAt;
      bool ok = true;
      for (int i = 0; i < dims && ok; ++i) {
        std::vector<int64_t> deltas;
        for (std::size_t k : seen) {
          const auto& s = grids[k].topo.sizes;
          const int64_t p = in[k].trace.world_size;
          const int64_t rep = grids[k].cell_rep[static_cast<std::size_t>(cell)];
          const int64_t to = positive_mod(rep + *vals[k], p);
          int64_t stride = 1;
          for (int j = 0; j < i; ++j) stride *= s[static_cast<std::size_t>(j)];
          const int64_t si = s[static_cast<std::size_t>(i)];
          deltas.push_back(to / stride % si - rep / stride % si);
        }
        bool found = false;
        for (int64_t mag = 0; mag <= 3 && !found; ++mag)
          for (int64_t d : {mag, -mag}) {
            bool fits = true;
            for (std::size_t n = 0; n < seen.size(); ++n) {
              const int64_t si = grids[seen[n]].topo.sizes[static_cast<std::size_t>(i)];
              fits = fits && positive_mod(d - deltas[n], si) == 0;
            }
            if (fits) {
              e.offset[static_cast<std::size_t>(i)] = d;
              found = true;
              break;
            }
          }
        ok = found;
      }
      if (ok) return e;
    }
    std::vector<extrap::Observation> obs;
    for (std::size_t k : seen) obs.push_back({grids[k].topo.sizes, *vals[k]});
    extrap::ValueFit f = extrap::fit_value(obs, target);
    std::vector<int64_t> values;
    for (std::size_t k : seen) values.push_back(*vals[k]);
    const extrap::PartCheck check{parts.borrow, true, parts.varying};
    if (auto law = extrap::law_from_other_parts(*parts.obs, cell, values, f, *parts.pool, &parts.at,
                                                target, what, check))
      f = law->fit;
    using St = extrap::ValueFit::Status;
    if (f.status == St::kInconsistent || f.status == St::kNoData)
      fail(what + ": no model in the sizes fits the values " + values_text());
    if (f.status == St::kUndetermined)
      fail(what + ": the values " + values_text() + " do not determine a model (" +
           std::to_string(seen.size()) +
           " inputs have this part of the grid): give more rank counts");
    Expr e = parse_formula(f.formula);
    if (peer) {
      if (e.kind != Expr::Kind::kPoly)
        fail(what + ": peer model " + f.formula + " is not a sum of sizes");
      e.kind = Expr::Kind::kPeerRel;
    }
    return e;
  }

  // One cell of an elastic value: its model, or nullopt where absent.
  std::optional<SymSeq> cell_seq(const std::vector<std::vector<const ValueSeq*>>& per, int cell,
                                 bool peer, const std::string& what) {
    std::vector<std::size_t> has, lacks;
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (grids[k].cell_rep[static_cast<std::size_t>(cell)] < 0) continue;
      (per[k][static_cast<std::size_t>(cell)] ? has : lacks).push_back(k);
    }
    if (has.empty()) return std::nullopt;
    if (!lacks.empty())
      fail(what + ": present in " + in[has[0]].name + " but absent in " + in[lacks[0]].name);
    for (std::size_t k : has)
      if (per[k][static_cast<std::size_t>(cell)]->is_histogram())
        fail(what + " in " + in[k].name + " is a histogram (lossy trace): exact values are needed");
    std::vector<extrap::SeqObservation> obs;
    for (std::size_t k : has) obs.push_back({&grids[k], per[k][static_cast<std::size_t>(cell)]});
    const extrap::PartPool pool{&grids, &per};
    std::string varying, varying_runs;
    if (obs.size() == 1) {
      varying = extrap::varying_part(pool, Topology{target, {}});
      varying_runs = extrap::varying_part(pool, Topology{target, {}}, true);
    }
    std::vector<std::vector<ValueSeq::Run>> runs(in.size());
    for (std::size_t k : has) runs[k] = per[k][static_cast<std::size_t>(cell)]->runs();
    const auto& r0 = runs[has[0]];
    bool same_shape = true;
    for (std::size_t k : has) {
      same_shape = same_shape && runs[k].size() == r0.size();
      for (std::size_t r = 0; same_shape && r < r0.size(); ++r)
        same_shape = runs[k][r].pattern.size() == r0[r].pattern.size();
    }
    // Values that coincide at one size fold together there (every message
    // 360 values at 2x2, 360 and 240 at 2x3): read value by value, as a
    // part that folds coarser than another part.
    if (!same_shape || (extrap::some_dimension_unvaried(obs) && extrap::folds_coarser(obs, pool)))
      return by_value(obs, has, cell, peer, what, pool, varying);
    SymSeq out;
    for (std::size_t r = 0; r < r0.size(); ++r) {
      SymRun run;
      std::vector<std::optional<int64_t>> vals(in.size());
      for (std::size_t k : has) vals[k] = static_cast<int64_t>(runs[k][r].reps);
      run.reps = number(vals, false, cell, what + " (repetitions)",
                        {&obs, &pool, extrap::repeat_position(r), true, &varying_runs});
      for (std::size_t j = 0; j < r0[r].pattern.size(); ++j) {
        for (std::size_t k : has) vals[k] = runs[k][r].pattern[j];
        run.pattern.push_back(
            number(vals, peer, cell, what,
                   {&obs, &pool, extrap::pattern_position(r, j), !peer, &varying}));
      }
      out.push_back(std::move(run));
    }
    check(out, runs, has, peer, cell, what);
    return out;
  }

  // A part whose inputs fold its values differently, or that folds
  // coarser than another part's equally long sequence (folds_coarser):
  // fitted value by value and folded again over the models; every value
  // of every rank of the part in each input checked.
  SymSeq by_value(const std::vector<extrap::SeqObservation>& obs,
                  const std::vector<std::size_t>& has, int cell, bool peer, const std::string& what,
                  const extrap::PartPool& pool, const std::string& varying) {
    const uint64_t len = obs[0].seq->size();
    for (const auto& o : obs)
      if (o.seq->size() != len || len > 4096)
        fail(what + ": the values have different shapes in " + obs[0].grid->input->name + " ('" +
             extrap::clip(obs[0].seq->to_string()) + "') and " + o.grid->input->name + " ('" +
             extrap::clip(o.seq->to_string()) + "')" +
             (len > 4096 ? ", too long to compare value by value" : ""));
    std::vector<std::vector<int64_t>> all(in.size());
    for (std::size_t q = 0; q < has.size(); ++q) all[has[q]] = obs[q].seq->to_vector();
    // The other parts' sequences of this length expanded once, not per
    // value as extrap::index_position would.
    std::map<const ValueSeq*, std::vector<int64_t>> expanded;
    for (const auto& seqs : *pool.per_input)
      for (const ValueSeq* s : seqs)
        if (s && s->size() == len && !expanded.count(s)) expanded[s] = s->to_vector();
    std::vector<Expr> models;  // distinct, numbered in `ids`
    ValueSeq ids;
    for (uint64_t i = 0; i < len; ++i) {
      std::vector<std::optional<int64_t>> vals(in.size());
      for (std::size_t k : has) vals[k] = all[k][i];
      const extrap::Locator at = [&expanded, i](const ValueSeq& ref,
                                                const ValueSeq& other) -> std::optional<int64_t> {
        const auto e = expanded.find(&other);
        if (e == expanded.end() || other.size() != ref.size()) return std::nullopt;
        return e->second[i];
      };
      const Expr e = number(vals, peer, cell, what, {&obs, &pool, at, !peer, &varying});
      const auto known = std::find(models.begin(), models.end(), e);
      ids.push_back(known - models.begin());
      if (known == models.end()) models.push_back(e);
    }
    SymSeq out;
    for (const auto& run : ids.runs()) {
      SymRun r;
      for (int64_t id : run.pattern) r.pattern.push_back(models[static_cast<std::size_t>(id)]);
      r.reps = Expr::constant(static_cast<int64_t>(run.reps));
      out.push_back(std::move(r));
    }
    for (std::size_t k : has) {
      const int64_t p = in[k].trace.world_size;
      extrap::cell_ranks(grids[k].topo, cell).for_each([&](int32_t rank) {
        for (uint64_t i = 0; i < len; ++i) {
          const int64_t v = all[k][i];
          const int64_t want = peer && !is_sentinel(v) ? positive_mod(rank + v, p) : v;
          if (evaluate(element(out, i), grids[k].topo.sizes, rank) != want)
            fail(what + ": the model " + to_c(element(out, i)) + " gives rank " +
                 std::to_string(rank) + " of " + in[k].name + " a value other than its " +
                 std::to_string(want) + " (value " + std::to_string(i) + ")");
        }
      });
    }
    return out;
  }

  // The model must give back every input's numbers, on every rank of the cell.
  void check(const SymSeq& seq, const std::vector<std::vector<ValueSeq::Run>>& runs,
             const std::vector<std::size_t>& has, bool peer, int cell, const std::string& what) {
    for (std::size_t k : has) {
      const auto& s = grids[k].topo.sizes;
      const int64_t p = in[k].trace.world_size;
      extrap::cell_ranks(grids[k].topo, cell).for_each([&](int32_t rank) {
        for (std::size_t r = 0; r < seq.size(); ++r) {
          if (evaluate(seq[r].reps, s, rank) != static_cast<int64_t>(runs[k][r].reps))
            fail(what + ": the model of the repetitions misses " + in[k].name);
          for (std::size_t j = 0; j < seq[r].pattern.size(); ++j) {
            const int64_t v = runs[k][r].pattern[j];
            const int64_t want = peer && !is_sentinel(v) ? positive_mod(rank + v, p) : v;
            if (evaluate(seq[r].pattern[j], s, rank) != want)
              fail(what + ": the model " + to_c(seq[r].pattern[j]) + " gives rank " +
                   std::to_string(rank) + " of " + in[k].name + " a value other than its " +
                   std::to_string(want));
          }
        }
      });
    }
  }

  CellSeqs elastic(const std::vector<const Elastic*>& per_input, bool peer,
                   const std::string& what) {
    std::vector<std::vector<const ValueSeq*>> per;
    for (std::size_t k = 0; k < in.size(); ++k)
      per.push_back(per_input[k] ? extrap::cell_sequences(grids[k], *per_input[k], what)
                                 : std::vector<const ValueSeq*>(grids[k].cell_rep.size(), nullptr));
    CellSeqs out;
    for (int c = 0; c < extrap::cell_count(grids[0].topo); ++c)
      out.push_back(cell_seq(per, c, peer, what + ", cell " + extrap::cell_name(grids[0].topo, c)));
    return out;
  }
};

std::string time_c(const std::vector<extrap::TimePoint>& points) {
  extrap::ModelChoice ch = extrap::choose_time_model(points);
  extrap::ModelFit f = ch.best;
  // log2 and pow would need libm; the simpler model of the two closest fits.
  if (f.model == extrap::TimeModel::kLog || f.model == extrap::TimeModel::kPowerLaw || !f.ok) {
    f = {};
    for (const auto& g : ch.fits)
      if (g.ok && g.model != extrap::TimeModel::kLog && g.model != extrap::TimeModel::kPowerLaw &&
          (!f.ok || g.deviation < f.deviation))
        f = g;
  }
  if (!f.ok) return "";
  char a[40], b[40];
  std::snprintf(a, sizeof a, "%.6g", f.a);
  std::snprintf(b, sizeof b, "%.6g", f.b);
  switch (f.model) {
    case extrap::TimeModel::kLinear:
      return std::string(a) + " * (double)size + " + b;
    case extrap::TimeModel::kInverse:
      return std::string(a) + " / (double)size";
    case extrap::TimeModel::kInversePlusConstant:
      return std::string(a) + " / (double)size + " + b;
    default:
      return b;
  }
}

// `MPI_Irecv in main (stencil2d.c:75)` from the first input's symbols: the
// outermost frame of the first call-site address that is the program's
// own code; without symbols, the raw call site.
std::string site_text(const Trace& t, const Node& n, std::string& function) {
  for (const Frame& f : t.sites.at(n.key.site).frames) {
    const SourceFrames* s = t.symtab.symbols_of(f);
    if (!s || s->empty()) continue;
    const SourceFrame& sf = s->back();
    const std::string& fn = sf.function;
    if (fn.empty() || fn.starts_with("MPI_") || fn.starts_with("PMPI_") || fn.starts_with("mpi_") ||
        fn.find("tracefold") != std::string::npos)
      continue;
    function.clear();
    for (char c : fn) {
      if (c == '(' || c == '<') break;
      function += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    const std::string file = sf.file.substr(sf.file.rfind('/') + 1);
    return OpTable::name(n.key.op) + " in " + fn +
           (file.empty() ? "" : " (" + file + ":" + std::to_string(sf.line) + ")");
  }
  return extrap::describe_node(t, n);
}

// The aligned node whose call input k's predecessor key `pred` names: the
// first aligned node of that operation and call site (a call site reached
// in two loops is two nodes with one key), or none.
std::optional<std::size_t> aligned_pred(const std::vector<ExtrapInput>& in,
                                        const std::vector<std::vector<std::size_t>>& order,
                                        std::size_t k, EventKey pred) {
  for (std::size_t i = 0; i < order[k].size(); ++i)
    if (in[k].trace.nodes[order[k][i]].key == pred) return i;
  return std::nullopt;
}

// A predecessor's own time model where it differs from the node's overall
// one. A pipeline stage's receive comes after the stage's work, its other
// calls straight after each other: one mean spreads the work over every
// call and delays each stage's send (the fixed-scale generator's
// compute_by_pred, per input and then fitted across inputs). A block is
// kept when some input's time differs from the overall mean by 1 % or more
// and at least two inputs have it; keys are aligned node indices (of the
// first node of that operation and call site), named by name_predecessors.
std::vector<std::pair<std::size_t, std::string>> times_after(
    const std::vector<ExtrapInput>& in, const std::vector<std::vector<std::size_t>>& order,
    const std::vector<const Node*>& nodes, const std::vector<double>& overall) {
  struct Block {
    std::vector<extrap::TimePoint> points;
    bool differs = false;
  };
  std::map<std::size_t, Block> blocks;
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (overall[k] < 0) continue;
    for (const Timing& tm : nodes[k]->timings) {
      if (tm.compute.empty() || tm.pred == kOtherKey) continue;
      std::size_t key = kStartPred;
      if (tm.pred != kStartKey) {
        const auto at = aligned_pred(in, order, k, tm.pred);
        if (!at) continue;
        key = *at;
      }
      const double v = trimmed_mean_ns(tm.compute);
      Block& b = blocks[key];
      b.points.push_back({static_cast<double>(in[k].trace.world_size), v});
      b.differs = b.differs || std::abs(v - overall[k]) >= 0.01 * std::max(overall[k], 1.0);
    }
  }
  std::vector<std::pair<std::size_t, std::string>> out;
  for (const auto& [key, b] : blocks) {
    if (!b.differs || b.points.size() < 2) continue;
    const std::string c = time_c(b.points);
    if (!c.empty()) out.emplace_back(key, c);
  }
  return out;
}

// Gives every node the after_call constant it sets (AFTER_ and the C name
// of the first aligned node of its operation and call site, the key
// compute_after uses) when some node's time depends on its predecessor.
void name_predecessors(Model& m, const std::vector<ExtrapInput>& in,
                       const std::vector<std::vector<std::size_t>>& order) {
  bool used = false;
  for (const PNode& n : m.nodes) used = used || !n.compute_after.empty();
  if (!used) return;
  m.after_names.push_back("AFTER_START");
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    const auto first = aligned_pred(in, order, 0, in[0].trace.nodes[order[0][i]].key);
    const std::size_t f = first ? *first : i;
    if (f == i) m.after_names.push_back("AFTER_" + m.nodes[i].name);
    m.nodes[i].after = "AFTER_" + m.nodes[f].name;
  }
}

}  // namespace

Model build_model(const std::vector<ExtrapInput>& in) {
  if (in.size() < 2) fail("--parametric needs traces of at least two rank counts");
  Model m;
  std::vector<GridInput> grids;
  for (const auto& x : in) {
    if (!x.trace.lossy.empty()) fail(x.name + ": lossy trace (" + x.trace.lossy + ")");
    for (const auto& [id, groups] : x.trace.comms.all())
      if (id != CommTable::kWorld)
        fail(x.name + ": communicator " + std::to_string(id) +
             ": parametric benchmarks support MPI_COMM_WORLD only");
    extrap::TopologyDetection det;
    try {
      det = extrap::detect_topology(extrap::relative_endpoints(x.trace));
    } catch (const std::runtime_error& e) {
      fail(x.name + ": " + e.what());
    }
    m.dims = std::max(m.dims, det.topology.dims());
    grids.push_back(extrap::make_grid_input(x, det.topology));
    m.inputs.push_back(x.name + " (" + std::to_string(x.trace.world_size) + " ranks, grid " +
                       det.topology.to_string() + ")");
  }
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (grids[k].topo.dims() != m.dims)
      fail(in[k].name + ": its grid " + grids[k].topo.to_string() + " has " +
           std::to_string(grids[k].topo.dims()) + " dimensions, another input's has " +
           std::to_string(m.dims));
    for (std::size_t j = 0; j < k; ++j)
      if (in[j].trace.world_size == in[k].trace.world_size)
        fail(in[j].name + " and " + in[k].name + " have the same rank count");
  }
  if (in.size() < static_cast<std::size_t>(m.dims) + 1)
    fail("a " + std::to_string(m.dims) + "-D grid needs traces of at least " +
         std::to_string(m.dims + 1) + " rank counts, got " + std::to_string(in.size()));
  m.equal_sides = std::all_of(grids.begin(), grids.end(), [](const GridInput& g) {
    return std::adjacent_find(g.topo.sizes.begin(), g.topo.sizes.end(), std::not_equal_to<>()) ==
           g.topo.sizes.end();
  });
  if (!m.equal_sides)
    for (const auto& g : grids)
      if (extrap::dims_create(g.topo.ranks(), m.dims) != g.topo.sizes)
        fail(g.input->name + ": grid " + g.topo.to_string() +
             " follows neither equal sides nor MPI_Dims_create, so no rule gives the grid at "
             "other rank counts");

  m.known_cells.assign(static_cast<std::size_t>(extrap::cell_count(grids[0].topo)), false);
  for (const auto& g : grids)
    for (std::size_t c = 0; c < g.cell_rep.size(); ++c)
      if (g.cell_rep[c] >= 0) m.known_cells[c] = true;
  const auto order = extrap::align_nodes(in);
  std::size_t largest = 0;
  for (std::size_t k = 0; k < in.size(); ++k)
    if (in[k].trace.world_size > in[largest].trace.world_size) largest = k;
  Fitter fit{in, grids, m.dims, grids[largest].topo.sizes};
  for (std::size_t i = 0; i < order[0].size(); ++i) {
    std::vector<const Node*> nodes;
    for (std::size_t k = 0; k < in.size(); ++k) nodes.push_back(&in[k].trace.nodes[order[k][i]]);
    PNode pn;
    pn.op = OpTable::name(nodes[0]->key.op);
    std::string function;
    pn.comment = site_text(in[0].trace, *nodes[0], function);
    pn.name = (function.empty() ? pn.op.substr(4) : function) + "_n" + std::to_string(i);
    pn.label = in[0].name + ": " + node_label(in[0].trace, order[0][i]);
    const std::string label = pn.label;
    auto per = [&](auto get) {
      std::vector<const Elastic*> v;
      for (const Node* n : nodes) v.push_back(get(*n));
      return v;
    };
    pn.count = fit.elastic(per([](const Node& n) { return &n.count; }), false, label + ", count");
    for (std::size_t l = 0; l < nodes[0]->loops.size(); ++l) {
      int64_t members = -1;
      for (std::size_t k = 0; k < in.size(); ++k) {
        if (nodes[k]->loops.size() != nodes[0]->loops.size())
          fail(label + " heads " + std::to_string(nodes[k]->loops.size()) + " loops in " +
               in[k].name + ", " + std::to_string(nodes[0]->loops.size()) + " in " + in[0].name);
        for (const ElasticEntry& en : nodes[k]->loops[l].members.entries())
          for (int64_t v : en.values.to_vector()) {
            if (members >= 0 && v != members)
              fail(label + ": loop " + std::to_string(l) +
                   " spans different numbers of calls on different ranks or inputs (" +
                   std::to_string(members) + " and " + std::to_string(v) +
                   "): not supported by --parametric");
            members = v;
          }
      }
      pn.members.push_back(members);
      pn.iters.push_back(fit.elastic(per([l](const Node& n) { return &n.loops[l].iters; }), false,
                                     label + ", loop " + std::to_string(l) + " trips"));
    }
    std::vector<FieldId> fields;
    for (const Node* n : nodes)
      for (const auto& [f, e] : n->fields) fields.push_back(f);
    std::sort(fields.begin(), fields.end());
    fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
    for (FieldId f : fields) {
      const std::string fname = FieldTable::name(f);
      // Derived datatypes and user operations are made by the fixed-scale
      // generator's type calls, which --parametric does not emit.
      if (fname == "dtype" || fname == "rdtype" || fname == "redop")
        for (const Node* n : nodes)
          for (const ElasticEntry& en : n->field(f)->entries())
            for (int64_t v : en.values.to_vector())
              if (v >= (fname == "redop" ? benchgen::kFirstUserOp : benchgen::kFirstDerivedType))
                fail(label + ": field " + fname + " is a " +
                     (fname == "redop" ? "user-defined operation" : "derived datatype") + " (id " +
                     std::to_string(v) + "): not supported by --parametric");
      if (fname == "links")
        for (const Node* n : nodes)
          for (const ElasticEntry& en : n->field(f)->entries())
            for (int64_t v : en.values.to_vector()) pn.max_link = std::max(pn.max_link, v);
      pn.fields.emplace_back(
          fname, fit.elastic(per([f](const Node& n) { return n.field(f); }),
                             FieldTable::role(f) == FieldRole::kPeer, label + ", field " + fname));
    }
    std::vector<extrap::TimePoint> points;
    std::vector<double> overall(in.size(), -1);
    bool any = false;
    for (std::size_t k = 0; k < in.size(); ++k) {
      Histogram all;
      for (const Timing& tm : nodes[k]->timings) all.merge(tm.compute);
      if (all.empty()) continue;
      // As the fixed-scale default: without descheduled outliers.
      const double ns = compute_ns(*nodes[k], bench::ComputeMode::kTrimmed);
      points.push_back({static_cast<double>(in[k].trace.world_size), ns});
      overall[k] = ns;
      any = any || ns >= 1;
    }
    if (any && points.size() >= 2) pn.compute = time_c(points);
    if (any) pn.compute_after = times_after(in, order, nodes, overall);
    m.nodes.push_back(std::move(pn));
  }
  name_predecessors(m, in, order);
  return m;
}

}  // namespace tracefold::benchgen::param
