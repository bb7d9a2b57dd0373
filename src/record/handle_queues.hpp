// HandleQueues: what the recorder knows about each live request (internal).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace tracefold::record {

// Live requests by handle (a pointer or integer type whose value-initialized
// value, nullptr or 0, is never a live handle). Every nonblocking call adds one and every
// completion removes one, so this sits on the hot path: open addressing with
// the first entry of each handle stored inline, no allocation per request.
// One handle can stand for several live requests (Open MPI hands out its
// shared empty request for, e.g., sends to MPI_PROC_NULL): those queue up,
// oldest first, in an overflow vector that only such handles pay for (a
// default std::deque allocates even when empty).
template <class Handle, class Info>
class HandleQueues {
 public:
  /// The requests of `handle`, oldest first; nullptr if none.
  const Info* find(Handle handle, std::size_t k) const {
    const Slot* s = lookup(handle);
    if (!s) return nullptr;
    if (k == 0) return &s->first;
    return k - 1 < s->more.size() ? &s->more[k - 1] : nullptr;
  }
  Info* oldest(Handle handle) {
    Slot* s = lookup(handle);
    return s ? &s->first : nullptr;
  }
  void push(Handle handle, const Info& info) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    Slot& s = probe(handle);
    if (s.handle == Handle{}) {
      s.handle = handle;
      s.first = info;
      ++used_;
    } else {
      s.more.push_back(info);
    }
  }
  /// Drops the oldest request of `handle` (it completed).
  void pop_oldest(Handle handle) {
    Slot* s = lookup(handle);
    if (!s) return;
    if (!s->more.empty()) {
      s->first = s->more.front();
      s->more.erase(s->more.begin());
      return;
    }
    erase(static_cast<std::size_t>(s - slots_.data()));
  }

 private:
  struct Slot {
    Handle handle = Handle{};
    Info first;
    std::vector<Info> more;
  };
  std::size_t home(Handle h) const {
    uint64_t x;
    if constexpr (std::is_pointer_v<Handle>)
      x = reinterpret_cast<uintptr_t>(h);
    else
      x = static_cast<uint64_t>(h);
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(x >> 20) & (slots_.size() - 1);
  }
  Slot& probe(Handle h) {
    std::size_t i = home(h);
    while (slots_[i].handle != Handle{} && slots_[i].handle != h) i = (i + 1) & (slots_.size() - 1);
    return slots_[i];
  }
  Slot* lookup(Handle h) {
    if (slots_.empty() || h == Handle{}) return nullptr;
    Slot& s = probe(h);
    return s.handle == h ? &s : nullptr;
  }
  const Slot* lookup(Handle h) const { return const_cast<HandleQueues*>(this)->lookup(h); }
  // Backward-shift deletion keeps every probe chain unbroken without
  // tombstones.
  void erase(std::size_t i) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t j = i;
    for (;;) {
      j = (j + 1) & mask;
      if (slots_[j].handle == Handle{}) break;
      const std::size_t h = home(slots_[j].handle);
      // Move j back into i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slots_[i] = std::move(slots_[j]);
      i = j;
    }
    slots_[i] = Slot{};
    --used_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(64, old.size() * 2), Slot{});
    for (Slot& s : old)
      if (s.handle != Handle{}) probe(s.handle) = std::move(s);
  }
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
};

}  // namespace tracefold::record
