#include "tracefold/ranklist.hpp"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <limits>
#include <map>

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

// Collects intervals in ascending order of lo (overlapping or adjacent ones
// allowed) into the greedy runs of a Ranklist.
class Ranklist::Builder {
 public:
  void add(int32_t lo, int32_t hi) {
    if (open_ && static_cast<int64_t>(lo) <= static_cast<int64_t>(hi_) + 1) {
      hi_ = std::max(hi_, hi);
      return;
    }
    flush();
    lo_ = lo;
    hi_ = hi;
    open_ = true;
  }
  Ranklist finish() {
    flush();
    return std::move(out_);
  }

 private:
  void flush() {
    if (open_) out_.append_interval(lo_, hi_);
    open_ = false;
  }
  Ranklist out_;
  int32_t lo_ = 0, hi_ = 0;
  bool open_ = false;
};

void Ranklist::append_interval(int32_t lo, int32_t hi) {
  size_ += static_cast<std::size_t>(static_cast<int64_t>(hi) - lo + 1);
  const int32_t span = hi - lo;
  if (!runs_.empty()) {
    Run& r = runs_.back();
    if (r.span == span) {
      if (r.count == 1) {
        r.stride = lo - r.lo;
        r.count = 2;
        return;
      }
      if (static_cast<int64_t>(lo) - r.lo == static_cast<int64_t>(r.count) * r.stride) {
        ++r.count;
        return;
      }
    }
  }
  runs_.push_back(Run{lo, span, 0, 1});
}

Ranklist::Ranklist(const std::vector<Interval>& intervals) {
  for (const auto& [lo, hi] : intervals) append_interval(lo, hi);
}

std::size_t Ranklist::interval_count() const {
  std::size_t n = 0;
  for (const Run& r : runs_) n += static_cast<std::size_t>(r.count);
  return n;
}

std::vector<Interval> Ranklist::intervals() const {
  std::vector<Interval> out;
  out.reserve(interval_count());
  for_each_interval([&out](int32_t lo, int32_t hi) { out.emplace_back(lo, hi); });
  return out;
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
  Builder b;
  for (int32_t r : ranks) b.add(r, r);
  return b.finish();
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
  if (empty() || static_cast<int64_t>(rank) > static_cast<int64_t>(last()) + 1) {
    append_interval(rank, rank);
    return;
  }
  if (static_cast<int64_t>(rank) == static_cast<int64_t>(last()) + 1) {
    // The last interval grows: take it off its run and append it again, so
    // the runs stay the greedy ones (it may now join the run before).
    Run& x = runs_.back();
    const auto lo = static_cast<int32_t>(x.lo + static_cast<int64_t>(x.count - 1) * x.stride);
    size_ -= static_cast<std::size_t>(x.span) + 1;
    if (--x.count == 0) {
      runs_.pop_back();
    } else if (x.count == 1) {
      x.stride = 0;
    }
    append_interval(lo, rank);
    return;
  }
  if (contains(rank)) return;
  unite(single(rank));
}

Ranklist& Ranklist::unite(const Ranklist& other) {
  if (other.empty() || this == &other) return *this;
  if (empty()) return *this = other;
  Builder out;
  IntervalCursor a(*this), b(other);
  while (!a.done() || !b.done()) {
    if (b.done() || (!a.done() && (*a).first <= (*b).first)) {
      out.add((*a).first, (*a).second);
      a.next();
    } else {
      out.add((*b).first, (*b).second);
      b.next();
    }
  }
  *this = out.finish();
  return *this;
}

Ranklist Ranklist::united(const Ranklist& other) const {
  Ranklist copy = *this;
  copy.unite(other);
  return copy;
}

bool Ranklist::contains(int32_t rank) const {
  auto next = std::upper_bound(runs_.begin(), runs_.end(), rank,
                               [](int32_t r, const Run& x) { return r < x.lo; });
  if (next == runs_.begin()) return false;
  const Run& x = *std::prev(next);
  const int64_t off = static_cast<int64_t>(rank) - x.lo;
  if (x.count == 1) return off <= x.span;
  const int64_t i = off / x.stride;
  return i < x.count && off - i * x.stride <= x.span;
}

bool Ranklist::intersects(const Ranklist& other) const {
  IntervalCursor a(*this), b(other);
  while (!a.done() && !b.done()) {
    const Interval x = *a, y = *b;
    if (x.second < y.first) {
      a.next();
    } else if (y.second < x.first) {
      b.next();
    } else {
      return true;
    }
  }
  return false;
}

