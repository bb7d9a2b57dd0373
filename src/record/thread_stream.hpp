// A thread's own event stream and the per-thread caches of registry
// answers: what a recorded call changes without the recorder's lock
// (internal to libtracefold).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "handle_queues.hpp"
#include "path_cache.hpp"
#include "recorder.hpp"
#include "thread_order_counts.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/thread_order.hpp"

#pragma GCC visibility push(hidden)

namespace tracefold::record {

struct RequestInfo {
  uint64_t event = 0;
  bool wild_source = false;
  bool wild_tag = false;
};

using RequestTable = HandleQueues<MPI_Request, RequestInfo>;

// The times of a queue slot's repeats (Recorder::unfolded_repeats). Not a
// std::vector: its push_back is not inlined into the poll wrappers (the
// growth path comes with it); here only the growth is a call.
class RepeatList {
 public:
  RepeatList() = default;
  RepeatList(const RepeatList&) = delete;
  RepeatList& operator=(const RepeatList&) = delete;
  RepeatList(RepeatList&& o) noexcept { *this = std::move(o); }
  RepeatList& operator=(RepeatList&& o) noexcept {
    buf_ = std::move(o.buf_);
    next_ = o.next_;
    end_ = o.end_;
    o.next_ = o.end_ = nullptr;
    return *this;
  }
  // Two pointers, not a count and a capacity: a push loads two words,
  // compares them and stores through one.
  [[gnu::always_inline]] void push_back(RepeatTiming t) {
    if (next_ == end_) [[unlikely]]
      grow();
    *next_++ = t;
  }
  // The poll fast path pushes inline only when there is room
  // (push_unchecked); its growing push is out of line (poll_count_growing).
  bool has_room() const { return next_ != end_; }
  [[gnu::always_inline]] void push_unchecked(RepeatTiming t) { *next_++ = t; }
  bool empty() const { return next_ == buf_.data(); }
  void clear() { next_ = buf_.data(); }
  std::span<const RepeatTiming> span() const {
    return {buf_.data(), static_cast<std::size_t>(next_ - buf_.data())};
  }

