// extrapolate(): topology, alignment, then node by node (see extrapolate.hpp).
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/lcs_filter.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "internal.hpp"
#include "tracefold/merge.hpp"

namespace tracefold::extrap {

using namespace detail;

namespace {

void check_input(const ExtrapInput& in) {
  const Trace& t = in.trace;
  if (!t.lossy.empty())
    throw ExtrapError(in.name + ": lossy trace (" + t.lossy +
                      "): extrapolation needs lossless inputs");
  if (t.world_size < 1) throw ExtrapError(in.name + ": empty trace");
}

// The plugin path reads peers against the world only.
void check_world_only(const std::vector<ExtrapInput>& in) {
  for (const auto& x : in)
    for (const auto& [id, groups] : x.trace.comms.all())
      if (id != CommTable::kWorld)
        throw ExtrapError(x.name + ": communicator " + format_value(id) +
                          " (not MPI_COMM_WORLD): the plugin path extrapolates calls on the "
                          "world only");
}

// The recorded MPI_Cart_create grid against the detected one (the rule is
// in docs/extrapolate.md): equal, or the recorded one also explains the
// endpoint groups (it wins the tie), or an error naming the call. Returns
// the grid to use and says where each size came from.
Topology cross_check_cart(const ExtrapInput& x, const TopologyDetection& det, std::string& source) {
  static const char* const kAxis[] = {"x", "y", "z"};
  const std::optional<RecordedCart> cart = recorded_cart(x.trace, x.name);
  Topology t = det.topology;
  if (!cart) {
    for (int d = 0; d < t.dims(); ++d)
      source += std::string(d ? ", " : "") + kAxis[d] + "=" +
                std::to_string(t.sizes[static_cast<std::size_t>(d)]) + " (endpoints)";
    return t;
  }
  const bool same = cart->topology.sizes == det.topology.sizes;
  if (!same && !grid_explains(det, cart->topology))
    throw ExtrapError(x.name + ": " + cart->node + ", field dims: MPI_Cart_create's grid " +
                      cart->topology.to_string() + " does not explain the " +
                      std::to_string(det.groups) + " endpoint patterns, which fit " +
                      det.topology.to_string() +
                      ": the ranks do not communicate along the recorded grid");
  t = cart->topology;
  for (int d = 0; d < t.dims(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    const std::string idx = std::to_string(cart->mpi_index[i]);
    source += std::string(d ? ", " : "") + kAxis[d] + "=" + std::to_string(t.sizes[i]) +
              " (MPI_Cart_create dims[" + idx + "], " +
              (same ? "the endpoints agree" : "the endpoints also fit it") + "; periods[" + idx +
              "]=" + (t.periodic[i] ? "1" : "0") +
              (same && t.periodic[i] != det.topology.periodic[i]
                   ? std::string(", the endpoints show ") +
                         (det.topology.periodic[i] ? "a" : "no") + " wrap-around"
                   : std::string()) +
              ")";
  }
  if (!same) source += "; detection alone would have chosen " + det.topology.to_string();
  return t;
}

std::string grid_text(const Topology& t) {
  std::string s = t.to_string();
  std::string wraps;
  static const char* const kAxis[] = {"x", "y", "z"};
  for (int i = 0; i < t.dims(); ++i)
    if (t.periodic[static_cast<std::size_t>(i)])
      wraps += std::string(wraps.empty() ? "" : ",") + kAxis[i];
  return s + (wraps.empty() ? "" : " (wraps around in " + wraps + ")");
}

}  // namespace

namespace {

// The row-major stencil path: topology, alignment, node by node or cell by cell.
ExtrapResult extrapolate_row_major(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts);
// extrapolate() without the symbol tables.
ExtrapResult extrapolate_calls(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts);

}  // namespace

ExtrapResult extrapolate(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts) {
  // Checked first: a disagreement here is found before any work is done.
  SymbolTables symbols = common_symbols(in);
  const bool threads =
      std::any_of(in.begin(), in.end(), [](const ExtrapInput& x) { return x.trace.threads > 1; });
  ExtrapResult res =
      threads ? extrapolate_threads(in, opts, extrapolate_calls) : extrapolate_calls(in, opts);
  res.trace.symtab = std::move(symbols);
  res.trace.symtab.prune(res.trace.sites);
  return res;
}

namespace {

ExtrapResult extrapolate_calls(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts) {
  if (in.size() < 2)
    throw ExtrapError(
        "extrapolation needs traces of at least two rank counts (a d-dimensional "
        "grid needs d+1)");
  if (opts.ranks < 1) throw ExtrapError("--ranks must be at least 1");
  if (opts.ranks > INT32_MAX) throw ExtrapError("--ranks must fit an MPI rank (at most 2^31-1)");
  std::map<int32_t, std::string> by_size;
  for (const auto& x : in) {
    check_input(x);
    auto [it, fresh] = by_size.emplace(x.trace.world_size, x.name);
    if (!fresh)
      throw ExtrapError(x.name + " and " + it->second + " both have " +
                        std::to_string(x.trace.world_size) +
                        " ranks: give traces of different rank counts");
  }

  if (opts.snippet) {
    // Lossy: extrapolate the filtered traces, then mark the output.
    std::vector<ExtrapInput> filtered;
    std::vector<FilterReport> reports;
    for (const auto& x : in) {
      check_input(x);
      reports.emplace_back();
      filtered.push_back({x.name, filter_trace(x.trace, *opts.snippet, x.name, reports.back())});
      filtered.back().trace.lossy.clear();
    }
    ExtrapOptions plain = opts;
    plain.snippet.reset();
    ExtrapResult res = extrapolate(filtered, plain);  // the LCS, if asked, runs in there
    res.trace.lossy = "snippet filter " + opts.snippet->source +
                      (res.trace.lossy.empty() ? "" : ", then " + res.trace.lossy);
    reports.insert(reports.end(), res.filtered.begin(), res.filtered.end());
    res.filtered = std::move(reports);
    return res;
  }
  if (opts.weighted_lcs) {
    std::vector<const Trace*> traces;
    std::vector<std::string> names;
    for (const auto& x : in) {
      check_input(x);
      traces.push_back(&x.trace);
      names.push_back(x.name);
    }
    std::vector<FilterReport> reports;
    std::vector<Trace> cut = lcs_filter(traces, names, reports);
    std::vector<ExtrapInput> filtered;
    for (std::size_t k = 0; k < in.size(); ++k) filtered.push_back({in[k].name, std::move(cut[k])});
    ExtrapOptions plain = opts;
    plain.weighted_lcs = false;
    ExtrapResult res = extrapolate(filtered, plain);
    res.trace.lossy =
        "weighted LCS filter" + (res.trace.lossy.empty() ? "" : ", then " + res.trace.lossy);
    res.filtered = std::move(reports);
    return res;
  }
  if (!opts.plugin.empty()) {
    const ExtrapPlugin* p = find_plugin(opts.plugin);
    if (!p) {
      std::string known;
      for (const ExtrapPlugin* q : registered_plugins())
        known += (known.empty() ? "" : ", ") + q->name();
      throw ExtrapError("--plugin " + opts.plugin +
                        ": no such extrapolation plugin (registered: " + known + ")");
    }
    ExtrapResult res;
    check_world_only(in);
    extrapolate_with_plugin(in, *p, opts, res);
    return res;
  }
  try {
    return extrapolate_row_major(in, opts);
  } catch (const ExtrapError& e) {
    if (!opts.try_plugins || dynamic_cast<const CountModelError*>(&e)) throw;
    // Not a row-major stencil, or not one the inputs pin down: a plugin
    // whose layout takes every input and the target may explain it.
    std::string tried;
    for (const ExtrapPlugin* p : registered_plugins()) {
      // A plugin whose pattern does not exist at some input's rank count
      // is no candidate, and its reason would only bury the stencil
      // path's error.
      const bool fits = std::all_of(in.begin(), in.end(), [p](const ExtrapInput& x) {
        try {
          p->layout(x.trace.world_size);
          return true;
        } catch (const PluginError&) {
          return false;
        }
      });
      if (!fits) continue;
      ExtrapResult res;
      try {
        check_world_only(in);
        extrapolate_with_plugin(in, *p, opts, res);
      } catch (const ExtrapError& pe) {
        tried += "; plugin " + p->name() + ": " + pe.what();
        continue;
      }
      res.explanation.insert(res.explanation.begin(), "the row-major stencil path failed (" +
                                                          std::string(e.what()) + "): plugin " +
                                                          p->name() + " explains the pattern");
      return res;
    }
    throw ExtrapError(std::string(e.what()) +
                      (tried.empty() ? std::string() : " (also tried" + tried + ")"));
  }
}

ExtrapResult extrapolate_row_major(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts) {
  ExtrapResult res;
  // 1. Topology of every input, then of the target.
  std::vector<GridInput> grids;
  std::vector<TopologyDetection> dets;
  std::vector<std::vector<std::vector<int64_t>>> endpoints;
  std::vector<std::string> from_comm(in.size());
  int most = 1;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const ExtrapInput& x = in[k];
    endpoints.push_back(relative_endpoints(x.trace, true));
    try {
      dets.push_back(detect_topology(endpoints.back()));
    } catch (const std::runtime_error& e) {
      std::string why;  // a multigrid's idle coarse levels (level_classes.cpp)
      if (auto levels = extrapolate_levels(in, opts, why)) return std::move(*levels);
      throw ExtrapError(x.name + ": " + e.what() + no_grid_detail(x.trace, endpoints.back()) + why);
    }
    // Peers that are alike on every rank (collectives only) fit any grid;
    // a communicator whose groups are rows says which one.
    TopologyDetection& det = dets.back();
    if (det.groups == 1 && det.topology.dims() == 1)
      if (auto cg = grid_from_comms(x.trace)) {
        det.topology = cg->topology;
        det.critical = corner_ranks(det.topology);
        det.alternatives.clear();
        from_comm[k] = "groups of communicator " + format_value(cg->comm);
      }
    most = std::max(most, det.topology.dims());
  }
  int dims = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const ExtrapInput& x = in[k];
    TopologyDetection& det = dets[k];
    std::string fewer;
    if (det.topology.dims() < most) {
      // The fewest dimensions win within one input, but a small run may
      // not show them all: at 2x2 or 2x2x2 every rank of a periodic or
      // multipartition code can have the same partners modulo P, which a
      // ring of 4 or 8 explains as well. When a grid of the other inputs'
      // dimensions also explains this input's peers, that grid is the one.
      try {
        TopologyDetection wider = detect_topology(endpoints[k], most);
        fewer = " (the peers also fit " + det.topology.to_string() + ", " +
                std::to_string(det.topology.dims()) + "-D; taken " + std::to_string(most) +
                "-D like the other inputs)";
        det = std::move(wider);
      } catch (const std::runtime_error&) {
        // keep it: the dimensionality check below names the input
      }
    }
    std::string source;
    det.topology = cross_check_cart(x, det, source);
    if (!from_comm[k].empty())
      for (std::size_t at; (at = source.find("(endpoints)")) != std::string::npos;)
        source.replace(at, 11, "(" + from_comm[k] + ")");
    dims = std::max(dims, det.topology.dims());
    std::string critical;
    for (int64_t r : det.critical) critical += " " + std::to_string(r);
    res.explanation.push_back(
        "input " + x.name + ": " + std::to_string(x.trace.world_size) + " ranks, grid " +
        grid_text(det.topology) + ", " + std::to_string(det.groups) +
        " endpoint patterns, critical nodes" + critical +
        (det.alternatives.empty() ? std::string() : ", also fits " + det.alternatives.front()) +
        fewer + "; sizes: " + source);
    grids.push_back(make_grid_input(x, det.topology));
    res.input_grids.push_back(det.topology);
  }
  for (const auto& g : grids)
    if (g.topo.dims() != dims)
      throw ExtrapError(g.input->name + ": its " + std::to_string(g.input->trace.world_size) +
                        " ranks form a " + std::to_string(g.topo.dims()) + "-D grid (" +
                        g.topo.to_string() + ") while other inputs are " + std::to_string(dims) +
                        "-D: use rank counts that give every dimension at least 2 ranks");
  if (in.size() < static_cast<std::size_t>(dims) + 1)
    throw ExtrapError("a " + std::to_string(dims) + "-D grid needs traces of at least " +
                      std::to_string(dims + 1) + " rank counts, got " + std::to_string(in.size()) +
                      ": record the program at " + std::to_string(dims + 1 - in.size()) +
                      " more rank count(s) (a law over " + std::to_string(dims) +
                      " sizes has up to " + std::to_string(dims + 1) + " coefficients)");
  res.target = choose_target(grids, opts, res.target_rule);
  for (int64_t s : res.target.sizes)
    if (s < 2)
      throw ExtrapError("target grid " + res.target.to_string() +
                        " has a dimension of 1 rank; the inputs' grids have at least 2");
  res.explanation.push_back("target: " + std::to_string(opts.ranks) + " ranks, grid " +
                            res.target.to_string() + " (" + res.target_rule + ")");

