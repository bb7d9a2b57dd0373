// Values as functions of the topology's sizes (seed 000, 3.2.3).
//
// A parameter that changes with scale (a relative peer, a trip count, the
// number of samples of a histogram ...) is modelled as a linear
// combination of the products of distinct dimension sizes: 1, S1, S2,
// S1*S2, S3, ... (2^d terms for d dimensions). Rank distances on a
// row-major grid are of this form (the seed's c0 + c1*S1 + c2*S1*S2), and
// so are the sizes of the grid's boxes (S1 - 2, (S1 - 2)*(S2 - 2), ...).
// Each input trace gives one equation, solved exactly (linear.hpp).
//
// Fewer terms are tried first: a constant, then c/(product of sizes) (a
// share of a fixed total under strong scaling: N/S1, N/(S1*S2) ...), then
// c over a product of powers of the sizes up to the third (a transpose's
// N/P^2 per rank, a multipartition face (N/S1)^2), then the terms of at
// most one size, then of at most two, ... A model is used
// when it fits every observation and at least one observation more than
// it needs confirms it; only the last model, all 2^d terms, may instead be
// exactly determined (the seed's d+1 inputs for d dimensions). On a 1-D
// grid whose sizes are all squares (P = q*q ranks on a ring, q stages a
// step), laws in sqrt(S1) come last, where nothing above fits:
// c*sqrt(S1), c/sqrt(S1), then a + b*sqrt(S1), each confirmed by one input
// more than it needs. A value the observations do not determine at the
// target is an error, not a guess.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracefold/extrap/linear.hpp"

namespace tracefold::extrap {

/// One value seen in one input: the input's sizes (fastest first) and the value.
struct Observation {
  std::vector<int64_t> sizes;
  int64_t value = 0;
};

struct ValueFit {
  enum class Status {
    kOk,            ///< `value` is the extrapolated value
    kUndetermined,  ///< the inputs fit, but do not pin the value at the target
    kInconsistent,  ///< no model fits all observations
    kNotInteger,    ///< the model gives a fraction at the target
    kNoData,        ///< no observations
  };
  Status status = Status::kNoData;
  int64_t value = 0;
  /// The model, e.g. `S1*S2 - S1`, `24`, `4608/S1` (for kUndetermined:
  /// one of the models that fit).
  std::string formula;
  /// For kInconsistent: the observation that contradicts the earlier ones
  /// in the largest linear model.
  std::size_t bad_observation = 0;
};

/// Fits the observations (all with `target.size()` sizes) and evaluates
/// the model at `target`.
ValueFit fit_value(const std::vector<Observation>& observations,
                   const std::vector<int64_t>& target);

/// `S1*S2` for the term whose bit i is set for dimension i+1 (0 is `1`).
std::string term_name(unsigned term);

}  // namespace tracefold::extrap
