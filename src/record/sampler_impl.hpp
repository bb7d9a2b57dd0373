// Internal to the sampler's files (sampler.cpp: timers, handler, threads;
// sampler_write.cpp: the rings into the samples file).
#pragma once

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampler_rate.hpp"
#include "tracefold/samples.hpp"

#pragma GCC visibility push(hidden)

namespace tracefold::record::sampling {

// Deeper stacks keep their innermost frames (placed under the root, with
// no LCA marker).
constexpr int kMaxFrames = 48;
// 4 s at 1 kHz between two drains (a rank's MPI calls): a computation
// step a loaded machine stretches several times still fits. Pages are
// touched only as samples fill them.
constexpr uint64_t kRingSlots = 4096;
// Samples inside MPI calls need no frames: a ring of their own, long
// enough for a wait of 65 s at 1 kHz without a drain (no call completes
// during a wait, and drains happen in the MPI wrappers; a rank whose
// partner died waits until the launcher, slow on a loaded machine, kills
// it). 40 bytes a slot, touched only as the wait goes on.
constexpr uint64_t kMpiSlots = 65536;
// The handler's cost: 64 ns buckets up to 65.5 us, 4 us buckets up to
// 4.26 ms (a handler preempted half way, on a loaded machine), then one
// overflow bucket.
constexpr int kFineBuckets = 1024, kCostBuckets = 2048;
constexpr int64_t kFineNs = 64, kCoarseNs = 4096;
inline int cost_bucket(int64_t ns) {
  if (ns < kFineBuckets * kFineNs) return static_cast<int>(std::max<int64_t>(ns, 0) / kFineNs);
  return static_cast<int>(
      std::min<int64_t>(kFineBuckets + (ns - kFineBuckets * kFineNs) / kCoarseNs, kCostBuckets));
}
// A bucket's middle (its start for the overflow bucket).
inline int64_t cost_of_bucket(int b) {
  if (b < kFineBuckets) return b * kFineNs + kFineNs / 2;
  const int64_t start = kFineBuckets * kFineNs + (b - kFineBuckets) * kCoarseNs;
  return b < kCostBuckets ? start + kCoarseNs / 2 : start;
}
// Stack bytes that a wrapper and Call::Call may take below the caller's
// stack pointer (see lca_of).
constexpr uintptr_t kWrapperSlack = 1024;

// Of a tick taken while its thread was inside an MPI wrapper, after
// `missed` ticks that fell due at due, due + period, ... while the thread
// was off its core: how many of its samples (the copies first, then the
// tick's own) lie before the call's enter time, so outside the call on the
// timeline. While the wrapper has yet to read that time (`enter_known`
// false) all of them do, the tick's own too: the wrapper reads the clock
// after the handler returns.
inline uint32_t copies_outside(uint32_t missed, int64_t due, int64_t period, bool enter_known,
                               int64_t enter_ns) {
  if (!enter_known) return missed + 1;
  if (missed == 0 || due >= enter_ns) return 0;
  return static_cast<uint32_t>(std::min<int64_t>(missed, (enter_ns - due + period - 1) / period));
}

// A ring slot is one tick: its sample, preceded by `copies` copies for the
// ticks its thread missed off its core, at first_ns, first_ns + period, ...
// (on_tick). The copies are written out when the ring is drained, so a
// thread away for seconds costs its handler one slot, not one per tick.
struct RawSample {
  int64_t time_ns;
  int64_t first_ns;  // the first copy's time (time_ns without copies)
  uint64_t mpi_event;
  int64_t period_ns;  // the thread's period when it was taken
  uint32_t copies;
  uint16_t n;         // frames in ip, innermost first
  uint16_t lca;       // depth of the deepest unchanged frame (of the first copy)
  uint16_t copy_lca;  // of the later copies and the sample: nothing moved
  uintptr_t ip[kMaxFrames];
};

struct MpiSample {
  int64_t time_ns;
  int64_t first_ns;
  uint64_t mpi_event;
  int64_t period_ns;
  uint32_t copies;
  // Of the copies and the sample, the first `outside` fell due before the
  // call's enter time: the thread was in the wrapper, not yet in the call
  // the timeline records, and they are written as samples outside MPI (no
  // frames).
  uint32_t outside;
};

// One thread's sampling state, in its own anonymous mapping: pages of the
// rings are touched only as samples fill them.
struct ThreadState {
  std::atomic<uint64_t> head{0}, mpi_head{0};  // written by the handler
  std::atomic<uint64_t> tail{0}, mpi_tail{0};  // written by drain_samples
  // Samples lost here; the file's "taken" is those written plus these.
  std::atomic<uint64_t> dropped{0};
  std::atomic<bool> timer_live{false};
  std::atomic<bool> exited{false};
  timer_t timer{};
  clockid_t clock = CLOCK_MONOTONIC;
  uint32_t thread = 0;  // the sampler's number, in the order threads began sampling
  // The thread's stream number (first MPI call), -1 before it has one:
  // written by the thread itself (sampler_note_stream, begin_thread), read
  // by drain_samples, which writes the file's thread record once.
  std::atomic<int32_t> stream{-1};
  bool stream_written = false;
  int64_t next_ns = 0;  // the timer's next expiry (absolute, on `clock`)
  // Handler only: this thread's period, and its handler's costs since the
  // period was last decided (sampler_rate.hpp).
  int64_t period_ns = 0;
  RateWindow rate;
  int64_t ticks = 0;
  // drain_samples only: the period the file last said this thread has.
  int64_t written_period_ns = 0;
  // The previous unwound sample, for the LCA marker.
  uintptr_t prev_ip[kMaxFrames];
  uintptr_t prev_sp[kMaxFrames];
  int prev_n = 0;  // 0: none usable
  uint64_t prev_calls = 0;
  std::atomic<uint32_t> cost[kCostBuckets + 1];
  RawSample ring[kRingSlots];
  MpiSample mpi_ring[kMpiSlots];
};

// When the last events were timestamped (sampler_note_timed_at): a copy
// for a tick that fell due before some of them names the event that was
// next at its due time, not the one read when its thread ran again.
constexpr uint64_t kTimedHistory = 4096;

struct CtxKey {
  uint32_t parent, module;
  uint64_t offset;
  bool operator==(const CtxKey&) const = default;
};
struct CtxHash {
  std::size_t operator()(const CtxKey& k) const {
    return std::hash<uint64_t>()(k.offset * 0x9E3779B97F4A7C15ull ^ (uint64_t{k.parent} << 20) ^
                                 k.module);
  }
};

struct Sampler {
  std::atomic<bool> on{false};
  int signal = 0;
  int64_t period_ns = 0;
  SampleClock clock = SampleClock::kWall;
  // Test hook (TRACEFOLD_TEST_SAMPLE_COST_NS=NS[,TICKS]): added to every
  // tick's measured cost (or to each thread's first TICKS ticks'), so that
  // a test can make the handler look expensive, for a while. With a
  // leading '=' (set_cost) it replaces the measured cost instead, and
  // ticks after the first TICKS cost 0: the rate then follows the hook
  // alone, not the handler's real cost on a loaded machine, which a test
  // of the rate's steps cannot bound.
  int64_t extra_cost_ns = 0;
  int64_t extra_cost_ticks = -1;
  bool set_cost = false;
  pthread_key_t key{};
  // The threads' states. Never taken in the handler.
  std::mutex threads_mu;
  std::vector<ThreadState*> threads;
  uint32_t next_thread = 0;
  uint32_t timer_failures = 0;
  // Of threads that exited and were unmapped.
  uint64_t gone_dropped = 0;
  std::array<uint64_t, kCostBuckets + 1> gone_cost{};
  // Under the recorder's lock.
  SamplesWriter writer;
  std::string path;
  std::unordered_map<uintptr_t, std::pair<uint32_t, uint64_t>> places;  // address -> module, offset
  std::unordered_map<std::string, uint32_t> module_ids;
  std::unordered_map<CtxKey, uint32_t, CtxHash> contexts;
  bool warned_budget = false;
  std::array<int64_t, kTimedHistory> timed_at{};  // by event index, mod kTimedHistory
  uint64_t timed = 0;                             // events noted
};

inline Sampler& sampler() {
  static Sampler* s = new Sampler;  // never destroyed: handlers and atexit may still look
  return *s;
}

}  // namespace tracefold::record::sampling

#pragma GCC visibility pop
