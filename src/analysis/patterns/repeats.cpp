#include <algorithm>
#include <numeric>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns {

namespace {

// Suffix array by prefix doubling: ranks of 2^k-prefixes, sorted by the
// pair (rank of the first half, rank of the second half) each round.
std::vector<std::size_t> suffix_array(std::span<const Symbol> s) {
  const std::size_t n = s.size();
  std::vector<std::size_t> sa(n), rank(n), next(n);
  std::iota(sa.begin(), sa.end(), std::size_t{0});
  for (std::size_t i = 0; i < n; ++i) rank[i] = s[i];
  for (std::size_t k = 1;; k <<= 1) {
    auto key = [&](std::size_t i) {
      // Second half past the end sorts first: 0, and every rank is + 1.
      return std::pair<std::size_t, std::size_t>(rank[i], i + k < n ? rank[i + k] + 1 : 0);
    };
    std::sort(sa.begin(), sa.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    next[sa[0]] = 0;
    for (std::size_t i = 1; i < n; ++i)
      next[sa[i]] = next[sa[i - 1]] + (key(sa[i - 1]) < key(sa[i]) ? 1 : 0);
    rank.swap(next);
    if (n == 0 || rank[sa[n - 1]] == n - 1 || k >= n) break;
  }
  return sa;
}

// lcp[i]: length of the longest common prefix of suffixes sa[i - 1] and
// sa[i] (lcp[0] = 0), by Kasai et al.'s linear scan.
std::vector<std::size_t> lcp_array(std::span<const Symbol> s, const std::vector<std::size_t>& sa) {
  const std::size_t n = s.size();
  std::vector<std::size_t> inv(n), lcp(n, 0);
  for (std::size_t i = 0; i < n; ++i) inv[sa[i]] = i;
  std::size_t h = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (inv[i] == 0) {
      h = 0;
      continue;
    }
    const std::size_t j = sa[inv[i] - 1];
    while (i + h < n && j + h < n && s[i + h] == s[j + h]) ++h;
    lcp[inv[i]] = h;
    if (h > 0) --h;
  }
  return lcp;
}

}  // namespace

std::vector<Repeat> maximal_repeats(std::span<const Symbol> s) {
  const std::size_t n = s.size();
  std::vector<Repeat> out;
  if (n < 2) return out;
  const std::vector<std::size_t> sa = suffix_array(s);
  const std::vector<std::size_t> lcp = lcp_array(s, sa);
  // An interval sa[lb..rb] is left-diverse when two neighbours in it have
  // different left symbols, or it holds the suffix that starts S (nothing
  // to its left differs from everything). changes[j]: how many neighbours
  // (k - 1, k), k <= j, differ.
  std::vector<std::size_t> changes(n, 0);
  std::size_t first_suffix = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (sa[k] == 0) first_suffix = k;
    if (k > 0) {
      const bool differ = sa[k] == 0 || sa[k - 1] == 0 || s[sa[k] - 1] != s[sa[k - 1] - 1];
      changes[k] = changes[k - 1] + (differ ? 1 : 0);
    }
  }
  auto diverse = [&](std::size_t lb, std::size_t rb) {
    return changes[rb] != changes[lb] || (first_suffix >= lb && first_suffix <= rb);
  };
  // Bottom-up traversal of the LCP intervals (Abouelhoda, Kurtz and
  // Ohlebusch): an interval closes when the LCP drops below its depth.
  struct Open {
    std::size_t depth, lb;
  };
  std::vector<Open> stack{{0, 0}};
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t h = i < n ? lcp[i] : 0;
    std::size_t lb = i - 1;
    while (h < stack.back().depth) {
      const Open top = stack.back();
      stack.pop_back();
      if (diverse(top.lb, i - 1)) {
        Repeat r;
        r.length = top.depth;
        r.positions.assign(sa.begin() + static_cast<std::ptrdiff_t>(top.lb),
                           sa.begin() + static_cast<std::ptrdiff_t>(i));
        std::sort(r.positions.begin(), r.positions.end());
        out.push_back(std::move(r));
      }
      lb = top.lb;
    }
    if (i < n && h > stack.back().depth) stack.push_back({h, lb});
  }
  std::sort(out.begin(), out.end(), [](const Repeat& a, const Repeat& b) {
    return a.length != b.length ? a.length > b.length : a.positions[0] < b.positions[0];
  });
  return out;
}

}  // namespace tracefold::patterns
