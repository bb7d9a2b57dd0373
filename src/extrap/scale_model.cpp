#include "tracefold/extrap/scale_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace tracefold::extrap {

std::string term_name(unsigned term) {
  if (term == 0) return "1";
  std::string s;
  for (unsigned i = 0; term >> i; ++i)
    if (term & (1u << i)) s += (s.empty() ? "S" : "*S") + std::to_string(i + 1);
  return s;
}

namespace {

Rational term_value(unsigned term, const std::vector<int64_t>& sizes) {
  Rational v(1);
  for (unsigned i = 0; i < sizes.size(); ++i)
    if (term & (1u << i)) v *= Rational(sizes[i]);
  return v;
}

std::string formula_of(const std::vector<unsigned>& terms, const RatVector& coef) {
  std::string s;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    Rational c = coef[i];
    if (c.is_zero()) continue;
    const bool neg = c < Rational(0);
    if (neg) c = -c;
    s += s.empty() ? (neg ? "-" : "") : (neg ? " - " : " + ");
    if (terms[i] == 0)
      s += c.to_string();
    else
      s += (c == Rational(1) ? "" : c.to_string() + "*") + term_name(terms[i]);
  }
  return s.empty() ? "0" : s;
}

// The result at the target: an integer, or kNotInteger.
ValueFit finish(Rational v, std::string formula) {
  ValueFit f;
  f.formula = std::move(formula);
  if (!v.is_integer()) {
    f.status = ValueFit::Status::kNotInteger;
    return f;
  }
  try {
    f.value = v.to_int64();
    f.status = ValueFit::Status::kOk;
  } catch (const std::range_error&) {
    f.status = ValueFit::Status::kNotInteger;
  }
  return f;
}

// The root of a perfect square, or -1.
int64_t square_root(int64_t n) {
  if (n < 1) return -1;
  auto r = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
  while (r > 1 && r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  return r * r == n ? r : -1;
}

// Laws in the square root of a 1-D size, for codes that lay P ranks out as
// a q x q square but talk on a ring: q stages a step, messages of N/q.
// Tried only when every input's size is a perfect square and no law of the
// size itself fits: c*sqrt(S1) and c/sqrt(S1), each pinned by one input
// and confirmed by another, then a + b*sqrt(S1), pinned by two and
// confirmed by a third. A target that is no square gives no value
// (kNotInteger, with the law).
std::optional<ValueFit> fit_sqrt(const std::vector<Observation>& obs, int64_t target) {
  std::vector<int64_t> q;
  for (const auto& o : obs) {
    q.push_back(square_root(o.sizes[0]));
    if (q.back() < 0) return std::nullopt;
  }
  const int64_t t = square_root(target);
  const auto at_target = [&](const Rational& a, const Rational& b, std::string formula) {
    if (t < 0) {
      ValueFit f;
      f.status = ValueFit::Status::kNotInteger;
      f.formula = std::move(formula);
      return f;
    }
    return finish(a + b * Rational(t), std::move(formula));
  };
  for (int sign : {1, -1}) {
    Rational c;
    bool fits = true, distinct = false;
    for (std::size_t j = 0; j < obs.size() && fits; ++j) {
      const Rational k = sign > 0 ? Rational(obs[j].value) / Rational(q[j])
                                  : Rational(obs[j].value) * Rational(q[j]);
      if (j == 0) c = k;
      fits = k == c;
      distinct = distinct || q[j] != q[0];
    }
    if (!fits || !distinct || c.is_zero()) continue;
    if (sign > 0)
      return at_target(Rational(0), c,
                       (c == Rational(1) ? std::string() : c.to_string() + "*") + "sqrt(S1)");
    if (t < 0) return at_target(Rational(0), Rational(0), c.to_string() + "/sqrt(S1)");
    return finish(c / Rational(t), c.to_string() + "/sqrt(S1)");
  }
  // a + b*q through the first two distinct roots, confirmed by a third.
  std::size_t i = 0, j = 1;
  while (j < obs.size() && q[j] == q[i]) ++j;
  if (j >= obs.size()) return std::nullopt;
  const Rational b = (Rational(obs[j].value) - Rational(obs[i].value)) / Rational(q[j] - q[i]);
  const Rational a = Rational(obs[i].value) - b * Rational(q[i]);
  bool confirmed = false;
  for (std::size_t k = 0; k < obs.size(); ++k) {
    if (Rational(obs[k].value) != a + b * Rational(q[k])) return std::nullopt;
    confirmed = confirmed || (q[k] != q[i] && q[k] != q[j]);
  }
  if (!confirmed || b.is_zero()) return std::nullopt;
  const bool neg = b < Rational(0);
  const Rational mag = neg ? -b : b;
  std::string formula = a.is_zero() ? "" : a.to_string() + (neg ? " - " : " + ");
  if (a.is_zero() && neg) formula = "-";
  formula += (mag == Rational(1) ? "" : mag.to_string() + "*") + std::string("sqrt(S1)");
  return at_target(a, b, formula);
}

}  // namespace

