#include "tracefold/extrap/linear.hpp"

#include <stdexcept>

namespace tracefold::extrap {

namespace {

// A row of the reduced system: coefficients with a 1 at `pivot` and 0 in
// every other row's pivot column, and its right-hand side.
struct PivotRow {
  std::size_t pivot;
  RatVector coef;
  Rational rhs;
};

}  // namespace

SolveResult solve_linear(const RatMatrix& a, const RatVector& b) {
  if (a.size() != b.size())
    throw std::invalid_argument("solve_linear: " + std::to_string(a.size()) + " rows but " +
                                std::to_string(b.size()) + " right-hand sides");
  if (a.empty()) throw std::invalid_argument("solve_linear: no equations");
  const std::size_t n = a[0].size();
  if (n == 0) throw std::invalid_argument("solve_linear: no unknowns");
  SolveResult out;
  std::vector<PivotRow> rows;
  for (std::size_t e = 0; e < a.size(); ++e) {
    if (a[e].size() != n)
      throw std::invalid_argument("solve_linear: row " + std::to_string(e) + " has " +
                                  std::to_string(a[e].size()) + " entries, expected " +
                                  std::to_string(n));
    RatVector row = a[e];
    Rational rhs = b[e];
    for (const PivotRow& p : rows) {
      const Rational f = row[p.pivot];
      if (f.is_zero()) continue;
      for (std::size_t j = 0; j < n; ++j)
        if (!p.coef[j].is_zero()) row[j] -= f * p.coef[j];
      rhs -= f * p.rhs;
    }
    std::size_t pivot = n;
    for (std::size_t j = 0; j < n && pivot == n; ++j)
      if (!row[j].is_zero()) pivot = j;
    if (pivot == n) {
      if (rhs.is_zero()) continue;  // implied by the earlier equations
      out.status = SolveResult::Status::kInconsistent;
      out.bad_equation = e;
      out.rank = rows.size();
      return out;
    }
    const Rational inv = Rational(1) / row[pivot];
    for (auto& v : row) v *= inv;
    rhs *= inv;
    // Keep the system reduced: clear the new pivot column in earlier rows.
    for (PivotRow& p : rows) {
      const Rational f = p.coef[pivot];
      if (f.is_zero()) continue;
      for (std::size_t j = 0; j < n; ++j)
        if (!row[j].is_zero()) p.coef[j] -= f * row[j];
      p.rhs -= f * rhs;
    }
    rows.push_back({pivot, std::move(row), rhs});
  }
  out.rank = rows.size();
  out.x.assign(n, Rational(0));
  std::vector<bool> is_pivot(n, false);
  for (const PivotRow& p : rows) {
    out.x[p.pivot] = p.rhs;
    is_pivot[p.pivot] = true;
  }
  for (std::size_t f = 0; f < n; ++f) {
    if (is_pivot[f]) continue;
    RatVector v(n, Rational(0));
    v[f] = 1;
    for (const PivotRow& p : rows) v[p.pivot] = -p.coef[f];
    out.nullspace.push_back(std::move(v));
  }
  out.status =
      out.nullspace.empty() ? SolveResult::Status::kUnique : SolveResult::Status::kUnderdetermined;
  return out;
}

namespace {

Rational dot(const RatVector& a, const RatVector& b) {
  if (a.size() != b.size()) throw std::invalid_argument("predict_linear: target length differs");
  Rational s;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!a[i].is_zero() && !b[i].is_zero()) s += a[i] * b[i];
  return s;
}

}  // namespace

Prediction predict_linear(const RatMatrix& rows, const RatVector& values, const RatVector& target) {
  const SolveResult s = solve_linear(rows, values);
  Prediction p;
  if (s.status == SolveResult::Status::kInconsistent) {
    p.status = Prediction::Status::kInconsistent;
    p.bad_observation = s.bad_equation;
    return p;
  }
  p.coefficients = s.x;
  p.value = dot(s.x, target);
  for (const RatVector& v : s.nullspace)
    if (!dot(v, target).is_zero()) {
      p.status = Prediction::Status::kUndetermined;
      return p;
    }
  return p;
}

}  // namespace tracefold::extrap
