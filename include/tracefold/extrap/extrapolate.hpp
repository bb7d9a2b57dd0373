// Extrapolation: the trace of a run at N ranks from the traces of a few
// smaller runs of the same program (seed 000, chapter 3).
//
// The steps, each in its own file under src/extrap/:
//   1. topology (topology.hpp): each input's grid from its relative
//      endpoints; the target grid from --grid, or from the rule the inputs'
//      grids follow (equal sides, or MPI_Dims_create's balanced sizes);
//   2. alignment (align.cpp): node k of every input is the same call
//      (operation and call-site frames); nodes that no rank has in common
//      are put in one canonical order first (by leading rank), so that the
//      branches of different rank groups meet their counterparts;
//   3. parameters (cells.cpp, scale_model.hpp): for each node and each
//      cell of the grid (corner, edge, face, interior box), the value
//      sequences of every field, loop and count, number by number, as
//      exact functions of the sizes; the node's ranks and the ranklists
//      of its values are the target grid's cells;
//   4. timing (histogram_fit.cpp, timing_models.hpp): every histogram
//      field by the curve models.
// Patterns that are not row-major stencils go through a plugin
// (plugin.hpp, plugin_path.cpp): named, or tried when the stencil path
// fails.
// Nothing is guessed: a value the inputs do not determine, or that no
// model fits, stops extrapolation with an error naming the input, the node
// and the field.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/extrap/snippet.hpp"
#include "tracefold/extrap/topology.hpp"
#include "tracefold/progress.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::extrap {

/// Extrapolation cannot go on; what() names the input file, node and field.
class ExtrapError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One input trace and the name it is reported by (its file name).
struct ExtrapInput {
  std::string name;
  Trace trace;
};

struct ExtrapOptions {
  /// Ranks of the trace to make.
  int64_t ranks = 0;
  /// The target grid, when the user knows it (sizes fastest first).
  std::optional<Topology> grid;
  /// Told after each node of the output.
  ProgressFn progress;
  /// Extrapolate through this registered plugin (plugin.hpp) instead of
  /// the row-major stencil path.
  std::string plugin;
  /// When the row-major path fails and no plugin is named, try every
  /// registered plugin in turn; the first that explains the inputs is used
  /// (and the explanation says so).
  bool try_plugins = true;
  /// Lossy: filter every input through this snippet first (snippet.hpp);
  /// the output's header says so.
  std::optional<Snippet> snippet;
  /// Lossy: cut every input down to the events all ranks of all inputs
  /// share, by weighted LCS (lcs_filter.hpp), after the snippet if both
  /// are given; the output's header says so.
  bool weighted_lcs = false;
  /// Lossy: per-peer count vectors of MPI_Alltoallv that differ from rank
  /// to rank inside one part of the grid (they follow the program's data)
  /// are drawn from a statistical model fitted over the inputs instead of
  /// refused (docs/extrapolate.md, "Data-dependent counts"); the output's
  /// header says so, with the share of events whose values are modelled.
  bool model_counts = false;
};

struct ExtrapResult {
  Trace trace;
  Topology target;
  /// Each input's detected grid, in input order.
  std::vector<Topology> input_grids;
  /// How the target grid was chosen (`--grid`, `equal sides`, `MPI_Dims_create`).
  std::string target_rule;
  /// One line per finding: topology, and per node the model of every
  /// extrapolated parameter and time (what --explain prints).
  std::vector<std::string> explanation;
  /// With a snippet or the weighted LCS: what each filter kept and
  /// dropped, per input and rank.
  std::vector<FilterReport> filtered;
  /// With model_counts: the output's calls whose count vectors the model
  /// drew, and all the output's calls (over every rank); both 0 when no
  /// node needed the model.
  int64_t modelled_events = 0, events = 0;
};

/// Extrapolates. Needs at least two inputs; all must be traces of the same
/// program (same nodes, operations and call sites) at different rank
/// counts. The output keeps the inputs' module table and embedded symbols,
/// which must agree (the same build of every module, the same names for a
/// frame). Throws ExtrapError.
ExtrapResult extrapolate(const std::vector<ExtrapInput>& inputs, const ExtrapOptions& options);

}  // namespace tracefold::extrap
