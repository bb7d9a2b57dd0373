// Byte-level pieces the compact form's writer and reader share (format
// versions 3 to 6, docs/format.md "Compact form"): varints, value codes and
// a bounds-checked reader whose errors name the byte, and the histogram
// columns of version 4. Internal to src/core.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracefold/histogram.hpp"
#include "tracefold/limits.hpp"
#include "tracefold/trace.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::compact {

// Value codes take 65 bits (see kSentinels); GCC and Clang have the type.
__extension__ typedef unsigned __int128 u128;

inline constexpr unsigned char kMagic[4] = {0x89, 'T', 'F', 'C'};
inline constexpr std::size_t kHeaderBytes = 5;
/// The oldest compact version this tracefold reads; it writes
/// Trace::kCompactVersion.
inline constexpr int kOldestVersion = 3;
// The four sentinels (kAbsent .. kUndefined) take value codes 0-3, every
// other value zigzag + 4: small numbers stay one byte.
inline constexpr unsigned kSentinels = 4;

inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t z) {
  return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
}

class Out {
 public:
  // Made in a local buffer and appended once, in 64-bit arithmetic where
  // the code fits: a trace's values are written one call each (a memory
  // trace's lists run to millions), and a string append and a 128-bit
  // shift per byte cost more than the rest of the call.
  void uv(u128 v) {
    char buf[19];  // ceil(128 / 7)
    std::size_t n = 0;
    if (static_cast<uint64_t>(v >> 64) == 0) {
      n = put_varint64(buf, static_cast<uint64_t>(v));
    } else {
      for (; v >= 0x80; v >>= 7) buf[n++] = static_cast<char>(static_cast<unsigned char>(v) | 0x80);
      buf[n++] = static_cast<char>(v);
    }
    bytes_.append(buf, n);
  }
  void sv(int64_t v) { uv(zigzag(v)); }
  void value(int64_t v) {
    if (is_sentinel(v))
      uv(static_cast<uint64_t>(v - kAbsent));
    else
      uv(static_cast<u128>(zigzag(v)) + kSentinels);
  }
  /// value() of each of v[0, n), appended in pieces of up to 256 bytes (a
  /// sequence's runs hold most of a trace's values: one append each was a
  /// quarter of the writer's work).
  void values(const int64_t* v, std::size_t n) {
    char buf[256];
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (k > sizeof buf - 19) {
        bytes_.append(buf, k);
        k = 0;
      }
      const int64_t x = v[i];
      const uint64_t z = zigzag(x);
      if (is_sentinel(x) || z > std::numeric_limits<uint64_t>::max() - kSentinels) {
        bytes_.append(buf, k);  // a code of 65 bits, or a sentinel: seldom
        k = 0;
        value(x);
        continue;
      }
      k += put_varint64(buf + k, z + kSentinels);
    }
    bytes_.append(buf, k);
  }
  void str(std::string_view s) {
    uv(s.size());
    bytes_ += s;
  }
  std::string& bytes() { return bytes_; }
  const std::string& bytes() const { return bytes_; }

 private:
  // Writes w's varint at p (up to 10 bytes); returns its length.
  static std::size_t put_varint64(char* p, uint64_t w) {
    std::size_t n = 0;
    for (; w >= 0x80; w >>= 7) p[n++] = static_cast<char>(static_cast<unsigned char>(w) | 0x80);
    p[n++] = static_cast<char>(w);
    return n;
  }
  std::string bytes_;
};

/// What a reader expects next, for its error messages only: a piece of
/// text followed by the rest, joined when a message is made, so a read
/// that succeeds builds no string (the descriptions were most of a
/// decode's allocations). It holds views and a pointer: a What lives no
/// longer than the full expression that makes it, as an argument.
class What {
 public:
  What(const char* s) : s_(s) {}  // NOLINT: a literal is the common case
  What(std::string_view s) : s_(s) {}
  What(const std::string& s) : s_(s) {}
  What(std::string_view head, const What& rest) : s_(head), rest_(&rest) {}
  std::string str() const {
    std::string out(s_);
    for (const What* w = rest_; w; w = w->rest_) out += w->s_;
    return out;
  }

 private:
  std::string_view s_;
  const What* rest_ = nullptr;
};

/// Reads a body, or one column of it; errors name `source` and the byte,
/// counted from the first byte of the body (`base` is where this reader's
/// bytes start in it).
class In {
 public:
  In(std::string_view bytes, const std::string& source, std::size_t base = 0)
      : b_(bytes), source_(source), base_(base) {}

  [[noreturn]] void fail(const std::string& msg) const { fail_at(start_, msg); }
  [[noreturn]] void fail_at(std::size_t at, const std::string& msg) const {
    throw TraceFormatError(source_, TraceFormatError::AtByte{base_ + at, true}, msg);
  }
  std::size_t left() const { return b_.size() - pos_; }
  bool at_end() const { return pos_ == b_.size(); }
  std::size_t start() const { return start_; }

  // One-byte numbers, most of a trace's, inline; longer ones and errors
  // out of line.
  u128 varint(const What& what) {
    start_ = pos_;
    if (pos_ < b_.size() && !(static_cast<unsigned char>(b_[pos_]) & 0x80))
      return static_cast<unsigned char>(b_[pos_++]);
    return varint_long(what);
  }
  uint64_t uv(const What& what, uint64_t max = std::numeric_limits<uint64_t>::max()) {
    const u128 v = varint(what);
    if (v > max) too_large(what, max);
    return static_cast<uint64_t>(v);
  }
  int64_t sv(const What& what) { return unzigzag(uv(what)); }
  int32_t sv32(const What& what);
  int64_t value(const What& what) {
    const u128 c = varint(what);
    if (c < kSentinels) return kAbsent + static_cast<int64_t>(c);
    // Up to 127: a small number, neither a sentinel nor over 64 bits.
    if (c < 0x80) return unzigzag(static_cast<uint64_t>(c - kSentinels));
    return value_long(c, what);
  }
  /// A number of items that follow, each at least one byte long: a count
  /// above the bytes left is corrupt, refused before anything is allocated.
  std::size_t count(const What& what);
  std::string str(const What& what);
  /// The next `n` bytes as they are; fewer left is corrupt.
  std::string_view raw(uint64_t n, const What& what);
  /// The next `n` bytes as a reader of their own (a column), positioned in
  /// this reader's body.
  In sub(std::size_t n);

