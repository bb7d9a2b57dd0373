#include "tracefold/ranklist.hpp"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <limits>

namespace tracefold {

namespace {

using Interval = std::pair<int32_t, int32_t>;

constexpr int64_t kMaxRank = std::numeric_limits<int32_t>::max();
// Upper bound on the dimension count accepted by parse().  A section without
// count-1 dimensions has at most 31 dims; this leaves room for degenerate ones.
constexpr int64_t kMaxParseDims = 64;

// Sorts and merges overlapping/adjacent intervals in place.
void normalize(std::vector<Interval>& v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  std::size_t out = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (static_cast<int64_t>(v[i].first) <= static_cast<int64_t>(v[out].second) + 1) {
      v[out].second = std::max(v[out].second, v[i].second);
    } else {
      v[++out] = v[i];
    }
  }
  v.resize(out + 1);
}

// Smallest and largest rank of a section with all counts >= 1, computed
// without overflow.  Returns false (and stops early) as soon as the range
// leaves [0, INT32_MAX]; the extremes only grow outward as dims are added.
bool section_range_ok(int64_t start, const std::vector<std::pair<int32_t, int32_t>>& dims) {
  int64_t lo = start;
  int64_t hi = start;
  if (lo < 0 || hi > kMaxRank) return false;
  for (const auto& [count, stride] : dims) {
    const int64_t delta = static_cast<int64_t>(count - 1) * stride;
    if (delta < 0) {
      lo += delta;
    } else {
      hi += delta;
    }
    if (lo < 0 || hi > kMaxRank) return false;
  }
  return true;
}

// Appends the intervals covering one validated section (all counts >= 1, all
// ranks in range) to `out`.
void expand_section(const Ranklist::Section& s, std::vector<Interval>& out) {
  // Dimensions with count 1 or stride 0 add no new ranks.
  std::vector<std::pair<int32_t, int32_t>> dims;
  dims.reserve(s.dims.size());
  for (const auto& d : s.dims) {
    if (d.first > 1 && d.second != 0) dims.push_back(d);
  }
  // Emit the longest unit-stride dimension as whole intervals.
  int32_t run_count = 1;
  int32_t run_stride = 1;
  std::size_t run_dim = dims.size();
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if ((dims[k].second == 1 || dims[k].second == -1) &&
        (run_dim == dims.size() || dims[k].first > run_count)) {
      run_dim = k;
      run_count = dims[k].first;
      run_stride = dims[k].second;
    }
  }
  if (run_dim != dims.size()) dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(run_dim));

  auto emit = [&](int64_t base) {
    const int64_t span = run_count - 1;
    if (run_stride > 0) {
      out.emplace_back(static_cast<int32_t>(base), static_cast<int32_t>(base + span));
    } else {
      out.emplace_back(static_cast<int32_t>(base - span), static_cast<int32_t>(base));
    }
  };

  // Odometer over the remaining dimensions (innermost = last).
  std::vector<int32_t> idx(dims.size(), 0);
  int64_t base = s.start;
  while (true) {
    emit(base);
    std::size_t k = dims.size();
    while (k > 0) {
      --k;
      base += dims[k].second;
      if (++idx[k] < dims[k].first) break;
      base -= static_cast<int64_t>(dims[k].first) * dims[k].second;
      idx[k] = 0;
      if (k == 0) return;
    }
    if (dims.empty()) return;
  }
}

