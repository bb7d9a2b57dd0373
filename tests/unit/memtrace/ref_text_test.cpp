// memreplay --raw's hand-written formatting against printf on values at
// every digit-count boundary and at random.
#include "ref_text.hpp"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace tracefold::memtrace {
namespace {

std::string by_printf(std::uint32_t t, const MemRef& m) {
  static const char* const kinds[4] = {"other", "static", "stack", "heap"};
  char line[512];
  std::snprintf(line, sizeof line,
                "%" PRIu32 " %" PRIx64 " %u %u %c %" PRIx64 " %" PRIu32 " %s %" PRIu32 " %" PRIu32
                " %" PRIu32 " %" PRId64 "\n",
                t, m.iaddr, unsigned{m.index}, unsigned{m.size}, m.store ? 'S' : 'L', m.daddr,
                m.context, kinds[static_cast<unsigned>(m.kind) & 3], m.region, m.ordinal, m.owner,
                m.offset);
  return line;
}

// Both formatters: the line, once they agree.
std::string by_hand(std::uint32_t t, const MemRef& m) {
  static RefTextWriter writer;  // its tables kept from line to line
  std::vector<char> buf(kRefTextMax), buf2(kRefTextMax);
  char* end = format_ref_line(buf.data(), t, m);
  EXPECT_LE(static_cast<std::size_t>(end - buf.data()) + 16, kRefTextMax);
  char* end2 = writer.line(buf2.data(), t, m);
  std::string line(buf.data(), end);
  EXPECT_EQ(std::string(buf2.data(), end2), line);
  return line;
}

// 0, 1, 2^k - 1, 2^k, 10^k - 1, 10^k and their neighbours, all widths.
std::vector<std::uint64_t> edges() {
  std::vector<std::uint64_t> v = {0, 1, 9, 10, 11, 99, 100, 101, ~0ULL, ~0ULL - 1};
  for (int k = 1; k < 64; k++) {
    const std::uint64_t x = std::uint64_t{1} << k;
    v.insert(v.end(), {x - 1, x, x + 1});
  }
  std::uint64_t p = 1;
  for (int k = 1; k < 20; k++) {
    p *= 10;
    v.insert(v.end(), {p - 1, p, p + 1});
  }
  return v;
}

TEST(RefText, EdgeValuesAsPrintfWritesThem) {
  for (std::uint64_t x : edges()) {
    MemRef m;
    m.iaddr = x;
    m.daddr = ~x;
    m.context = static_cast<std::uint32_t>(x);
    m.region = static_cast<std::uint32_t>(x >> 32);
    m.ordinal = static_cast<std::uint32_t>(x * 7);
    m.owner = static_cast<std::uint32_t>(x % 1000);
    m.offset = static_cast<std::int64_t>(x);
    m.size = static_cast<std::uint16_t>(x);
    m.index = static_cast<std::uint8_t>(x);
    m.store = x & 1;
    m.kind = static_cast<AddrKind>(x & 3);
    ASSERT_EQ(by_hand(static_cast<std::uint32_t>(x), m),
              by_printf(static_cast<std::uint32_t>(x), m))
        << x;
    m.offset = -m.offset;
    ASSERT_EQ(by_hand(3, m), by_printf(3, m)) << x;
  }
}

TEST(RefText, RandomValuesAsPrintfWritesThem) {
  std::mt19937_64 rng(33);
  for (int i = 0; i < 200000; i++) {
    // Random widths: a random value shifted right by a random amount.
    auto any = [&] { return rng() >> (rng() % 64); };
    MemRef m;
    m.iaddr = any();
    m.daddr = any();
    m.context = static_cast<std::uint32_t>(any());
    m.region = static_cast<std::uint32_t>(any());
    m.ordinal = static_cast<std::uint32_t>(any());
    m.owner = static_cast<std::uint32_t>(any());
    m.offset = static_cast<std::int64_t>(any()) * (rng() & 1 ? -1 : 1);
    m.size = static_cast<std::uint16_t>(any());
    m.index = static_cast<std::uint8_t>(any());
    m.store = rng() & 1;
    m.kind = static_cast<AddrKind>(rng() & 3);
    const auto t = static_cast<std::uint32_t>(any());
    ASSERT_EQ(by_hand(t, m), by_printf(t, m));
  }
}

// Lines whose parts repeat, as a loop's do, with the tables' slots
// reused by other keys in between.
TEST(RefText, RepeatedPartsAsPrintfWritesThem) {
  std::mt19937_64 rng(66);
  std::vector<MemRef> sites(3000);
  for (MemRef& m : sites) {
    m.iaddr = 0x401000 + rng() % 4096;
    m.index = static_cast<std::uint8_t>(rng() % 3);
    m.size = static_cast<std::uint16_t>(1 << rng() % 4);
    m.store = rng() & 1;
    m.context = static_cast<std::uint32_t>(rng() % 50);
    m.kind = static_cast<AddrKind>(rng() & 3);
    m.region = static_cast<std::uint32_t>(rng() % 20);
    m.ordinal = static_cast<std::uint32_t>(rng() % 12);
    m.owner = static_cast<std::uint32_t>(rng() % 3);
  }
  for (int i = 0; i < 300000; i++) {
    MemRef m = sites[rng() % (i % 7 == 0 ? sites.size() : 5)];
    if (rng() % 5 == 0) m = sites[(rng() % 4) * 100];
    m.daddr = rng() >> 20;
    m.offset = static_cast<std::int64_t>(rng() % 100000) - 5000;
    const auto t = static_cast<std::uint32_t>(rng() % 4);
    ASSERT_EQ(by_hand(t, m), by_printf(t, m)) << i;
  }
}

TEST(RefText, MostNegativeOffset) {
  MemRef m;
  m.offset = INT64_MIN;
  EXPECT_EQ(by_hand(0, m), by_printf(0, m));
}

}  // namespace
}  // namespace tracefold::memtrace
