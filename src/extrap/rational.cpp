#include "tracefold/extrap/rational.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tracefold::extrap {

namespace {

using Int = Rational::Int;

constexpr Int kMax = ~(Int{1} << 127);  // 2^127 - 1
constexpr Int kMin = -kMax;             // -2^127 is kept out: it has no negation

[[noreturn]] void overflow(const char* op) {
  throw RationalOverflow(std::string("rational arithmetic overflow in ") + op +
                         " (more than 127 bits)");
}

Int checked(Int v, const char* op) {
  if (v < kMin) overflow(op);
  return v;
}

Int mul(Int a, Int b, const char* op) {
  Int r;
  if (__builtin_mul_overflow(a, b, &r)) overflow(op);
  return checked(r, op);
}

Int add(Int a, Int b, const char* op) {
  Int r;
  if (__builtin_add_overflow(a, b, &r)) overflow(op);
  return checked(r, op);
}

Int abs128(Int v) {
  return v < 0 ? -v : v;
}

Int gcd128(Int a, Int b) {
  a = abs128(a);
  b = abs128(b);
  while (b != 0) {
    const Int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

}  // namespace

std::string int128_to_string(Int v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  std::string s;
  // Digits from the negative side: -2^127 has no positive counterpart.
  Int n = neg ? v : -v;
  while (n != 0) {
    s.push_back(static_cast<char>('0' - static_cast<int>(n % 10)));
    n /= 10;
  }
  if (neg) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

Rational Rational::of(Int num, Int den) {
  if (den == 0) throw std::domain_error("rational with a zero denominator");
  checked(num, "construction");
  checked(den, "construction");
  if (den < 0) {
    num = -num;
    den = -den;
  }
  const Int g = gcd128(num, den);
  Rational r;
  r.num_ = g > 1 ? num / g : num;
  r.den_ = g > 1 ? den / g : den;
  return r;
}

int64_t Rational::to_int64() const {
  if (den_ != 1) throw std::range_error(to_string() + " is not an integer");
  if (num_ > std::numeric_limits<int64_t>::max() || num_ < std::numeric_limits<int64_t>::min())
    throw std::range_error(to_string() + " does not fit in 64 bits");
  return static_cast<int64_t>(num_);
}

double Rational::to_double() const {
  return static_cast<double>(num_) / static_cast<double>(den_);
}

std::string Rational::to_string() const {
  return den_ == 1 ? int128_to_string(num_) : int128_to_string(num_) + "/" + int128_to_string(den_);
}

Rational operator+(const Rational& a, const Rational& b) {
  if (a.den_ == b.den_) return Rational::of(add(a.num_, b.num_, "addition"), a.den_);
  // Work with the gcd of the denominators so that intermediate products
  // stay small: a/d1 + b/d2 = (a*(d2/g) + b*(d1/g)) / (d1/g*d2).
  const Int g = gcd128(a.den_, b.den_);
  const Int n =
      add(mul(a.num_, b.den_ / g, "addition"), mul(b.num_, a.den_ / g, "addition"), "addition");
  return Rational::of(n, mul(a.den_ / g, b.den_, "addition"));
}

Rational Rational::operator-() const {
  Rational r = *this;
  r.num_ = -r.num_;
  return r;
}

Rational operator-(const Rational& a, const Rational& b) {
  return a + (-b);
}

Rational operator*(const Rational& a, const Rational& b) {
  // Cross-reduce first: (a/b)*(c/d) with gcd(a,d) and gcd(c,b) removed.
  const Int g1 = gcd128(a.num_, b.den_), g2 = gcd128(b.num_, a.den_);
  const Int n1 = g1 > 1 ? a.num_ / g1 : a.num_, d2 = g1 > 1 ? b.den_ / g1 : b.den_;
  const Int n2 = g2 > 1 ? b.num_ / g2 : b.num_, d1 = g2 > 1 ? a.den_ / g2 : a.den_;
  return Rational::of(mul(n1, n2, "multiplication"), mul(d1, d2, "multiplication"));
}

Rational operator/(const Rational& a, const Rational& b) {
  if (b.num_ == 0) throw std::domain_error("rational division by zero");
  return a * Rational::of(b.den_, b.num_);
}

std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
  const Rational d = a - b;
  return d.num_ <=> Int{0};
}

}  // namespace tracefold::extrap