std::string describe_at(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return "end of input";
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c >= 0x21 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  return buf;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Recursive-descent parser for the section list grammar.
class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  std::vector<Ranklist::Section> run() {
    std::vector<Ranklist::Section> sections;
    skip_ws();
    if (pos_ >= t_.size()) fail("'<'", pos_);
    bool first = true;
    while (true) {
      skip_ws();
      if (pos_ >= t_.size() && !first) break;
      if (pos_ >= t_.size() || t_[pos_] != '<') fail("'<'", pos_);
      const std::size_t section_offset = pos_;
      ++pos_;
      skip_ws();
      if (pos_ < t_.size() && t_[pos_] == '>') {
        // "<>" is the empty list and must stand alone.
        if (!first)
          fail("dimension count (integer 0.." + std::to_string(kMaxParseDims) + ")", pos_);
        ++pos_;
        skip_ws();
        if (pos_ < t_.size()) fail("end of input after \"<>\"", pos_);
        return sections;
      }
      Ranklist::Section s;
      const std::size_t dim_offset = pos_;
      const int64_t dim =
          integer("dimension count (integer 0.." + std::to_string(kMaxParseDims) + ")");
      if (dim < 0 || dim > kMaxParseDims) {
        fail("dimension count (integer 0.." + std::to_string(kMaxParseDims) + ")", dim_offset);
      }
      skip_ws();
      const std::size_t start_offset = pos_;
      const int64_t start = integer("start rank (non-negative integer)");
      if (start < 0) fail("start rank (non-negative integer)", start_offset);
      s.start = static_cast<int32_t>(start);
      for (int64_t d = 1; d <= dim; ++d) {
        const std::string ds = std::to_string(d);
        skip_ws();
        const std::size_t count_offset = pos_;
        const int64_t count = integer("count of dimension " + ds + " (positive integer)");
        if (count < 1) fail("count of dimension " + ds + " (positive integer)", count_offset);
        const int64_t stride = integer("stride of dimension " + ds + " (integer)");
        s.dims.emplace_back(static_cast<int32_t>(count), static_cast<int32_t>(stride));
      }
      skip_ws();
      if (pos_ >= t_.size() || t_[pos_] != '>') fail("'>'", pos_);
      ++pos_;
      if (!section_range_ok(s.start, s.dims)) {
        throw RanklistParseError(
            "expected a section whose ranks all lie in [0, " + std::to_string(kMaxRank) + "]",
            section_offset);
      }
      sections.push_back(std::move(s));
      first = false;
    }
    return sections;
  }

 private:
  [[noreturn]] void fail(const std::string& expected, std::size_t at) const {
    throw RanklistParseError("expected " + expected + ", found " + describe_at(t_, at), at);
  }

  void skip_ws() {
    while (pos_ < t_.size() && is_space(t_[pos_])) ++pos_;
  }

  // Parses an optionally negative int32 after optional whitespace.  The
  // number must be followed by whitespace, '>' or the end of input.
  int64_t integer(const std::string& what) {
    skip_ws();
    const std::size_t begin = pos_;
    bool negative = false;
    if (pos_ < t_.size() && t_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    if (pos_ >= t_.size() || !is_digit(t_[pos_])) fail(what, begin);
    int64_t value = 0;
    while (pos_ < t_.size() && is_digit(t_[pos_])) {
      value = value * 10 + (t_[pos_] - '0');
      if (value > kMaxRank + 1) {
        throw RanklistParseError("expected " + what + " within the 32-bit integer range", begin);
      }
      ++pos_;
    }
    if (negative) value = -value;
    if (value > kMaxRank) {
      throw RanklistParseError("expected " + what + " within the 32-bit integer range", begin);
    }
    if (pos_ < t_.size() && !is_space(t_[pos_]) && t_[pos_] != '>') {
      fail("whitespace or '>' after a number", pos_);
    }
    return value;
  }

  std::string_view t_;
  std::size_t pos_ = 0;
};

}  // namespace

RanklistParseError::RanklistParseError(const std::string& message, std::size_t offset)
    : std::runtime_error("Ranklist::parse: at offset " + std::to_string(offset) + ": " + message),
      offset_(offset) {}

Ranklist::Ranklist(std::vector<Interval> intervals) : intervals_(std::move(intervals)) {
  for (const auto& [lo, hi] : intervals_) {
    size_ += static_cast<std::size_t>(static_cast<int64_t>(hi) - lo + 1);
  }
}

Ranklist Ranklist::single(int32_t rank) {
  if (rank < 0) throw std::invalid_argument("Ranklist::single: negative rank");
  return Ranklist({{rank, rank}});
}

Ranklist Ranklist::range(int32_t first, int32_t count) {
  if (first < 0) throw std::invalid_argument("Ranklist::range: negative first rank");
  if (count < 0) throw std::invalid_argument("Ranklist::range: negative count");
  if (count == 0) return {};
  const int64_t last = static_cast<int64_t>(first) + count - 1;
  if (last > kMaxRank) throw std::invalid_argument("Ranklist::range: rank overflow");
  return Ranklist({{first, static_cast<int32_t>(last)}});
}

Ranklist Ranklist::from_ranks(std::vector<int32_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  if (!ranks.empty() && ranks.front() < 0) {
    throw std::invalid_argument("Ranklist::from_ranks: negative rank");
  }
  std::vector<Interval> v;
  for (int32_t r : ranks) {
    if (!v.empty() && static_cast<int64_t>(r) <= static_cast<int64_t>(v.back().second) + 1) {
      v.back().second = std::max(v.back().second, r);
    } else {
      v.emplace_back(r, r);
    }
  }
  return Ranklist(std::move(v));
}

