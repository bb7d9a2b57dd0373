// Exact arithmetic and Gaussian elimination of the extrapolator.
#include <gtest/gtest.h>

#include <limits>

#include "tracefold/extrap/linear.hpp"
#include "tracefold/extrap/rational.hpp"

using namespace tracefold::extrap;

TEST(ExtrapRational, NormalizesAndComputesExactly) {
  EXPECT_EQ(Rational::of(6, -4).to_string(), "-3/2");
  EXPECT_EQ((Rational::of(1, 3) + Rational::of(1, 6)).to_string(), "1/2");
  EXPECT_EQ((Rational::of(2, 3) * Rational::of(9, 4)).to_string(), "3/2");
  EXPECT_EQ((Rational(7) / Rational(-14)).to_string(), "-1/2");
  EXPECT_EQ((Rational::of(1, 3) - Rational::of(1, 3)), Rational(0));
  EXPECT_LT(Rational::of(-1, 2), Rational::of(1, 3));
  EXPECT_EQ(Rational(91).to_int64(), 91);
  EXPECT_THROW(Rational::of(1, 2).to_int64(), std::range_error);
  EXPECT_THROW(Rational(1) / Rational(0), std::domain_error);
  EXPECT_THROW(Rational::of(1, 0), std::domain_error);
}

TEST(ExtrapRational, OverflowThrowsInsteadOfWrapping) {
  const Rational big(std::numeric_limits<int64_t>::max());
  const Rational big2 = big * big;  // ~2^126: still fits
  EXPECT_EQ(big2 / big, big);
  EXPECT_THROW(big2 * Rational(4), RationalOverflow);
  EXPECT_THROW(big2 + big2 + big2 + big2, RationalOverflow);
  EXPECT_THROW((big2 * Rational(2)).to_int64(), std::range_error);
}

// The seed's example (3.2.3, its Figure 3.5): the east neighbour of the
// bottom-right node of a periodic square grid, seen at 4x4, 5x5 and 6x6;
// at 10x10 it is rank 91.
TEST(ExtrapLinear, SeedEndpointExample) {
  const RatMatrix rows = {{16, 4, 1}, {25, 5, 1}, {36, 6, 1}};
  const SolveResult s = solve_linear(rows, {13, 21, 31});
  ASSERT_EQ(s.status, SolveResult::Status::kUnique);
  EXPECT_EQ(s.x, (RatVector{1, -1, 1}));
  const Prediction p = predict_linear(rows, {13, 21, 31}, {100, 10, 1});
  ASSERT_EQ(p.status, Prediction::Status::kDetermined);
  EXPECT_EQ(p.value, Rational(91));
}

TEST(ExtrapLinear, RationalSolution) {
  const SolveResult s = solve_linear({{2, 1}, {1, 3}}, {1, 2});
  ASSERT_EQ(s.status, SolveResult::Status::kUnique);
  EXPECT_EQ(s.x, (RatVector{Rational::of(1, 5), Rational::of(3, 5)}));
}

TEST(ExtrapLinear, SingularSystemHasANullSpace) {
  // Square inputs cannot tell S1 from S2: columns 1 and 2 are equal.
  const RatMatrix rows = {{1, 3, 3}, {1, 4, 4}, {1, 5, 5}};
  const RatVector values = {4, 5, 6};  // S1 + 1 (or S2 + 1)
  const SolveResult s = solve_linear(rows, values);
  ASSERT_EQ(s.status, SolveResult::Status::kUnderdetermined);
  EXPECT_EQ(s.rank, 2u);
  ASSERT_EQ(s.nullspace.size(), 1u);
  EXPECT_EQ(s.nullspace[0], (RatVector{0, -1, 1}));
  // On a square target the answer is still unique ...
  Prediction p = predict_linear(rows, values, {1, 7, 7});
  ASSERT_EQ(p.status, Prediction::Status::kDetermined);
  EXPECT_EQ(p.value, Rational(8));
  // ... on a 4x6 grid it is not.
  p = predict_linear(rows, values, {1, 6, 4});
  EXPECT_EQ(p.status, Prediction::Status::kUndetermined);
}

