#include "tracefold/extrap/topology.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace tracefold::extrap {

int64_t Topology::ranks() const {
  int64_t p = 1;
  for (int64_t s : sizes) p *= s;
  return p;
}

std::vector<int64_t> Topology::coords(int64_t rank) const {
  std::vector<int64_t> c;
  for (int64_t s : sizes) {
    c.push_back(rank % s);
    rank /= s;
  }
  return c;
}

std::string Topology::to_string() const {
  std::string s;
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {
    if (!s.empty()) s += "x";
    s += std::to_string(*it);
  }
  return s;
}

Topology Topology::parse(const std::string& text) {
  Topology t;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t x = text.find('x', pos);
    const std::string part = text.substr(pos, x == std::string::npos ? x : x - pos);
    if (part.empty() || part.size() > 9 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw std::invalid_argument("grid '" + text + "': expected sizes like 4x6 or 3x5x7");
    const int64_t v = std::stoll(part);
    if (v < 1) throw std::invalid_argument("grid '" + text + "': sizes must be at least 1");
    t.sizes.insert(t.sizes.begin(), v);  // text is slowest first
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  if (t.dims() > kMaxDims) throw std::invalid_argument("grid '" + text + "': at most 3 dimensions");
  t.periodic.assign(t.sizes.size(), false);
  return t;
}

int boundary_class(int64_t coord, int64_t size) {
  if (coord == 0) return 0;
  return coord == size - 1 ? 2 : 1;
}

int cell_count(const Topology& topo) {
  int n = 1;
  for (int i = 0; i < topo.dims(); ++i) n *= 3;
  return n;
}

int cell_of(const Topology& topo, int64_t rank) {
  int cell = 0, weight = 1;
  for (int64_t s : topo.sizes) {
    cell += boundary_class(rank % s, s) * weight;
    rank /= s;
    weight *= 3;
  }
  return cell;
}

Ranklist cell_ranks(const Topology& topo, int cell) {
  Ranklist::Section sec;
  int64_t start = 0, stride = 1;
  std::vector<std::pair<int32_t, int32_t>> dims;  // fastest first, reversed below
  for (int64_t s : topo.sizes) {
    const int cls = cell % 3;
    cell /= 3;
    int64_t lo = 0, count = 1;
    if (cls == 1) {
      lo = 1;
      count = s - 2;
    } else if (cls == 2) {
      lo = s - 1;
      if (s < 2) count = 0;  // a size of 1 has only the first coordinate
    }
    if (count <= 0) return {};
    start += lo * stride;
    dims.emplace_back(static_cast<int32_t>(count), static_cast<int32_t>(stride));
    stride *= s;
  }
  sec.start = static_cast<int32_t>(start);
  sec.dims.assign(dims.rbegin(), dims.rend());
  return Ranklist::from_sections({sec});
}

std::string cell_name(const Topology& topo, int cell) {
  static const char* const kAxis[] = {"x", "y", "z"};
  static const char* const kClass[] = {"first", "mid", "last"};
  std::string s;
  for (int i = 0; i < topo.dims(); ++i) {
    if (!s.empty()) s += " ";
    s += std::string(kAxis[i]) + ":" + kClass[cell % 3];
    cell /= 3;
  }
  return s;
}

namespace {

// Every way to write p as an ordered product of `dims` factors >= 2
// (fastest first).
void factorizations(int64_t p, int dims, std::vector<int64_t>& prefix,
                    std::vector<std::vector<int64_t>>& out) {
  if (dims == 1) {
    if (p >= 2 || prefix.empty()) {
      prefix.push_back(p);
      out.push_back(prefix);
      prefix.pop_back();
    }
    return;
  }
  for (int64_t f = 2; f <= p / 2; ++f) {
    if (p % f != 0) continue;
    prefix.push_back(f);
    factorizations(p / f, dims - 1, prefix, out);
    prefix.pop_back();
  }
}

// Every cell holds a single group.
bool explains(const Topology& topo, const std::vector<int32_t>& group_of) {
  std::vector<int32_t> group_in_cell(static_cast<std::size_t>(cell_count(topo)), -1);
  for (std::size_t r = 0; r < group_of.size(); ++r) {
    int32_t& g = group_in_cell[static_cast<std::size_t>(cell_of(topo, static_cast<int64_t>(r)))];
    if (g == -1)
      g = group_of[r];
    else if (g != group_of[r])
      return false;
  }
  return true;
}

// max/min of the sizes: 1 for a cube.
double imbalance(const std::vector<int64_t>& sizes) {
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  return static_cast<double>(*hi) / static_cast<double>(*lo);
}

}  // namespace

TopologyDetection detect_topology(const std::vector<std::vector<int64_t>>& endpoints,
                                  int min_dims) {
  const auto p = static_cast<int64_t>(endpoints.size());
  if (p < 1) throw std::invalid_argument("detect_topology: no ranks");
  TopologyDetection det;
  std::map<std::vector<int64_t>, int32_t> ids;
  det.group_of.resize(endpoints.size());
  for (std::size_t r = 0; r < endpoints.size(); ++r) {
    std::vector<int64_t> pattern;
    for (int64_t e : endpoints[r]) pattern.push_back(((e % p) + p) % p);
    std::sort(pattern.begin(), pattern.end());
    pattern.erase(std::unique(pattern.begin(), pattern.end()), pattern.end());
    auto [it, fresh] = ids.emplace(std::move(pattern), static_cast<int32_t>(ids.size()));
    det.group_of[r] = it->second;
  }
  det.groups = static_cast<int32_t>(ids.size());

  std::vector<std::vector<int64_t>> found;
  for (int d = std::max(1, min_dims); d <= kMaxDims && found.empty(); ++d) {
    std::vector<std::vector<int64_t>> cands;
    std::vector<int64_t> prefix;
    factorizations(p, d, prefix, cands);
    for (auto& sizes : cands) {
      Topology t{sizes, std::vector<bool>(sizes.size(), false)};
      if (explains(t, det.group_of)) found.push_back(sizes);
    }
  }
  if (found.empty())
    throw std::runtime_error("no row-major grid of " +
                             (min_dims > 1 ? std::to_string(min_dims) + " to 3" : "up to 3") +
                             " dimensions explains the " + std::to_string(det.groups) +
                             " communication patterns of the " + std::to_string(p) + " ranks");
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return imbalance(a) < imbalance(b); });
  det.topology.sizes = found[0];
  for (std::size_t i = 1; i < found.size(); ++i)
    det.alternatives.push_back(Topology{found[i], {}}.to_string());

  const Topology& topo = det.topology;
  det.topology.periodic.assign(topo.sizes.size(), false);
  // A wrap in dimension i: a rank on the first coordinate reaches one on
  // the last (sizes of 2 cannot tell a wrap from a neighbour).
  for (int64_t r = 0; r < p; ++r) {
    for (int64_t e : endpoints[static_cast<std::size_t>(r)]) {
      const int64_t q = (((r + e) % p) + p) % p;
      int64_t a = r, b = q;
      for (std::size_t i = 0; i < topo.sizes.size(); ++i) {
        const int64_t s = topo.sizes[i];
        if (s > 2 && ((a % s == 0 && b % s == s - 1) || (a % s == s - 1 && b % s == 0)))
          det.topology.periodic[i] = true;
        a /= s;
        b /= s;
      }
    }
  }
  det.critical = corner_ranks(topo);
  return det;
}

