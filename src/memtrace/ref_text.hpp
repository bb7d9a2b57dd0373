// The text line of one reference that `tracefold memreplay --raw` prints
// (docs/memtrace.md "Replay and cache simulation"). Formatting is nearly
// all of that command's work, tens of millions of lines a second, so the
// numbers are written by hand: hexadecimal sixteen digits at a time with
// word arithmetic, decimal eight at a time the same way, every piece stored with
// fixed-size copies into a buffer the caller keeps large enough.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "raw_reader.hpp"

namespace tracefold::memtrace {

// The header line of the text form, its version included.
inline constexpr char kRefTextHeader[] =
    "# tracefold memreplay raw 1: thread iaddr index size L|S daddr context kind region "
    "ordinal owner offset\n";

// Longest line format_ref_line writes, plus the slack its fixed-size
// stores may touch past the line's end: a caller flushes its buffer when
// fewer bytes than this are left.
inline constexpr std::size_t kRefTextMax = 256;

namespace ref_text_detail {

// The eight nibbles of x < 2^32 as lowercase hex digits, one a byte, the
// most significant in the lowest byte: spread one a byte, lowest first,
// then byte-swapped.
[[gnu::always_inline]] inline std::uint64_t hex_digits8(std::uint64_t x) {
  x = (x | x << 16) & 0x0000ffff0000ffffULL;
  x = (x | x << 8) & 0x00ff00ff00ff00ffULL;
  x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fULL;
  x = __builtin_bswap64(x);
  // '0' + digit, and 'a' - '0' - 10 more for digits above 9 (those for
  // which digit + 6 carries into bit 4).
  const std::uint64_t letters = ((x + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
  return x + 0x3030303030303030ULL + letters * ('a' - '0' - 10);
}

}  // namespace ref_text_detail

// v in hexadecimal without leading zeros ("0" for 0); stores 16 bytes at p.
[[gnu::always_inline]] inline char* put_hex(char* p, std::uint64_t v) {
  using ref_text_detail::hex_digits8;
  const int n = v == 0 ? 1 : (std::bit_width(v) + 3) / 4;
  // The digits are moved up to the top of the eight or sixteen written,
  // which the caller's next field then partly overwrites.
  if (n <= 8) {
    const std::uint64_t d = hex_digits8(v << (32 - 4 * n));
    std::memcpy(p, &d, 8);
  } else {
    v <<= 64 - 4 * n;
    const std::uint64_t hi = hex_digits8(v >> 32), lo = hex_digits8(v & 0xffffffffULL);
    std::memcpy(p, &hi, 8);
    std::memcpy(p + 8, &lo, 8);
  }
  return p + n;
}

namespace ref_text_detail {

// The eight decimal digits of v < 10^8 (leading zeros included), one a
// byte, the most significant in the lowest byte, as numbers 0-9: v split
// in two four-digit halves, each in a 32-bit lane, then in two-digit
// pairs in 16-bit lanes, then in digits, all lanes at once. Division by
// 100 and by 10 is a multiplication and a shift, exact in these ranges
// (x * 10486 >> 20 = x / 100 for x < 43,699; x * 103 >> 10 = x / 10 for
// x < 179).
[[gnu::always_inline]] inline std::uint64_t dec_digits8(std::uint64_t v) {
  const std::uint64_t x = v / 10000 | (v % 10000) << 32;
  const std::uint64_t hundreds = ((x * 10486) >> 20) & 0x0000007f0000007fULL;
  const std::uint64_t pairs = hundreds | (x - hundreds * 100) << 16;
  const std::uint64_t tens = ((pairs * 103) >> 10) & 0x000f000f000f000fULL;
  return tens | (pairs - tens * 10) << 8;
}

[[gnu::always_inline]] inline char* put_dec8_all(char* p, std::uint64_t v) {
  const std::uint64_t d = dec_digits8(v) + 0x3030303030303030ULL;
  std::memcpy(p, &d, 8);
  return p + 8;
}

// 0 < v < 10^8 without leading zeros; stores 8 bytes.
[[gnu::always_inline]] inline char* put_dec8(char* p, std::uint64_t v) {
  const std::uint64_t d = dec_digits8(v);
  const int zeros = std::countr_zero(d) / 8;  // leading zero digits, in the low bytes
  const std::uint64_t c = (d >> (8 * zeros)) + 0x3030303030303030ULL;
  std::memcpy(p, &c, 8);
  return p + 8 - zeros;
}

}  // namespace ref_text_detail

// v in decimal; stores up to 24 bytes at p.
[[gnu::always_inline]] inline char* put_dec(char* p, std::uint64_t v) {
  using namespace ref_text_detail;
  if (v < 10) {  // most indices, ordinals and owners
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  constexpr std::uint64_t k8 = 100000000ULL;
  if (v < k8) return put_dec8(p, v);
  if (v < k8 * k8) return put_dec8_all(put_dec8(p, v / k8), v % k8);
  const std::uint64_t low = v % (k8 * k8);
  return put_dec8_all(put_dec8_all(put_dec8(p, v / (k8 * k8)), low / k8), low % k8);
}

[[gnu::always_inline]] inline char* put_dec_signed(char* p, std::int64_t v) {
  if (v >= 0) return put_dec(p, static_cast<std::uint64_t>(v));
  *p = '-';
  return put_dec(p + 1, ~static_cast<std::uint64_t>(v) + 1);
}

// One reference as a line of `memreplay --raw`, newline included; stores
// up to kRefTextMax bytes at p and returns the line's end.
inline char* format_ref_line(char* p, std::uint32_t thread, const MemRef& m) {
  // The kind with its trailing space, eight bytes each so that one fixed
  // copy stores it.
  static constexpr char kKinds[4][8] = {"other ", "static ", "stack ", "heap "};
  static constexpr std::uint8_t kKindLen[4] = {6, 7, 6, 5};
  p = put_dec(p, thread);
  *p++ = ' ';
  p = put_hex(p, m.iaddr);
  *p++ = ' ';
  p = put_dec(p, m.index);
  *p++ = ' ';
  p = put_dec(p, m.size);
  std::memcpy(p, m.store ? " S " : " L ", 4);
  p += 3;
  p = put_hex(p, m.daddr);
  *p++ = ' ';
  p = put_dec(p, m.context);
  *p++ = ' ';
  const unsigned k = static_cast<unsigned>(m.kind) & 3;
  std::memcpy(p, kKinds[k], 8);
  p += kKindLen[k];
  p = put_dec(p, m.region);
  *p++ = ' ';
  p = put_dec(p, m.ordinal);
  *p++ = ' ';
  p = put_dec(p, m.owner);
  *p++ = ' ';
  p = put_dec_signed(p, m.offset);
  *p++ = '\n';
  return p;
}

// format_ref_line's lines, mostly copied: a line's text before the data
// address depends only on (thread, instruction, index, size, direction),
// and between the data address and the offset only on (context, kind,
// region, ordinal, owner). Both parts are kept, ready formatted, in small
// direct-mapped tables (a loop's few sites and arrays stay in them), so
// that a line usually costs two table lookups, two fixed-size copies and
// two numbers.
class RefTextWriter {
 public:
  // The line of (thread, m), as format_ref_line writes it; stores up to
  // kRefTextMax bytes at p and returns the line's end.
  [[gnu::always_inline]] char* line(char* p, std::uint32_t thread, const MemRef& m) {
    const std::uint64_t site_key = std::uint64_t{thread} | std::uint64_t{m.size} << 32 |
                                   std::uint64_t{m.index} << 48 | std::uint64_t{m.store} << 56 |
                                   kValid;
    Site& s = sites_[hash(m.iaddr ^ site_key) % kSites];
    if (s.iaddr != m.iaddr || s.key != site_key) fill(s, m.iaddr, site_key, thread, m);
    std::memcpy(p, s.text, sizeof s.text);
    p = put_hex(p + s.len, m.daddr);
    const std::uint64_t k1 = std::uint64_t{m.context} | std::uint64_t{m.region} << 32;
    const std::uint64_t k2 = std::uint64_t{m.ordinal} | std::uint64_t{m.owner} << 32;
    const std::uint8_t kind = static_cast<std::uint8_t>((static_cast<unsigned>(m.kind) & 3) + 1);
    Where& w = wheres_[hash(k1 ^ k2 * 31 ^ kind) % kWheres];
    if (w.k1 != k1 || w.k2 != k2 || w.kind != kind) fill(w, k1, k2, kind, m);
    std::memcpy(p, w.text, sizeof w.text);
    p = put_dec_signed(p + w.len, m.offset);
    *p = '\n';
    return p + 1;
  }

 private:
  static constexpr std::uint64_t kValid = std::uint64_t{1} << 63;
  static constexpr std::size_t kSites = 1024, kWheres = 256;
  static std::size_t hash(std::uint64_t k) {
    return static_cast<std::size_t>((k * 0x9e3779b97f4a7c15ULL) >> 40);
  }
  // "THREAD IADDR INDEX SIZE L|S ": at most 10 + 16 + 3 + 5 + 5 bytes.
  struct Site {
    std::uint64_t iaddr = 0, key = 0;  // key 0: empty
    std::uint8_t len = 0;
    char text[48];
  };
  // " CONTEXT KIND REGION ORDINAL OWNER ": at most 10 + 6 + 3 * 10 + 6 bytes.
  struct Where {
    std::uint64_t k1 = 0, k2 = 0;
    std::uint8_t kind = 0;  // kind + 1; 0: empty
    std::uint8_t len = 0;
    char text[64];
  };
  static void fill(Site& s, std::uint64_t iaddr, std::uint64_t key, std::uint32_t thread,
                   const MemRef& m) {
    char buf[kRefTextMax];
    char* p = put_dec(buf, thread);
    *p++ = ' ';
    p = put_hex(p, iaddr);
    *p++ = ' ';
    p = put_dec(p, m.index);
    *p++ = ' ';
    p = put_dec(p, m.size);
    std::memcpy(p, m.store ? " S " : " L ", 4);
    p += 3;
    s.iaddr = iaddr;
    s.key = key;
    s.len = static_cast<std::uint8_t>(p - buf);
    std::memcpy(s.text, buf, sizeof s.text);
  }
  static void fill(Where& w, std::uint64_t k1, std::uint64_t k2, std::uint8_t kind,
                   const MemRef& m) {
    static constexpr char kKinds[4][8] = {"other", "static", "stack", "heap"};
    char buf[kRefTextMax];
    char* p = buf;
    *p++ = ' ';
    p = put_dec(p, m.context);
    *p++ = ' ';
    const std::size_t n = std::strlen(kKinds[kind - 1]);
    std::memcpy(p, kKinds[kind - 1], n);
    p += n;
    *p++ = ' ';
    p = put_dec(p, m.region);
    *p++ = ' ';
    p = put_dec(p, m.ordinal);
    *p++ = ' ';
    p = put_dec(p, m.owner);
    *p++ = ' ';
    w.k1 = k1;
    w.k2 = k2;
    w.kind = kind;
    w.len = static_cast<std::uint8_t>(p - buf);
    std::memcpy(w.text, buf, sizeof w.text);
  }
  std::array<Site, kSites> sites_{};
  std::array<Where, kWheres> wheres_{};
};

}  // namespace tracefold::memtrace