  // Communicators other than the world must follow the grid (comms.cpp).
  const CommShapes shapes = common_comm_shapes(grids);
  for (const auto& [id, keep] : shapes)
    res.explanation.push_back("communicator " + format_value(id) + ": groups along " +
                              shape_name(keep));

  // 2. Alignment of the whole node lists, else cell by cell (per_cell.cpp).
  std::vector<std::vector<std::size_t>> order;
  std::string whole_error;
  try {
    order = align_nodes(in);
  } catch (const ExtrapError& e) {
    whole_error = e.what();
  }
  Trace& out = res.trace;
  out.world_size = static_cast<int32_t>(opts.ranks);
  out.comms.define_world(out.world_size);
  if (whole_error.empty()) {
    // 3 and 4. Node by node.
    extrapolate_nodes(in, grids, order, res.target, shapes, out, res, opts.progress,
                      opts.model_counts);
  } else {
    res.explanation.push_back("the merged node lists differ between the inputs (" + whole_error +
                              "): extrapolating cell by cell");
    extrapolate_by_cell(in, grids, shapes, res, opts);
  }
  define_target_comms(shapes, res.target, out.comms);
  canonicalize_sites(out);
  if (res.modelled_events > 0) {
    for (const Node& n : out.nodes) res.events += executions(n.count);
    char share[32];
    std::snprintf(share, sizeof share, "%.2f",
                  100.0 * static_cast<double>(res.modelled_events) /
                      static_cast<double>(std::max<int64_t>(res.events, 1)));
    out.lossy = "statistical count model (" + std::string(share) + " % of events modelled)";
  }
  return res;
}

}  // namespace

}  // namespace tracefold::extrap
