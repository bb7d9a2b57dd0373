// Disjoint sets over the numbers 0 .. size() - 1 (union-find), as the
// collective alignment joins nodes and the pattern assembly joins
// per-process patterns that exchange messages.
#pragma once

#include <cstddef>
#include <numeric>
#include <vector>

namespace tracefold {

/// Union-find with path halving. The root of a set is always its smallest
/// member, so a caller may take find(x) == x to mean "x is the first of
/// its set" and the sets' roots do not depend on the order of unite()
/// calls.
class UnionFind {
 public:
  /// `n` singleton sets 0 .. n - 1.
  explicit UnionFind(std::size_t n = 0) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), std::size_t{0});
  }

  /// Adds a singleton set and returns its member, size() - 1.
  std::size_t add() {
    parent_.push_back(parent_.size());
    return parent_.size() - 1;
  }

  std::size_t size() const { return parent_.size(); }

  /// The smallest member of x's set.
  std::size_t find(std::size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }

  /// Joins the sets of a and b.
  void unite(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a < b)
      parent_[b] = a;
    else if (b < a)
      parent_[a] = b;
  }

 private:
  std::vector<std::size_t> parent_;
};

}  // namespace tracefold
