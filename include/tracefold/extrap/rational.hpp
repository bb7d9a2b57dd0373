// Exact rational numbers for extrapolation.
//
// Extrapolated parameters are ranks, counts and trip counts: a value that is
// off by a rounding error is a wrong trace, not an approximate one. So the
// linear systems of extrapolation (linear.hpp) are solved over the
// rationals. Numerator and denominator are 128-bit integers, always in
// lowest terms with a positive denominator; every operation checks for
// overflow and throws RationalOverflow instead of wrapping.
#pragma once

#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tracefold::extrap {

/// An operation on Rational values left the 128-bit range.
class RationalOverflow : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

class Rational {
 public:
  // __extension__: -Wpedantic accepts the GCC/Clang 128-bit type this way.
  __extension__ typedef __int128 Int;

  constexpr Rational() = default;
  // Implicit from integers: rows of a system are written with plain sizes.
  Rational(int64_t value) : num_(value) {}  // NOLINT(google-explicit-constructor)
  /// num/den in lowest terms. Throws std::domain_error when den == 0.
  static Rational of(Int num, Int den);

  Int num() const { return num_; }
  Int den() const { return den_; }
  bool is_zero() const { return num_ == 0; }
  bool is_integer() const { return den_ == 1; }
  /// The value as int64_t. Throws std::range_error when it is not an
  /// integer or does not fit.
  int64_t to_int64() const;
  /// Nearest double (for printing coefficients and for timing fits).
  double to_double() const;
  /// `7`, `-3/4`.
  std::string to_string() const;

  friend Rational operator+(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a, const Rational& b);
  friend Rational operator*(const Rational& a, const Rational& b);
  /// Throws std::domain_error on division by zero.
  friend Rational operator/(const Rational& a, const Rational& b);
  Rational operator-() const;
  Rational& operator+=(const Rational& o) { return *this = *this + o; }
  Rational& operator-=(const Rational& o) { return *this = *this - o; }
  Rational& operator*=(const Rational& o) { return *this = *this * o; }
  Rational& operator/=(const Rational& o) { return *this = *this / o; }

  friend bool operator==(const Rational&, const Rational&) = default;
  friend std::strong_ordering operator<=>(const Rational& a, const Rational& b);

 private:
  Int num_ = 0;
  Int den_ = 1;
};

/// Decimal text of a 128-bit integer.
std::string int128_to_string(Rational::Int v);

}  // namespace tracefold::extrap
