// The per-thread cache of call paths that lets a repeated call skip the
// unwinder (path_cache.cpp), and the thread-local storage model the
// recorder's per-thread state uses (internal to libtracefold).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "tracefold/event.hpp"

#pragma GCC visibility push(hidden)

// The library is preloaded or linked in, so its thread-locals can live in
// the static TLS block: reaching them then needs no __tls_get_addr call,
// which otherwise costs several of them per wrapped MPI call.
#define TRACEFOLD_STATIC_TLS [[gnu::tls_model("initial-exec")]]

#if defined(__x86_64__)
#define TRACEFOLD_PATH_CACHE 1
#endif

namespace tracefold::record {

// Stack of raw return addresses identifying one call site.
struct StackKey {
  std::array<uintptr_t, 32> addr;  // only the first n are set or read
  uint8_t n = 0;
  bool operator==(const StackKey& o) const {
    return n == o.n && std::equal(addr.begin(), addr.begin() + n, o.addr.begin());
  }
};
struct StackKeyHash {
  std::size_t operator()(const StackKey& k) const {
    uint64_t h = 1469598103934665603ull;
    for (uint8_t i = 0; i < k.n; ++i) h = (h ^ k.addr[i]) * 1099511628211ull;
    return h;
  }
};

struct FrameInfo {
  bool own = false;  // inside libtracefold itself: not part of the signature
  Frame frame;
};

// Call paths this thread has walked, so a repeated call from the same place
// skips the unwinder (see Recorder::capture_stack). An entry is found by the
// return address into the wrapper, the capturing frame's address and the
// application's return address (read at the stack slot where this wrapper's
// caller keeps it), and is used only after everything that placed its
// frames is read back from the slot it was found in, innermost first: every
// return address it remembers, the saved frame pointer of each frame placed
// by it (alloca, VLAs), and the [RBP - 8] slot of frames realigned through
// another register. A helper called from two places at the same stack depth
// differs in an outer return address, so the two are not confused. x86-64
// only: there a call pushes its return address just below the caller's
// stack pointer.
struct PathCache {
  static constexpr std::size_t kSets = 64, kWays = 8, kProbes = 128, kMaxFrames = 24;
  static constexpr std::size_t kGroup = 4;  // slots checked at a time (cached_path)
  static_assert(kMaxFrames % kGroup == 0, "an entry pads its slots to whole groups");
  static constexpr std::size_t kSeen = 256;
  // A helper reached from several call sites at one stack depth has one
  // tag per call site in the same set: the ways hold them side by side.
  struct Tag {
    uintptr_t ret = 0, anchor = 0, first = 0;  // first: the signature's first frame
  };
  static constexpr SiteId kSiteUnknown = UINT32_MAX;
  struct Entry {
    SiteId site = kSiteUnknown;  // filled by the first append of this path
    uint8_t frames = 0;
    uint32_t in_key = 0;  // bit i: slot i holds a frame of the StackKey (not ours)
    std::array<uint32_t, kMaxFrames> offset{};  // slot address - anchor
    std::array<uintptr_t, kMaxFrames> value{};  // return address (or frame pointer) there
  };
  // Per wrapper return address: where (from the anchor) the signature's
  // first return address sits. Only a hint: entries verify everything.
  struct Probe {
    uintptr_t ret = 0;
    uint32_t offset = 0;
  };
  std::array<std::array<Probe, 2>, kProbes> probes{};  // two per bucket, newest first
  std::array<std::array<Tag, kWays>, kSets> tags{};
  std::array<std::array<Entry, kWays>, kSets> entries{};
  std::array<uint8_t, kSets> victim{};
  // Paths missed once (a path is learned when it misses again, so calls
  // from ever-changing stack depths do not pay for learning), or whose
  // learning failed (low bit set: never tried again).
  std::array<std::array<uint64_t, 2>, kSeen / 2> seen{};
  uintptr_t stack_lo = 0, stack_hi = 0;  // this thread's stack
  bool main_thread = false;
  int stack_refreshes = 0;  // of the main thread's stack bottom, see Recorder::stack_holds
  // Entries written so far: an entry remembered by address (the poll fast
  // path) is still the same path while this is unchanged.
  uint64_t learned = 0;
  uint64_t learn_attempts = 0;  // remember_path calls (each walks the stack with registers)
  // Valid entries each set has had to give up for a new one. More paths
  // than ways that share a set's (wrapper, stack depth, caller) -- a
  // V-cycle reaching one helper through different outer frames at every
  // level -- would be learned again and again, each time by a walk with
  // registers that costs many times a plain walk: past kThrash such
  // evictions a set learns nothing more and its misses are plain walks.
  static constexpr uint16_t kThrash = 4 * kWays;
  std::array<uint16_t, kSets> evictions{};

  static std::size_t probe_index(uintptr_t ret) { return (ret * 0x9E3779B97F4A7C15ull) >> 57; }
  static std::size_t set_index(uintptr_t ret, uintptr_t anchor, uintptr_t first) {
    return ((ret ^ (anchor >> 4) * 0xC2B2AE3D27D4EB4Full ^ first * 0x9E3779B97F4A7C15ull) *
            0x165667B19E3779F9ull) >>
           58;
  }
};
static_assert(PathCache::kProbes == 128 && PathCache::kSets == 64, "index bits");

// constinit on the declarations too: without it every access from another
// file first tests for a dynamic initializer (a weak TLS init function).
TRACEFOLD_STATIC_TLS extern constinit thread_local PathCache* tl_path_cache;

}  // namespace tracefold::record

#pragma GCC visibility pop