ValueFit fit_value(const std::vector<Observation>& obs, const std::vector<int64_t>& target) {
  if (obs.empty()) return {};
  const unsigned dims = static_cast<unsigned>(target.size());
  for (const auto& o : obs)
    if (o.sizes.size() != dims) throw std::invalid_argument("fit_value: sizes of differing length");

  // 1. A constant.
  bool constant = true;
  for (const auto& o : obs) constant = constant && o.value == obs[0].value;
  if (constant) return finish(Rational(obs[0].value), std::to_string(obs[0].value));

  // 2. One-number laws, each pinned by one input and confirmed by another
  // whose sizes give the law another value: a share of a fixed total,
  // c / (S_i * ...); a share that falls with a power of the sizes,
  // c / (S1^a1 * S2^a2 ...) with some exponent 2 or 3 (a transpose's
  // message to each of P ranks under strong scaling holds N/P^2 items, a
  // multipartition cell's face (N/S1)^2), lowest total power first; a
  // multiple of one product, c * S1, c * S1*S2 ... (the distance between
  // rows, S1, where the linear combination of 1, S1, S2 needs more inputs
  // than a 2-D grid's three). Within each family, the laws that fit must
  // agree at the target: inputs whose sizes grow together (square grids,
  // or 2 rows of 4 and 4 rows of 8) fit c/S1 and c/S2, or c/S1^3 and
  // c/(S1*S2^2), alike, and those are left to the linear fit, which says
  // the value is not determined, instead of one being guessed.
  std::vector<unsigned> exps(dims, 0);
  const auto power = [&](const std::vector<int64_t>& sizes) {
    Rational v(1);
    for (unsigned i = 0; i < dims; ++i)
      for (unsigned e = 0; e < exps[i]; ++e) v *= Rational(sizes[i]);
    return v;
  };
  // value * power (sign -1: value / power) is the same c for every input.
  const auto common = [&](int sign, Rational& c) {
    bool distinct = false;
    for (std::size_t j = 0; j < obs.size(); ++j) {
      const Rational p = power(obs[j].sizes);
      const Rational k = sign > 0 ? Rational(obs[j].value) * p : Rational(obs[j].value) / p;
      if (j == 0)
        c = k;
      else if (k != c)
        return false;
      distinct = distinct || p != power(obs[0].sizes);
    }
    return distinct && !c.is_zero();
  };
  const auto denominator = [&] {
    std::string den;
    int used = 0;
    for (unsigned i = 0; i < dims; ++i)
      if (exps[i]) {
        den += (den.empty() ? "" : "*") + std::string("S") + std::to_string(i + 1) +
               (exps[i] > 1 ? "^" + std::to_string(exps[i]) : "");
        ++used;
      }
    return used > 1 ? "(" + den + ")" : den;
  };
  bool ambiguous = false;
  // The laws of one family that fit: the first, unless they differ at the target.
  const auto decide = [&](std::vector<ValueFit>& fits) -> std::optional<ValueFit> {
    if (fits.empty()) return std::nullopt;
    for (const ValueFit& f : fits)
      if (f.status != fits[0].status || f.value != fits[0].value) {
        ambiguous = true;
        return std::nullopt;
      }
    return fits[0];
  };
  {
    std::vector<ValueFit> fits;
    for (unsigned term = 1; term < (1u << dims); ++term) {
      for (unsigned i = 0; i < dims; ++i) exps[i] = (term >> i) & 1u;
      Rational c;
      if (common(1, c))
        fits.push_back(finish(c / power(target), c.to_string() + "/" + denominator()));
    }
    if (auto f = decide(fits)) return *f;
  }
  for (unsigned total = 2; total <= 3 * dims && !ambiguous; ++total) {
    std::vector<ValueFit> fits;
    // every exponent vector in 0..3 with this total and some exponent >= 2
    for (unsigned code = 0; code < (1u << (2 * dims)); ++code) {
      unsigned sum = 0, top = 0;
      for (unsigned i = 0; i < dims; ++i) {
        exps[i] = (code >> (2 * i)) & 3u;
        sum += exps[i];
        top = std::max(top, exps[i]);
      }
      Rational c;
      if (sum == total && top >= 2 && common(1, c))
        fits.push_back(finish(c / power(target), c.to_string() + "/" + denominator()));
    }
    if (auto f = decide(fits)) return *f;
    if (!fits.empty()) break;
  }
  if (!ambiguous) {
    std::vector<ValueFit> fits;
    for (unsigned term = 1; term < (1u << dims); ++term) {
      for (unsigned i = 0; i < dims; ++i) exps[i] = (term >> i) & 1u;
      Rational c;
      if (common(-1, c)) fits.push_back(finish(c * power(target), formula_of({term}, {c})));
    }
    if (auto f = decide(fits)) return *f;
  }

  // 3. Linear combinations of the terms of at most `level` sizes. A level
  // counts only when some observation confirms it (more observations than
  // independent equations), except the last, all terms, which may also be
  // exactly determined (the seed's d+1 inputs for d dimensions).
  std::size_t bad = 0;
  for (unsigned level = 1; level <= dims; ++level) {
    std::vector<unsigned> terms;
    for (unsigned t = 0; t < (1u << dims); ++t)
      if (static_cast<unsigned>(std::popcount(t)) <= level) terms.push_back(t);
    RatMatrix rows;
    RatVector values, goal;
    for (const auto& o : obs) {
      RatVector row;
      for (unsigned t : terms) row.push_back(term_value(t, o.sizes));
      rows.push_back(std::move(row));
      values.emplace_back(o.value);
    }
    for (unsigned t : terms) goal.push_back(term_value(t, target));
    const SolveResult sr = solve_linear(rows, values);
    if (sr.status == SolveResult::Status::kInconsistent) {
      bad = sr.bad_equation;
      continue;
    }
    const bool confirmed = sr.rank < obs.size();
    if (!confirmed && level < dims) continue;
    const Prediction p = predict_linear(rows, values, goal);
    if (p.status == Prediction::Status::kUndetermined) {
      ValueFit f;
      f.status = ValueFit::Status::kUndetermined;
      f.formula = formula_of(terms, p.coefficients);
      return f;
    }
    return finish(p.value, formula_of(terms, p.coefficients));
  }
  if (dims == 1)
    if (auto f = fit_sqrt(obs, target[0])) return *f;
  ValueFit f;
  f.status = ValueFit::Status::kInconsistent;
  f.bad_observation = bad;
  return f;
}

}  // namespace tracefold::extrap
