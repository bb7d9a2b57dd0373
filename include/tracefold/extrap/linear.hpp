// Exact Gaussian elimination (seed 000, 3.2.3).
//
// Every scale-dependent value of a trace is modelled as a linear
// combination of terms built from the topology's dimension sizes
// (1, S1, S2, S1*S2, ...); each input trace gives one equation. The systems
// are small (a handful of unknowns and equations) and solved exactly over
// the rationals, one equation at a time, so that the equation that
// contradicts the earlier ones can be named.
#pragma once

#include <cstddef>
#include <vector>

#include "tracefold/extrap/rational.hpp"

namespace tracefold::extrap {

using RatVector = std::vector<Rational>;
using RatMatrix = std::vector<RatVector>;

struct SolveResult {
  enum class Status {
    kUnique,           ///< exactly one solution
    kUnderdetermined,  ///< infinitely many: `x` is one, `nullspace` spans the rest
    kInconsistent,     ///< no solution: equation `bad_equation` contradicts the ones before it
  };
  Status status = Status::kUnique;
  std::size_t rank = 0;
  /// A solution (free unknowns set to 0); empty when inconsistent.
  RatVector x;
  /// A basis of the solutions of the homogeneous system.
  RatMatrix nullspace;
  /// Index of the first equation (in input order) that made the system
  /// inconsistent.
  std::size_t bad_equation = 0;
};

/// Solves a x = b for x. Every row of `a` must have the same length (the
/// number of unknowns, at least 1) and `b` one entry per row; throws
/// std::invalid_argument otherwise. Throws RationalOverflow if an
/// intermediate value leaves the 128-bit range.
SolveResult solve_linear(const RatMatrix& a, const RatVector& b);

/// The value at `target` of a linear model fitted to the observations
/// (rows[k] . c = values[k]).
struct Prediction {
  enum class Status {
    kDetermined,    ///< every solution gives the same value at `target`
    kUndetermined,  ///< solutions disagree at `target`: too few or too alike inputs
    kInconsistent,  ///< the observations have no common solution
  };
  Status status = Status::kDetermined;
  Rational value;
  /// One set of coefficients (free ones 0); empty when inconsistent.
  RatVector coefficients;
  /// For kInconsistent: the first observation that contradicts the others.
  std::size_t bad_observation = 0;
};

/// Fits and evaluates: the value is determined exactly when `target` is
/// orthogonal to the null space of `rows` (it lies in their row space).
Prediction predict_linear(const RatMatrix& rows, const RatVector& values, const RatVector& target);

}  // namespace tracefold::extrap
