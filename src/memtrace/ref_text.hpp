// The text line of one reference that `tracefold memreplay --raw` prints
// (docs/memtrace.md "Replay and cache simulation"). Formatting is nearly
// all of that command's work, tens of millions of lines a second, so the
// numbers are written by hand: hexadecimal sixteen digits at a time with
// word arithmetic, decimal two digits a step, every piece stored with
// fixed-size copies into a buffer the caller keeps large enough.
#pragma once

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

struct DecPairs {
  char d[200];
  constexpr DecPairs() : d() {
    for (int i = 0; i < 100; i++) {
      d[2 * i] = static_cast<char>('0' + i / 10);
      d[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
  }
};
inline constexpr DecPairs kDecPairs;

// Writes 16 bytes at p; the first n (1..16) are v's lowest n hex digits,
// most significant first, lowercase.
inline char* hex_digits(char* p, std::uint64_t v, int n) {
  if (n < 16) v <<= 64 - 4 * n;
  // Each 32-bit half: its eight nibbles spread one a byte, lowest first,
  // then byte-swapped so that the most significant digit comes first.
  auto spread = [](std::uint64_t x) {
    x = (x | x << 16) & 0x0000ffff0000ffffULL;
    x = (x | x << 8) & 0x00ff00ff00ff00ffULL;
    x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fULL;
    x = __builtin_bswap64(x);
    // '0' + digit, and 'a' - '0' - 10 more for digits above 9 (those for
    // which digit + 6 carries into bit 4).
    const std::uint64_t letters = ((x + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
    return x + 0x3030303030303030ULL + letters * ('a' - '0' - 10);
  };
  const std::uint64_t hi = spread(v >> 32), lo = spread(v & 0xffffffffULL);
  std::memcpy(p, &hi, 8);
  std::memcpy(p + 8, &lo, 8);
  return p + n;
}

}  // namespace ref_text_detail

// v in hexadecimal without leading zeros ("0" for 0); stores 16 bytes at p.
inline char* put_hex(char* p, std::uint64_t v) {
  const int n = v == 0 ? 1 : (std::bit_width(v) + 3) / 4;
  return ref_text_detail::hex_digits(p, v, n);
}

// v in decimal; stores up to 20 bytes at p.
inline char* put_dec(char* p, std::uint64_t v) {
  using ref_text_detail::kDecPairs;
  if (v < 10) {  // most indices, ordinals and owners
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  // Digits: about log10(2) * bit width, one more when v reaches the next
  // power of ten.
  static constexpr std::uint64_t kPow10[20] = {1ULL,
                                               10ULL,
                                               100ULL,
                                               1000ULL,
                                               10000ULL,
                                               100000ULL,
                                               1000000ULL,
                                               10000000ULL,
                                               100000000ULL,
                                               1000000000ULL,
                                               10000000000ULL,
                                               100000000000ULL,
                                               1000000000000ULL,
                                               10000000000000ULL,
                                               100000000000000ULL,
                                               1000000000000000ULL,
                                               10000000000000000ULL,
                                               100000000000000000ULL,
                                               1000000000000000000ULL,
                                               10000000000000000000ULL};
  const int t = (std::bit_width(v) * 1233) >> 12;
  const int n = t + (v >= kPow10[t] ? 1 : 0);
  char* const end = p + n;
  char* q = end;
  while (v >= 100) {
    q -= 2;
    std::memcpy(q, kDecPairs.d + 2 * (v % 100), 2);
    v /= 100;
  }
  if (v >= 10) {
    std::memcpy(q - 2, kDecPairs.d + 2 * v, 2);
  } else {
    q[-1] = static_cast<char>('0' + v);
  }
  return end;
}

inline char* put_dec_signed(char* p, std::int64_t v) {
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

}  // namespace tracefold::memtrace