int32_t Ranklist::first() const {
  assert(!empty());
  return runs_.front().lo;
}

int32_t Ranklist::last() const {
  assert(!empty());
  const Run& x = runs_.back();
  return static_cast<int32_t>(x.lo + static_cast<int64_t>(x.count - 1) * x.stride + x.span);
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
  std::vector<Section> next;   // sections of dimension d + 1

  // A chain of starts in ascending order, greedy as in (3) below: the first
  // two members set the step, the chain ends at the first other step.
  struct Chain {
    int32_t start = 0, last = 0, diff = 0, count = 0;
    // Adds `s`; returns false (and leaves the chain) when it does not fit.
    bool add(int32_t s) {
      if (count == 0 || (count >= 2 && s - last != diff)) return false;
      if (count == 1) diff = s - last;
      last = s;
      ++count;
      return true;
    }
  };

  // (1) Maximal runs of >= 2 ranks become 1-D stride-1 sections.  The only run
  // too long for an int32 count is [0, INT32_MAX]; its last rank is split off
  // as an isolated point (it is the largest, so the isolated ones stay sorted).
  // The first round of (3) is done here, as the intervals come, for each
  // length: a column of a large grid is then one chain, not one section per
  // row.
  std::map<int32_t, Chain> by_length;
  auto close_length = [&](int32_t len, const Chain& c) {
    if (c.count == 1)
      out.push_back(Section{c.start, {{len, 1}}});
    else
      next.push_back(Section{c.start, {{c.count, c.diff}, {len, 1}}});
  };
  // (2) Isolated ranks, ascending, greedily grouped into arithmetic
  // progressions of >= 2 members; a trailing leftover is a 0-D section.
  Chain isolated;
  auto add_isolated = [&](int32_t r) {
    if (isolated.add(r)) return;
    if (isolated.count > 0)
      level.push_back(Section{isolated.start, {{isolated.count, isolated.diff}}});
    isolated = Chain{r, r, 0, 1};
  };
  for_each_interval([&](int32_t lo, int32_t hi) {
    if (lo == hi) {
      add_isolated(lo);
      return;
    }
    int64_t len = static_cast<int64_t>(hi) - lo + 1;
    if (len > kMaxRank) len = kMaxRank;
    Chain& c = by_length[static_cast<int32_t>(len)];
    if (!c.add(lo)) {
      if (c.count > 0) close_length(static_cast<int32_t>(len), c);
      c = Chain{lo, lo, 0, 1};
    }
    if (len == kMaxRank && hi != lo + len - 1) add_isolated(hi);
  });
  for (const auto& [len, c] : by_length) close_length(len, c);
  if (isolated.count == 1)
    out.push_back(Section{isolated.start, {}});
  else if (isolated.count > 1)
    level.push_back(Section{isolated.start, {{isolated.count, isolated.diff}}});

  // (3) For d = 1, 2, ...: within each shape, in ascending start order, chain
  // consecutive sections whose starts form an arithmetic progression into a
  // (d+1)-D section.  All sections partition the set, so a chain's union is
  // exactly the new section's rank set (no overlaps are possible).  Each
  // chain at least halves the section count, so the loop is O(n log n).
  // Sections of different shapes never chain, so the 2-D ones made in (1)
  // join those of round d = 1.
  while (!level.empty() || !next.empty()) {
    std::sort(level.begin(), level.end(), [](const Section& a, const Section& b) {
      if (a.dims != b.dims) return a.dims < b.dims;
      return a.start < b.start;
    });
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
    next.clear();
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
  Ranklist::IntervalCursor x(a), y(b);
  // Next not-yet-compared rank in *x / *y.
  int64_t cx = x.done() ? 0 : (*x).first;
  int64_t cy = y.done() ? 0 : (*y).first;
  while (true) {
    if (x.done() || y.done()) {
      if (x.done() && y.done()) return std::strong_ordering::equal;
      return x.done() ? std::strong_ordering::less : std::strong_ordering::greater;
    }
    if (cx != cy) return cx <=> cy;
    // Both sequences continue with the same consecutive run for k+1 ranks.
    const int64_t rx = (*x).second - cx;
    const int64_t ry = (*y).second - cy;
    const int64_t k = std::min(rx, ry);
    if (rx == k) {
      x.next();
      if (!x.done()) cx = (*x).first;
    } else {
      cx += k + 1;
    }
    if (ry == k) {
      y.next();
      if (!y.done()) cy = (*y).first;
    } else {
      cy += k + 1;
    }
  }
}

}  // namespace tracefold