TEST(ExtrapLinear, InconsistentSystemNamesTheEquation) {
  // Over-determined: four observations of c0 + c1*S, the third one off.
  const RatMatrix rows = {{1, 2}, {1, 3}, {1, 4}, {1, 5}};
  SolveResult s = solve_linear(rows, {5, 7, 9, 11});
  EXPECT_EQ(s.status, SolveResult::Status::kUnique);
  EXPECT_EQ(s.x, (RatVector{1, 2}));
  s = solve_linear(rows, {5, 7, 10, 11});
  ASSERT_EQ(s.status, SolveResult::Status::kInconsistent);
  EXPECT_EQ(s.bad_equation, 2u);
  const Prediction p = predict_linear(rows, {5, 7, 10, 11}, {1, 10});
  EXPECT_EQ(p.status, Prediction::Status::kInconsistent);
  EXPECT_EQ(p.bad_observation, 2u);
}

TEST(ExtrapLinear, RedundantEquationsAreAccepted) {
  const SolveResult s = solve_linear({{1, 1}, {2, 2}, {1, -1}}, {3, 6, 1});
  ASSERT_EQ(s.status, SolveResult::Status::kUnique);
  EXPECT_EQ(s.x, (RatVector{2, 1}));
  EXPECT_EQ(s.rank, 2u);
}

TEST(ExtrapLinear, ZeroMatrix) {
  SolveResult s = solve_linear({{0, 0}}, {0});
  EXPECT_EQ(s.status, SolveResult::Status::kUnderdetermined);
  EXPECT_EQ(s.nullspace.size(), 2u);
  s = solve_linear({{0, 0}}, {1});
  EXPECT_EQ(s.status, SolveResult::Status::kInconsistent);
}

TEST(ExtrapLinear, BadShapesThrow) {
  EXPECT_THROW(solve_linear({{1, 2}, {1}}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(solve_linear({{1, 2}}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(solve_linear({}, {}), std::invalid_argument);
}

// ------------------------------------------------------------ scale models

#include "tracefold/extrap/scale_model.hpp"

namespace {

std::vector<Observation> squares(std::initializer_list<std::pair<int64_t, int64_t>> side_value) {
  std::vector<Observation> out;
  for (auto [s, v] : side_value) out.push_back({{s, s}, v});
  return out;
}

}  // namespace

TEST(ExtrapScaleModel, RankDistancesOfASquareGrid) {
  // West neighbour of an interior rank, relative: P - 1 = S1*S2 - 1.
  ValueFit f = fit_value(squares({{3, 8}, {4, 15}, {5, 24}}), {32, 32});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 1023);
  // Confirmed by a fourth input, the same answer.
  f = fit_value(squares({{2, 3}, {3, 8}, {4, 15}, {5, 24}}), {6, 6});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 35);
  // South neighbour: S1, a one-size model confirmed by the third input.
  f = fit_value(squares({{2, 2}, {3, 3}, {4, 4}}), {6, 6});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 6);
  EXPECT_EQ(f.formula, "S1");
}

TEST(ExtrapScaleModel, TwoInputsDoNotPinAThreeTermModel) {
  // 8 and 15 at 3x3 and 4x4: S1*S2 - 1, or 7*S1 - 13, or ... : refused.
  const ValueFit f = fit_value(squares({{3, 8}, {4, 15}}), {6, 6});
  EXPECT_EQ(f.status, ValueFit::Status::kUndetermined);
}

TEST(ExtrapScaleModel, UnevenGridsSeparateTheSizes) {
  // S1 + 2*S2 on 4x6, 3x5, 5x2, 2x7 (MPI order): S1 and S2 vary independently.
  std::vector<Observation> obs;
  for (auto [s2, s1] : std::vector<std::pair<int64_t, int64_t>>{{4, 6}, {3, 5}, {5, 2}, {2, 7}})
    obs.push_back({{s1, s2}, s1 + 2 * s2});
  ValueFit f = fit_value(obs, {10, 3});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 16);
  // Square inputs cannot tell S1 from S2 on a 6x4 target.
  f = fit_value(squares({{3, 4}, {4, 5}, {5, 6}}), {6, 4});
  EXPECT_EQ(f.status, ValueFit::Status::kUndetermined);
}