std::vector<int64_t> corner_ranks(const Topology& topo) {
  std::vector<int64_t> out;
  const int d = topo.dims();
  for (int corner = 0; corner < (1 << d); ++corner) {
    int64_t rank = 0, stride = 1;
    for (int i = 0; i < d; ++i) {
      if (corner & (1 << i)) rank += (topo.sizes[static_cast<std::size_t>(i)] - 1) * stride;
      stride *= topo.sizes[static_cast<std::size_t>(i)];
    }
    out.push_back(rank);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool grid_explains(const TopologyDetection& det, const Topology& topo) {
  return topo.ranks() == static_cast<int64_t>(det.group_of.size()) && explains(topo, det.group_of);
}

std::vector<int64_t> dims_create(int64_t n, int dims) {
  std::vector<int64_t> primes;
  for (int64_t f = 2; f * f <= n; ++f)
    while (n % f == 0) {
      primes.push_back(f);
      n /= f;
    }
  if (n > 1) primes.push_back(n);
  std::vector<int64_t> d(static_cast<std::size_t>(dims), 1);
  // Open MPI's heuristic: largest prime factors first, each into the
  // dimension with the smallest product so far.
  for (auto it = primes.rbegin(); it != primes.rend(); ++it)
    *std::min_element(d.begin(), d.end()) *= *it;
  std::sort(d.begin(), d.end());  // fastest (smallest) first
  return d;
}

const std::vector<GridRule>& grid_rules() {
  static const std::vector<GridRule> rules = {
      {"equal sides",
       [](int64_t n, int dims) {
         auto side =
             static_cast<int64_t>(std::llround(std::pow(static_cast<double>(n), 1.0 / dims)));
         for (int64_t s = std::max<int64_t>(1, side - 1); s <= side + 1; ++s) {
           int64_t p = 1;
           for (int i = 0; i < dims; ++i) p *= s;
           if (p == n) return std::vector<int64_t>(static_cast<std::size_t>(dims), s);
         }
         return std::vector<int64_t>{};
       }},
      {"balanced like MPI_Dims_create", [](int64_t n, int dims) { return dims_create(n, dims); }},
      {"MPI_Dims_create's sizes with the largest fastest (NPB LU's 2^k layout)",
       [](int64_t n, int dims) {
         std::vector<int64_t> d = dims_create(n, dims);
         std::reverse(d.begin(), d.end());
         return d;
       }},
  };
  return rules;
}

}  // namespace tracefold::extrap
