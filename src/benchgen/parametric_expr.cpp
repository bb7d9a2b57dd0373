// Models as C expressions and as numbers (parametric.hpp).
#include <cctype>
#include <numeric>
#include <stdexcept>

#include "parametric.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold::benchgen::param {

using extrap::Rational;

Expr Expr::constant(int64_t v) {
  Expr e;
  if (is_sentinel(v)) {
    e.kind = Kind::kSentinel;
    e.sentinel = v;
  } else if (v != 0) {
    e.terms.emplace_back(Rational(v), 0u);
  }
  return e;
}

namespace {

struct Parser {
  const std::string& s;
  std::size_t at = 0;

  [[noreturn]] void fail() const {
    throw std::invalid_argument("cannot read the model '" + s + "' at character " +
                                std::to_string(at));
  }
  bool eat(const std::string& w) {
    if (s.compare(at, w.size(), w) != 0) return false;
    at += w.size();
    return true;
  }
  int64_t integer() {
    const std::size_t from = at;
    while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) ++at;
    if (at == from) fail();
    return std::stoll(s.substr(from, at - from));
  }
  unsigned size_factor() {
    if (!eat("S")) fail();
    const int64_t i = integer();
    if (i < 1 || i > 3) fail();
    return 1u << (i - 1);
  }
  unsigned term() {
    unsigned t = size_factor();
    while (eat("*S")) {
      --at;
      t |= size_factor();
    }
    return t;
  }
};

std::string term_c(unsigned term) {
  std::string out;
  for (unsigned i = 0; term >> i; ++i)
    if (term & (1u << i)) out += (out.empty() ? "S" : "*S") + std::to_string(i + 1);
  return out;
}

int64_t term_value(unsigned term, const std::vector<int64_t>& sizes) {
  int64_t v = 1;
  for (unsigned i = 0; i < sizes.size(); ++i)
    if (term & (1u << i)) v *= sizes[i];
  return v;
}

// Sum of the terms over a common denominator: "(2*S1 + 1)" or
// "((3*S1 + 2) / 2)".
std::string poly_c(const std::vector<std::pair<Rational, unsigned>>& terms) {
  if (terms.empty()) return "0";
  int64_t den = 1;
  for (const auto& [c, t] : terms) den = std::lcm(den, static_cast<int64_t>(c.den()));
  std::string out;
  for (const auto& [c, t] : terms) {
    const Rational scaled = c * Rational(den);
    int64_t k = scaled.to_int64();
    const bool neg = k < 0;
    if (neg) k = -k;
    out += out.empty() ? (neg ? "-" : "") : (neg ? " - " : " + ");
    if (t == 0)
      out += std::to_string(k) + "L";
    else
      out += (k == 1 ? "" : std::to_string(k) + "*") + term_c(t);
  }
  if (den != 1) return "((" + out + ") / " + std::to_string(den) + ")";
  return terms.size() == 1 && out[0] != '-' ? out : "(" + out + ")";
}

std::optional<int64_t> poly_value(const std::vector<std::pair<Rational, unsigned>>& terms,
                                  const std::vector<int64_t>& sizes) {
  Rational v(0);
  for (const auto& [c, t] : terms) v += c * Rational(term_value(t, sizes));
  if (!v.is_integer()) return std::nullopt;
  return v.to_int64();
}

int64_t positive_mod(int64_t a, int64_t m) {
  return ((a % m) + m) % m;
}

}  // namespace

Expr parse_formula(const std::string& formula) {
  Parser p{formula};
  Expr e;
  bool first = true;
  while (p.at < formula.size() || first) {
    bool neg = false;
    if (first) {
      neg = p.eat("-");
    } else if (p.eat(" + ")) {
    } else if (p.eat(" - ")) {
      neg = true;
    } else {
      p.fail();
    }
    first = false;
    Rational c(1);
    unsigned t = 0;
    if (p.at < formula.size() && formula[p.at] == 'S') {
      t = p.term();
    } else {
      c = Rational(p.integer());
      // `3/2`, then `*S1`; or `4608/S1`, `96/(S1*S2)`: a share.
      if (p.eat("/")) {
        if (p.eat("(")) {
          e.kind = Expr::Kind::kShare;
          e.share = neg ? -c : c;
          e.share_term = p.term();
          if (!p.eat(")") || p.at != formula.size() || !e.terms.empty()) p.fail();
          return e;
        }
        if (formula.compare(p.at, 1, "S") == 0) {
          e.kind = Expr::Kind::kShare;
          e.share = neg ? -c : c;
          e.share_term = p.size_factor();
          if (p.at != formula.size() || !e.terms.empty()) p.fail();
          return e;
        }
        c = c / Rational(p.integer());
      }
      if (p.eat("*")) t = p.term();
    }
    if (!c.is_zero()) e.terms.emplace_back(neg ? -c : c, t);
  }
  return e;
}

