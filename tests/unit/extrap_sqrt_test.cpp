// Laws in the square root of a 1-D size (scale_model.hpp): q = sqrt(P)
// stages on a ring of P = q*q ranks, messages of N/q; only where every
// size is a square and no law of the size itself fits.
#include <gtest/gtest.h>

#include "tracefold/extrap/scale_model.hpp"

using namespace tracefold::extrap;

namespace {

std::vector<Observation> at(const std::vector<std::pair<int64_t, int64_t>>& pts) {
  std::vector<Observation> out;
  for (auto [p, v] : pts) out.push_back({{p}, v});
  return out;
}

}  // namespace

TEST(ExtrapSqrt, MultipleOfTheRoot) {
  const ValueFit f = fit_value(at({{4, 2}, {9, 3}, {16, 4}}), {25});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 5);
  EXPECT_EQ(f.formula, "sqrt(S1)");
}

TEST(ExtrapSqrt, ShareOverTheRoot) {
  const ValueFit f = fit_value(at({{4, 30}, {9, 20}, {16, 15}}), {36});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 10);
  EXPECT_EQ(f.formula, "60/sqrt(S1)");
}

// q - 1 stages: a + b*sqrt(S1), pinned by 4 and 9, confirmed by 16.
TEST(ExtrapSqrt, LineInTheRoot) {
  const ValueFit f = fit_value(at({{4, 1}, {9, 2}, {16, 3}}), {64});
  ASSERT_EQ(f.status, ValueFit::Status::kOk);
  EXPECT_EQ(f.value, 7);
  EXPECT_EQ(f.formula, "-1 + sqrt(S1)");
  // two inputs do not confirm it: the line in S1 through them, exactly
  // determined, is taken as before (the seed's d+1 inputs)
  EXPECT_EQ(fit_value(at({{4, 1}, {9, 2}}), {64}).formula.find("sqrt"), std::string::npos);
}

// A target that is no square has no root: the law is named, no value given.
TEST(ExtrapSqrt, TargetNoSquare) {
  const ValueFit f = fit_value(at({{4, 1}, {9, 2}, {16, 3}}), {32});
  EXPECT_EQ(f.status, ValueFit::Status::kNotInteger);
  EXPECT_EQ(f.formula, "-1 + sqrt(S1)");
}

// Laws of the size itself come first (S1 - 1 stays S1 - 1), and inputs
// that are no squares get no root law.
TEST(ExtrapSqrt, OnlyWhereNothingElseFits) {
  const ValueFit lin = fit_value(at({{4, 3}, {9, 8}, {16, 15}}), {25});
  ASSERT_EQ(lin.status, ValueFit::Status::kOk);
  EXPECT_EQ(lin.value, 24);
  EXPECT_EQ(fit_value(at({{4, 2}, {8, 3}, {16, 4}}), {25}).status, ValueFit::Status::kInconsistent);
}
