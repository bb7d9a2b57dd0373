// The compact form's reader primitives and the histogram columns of
// versions 4 and 5 (docs/format.md "Histogram columns").
//
// Why columns, and why these numbers: in a trace with timing, histograms
// are most of the bytes, and the numbers that grow with the number of
// samples (bin counts and sums) are information that an exact histogram
// must keep. What version 3 also stored was redundant: the overall count,
// sum, minimum and maximum repeat the bins', a bin's index follows from its
// values, a bin of one or two samples has its sum given by its minimum and
// maximum. Of the rest, minimums and maximums of well-filled bins lie near
// the bin's bounds, so they are stored as distances from them, and the sum
// as what it exceeds the smallest sum the minimum and maximum allow.
#include "trace_compact_codec.hpp"

#include <algorithm>

namespace tracefold::compact {

u128 In::varint_long(const What& what) {
  u128 v = 0;
  for (int shift = 0;; shift += 7) {
    if (pos_ >= b_.size()) fail("unexpected end of data, expected " + what.str());
    if (shift > 63) fail("a number longer than 10 bytes, expected " + what.str());
    const auto c = static_cast<unsigned char>(b_[pos_++]);
    v |= static_cast<u128>(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
}

void In::too_large(const What& what, uint64_t max) const {
  fail(what.str() + " is too large (at most " + std::to_string(max) + ")");
}

int32_t In::sv32(const What& what) {
  const int64_t v = sv(what);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    fail(what.str() + " " + std::to_string(v) + " does not fit 32 bits");
  return static_cast<int32_t>(v);
}

int64_t In::value_long(u128 c, const What& what) {
  const u128 z = c - kSentinels;
  if (z > std::numeric_limits<uint64_t>::max()) fail(what.str() + " does not fit 64 bits");
  const int64_t v = unzigzag(static_cast<uint64_t>(z));
  if (is_sentinel(v)) fail(what.str() + ": a sentinel written as a number");
  return v;
}

std::size_t In::count(const What& what) {
  const uint64_t n = uv(What("the number of ", what));
  if (n > left())
    fail("the number of " + what.str() + " is " + std::to_string(n) + " but only " +
         std::to_string(left()) + " bytes follow");
  return static_cast<std::size_t>(n);
}

std::string In::str(const What& what) {
  const std::size_t n = count(What("bytes of ", what));
  std::string s(b_.substr(pos_, n));
  pos_ += n;
  return s;
}

std::string_view In::raw(uint64_t n, const What& what) {
  start_ = pos_;
  if (n > left())
    fail(what.str() + " of " + std::to_string(n) + " bytes, but only " + std::to_string(left()) +
         " bytes follow");
  const std::string_view s = b_.substr(pos_, static_cast<std::size_t>(n));
  pos_ += static_cast<std::size_t>(n);
  return s;
}

In In::sub(std::size_t n) {
  In part(b_.substr(pos_, n), source_, base_ + pos_);
  pos_ += n;
  return part;
}

// ------------------------------------------------------- histogram columns

namespace {

constexpr int kKinds = 3;
constexpr int kColumns = kHistogramColumns;
constexpr const char* kKindNames[kKinds] = {"compute", "communication", "statistic"};
constexpr const char* kColumnNames[kColumns] = {
    "count",       "shape",   "rank",      "bin index", "bin count",
    "bin minimum", "bin top", "bin range", "bin sum",   "plain histogram"};

// The values log bin `index` (of a bin `span` log bins wide) can hold.
int64_t bin_low(int index) {
  return index == 0 ? 0 : int64_t{1} << index;
}
int64_t bin_high(int index, int span) {
  return index + span >= 63 ? std::numeric_limits<int64_t>::max()
                            : (int64_t{1} << (index + span)) - 1;
}
// Two's-complement arithmetic, as the sums are kept: wraps instead of
// overflowing, and is undone exactly by the reader.
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(uint64_t a, int64_t b) {
  return static_cast<int64_t>(a * static_cast<uint64_t>(b));
}
// What a bin's sum exceeds the smallest sum its count of values from min to
// max can have, (count-1)*min + max: the bin sum column (for count >= 3).
uint64_t sum_rest(const Histogram::Bin& b) {
  return static_cast<uint64_t>(b.sum) - static_cast<uint64_t>(wrap_mul(b.count - 1, b.min)) -
         static_cast<uint64_t>(b.max);
}

// Whether the short form holds `p` exactly: everything it leaves out
// follows from what it keeps. Histograms made by adding values and merging
// always do; one read from a hand-edited text may not, and is then stored
// plainly.
bool regular(const Histogram::Parts& p) {
  if (p.bins.empty() || p.bins.size() > Histogram::kBins || p.span_log > 6) return false;
  const int span = 1 << p.span_log;
  uint64_t total = 0;
  int64_t sum = 0;
  int last = -1;
  for (const auto& b : p.bins) {
    if (b.index <= last || b.index >= Histogram::kBins || b.index % span != 0) return false;
    last = b.index;
    if (b.count == 0 || b.count > p.count - total) return false;
    total += b.count;
    if (b.min < bin_low(b.index) || b.max < b.min || b.max > bin_high(b.index, span)) return false;
    if (b.count == 1 && (b.max != b.min || b.sum != b.min)) return false;
    if (b.count == 2 && b.sum != wrap_add(b.min, b.max)) return false;
    sum = wrap_add(sum, b.sum);
  }
  return total == p.count && sum == p.sum && p.min == p.bins.front().min &&
         p.max == p.bins.back().max;
}

// A bin's sum (count >= 3), version 5: a sum of count * m (settled timing,
// Histogram::round_bin_means) as 2 * (m - min), whose size does not grow
// with the count; any other as 2 * sum_rest + 1.
void put_bin_sum(Out& o, const Histogram::Bin& b) {
  const auto c = static_cast<int64_t>(b.count);
  if (b.sum >= 0 && c > 0 && b.sum % c == 0 && b.sum / c >= b.min && b.sum / c <= b.max)
    o.uv(static_cast<u128>(b.sum / c - b.min) * 2);
  else
    o.uv(static_cast<u128>(sum_rest(b)) * 2 + 1);
}

// Inverse of put_bin_sum for `version` (4: sum_rest alone), once the bin's
// count, min and max are known.
int64_t get_bin_sum(In& in, const Histogram::Bin& b, int version) {
  u128 v = version >= 5 ? in.varint("a bin sum") : in.uv("a bin sum");
  if (version >= 5) {
    const bool rest = v & 1;
    v >>= 1;
    if (!rest) {
      if (v > static_cast<uint64_t>(b.max - b.min)) in.fail("a bin mean beyond the bin's maximum");
      return wrap_mul(b.count, b.min + static_cast<int64_t>(v));
    }
    if (v > std::numeric_limits<uint64_t>::max()) in.fail("a bin sum does not fit 64 bits");
  }
  return static_cast<int64_t>(static_cast<uint64_t>(v) +
                              static_cast<uint64_t>(wrap_mul(b.count - 1, b.min)) +
                              static_cast<uint64_t>(b.max));
}

void put_plain(Out& o, const Histogram::Parts& p) {
  o.sv(p.sum);
  o.sv(p.min);
  o.sv(p.min_rank);
  o.sv(p.max);
  o.sv(p.max_rank);
  o.uv(p.span_log);
  o.uv(p.bins.size());
  for (const auto& b : p.bins) {
    o.uv(b.index);
    o.uv(b.count);
    o.sv(b.min);
    o.sv(b.max);
    o.sv(b.sum);
  }
}

}  // namespace

Histogram::Parts get_plain_histogram(In& in, uint64_t count) {
  Histogram::Parts p;
  p.count = count;
  p.sum = in.sv("a histogram sum");
  p.min = in.sv("a histogram minimum");
  p.min_rank = in.sv32("a rank");
  p.max = in.sv("a histogram maximum");
  p.max_rank = in.sv32("a rank");
  p.span_log = static_cast<uint8_t>(in.uv("a histogram span", 6));
  p.bins.resize(in.count("histogram bins"));
  for (auto& b : p.bins) {
    b.index = static_cast<uint8_t>(in.uv("a bin index", Histogram::kBins - 1));
    b.count = in.uv("a bin count");
    b.min = in.sv("a bin minimum");
    b.max = in.sv("a bin maximum");
    b.sum = in.sv("a bin sum");
  }
  return p;
}

void HistogramColumnsWriter::add(const Histogram& h, HistogramKind kind) {
  auto& col = columns_[static_cast<int>(kind)];
  const Histogram::Parts p = h.parts();
  col[kN].uv(p.count);
  if (p.count == 0) return;
  if (!regular(p)) {
    col[kShape].uv(1);
    put_plain(col[kPlain], p);
    return;
  }
  col[kShape].uv(((p.bins.size() - 1) * 7 + p.span_log) * 2);
  col[kRanks].sv(p.min_rank);
  col[kRanks].sv(p.max_rank);
  int prev = -1;
  for (std::size_t i = 0; i < p.bins.size(); ++i) {
    const auto& b = p.bins[i];
    const bool last = i + 1 == p.bins.size();
    col[kIndex].uv(prev < 0 ? b.index >> p.span_log : ((b.index - prev) >> p.span_log) - 1);
    prev = b.index;
    // The first bin, the bulk of the samples in most histograms, has the
    // rest of n: the counts stored are the smaller ones.
    if (i > 0) col[kCount].uv(b.count);
    col[kMin].uv(static_cast<uint64_t>(b.min - bin_low(b.index)));
    // A bin below another is filled towards its top; the last one's maximum
    // is an outlier, nearer its minimum than its bin's top.
    if (b.count >= 2) {
      if (last)
        col[kRange].uv(static_cast<uint64_t>(b.max - b.min));
      else
        col[kTop].uv(static_cast<uint64_t>(bin_high(b.index, 1 << p.span_log) - b.max));
    }
    if (b.count >= 3) put_bin_sum(col[kRest], b);
  }
}

void HistogramColumnsWriter::write(Out& out) const {
  // Which columns are not empty, then those: a trace without timing pays
  // one byte.
  uint64_t present = 0;
  for (int k = 0; k < kKinds; ++k)
    for (int c = 0; c < kColumns; ++c)
      if (!columns_[k][c].bytes().empty()) present |= uint64_t{1} << (k * kColumns + c);
  out.uv(present);
  for (int k = 0; k < kKinds; ++k) {
    for (int c = 0; c < kColumns; ++c) {
      const std::string& bytes = columns_[k][c].bytes();
      if (bytes.empty()) continue;
      out.uv(bytes.size());
      out.bytes() += bytes;
    }
  }
}

HistogramColumnsReader::HistogramColumnsReader(In& in, int version) : version_(version) {
  const uint64_t present =
      in.uv("the histogram columns present", (uint64_t{1} << (kKinds * kColumns)) - 1);
  columns_.reserve(kKinds * kColumns);
  for (int i = 0; i < kKinds * kColumns; ++i) {
    std::size_t n = 0;
    if (present >> i & 1) {
      n = in.count(What("bytes of the ",
                        What(kKindNames[i / kColumns],
                             What(" ", What(kColumnNames[i % kColumns], What(" column"))))));
      if (n == 0) in.fail("a histogram column marked present is empty");
    }
    columns_.push_back(in.sub(n));
  }
}

Histogram HistogramColumnsReader::next(HistogramKind kind, const char* what) {
  In* col = &columns_[static_cast<std::size_t>(kind) * kColumns];
  In& n_col = col[kN];
  Histogram::Parts p;
  p.count = n_col.uv(What("the count of a ", What(what, What(" histogram"))));
  In* at = &n_col;
  if (p.count != 0) {
    In& shape_col = col[kShape];
    const uint64_t shape = shape_col.uv("a histogram shape", (Histogram::kBins * 7 - 1) * 2);
    at = &shape_col;
    if (shape & 1) {
      if (shape != 1) shape_col.fail("a plain histogram's shape must be 1");
      at = &col[kPlain];
      p = get_plain_histogram(col[kPlain], p.count);
    } else {
      const std::size_t nbins = shape / 2 / 7 + 1;
      p.span_log = static_cast<uint8_t>(shape / 2 % 7);
      const int span = 1 << p.span_log;
      p.min_rank = col[kRanks].sv32("a rank");
      p.max_rank = col[kRanks].sv32("a rank");
      p.bins.resize(nbins);
      uint64_t rest = 0;
      for (std::size_t i = 1; i < nbins; ++i) {
        p.bins[i].count = col[kCount].uv("a bin count");
        if (p.bins[i].count == 0 || p.bins[i].count >= p.count - rest)
          col[kCount].fail("bin counts do not add up to the histogram's count");
        rest += p.bins[i].count;
      }
      p.bins[0].count = p.count - rest;
      int next_index = 0;
      for (std::size_t i = 0; i < nbins; ++i) {
        auto& b = p.bins[i];
        const bool last = i + 1 == nbins;
        const uint64_t index = static_cast<uint64_t>(next_index) +
                               (col[kIndex].uv("a bin index", Histogram::kBins) << p.span_log);
        if (index >= Histogram::kBins) col[kIndex].fail("bin index beyond 63");
        b.index = static_cast<uint8_t>(index);
        next_index = b.index + span;
        const int64_t low = bin_low(b.index), high = bin_high(b.index, span);
        b.min = low + static_cast<int64_t>(
                          col[kMin].uv("a bin minimum", static_cast<uint64_t>(high - low)));
        b.max = b.min;
        if (b.count >= 2) {
          if (last)
            b.max += static_cast<int64_t>(
                col[kRange].uv("a bin range", static_cast<uint64_t>(high - b.min)));
          else
            b.max = high - static_cast<int64_t>(
                               col[kTop].uv("a bin top", static_cast<uint64_t>(high - b.min)));
        }
        if (b.count == 1)
          b.sum = b.min;
        else if (b.count == 2)
          b.sum = wrap_add(b.min, b.max);
        else
          b.sum = get_bin_sum(col[kRest], b, version_);
        p.sum = wrap_add(p.sum, b.sum);
      }
      p.min = p.bins.front().min;
      p.max = p.bins.back().max;
    }
  }
  try {
    return Histogram::from_parts(std::move(p));
  } catch (const std::exception& ex) {
    at->fail(std::string("bad ") + what + " histogram: " + ex.what());
  }
}

void HistogramColumnsReader::finish() {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].at_end()) continue;
    columns_[i].uv("nothing");
    columns_[i].fail(std::string("unexpected data at the end of the ") + kKindNames[i / kColumns] +
                     " " + kColumnNames[i % kColumns] + " column");
  }
}

}  // namespace tracefold::compact
