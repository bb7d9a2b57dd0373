// Parametric benchmarks (tracefold bench --parametric, seed 000 4.4.5): the
// model of a program built from traces at several rank counts, in which
// every value is an expression in the grid sizes, and its C output.
// Internal to src/benchgen; the public entry is bench.hpp.
//
// The grid and its cells (corner, edge, face, interior boxes) are those of
// the extrapolation library (extrap/topology.hpp); so are node alignment
// and the per-cell value sequences. What differs is the output: instead of
// evaluating each model at one target, the models are kept and written as
// C, so the program computes its grid from the rank count it is run with.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracefold/bench.hpp"
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/rational.hpp"

namespace tracefold::benchgen::param {

/// One value of the program as a function of the grid sizes S1..Sd
/// (fastest first) and, for peers, of the calling rank's coordinates.
struct Expr {
  enum class Kind : uint8_t {
    kSentinel,  ///< an MPI constant (wildcard, null process ...): `sentinel`
    kPoly,      ///< sum of coef * product of sizes (`terms`)
    kShare,     ///< share / product of sizes (`share_term`): strong scaling
    kPeerAt,    ///< the rank at coordinate offset `offset` (wrapping around)
    kPeerRel,   ///< the rank at (rank + poly) mod size
  };
  Kind kind = Kind::kPoly;
  int64_t sentinel = 0;
  /// kPoly/kPeerRel: (coefficient, term) pairs, a term's bit i standing for S(i+1).
  std::vector<std::pair<extrap::Rational, unsigned>> terms;
  extrap::Rational share;
  unsigned share_term = 0;
  std::array<int64_t, 3> offset{0, 0, 0};

  static Expr constant(int64_t v);
  bool operator==(const Expr&) const = default;
};

/// Parses a formula as extrap::fit_value writes it (`24`, `S1*S2 - S1`,
/// `3/2*S1 + 1`, `4608/S1`, `96/(S1*S2)`). Throws std::invalid_argument.
Expr parse_formula(const std::string& formula);

/// C for `e`, reading the sizes from variables S1, S2, S3 and, for peers,
/// calling peer_at()/peer_rel() (the program's helpers). Integer models
/// with fractional coefficients are written over a common denominator, so
/// the division is exact wherever the model is integral.
std::string to_c(const Expr& e);

/// `e` evaluated at `sizes` for `rank` (peers: the absolute peer rank);
/// nullopt when the value is not an integer there.
std::optional<int64_t> evaluate(const Expr& e, const std::vector<int64_t>& sizes, int64_t rank);

/// A predicate on the rank's coordinates x1..xd (C variables) that holds
/// exactly in the given cells (extrap::cell_of numbering: per dimension
/// class 0 first, 1 in between, 2 last; cell = sum class_i * 3^(i-1)),
/// e.g. `x1 == 0 && x2 > 0 && x2 < S2 - 1`; `1` for every cell.
std::string cells_predicate(const std::vector<int>& cells, int dims);

/// A sequence of values as runs of patterns, like ValueSeq, with models
/// in place of numbers.
struct SymRun {
  std::vector<Expr> pattern;
  Expr reps;
};
using SymSeq = std::vector<SymRun>;

/// A value per cell of the grid: nullopt where the cell has none.
using CellSeqs = std::vector<std::optional<SymSeq>>;

/// compute_after's predecessor of the first call after MPI_Init's start.
inline constexpr std::size_t kStartPred = static_cast<std::size_t>(-1);

struct PNode {
  std::string op;
  std::string name;     ///< C identifier of its call site (`main_site3`)
  std::string comment;  ///< `MPI_Irecv in main (stencil2d.c:75)`
  /// How messages name it: the first input's node as `tracefold print`
  /// numbers and shows it (`a.tf: node #7 (MPI_Irecv at ...)`).
  std::string label;
  /// Per loop this node heads (outermost first): nodes in its body,
  /// this one included, and the trip counts per entry.
  std::vector<int64_t> members;
  std::vector<CellSeqs> iters;
  CellSeqs count;  ///< executions each time the node is reached
  std::vector<std::pair<std::string, CellSeqs>> fields;  ///< by field name
  std::string compute;  ///< C double: ns of computation before the call ("" none)
  /// The time before the call by the call that preceded it (its timing
  /// blocks), where that differs from `compute`: (node whose call preceded,
  /// kStartPred for none, C double) pairs, as the fixed-scale benchmark's
  /// `after` cases.
  std::vector<std::pair<std::size_t, std::string>> compute_after;
  std::string after;     ///< after_call constant this call sets ("" when unused)
  int64_t max_link = 0;  ///< farthest request link seen
};

struct Model {
  int dims = 1;
  /// Runtime rule for the grid: equal sides, else MPI_Dims_create's.
  bool equal_sides = true;
  std::vector<PNode> nodes;
  /// Cells some input showed; a rank in another cell cannot be modelled.
  std::vector<bool> known_cells;
  std::vector<std::string> inputs;  ///< `name (P ranks, grid AxB)`
  /// after_call constants, AFTER_START first; empty when no call's time
  /// depends on its predecessor.
  std::vector<std::string> after_names;
  std::vector<std::string> explanation;
};

/// Builds the model; throws bench::BenchError (or extrap::ExtrapError)
/// naming the input, node, field and cell of a value no model explains.
Model build_model(const std::vector<extrap::ExtrapInput>& inputs);

/// The C program of a model.
std::string emit_c(const Model& model, const bench::Options& options);

}  // namespace tracefold::benchgen::param
