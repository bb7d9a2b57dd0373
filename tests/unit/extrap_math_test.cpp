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