Ranklist Ranklist::from_sections(const std::vector<Section>& sections) {
  std::vector<Interval> v;
  for (const auto& s : sections) {
    bool empty_section = false;
    for (const auto& d : s.dims) {
      if (d.first < 0) throw std::invalid_argument("Ranklist::from_sections: negative count");
      if (d.first == 0) empty_section = true;
    }
    if (empty_section) continue;
    if (s.start < 0) throw std::invalid_argument("Ranklist::from_sections: negative rank");
    if (!section_range_ok(s.start, s.dims)) {
      throw std::invalid_argument(
          "Ranklist::from_sections: section contains a negative or out-of-range rank");
    }
    expand_section(s, v);
  }
  normalize(v);
  return Ranklist(std::move(v));
}

void Ranklist::insert(int32_t rank) {
  if (rank < 0) throw std::invalid_argument("Ranklist::insert: negative rank");
  auto next = std::upper_bound(intervals_.begin(), intervals_.end(), rank,
                               [](int32_t r, const Interval& iv) { return r < iv.first; });
  const bool has_prev = next != intervals_.begin();
  if (has_prev && std::prev(next)->second >= rank) return;  // already present
  const bool join_prev = has_prev && static_cast<int64_t>(std::prev(next)->second) + 1 == rank;
  const bool join_next = next != intervals_.end() && static_cast<int64_t>(next->first) - 1 == rank;
  if (join_prev && join_next) {
    std::prev(next)->second = next->second;
    intervals_.erase(next);
  } else if (join_prev) {
    std::prev(next)->second = rank;
  } else if (join_next) {
    next->first = rank;
  } else {
    intervals_.insert(next, Interval{rank, rank});
  }
  ++size_;
}

Ranklist& Ranklist::unite(const Ranklist& other) {
  if (other.empty() || this == &other) return *this;
  if (empty()) return *this = other;
  std::vector<Interval> out;
  out.reserve(intervals_.size() + other.intervals_.size());
  auto push = [&out](const Interval& iv) {
    if (!out.empty() &&
        static_cast<int64_t>(iv.first) <= static_cast<int64_t>(out.back().second) + 1) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  };
  std::size_t i = 0;
  std::size_t j = 0;
  const auto& a = intervals_;
  const auto& b = other.intervals_;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first <= b[j].first)) {
      push(a[i++]);
    } else {
      push(b[j++]);
    }
  }
  *this = Ranklist(std::move(out));
  return *this;
}

Ranklist Ranklist::united(const Ranklist& other) const {
  Ranklist copy = *this;
  copy.unite(other);
  return copy;
}

bool Ranklist::contains(int32_t rank) const {
  auto next = std::upper_bound(intervals_.begin(), intervals_.end(), rank,
                               [](int32_t r, const Interval& iv) { return r < iv.first; });
  return next != intervals_.begin() && std::prev(next)->second >= rank;
}

bool Ranklist::intersects(const Ranklist& other) const {
  const auto& a = intervals_;
  const auto& b = other.intervals_;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].second < b[j].first) {
      ++i;
    } else if (b[j].second < a[i].first) {
      ++j;
    } else {
      return true;
    }
  }
  return false;
}

int32_t Ranklist::first() const {
  assert(!empty());
  return intervals_.front().first;
}

int32_t Ranklist::last() const {
  assert(!empty());
  return intervals_.back().second;
}

std::vector<int32_t> Ranklist::to_vector() const {
  std::vector<int32_t> out;
  out.reserve(size_);
  for_each([&out](int32_t r) { out.push_back(r); });
  return out;
}