std::string to_c(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kSentinel:
      if (e.sentinel == kAny) return "TF_ANY";
      if (e.sentinel == kNull) return "TF_NULL";
      if (e.sentinel == kUndefined) return "TF_UNDEF";
      return "TF_ABSENT";
    case Expr::Kind::kPoly:
      return poly_c(e.terms);
    case Expr::Kind::kShare:
      return "(" + std::to_string(static_cast<int64_t>(e.share.num())) + "L / (" +
             (e.share.den() == 1 ? "" : std::to_string(static_cast<int64_t>(e.share.den())) + "*") +
             term_c(e.share_term) + "))";
    case Expr::Kind::kPeerAt:
      return "peer_at(" + std::to_string(e.offset[0]) + ", " + std::to_string(e.offset[1]) + ", " +
             std::to_string(e.offset[2]) + ")";
    case Expr::Kind::kPeerRel:
      return "peer_rel(" + poly_c(e.terms) + ")";
  }
  return "0";
}

std::optional<int64_t> evaluate(const Expr& e, const std::vector<int64_t>& sizes, int64_t rank) {
  int64_t world = 1;
  for (int64_t s : sizes) world *= s;
  switch (e.kind) {
    case Expr::Kind::kSentinel:
      return e.sentinel;
    case Expr::Kind::kPoly:
      return poly_value(e.terms, sizes);
    case Expr::Kind::kShare: {
      const Rational v = e.share / Rational(term_value(e.share_term, sizes));
      if (!v.is_integer()) return std::nullopt;
      return v.to_int64();
    }
    case Expr::Kind::kPeerAt: {
      int64_t r = rank, out = 0, stride = 1;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const int64_t x = r % sizes[i];
        r /= sizes[i];
        out += positive_mod(x + e.offset[i], sizes[i]) * stride;
        stride *= sizes[i];
      }
      return out;
    }
    case Expr::Kind::kPeerRel: {
      const auto off = poly_value(e.terms, sizes);
      if (!off) return std::nullopt;
      return positive_mod(rank + *off, world);
    }
  }
  return std::nullopt;
}

std::string cells_predicate(const std::vector<int>& cells, int dims) {
  int all = 1;
  for (int i = 0; i < dims; ++i) all *= 3;
  std::vector<bool> in(static_cast<std::size_t>(all), false);
  for (int c : cells)
    if (c >= 0 && c < all) in[static_cast<std::size_t>(c)] = true;
  auto digit = [](int cell, int i) {
    for (int k = 0; k < i; ++k) cell /= 3;
    return cell % 3;
  };
  // Greedy cover by boxes: per dimension a set of classes (bit k: class k);
  // a box is grown from a cell dimension by dimension while every cell it
  // then spans is in the set.
  std::vector<bool> covered(in.size(), false);
  std::vector<std::string> alts;
  for (int c = 0; c < all; ++c) {
    if (!in[static_cast<std::size_t>(c)] || covered[static_cast<std::size_t>(c)]) continue;
    std::vector<int> mask(static_cast<std::size_t>(dims));
    for (int i = 0; i < dims; ++i) mask[static_cast<std::size_t>(i)] = 1 << digit(c, i);
    auto box_in = [&](const std::vector<int>& m) {
      for (int x = 0; x < all; ++x) {
        bool inside = true;
        for (int i = 0; i < dims; ++i)
          inside = inside && (m[static_cast<std::size_t>(i)] >> digit(x, i) & 1);
        if (inside && !in[static_cast<std::size_t>(x)]) return false;
      }
      return true;
    };
    for (int i = 0; i < dims; ++i)
      for (int k = 0; k < 3; ++k) {
        std::vector<int> grown = mask;
        grown[static_cast<std::size_t>(i)] |= 1 << k;
        if (box_in(grown)) mask = grown;
      }
    std::vector<std::string> parts;
    for (int i = 0; i < dims; ++i) {
      const std::string x = "x" + std::to_string(i + 1),
                        last = "S" + std::to_string(i + 1) + " - 1";
      switch (mask[static_cast<std::size_t>(i)]) {
        case 1:
          parts.push_back(x + " == 0");
          break;
        case 2:
          parts.push_back(x + " > 0 && " + x + " < " + last);
          break;
        case 4:
          parts.push_back(x + " == " + last);
          break;
        case 3:
          parts.push_back(x + " < " + last);
          break;
        case 6:
          parts.push_back(x + " > 0");
          break;
        case 5:
          parts.push_back("(" + x + " == 0 || " + x + " == " + last + ")");
          break;
        default:
          break;  // every class
      }
    }
    for (int x = 0; x < all; ++x) {
      bool inside = true;
      for (int i = 0; i < dims; ++i)
        inside = inside && (mask[static_cast<std::size_t>(i)] >> digit(x, i) & 1);
      if (inside) covered[static_cast<std::size_t>(x)] = true;
    }
    std::string p;
    for (const auto& part : parts) p += (p.empty() ? "" : " && ") + part;
    alts.push_back(p.empty() ? "1" : p);
  }
  if (alts.empty()) return "0";
  if (alts.size() == 1) return alts[0];
  std::string out;
  for (const auto& a : alts)
    out += (out.empty() ? "" : " || ") + (a.find("&&") != std::string::npos ? "(" + a + ")" : a);
  return out;
}

}  // namespace tracefold::benchgen::param