TEST(ExtrapScaleModel, ConstantsSharesAndTheirErrors) {
  ValueFit f = fit_value(squares({{3, 24}, {4, 24}, {5, 24}}), {100, 100});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 24);
  // Strong scaling: 480 cells per row split over S1 ranks.
  f = fit_value(squares({{2, 240}, {4, 120}, {5, 96}}), {8, 8});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 60);
  EXPECT_EQ(f.formula, "480/S1");
  // ... which is not an integer at 7x7.
  f = fit_value(squares({{2, 240}, {4, 120}, {5, 96}}), {7, 7});
  EXPECT_EQ(f.status, ValueFit::Status::kNotInteger);
  // Five observations no model of a 2-D grid fits (2^S1).
  f = fit_value(squares({{2, 4}, {3, 8}, {4, 16}, {5, 32}, {6, 64}}), {8, 8});
  EXPECT_EQ(f.status, ValueFit::Status::kInconsistent);
  EXPECT_EQ(fit_value({}, {4, 4}).status, ValueFit::Status::kNoData);
}

TEST(ExtrapScaleModel, InversePowersOfTheSizes) {
  // A slab FFT's transpose under strong scaling: 2*32^3 / P^2 values to
  // each of P ranks, on a 1-D grid of P.
  std::vector<Observation> obs = {{{4}, 4096}, {{8}, 1024}, {{16}, 256}};
  ValueFit f = fit_value(obs, {32});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 64);
  EXPECT_EQ(f.formula, "65536/S1^2");
  // Two inputs: c/S1^2 is pinned by one and confirmed by the other, the
  // straight line through them is not confirmed and loses.
  f = fit_value({{{4}, 4096}, {{8}, 1024}}, {16});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 256);
  // A multipartition cell face, 5*(60/q)^2, on q x q grids: on squares
  // the plain share of both sizes fits first (and S1^2 = S1*S2 there).
  f = fit_value(squares({{2, 4500}, {3, 2000}, {4, 1125}}), {5, 5});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 720);
  EXPECT_EQ(f.formula, "18000/(S1*S2)");
  // Sizes that vary apart (3x2, 2x3, 7x5, slowest first): only S1^2 fits.
  f = fit_value({{{2, 3}, 1125}, {{3, 2}, 500}, {{5, 7}, 180}}, {6, 6});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 125);
  EXPECT_EQ(f.formula, "4500/S1^2");
  // Sizes that grow together (2 rows of 4, 4 rows of 8) fit c/S1^3 and
  // c/(S1*S2^2) alike: not guessed at a grid where they differ.
  f = fit_value({{{2, 4}, 2048}, {{4, 8}, 256}}, {4, 4});
  EXPECT_NE(f.status, ValueFit::Status::kOk) << f.formula;
  // The plain share is still found first where it fits.
  f = fit_value(squares({{2, 240}, {4, 120}, {5, 96}}), {8, 8});
  EXPECT_EQ(f.formula, "480/S1");
  // And a power that gives a fraction at the target says so.
  EXPECT_EQ(fit_value(obs, {3}).status, ValueFit::Status::kNotInteger);
}

TEST(ExtrapScaleModel, MultiplesOfOneProductNeedTwoInputs) {
  // The distance between rows of a grid 2x2, 2 rows of 4, 4x4 (sizes
  // fastest first): S1, confirmed by three inputs where the linear model
  // 1, S1, S2 is only determined.
  std::vector<Observation> obs = {{{2, 2}, 2}, {{2, 4}, 2}, {{4, 4}, 4}};
  ValueFit f = fit_value(obs, {8, 4});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 8);
  EXPECT_EQ(f.formula, "S1");
  // On square inputs S1 and S2 fit alike; a target where they differ is
  // not guessed.
  f = fit_value(squares({{2, 2}, {3, 3}, {4, 4}}), {8, 4});
  EXPECT_EQ(f.status, ValueFit::Status::kUndetermined);
  f = fit_value(squares({{2, 6}, {3, 9}, {4, 12}}), {5, 5});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 15);
}
