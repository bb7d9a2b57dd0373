#include "cache_sim.hpp"

#include <algorithm>
#include <bit>
#include <charconv>

namespace tracefold::memtrace {
namespace {

[[noreturn]] void bad(const std::string& part, const std::string& why) {
  throw CacheSpecError("--cache: '" + part + "': " + why);
}

// A decimal count with an optional K/M/G suffix (powers of 1024).
std::uint64_t parse_quantity(const std::string& level, const std::string& what,
                             const std::string& text, bool suffix) {
  std::uint64_t v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p == b) bad(level, what + " '" + text + "' is not a number");
  unsigned shift = 0;
  if (p != e && suffix) {
    switch (*p) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      default:
        bad(level, what + " '" + text + "': unknown suffix (K, M or G)");
    }
    p++;
  }
  if (p != e) bad(level, what + " '" + text + "' has trailing characters");
  if (v == 0) bad(level, what + " must not be 0");
  if (v > (std::uint64_t{1} << 40 >> shift)) bad(level, what + " '" + text + "' is too large");
  return v << shift;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    std::size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) return out;
    at = next + 1;
  }
}

std::string human(std::uint64_t bytes) {
  if (bytes % (1u << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

std::string CacheGeometry::describe() const {
  return name + " " + human(size) + ", " + std::to_string(assoc) + "-way, " + std::to_string(line) +
         "-byte lines, " + std::to_string(sets()) + " sets";
}

std::vector<CacheGeometry> parse_cache_spec(const std::string& spec) {
  if (spec.empty()) bad(spec, "empty; e.g. L1=32K:8:64,L2=1M:16:64 (size:associativity:line)");
  std::vector<CacheGeometry> out;
  for (const std::string& level : split(spec, ',')) {
    const std::size_t eq = level.find('=');
    if (eq == std::string::npos || eq == 0)
      bad(level, "expected NAME=SIZE:ASSOC:LINE, e.g. L1=32K:8:64");
    CacheGeometry g;
    g.name = level.substr(0, eq);
    const auto fields = split(level.substr(eq + 1), ':');
    if (fields.size() != 3)
      bad(level, "expected SIZE:ASSOC:LINE after '=' (" + std::to_string(fields.size()) + " field" +
                     (fields.size() == 1 ? "" : "s") + ")");
    g.size = parse_quantity(level, "size", fields[0], true);
    const std::uint64_t assoc = parse_quantity(level, "associativity", fields[1], false);
    const std::uint64_t line = parse_quantity(level, "line size", fields[2], false);
    if (assoc > 1024) bad(level, "associativity " + fields[1] + " is above 1024");
    if (!std::has_single_bit(line)) bad(level, "line size " + fields[2] + " is not a power of two");
    if (g.size % (assoc * line) != 0)
      bad(level, "size " + fields[0] + " is not a multiple of associativity x line size (" +
                     std::to_string(assoc * line) + " bytes)");
    g.assoc = static_cast<std::uint32_t>(assoc);
    g.line = static_cast<std::uint32_t>(line);
    if (!std::has_single_bit(g.sets()))
      bad(level, std::to_string(g.sets()) +
                     " sets (size / (associativity x line size)) is not a "
                     "power of two");
    // The simulator keeps a tag per line: 2^28 lines (16 GiB of 64-byte
    // lines) is beyond any cache and still fits in memory as tags.
    if (g.size / line > (std::uint64_t{1} << 28))
      bad(level, "size " + fields[0] + " holds " + std::to_string(g.size / line) +
                     " lines, more than the simulator's 268435456");
    for (const auto& o : out)
      if (o.name == g.name) bad(level, "the level name " + g.name + " appears twice");
    out.push_back(g);
  }
  return out;
}

Cache::Cache(const CacheGeometry& g)
    : g_(g),
      line_bits_(static_cast<unsigned>(std::countr_zero(std::uint64_t{g.line}))),
      set_mask_(g.sets() - 1),
      assoc_(g.assoc),
      tags_(g.sets() * g.assoc, kEmpty) {}

std::vector<std::uint64_t> Cache::set_lines(std::uint64_t s) const {
  auto b = tags_.begin() + static_cast<std::ptrdiff_t>((s & set_mask_) * assoc_);
  return {b, b + assoc_};
}

CacheHierarchy::CacheHierarchy(const std::vector<CacheGeometry>& levels, std::uint32_t threads,
                               std::uint32_t private_levels)
    : levels_(levels), threads_(threads), private_levels_(private_levels), nlevels_(levels.size()) {
  if (private_levels > levels.size())
    throw CacheSpecError("--private " + std::to_string(private_levels) + ": only " +
                         std::to_string(levels.size()) + " cache levels given");
  for (std::uint32_t t = 0; t < threads; t++)
    for (std::uint32_t k = 0; k < private_levels; k++) private_.emplace_back(levels[k]);
  for (std::size_t k = private_levels; k < levels.size(); k++) shared_.emplace_back(levels[k]);
  for (std::uint32_t t = 0; t < threads; t++) {
    for (std::uint32_t k = 0; k < private_levels; k++)
      chains_.push_back(&private_[t * private_levels + k]);
    for (Cache& c : shared_) chains_.push_back(&c);
  }
}

}  // namespace tracefold::memtrace
