// The per-key call counts of the thread order (thread_order.cpp): a
// thread's own, and the rank's once a second thread calls MPI.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>

#include "tracefold/thread_order.hpp"

namespace tracefold::record {

// A count per OrderKey. Every point-to-point call of a program that asks
// for MPI_THREAD_SERIALIZED or MULTIPLE bumps one or two of them, and
// std::map lookups of a four-word key were a sixth of that noting's cost
// (scripts/bench-thread-order.sh): a small direct-mapped cache of count
// addresses in front of the map answers the keys a loop reuses (a halo's
// few peers and tags) with one hash and one compare. The map stays the store: its nodes never move,
// so a cached address stays valid, and nothing is ever erased (a key's count must outlive any gap
// in its use).
class OrderCounts {
 public:
  OrderCounts() = default;
  // A copy takes the counts, not the cache: its addresses are the source's.
  OrderCounts(const OrderCounts& other) : map_(other.map_) {}
  OrderCounts& operator=(const OrderCounts& other) {
    if (this != &other) {
      map_ = other.map_;
      slots_ = {};
    }
    return *this;
  }

  // The count of `key`, 0 when first asked for.
  [[gnu::always_inline]] uint64_t& operator[](const OrderKey& key) {
    Slot& s = slots_[slot_of(key)];
    if (s.count && s.key[0] == key[0] && s.key[1] == key[1] && s.key[2] == key[2] &&
        s.key[3] == key[3]) [[likely]]
      return *s.count;
    return fill(s, key);
  }

  const std::map<OrderKey, uint64_t>& map() const { return map_; }

 private:
  struct Slot {
    OrderKey key{};
    uint64_t* count = nullptr;  // null: empty
  };
  // A power of two: a program's keys in one loop are its peers x tags x
  // directions, a handful for stencils; more only cost a map lookup.
  static constexpr unsigned kSlotBits = 4;

  // Multiplicative hashing: the top bits of the sum of the words each
  // times an odd constant, so peers, tags and directions all move the slot.
  static std::size_t slot_of(const OrderKey& k) {
    const uint64_t h =
        uint64_t(k[0]) * 0x9E3779B97F4A7C15ull + uint64_t(k[1]) * 0xC2B2AE3D27D4EB4Full +
        uint64_t(k[2]) * 0x165667B19E3779F9ull + uint64_t(k[3]) * 0xD6E8FEB86659FD93ull;
    return static_cast<std::size_t>(h >> (64 - kSlotBits));
  }

  [[gnu::noinline]] uint64_t& fill(Slot& s, const OrderKey& key) {
    uint64_t& count = map_[key];
    s.key = key;
    s.count = &count;
    return count;
  }

  std::map<OrderKey, uint64_t> map_;
  std::array<Slot, std::size_t{1} << kSlotBits> slots_{};
};

}  // namespace tracefold::record
