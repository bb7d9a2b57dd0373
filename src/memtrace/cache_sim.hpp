// Set-associative LRU cache simulator for `tracefold memreplay --cache`.
//
// Model (the one cachegrind uses, so that the two can be compared): every
// level is write-allocate with LRU replacement, loads and stores alike; an
// access that spans several lines touches each of them and misses a level
// when any of them misses; a level is looked up, with the whole access, only
// when the level above missed. Levels are non-inclusive: a line evicted
// from a lower level stays in the levels above, and nothing is written back.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracefold::memtrace {

// A malformed --cache specification; what() names the offending part.
class CacheSpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct CacheGeometry {
  std::string name;         // as given, e.g. "L1"
  std::uint64_t size = 0;   // bytes
  std::uint32_t assoc = 0;  // ways per set
  std::uint32_t line = 0;   // bytes per line
  std::uint64_t sets() const { return size / (std::uint64_t{assoc} * line); }
  std::string describe() const;  // "L1 32 KiB, 8-way, 64-byte lines, 64 sets"
};

// Parses "NAME=SIZE:ASSOC:LINE[,NAME=SIZE:ASSOC:LINE...]", first level
// first. SIZE takes a K, M or G suffix (powers of 1024). Line size and set
// count must be powers of two and SIZE a multiple of ASSOC x LINE; names
// must differ. Throws CacheSpecError.
std::vector<CacheGeometry> parse_cache_spec(const std::string& spec);

// One cache level.
class Cache {
 public:
  explicit Cache(const CacheGeometry& g);

  // Touches every line of [addr, addr + size) (size >= 1), each becoming
  // the most recently used of its set; true if any of them was absent.
  bool access(std::uint64_t addr, std::uint32_t size) {
    const std::uint64_t first = addr >> line_bits_;
    const std::uint64_t last = (addr + size - 1) >> line_bits_;
    if (first == last) [[likely]]
      return touch(first);
    bool miss = touch(first);
    for (std::uint64_t l = first + 1; l <= last; l++) miss |= touch(l);
    return miss;
  }

  // Touches line number `line` (address >> log2(line size)); true on a miss.
  // One pass from the front both looks for the line and moves the lines it
  // passes one way back, so a hit near the front (the usual case: streams
  // that share a set take turns) costs a few loads and stores, with no
  // second loop and no call to memmove.
  bool touch(std::uint64_t line) {
    std::uint64_t* set = &tags_[(line & set_mask_) * assoc_];
    std::uint64_t carry = set[0];
    if (carry == line) return false;  // the set's last line again
    set[0] = line;
    for (std::uint32_t i = 1; i < assoc_; i++) {
      const std::uint64_t here = set[i];
      set[i] = carry;
      if (here == line) return false;
      carry = here;
    }
    return true;  // carry, the least recently used line, fell out
  }

  // The lines of set `s`, most recently used first (kEmpty: an unused way).
  std::vector<std::uint64_t> set_lines(std::uint64_t s) const;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  const CacheGeometry& geometry() const { return g_; }

 private:
  CacheGeometry g_;
  unsigned line_bits_ = 0;
  std::uint64_t set_mask_ = 0;
  std::uint32_t assoc_ = 0;
  std::vector<std::uint64_t> tags_;  // sets x assoc line numbers, each set MRU first
};

// The levels, first to last, for `threads` threads of which each has its
// own copy of the first `private_levels` levels (a core's private caches)
// and all share the rest.
class CacheHierarchy {
 public:
  CacheHierarchy(const std::vector<CacheGeometry>& levels, std::uint32_t threads,
                 std::uint32_t private_levels = 0);
  // chains_ points into private_ and shared_: a move keeps their elements
  // where they are, a copy would not.
  CacheHierarchy(const CacheHierarchy&) = delete;
  CacheHierarchy& operator=(const CacheHierarchy&) = delete;
  CacheHierarchy(CacheHierarchy&&) = default;
  CacheHierarchy& operator=(CacheHierarchy&&) = default;

  std::size_t levels() const { return levels_.size(); }

  // Runs one access of thread `thread` through the levels; returns the
  // level that held it (0 = the first), levels() when it went to memory.
  // Levels [0, result) missed.
  std::size_t access(std::uint32_t thread, std::uint64_t addr, std::uint32_t size) {
    const std::size_t n = nlevels_;
    Cache* const* chain = chains_.data() + thread * n;
    for (std::size_t k = 0; k < n; k++)
      if (!chain[k]->access(addr, size)) return k;
    return n;
  }

 private:
  std::vector<CacheGeometry> levels_;
  std::uint32_t threads_ = 0;
  std::uint32_t private_levels_ = 0;
  std::vector<Cache> private_;  // thread-major
  std::vector<Cache> shared_;
  // Each thread's levels in order, thread-major: one loop per access
  // instead of one over the private levels and one over the shared.
  std::vector<Cache*> chains_;
  std::size_t nlevels_ = 0;  // levels_.size(), kept apart to spare the access a division
};

}  // namespace tracefold::memtrace