 private:
  u128 varint_long(const What& what);
  [[noreturn]] void too_large(const What& what, uint64_t max) const;
  int64_t value_long(u128 code, const What& what);

  std::string_view b_;
  const std::string& source_;
  std::size_t base_ = 0;
  std::size_t pos_ = 0;
  std::size_t start_ = 0;
};

/// A histogram after its count, every number written out: version 3's
/// form, and version 4's for a histogram the columns cannot shorten.
Histogram::Parts get_plain_histogram(In& in, uint64_t count);

/// The raw-content dictionary that version 6 bodies are compressed
/// against (src/core/trace_compact_dictionary.cpp). Frozen: a change needs
/// a new format version.
std::string_view dictionary();
/// zstd at `level` against dictionary().
std::string compress_body(std::string_view body, int level);

/// The optional trailing section holding the module and symbol tables
/// (src/core/trace_compact_modules.cpp): nothing is written for empty
/// tables; the reader is called when bytes follow the histograms.
/// From version 6 the strings `known` (the frame table's module names, in
/// order) are the section's first strings without being written.
void put_symbol_tables(Out& o, const SymbolTables& t, const std::vector<std::string>& known);
void get_symbol_tables(In& in, SymbolTables& t, int version, const std::vector<std::string>& known);

/// What a histogram of a timing block holds; each kind has its own columns,
/// as the values of one kind resemble each other.
enum class HistogramKind { kCompute, kComm, kStat };

/// The columns of one kind of histogram, in the order they are stored.
enum HistogramColumn {
  kN,
  kShape,
  kRanks,
  kIndex,
  kCount,
  kMin,
  kTop,
  kRange,
  kRest,
  kPlain,
  kHistogramColumns
};

/// Version 4 stores histograms column by column after the nodes: every
/// histogram of one kind puts each of its numbers into that kind's column
/// for the number, so that the compressor sees counts next to counts and
/// sums next to sums. Numbers that follow from others are not stored
/// (docs/format.md "Histogram columns").
class HistogramColumnsWriter {
 public:
  void add(const Histogram& h, HistogramKind kind);
  /// Appends the columns, each as `N(byte)`.
  void write(Out& out) const;

 private:
  std::array<std::array<Out, kHistogramColumns>, 3> columns_;
};

class HistogramColumnsReader {
 public:
  /// Reads the column lengths and splits the columns off `in`, a body of
  /// compact version `version` (4 or 5: how bin sums are stored).
  HistogramColumnsReader(In& in, int version);
  /// The next histogram of `kind`; errors name the byte in its columns.
  Histogram next(HistogramKind kind, const char* what);
  /// Fails unless every column has been read to its end.
  void finish();

 private:
  std::vector<In> columns_;  // kind-major, in HistogramColumnsWriter's column order
  int version_;
};

/// Version 7: a node that opens a loop and runs once in each of its
/// iterations (execution count always 1) stores each field entry in one
/// of these forms, by the trip counts of that loop for the entry's ranks
/// (src/core/trace_compact_derived.cpp).
enum class DerivedForm : uint64_t {
  kPlain = 0,        ///< the values as they are
  kLastDiffers = 1,  ///< every iteration but a loop execution's last has `other`
  kPerExecution = 2  ///< one value for all iterations of an execution
};
/// Whether node `n`'s field entries carry a DerivedForm.
bool derives_fields(const Node& n);

/// The trip counts of one loop level by ranklist: the one sequence that
/// every rank of a ranklist shares, found by the ranks alone (whatever the
/// sections a ranklist is written in), so writer and reader agree.
class LoopTrips {
 public:
  explicit LoopTrips(const Elastic& iters);
  /// Null when the ranks do not all lie in one entry, or it is lossy.
  const ValueSeq* of(const Ranklist& ranks) const;

 private:
  struct Piece {
    int32_t lo, hi;
    std::size_t entry;
  };
  const Elastic* iters_;
  std::vector<Piece> pieces_;  // sorted, disjoint
};

/// A field entry in a derived form: `other` (kLastDiffers) and the value
/// of each loop execution with a non-zero trip count.
struct DerivedValues {
  DerivedForm form = DerivedForm::kPlain;
  int64_t other = 0;
  ValueSeq seq;
};
/// The most values the derived entries of one file expand to, counted in
/// file order by writer and reader alike (kMaxDerivedValues in limits.hpp):
/// a writer writes later entries as they are, a reader refuses a file that
/// asks for more.
/// `values` in `form` by `trips`, if it has that shape.
std::optional<DerivedValues> derive(const ValueSeq& values, const ValueSeq& trips,
                                    DerivedForm form);
/// `values` in every derived form that fits them by `trips`, in
/// DerivedForm order (one pass over the values for all of them).
std::vector<DerivedValues> derive_all(const ValueSeq& values, const ValueSeq& trips);
/// The values back; nullopt when `d` has more or fewer executions than
/// `trips`, or they would be more than `max_values`.
std::optional<ValueSeq> expand_derived(const DerivedValues& d, const ValueSeq& trips,
                                       uint64_t max_values = kMaxDerivedValues);

}  // namespace tracefold::compact