 private:
  [[gnu::noinline]] void grow() {
    const std::size_t n = static_cast<std::size_t>(next_ - buf_.data());
    buf_.resize(std::max<std::size_t>(64, 2 * buf_.size()));
    next_ = buf_.data() + n;
    end_ = buf_.data() + buf_.size();
  }
  std::vector<RepeatTiming> buf_;  // its size is the capacity
  RepeatTiming* next_ = nullptr;   // the first unused entry of buf_
  RepeatTiming* end_ = nullptr;
};

// A thread's own event stream (docs/recording.md "Threads"): everything the
// recorder changes on a call of that thread. Only its thread writes it
// while recording, reached through tl_stream without a lock; the end of
// recording (under `mu`, once the threads' calls are over) reads them all.
// Aligned so that two threads' streams share no cache line.
struct alignas(64) ThreadStream {
  int number = 0;  // by the order of the threads' first calls
  // Per key, the rank's count of calls on it right after this thread's
  // last one (Recorder::thread_order).
  OrderCounts order_seen;
  std::optional<Folder> folder;
  // Events recorded but not folded yet (see Recorder::append): slots reused
  // batch after batch, so their vectors keep their capacity.
  std::vector<Event> unfolded;
  std::size_t unfolded_n = 0;
  std::vector<uint8_t> unfolded_has_lists;  // per slot: a field's list holds a buffer
  // Per slot: the event's communicator id as the Call knew it when queued
  // (kAbsent: none, the world), or kUndefined when the queuing caller did
  // not know it (the event's field is then read). Spares fold_unfolded a
  // search of the fields per event for the peers' relative encoding.
  std::vector<int64_t> unfolded_comm;
  // List fields grow with the communicator (v-collectives carry one count
  // per rank): at thousands of ranks a full queue of them would hold tens of
  // megabytes, so the queue is also folded once its lists reach this many
  // entries (1 MiB).
  static constexpr std::size_t kUnfoldedListBudget = std::size_t{1} << 17;
  std::size_t unfolded_list_entries = 0;
  // Per queue slot: the times of the unsuccessful polls that repeated the
  // slot's event right after it (Recorder::repeat_of_last). A waiting loop
  // polls thousands of times; kept as times only, a repeat takes no queue
  // slot and is folded by Folder::append_repeats in a few steps, not one
  // fold step each. The queue is folded once it holds kRepeatBudget of them.
  std::vector<RepeatList> unfolded_repeats;
  static constexpr std::size_t kRepeatBudget = 4096;
  std::size_t unfolded_repeat_n = 0;
  // Counts one more repeat of the last queued event (both the slow path's
  // repeat_of_last and the poll fast path); true when the budget is full
  // and the queue must be folded.
  bool count_repeat(int64_t compute_ns, int64_t comm_ns) {
    unfolded_repeats[unfolded_n - 1].push_back({compute_ns, comm_ns});
    ++slow_repeats;
    return ++unfolded_repeat_n >= kRepeatBudget;
  }
  // Changes whenever the queue changes other than by a repeat (an event
  // queued, the queue folded) and when recording stops: while it stands,
  // the last queued event and the request table are as they were (every
  // call that changes those queues an event). Read by the poll fast path.
  std::atomic<uint64_t> queue_seq{0};
  void bump_queue_seq() {
    queue_seq.store(queue_seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // Set by the fast path while it adds a repeat; the end of recording
  // waits for it to clear (wait_fast_polls).
  std::atomic<int> fast_busy{0};
  // Recorder::fast_repeat_limit, here for the inline fast path.
  std::size_t fast_repeat_limit = kRepeatBudget - 1;
  // Repeats counted by the slow path, and those folded so far: the fast
  // path's are what the others leave (fast_polls), so it keeps no count.
  uint64_t slow_repeats = 0, repeats_folded = 0;
  uint64_t fast_polls() const { return repeats_folded + unfolded_repeat_n - slow_repeats; }
  // This thread's events that created or (re)started requests, numbered
  // from 1: links count back in these, so polling loops (Test, Iprobe) do
  // not shift them.
  uint64_t request_events = 0;
  // Per handle, oldest first: an MPI library may hand out one handle for
  // several requests that completed at once (Open MPI's empty request).
  // Another thread may complete a request this one made, so the table is
  // changed by its thread, and read by others, under `requests_mu` (taken
  // by others only when their own table lacks a handle).
  RequestTable requests;
  RecorderLock requests_mu;
  int64_t last_exit_ns = 0;
  // This rank's position and size per communicator id (Recorder::position_in).
  std::unordered_map<int64_t, std::pair<int32_t, int32_t>> positions;
  int64_t last_position_id = kAbsent;
  std::pair<int32_t, int32_t> last_position{};
};

// The calling thread's stream; null before its first recorded call.
TRACEFOLD_STATIC_TLS extern constinit thread_local ThreadStream* tl_stream;

// A few handles' registry answers (communicator, datatype, operation ids)
// kept per thread, so a call reads the shared registries without their
// lock: an entry holds while the registries' generation
// (Recorder::registry_gen) is the one it was filled under.
template <class Value>
struct HandleCache {
  static constexpr std::size_t kSlots = 16;
  struct Slot {
    uint64_t gen = 0;  // 0: empty (generations start at 1)
    uintptr_t handle = 0;
    Value value{};
  };
  std::array<Slot, kSlots> slots{};
  template <class H>
  static uintptr_t bits(H h) {
    if constexpr (std::is_pointer_v<H>)
      return reinterpret_cast<uintptr_t>(h);
    else
      return static_cast<uintptr_t>(h);
  }
  static std::size_t index(uintptr_t h) { return (h * 0x9E3779B97F4A7C15ull) >> 60; }
  const Value* find(uintptr_t h, uint64_t gen) const {
    const Slot& s = slots[index(h)];
    return s.gen == gen && s.handle == h ? &s.value : nullptr;
  }
  void put(uintptr_t h, uint64_t gen, const Value& v) { slots[index(h)] = {gen, h, v}; }
};

}  // namespace tracefold::record

#pragma GCC visibility pop