std::vector<Ranklist::Section> Ranklist::sections() const {
  std::vector<Section> out;
  std::vector<Section> level;  // sections of the current dimension d
  std::vector<int32_t> isolated;

  // (1) Maximal runs of >= 2 ranks become 1-D stride-1 sections.  The only run
  // too long for an int32 count is [0, INT32_MAX]; its last rank is split off
  // as an isolated point (it is the largest, so `isolated` stays sorted).
  for (const auto& [lo, hi] : intervals_) {
    if (lo == hi) {
      isolated.push_back(lo);
      continue;
    }
    int64_t len = static_cast<int64_t>(hi) - lo + 1;
    if (len > kMaxRank) {
      len = kMaxRank;
      isolated.push_back(hi);
    }
    level.push_back(Section{lo, {{static_cast<int32_t>(len), 1}}});
  }

  // (2) Isolated ranks, ascending, greedily grouped into arithmetic
  // progressions of >= 2 members; a trailing leftover is a 0-D section.
  for (std::size_t i = 0; i < isolated.size();) {
    if (i + 1 == isolated.size()) {
      out.push_back(Section{isolated[i], {}});
      break;
    }
    const int32_t diff = isolated[i + 1] - isolated[i];
    std::size_t j = i + 1;
    while (j + 1 < isolated.size() && isolated[j + 1] - isolated[j] == diff) ++j;
    level.push_back(Section{isolated[i], {{static_cast<int32_t>(j - i + 1), diff}}});
    i = j + 1;
  }

  // (3) For d = 1, 2, ...: within each shape, in ascending start order, chain
  // consecutive sections whose starts form an arithmetic progression into a
  // (d+1)-D section.  All sections partition the set, so a chain's union is
  // exactly the new section's rank set (no overlaps are possible).  Each
  // chain at least halves the section count, so the loop is O(n log n).
  while (!level.empty()) {
    std::sort(level.begin(), level.end(), [](const Section& a, const Section& b) {
      if (a.dims != b.dims) return a.dims < b.dims;
      return a.start < b.start;
    });
    std::vector<Section> next;
    for (std::size_t i = 0; i < level.size();) {
      std::size_t j = i;
      int32_t diff = 0;
      if (i + 1 < level.size() && level[i + 1].dims == level[i].dims) {
        diff = level[i + 1].start - level[i].start;
        j = i + 1;
        while (j + 1 < level.size() && level[j + 1].dims == level[j].dims &&
               level[j + 1].start - level[j].start == diff) {
          ++j;
        }
      }
      if (j == i) {
        out.push_back(std::move(level[i]));
      } else {
        Section merged;
        merged.start = level[i].start;
        merged.dims.reserve(level[i].dims.size() + 1);
        merged.dims.emplace_back(static_cast<int32_t>(j - i + 1), diff);
        merged.dims.insert(merged.dims.end(), level[i].dims.begin(), level[i].dims.end());
        next.push_back(std::move(merged));
      }
      i = j + 1;
    }
    level = std::move(next);
  }

  // (4) Sort by (start, dims); starts are distinct since sections are disjoint.
  std::sort(out.begin(), out.end(), [](const Section& a, const Section& b) {
    if (a.start != b.start) return a.start < b.start;
    return a.dims < b.dims;
  });
  return out;
}

std::string Ranklist::to_string() const {
  if (empty()) return "<>";
  std::string s;
  bool first_section = true;
  for (const auto& sec : sections()) {
    if (!first_section) s += ' ';
    first_section = false;
    s += '<';
    s += std::to_string(sec.dims.size());
    s += ' ';
    s += std::to_string(sec.start);
    for (const auto& [count, stride] : sec.dims) {
      s += ' ';
      s += std::to_string(count);
      s += ' ';
      s += std::to_string(stride);
    }
    s += '>';
  }
  return s;
}

Ranklist Ranklist::parse(std::string_view text) {
  return from_sections(Parser(text).run());
}

std::strong_ordering operator<=>(const Ranklist& a, const Ranklist& b) {
  const auto& x = a.intervals_;
  const auto& y = b.intervals_;
  std::size_t i = 0;
  std::size_t j = 0;
  // Next not-yet-compared rank in x[i] / y[j].
  int64_t cx = x.empty() ? 0 : x[0].first;
  int64_t cy = y.empty() ? 0 : y[0].first;
  while (true) {
    if (i == x.size() || j == y.size()) {
      if (i == x.size() && j == y.size()) return std::strong_ordering::equal;
      return i == x.size() ? std::strong_ordering::less : std::strong_ordering::greater;
    }
    if (cx != cy) return cx <=> cy;
    // Both sequences continue with the same consecutive run for k+1 ranks.
    const int64_t rx = x[i].second - cx;
    const int64_t ry = y[j].second - cy;
    const int64_t k = std::min(rx, ry);
    if (rx == k) {
      if (++i < x.size()) cx = x[i].first;
    } else {
      cx += k + 1;
    }
    if (ry == k) {
      if (++j < y.size()) cy = y[j].first;
    } else {
      cy += k + 1;
    }
  }
}

}  // namespace tracefold
