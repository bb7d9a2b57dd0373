// What the replay threads of one rank share when a trace has several
// threads per rank: the communicators. Each thread keeps its own requests,
// datatypes and computation gaps; a communicator is made by the thread
// whose stream holds its constructor (as in the program) and used by any.
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tracefold/thread_order.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::replay_detail {

class SharedComms {
 public:
  /// Walks the streams of `rank`'s threads once: which thread makes each
  /// communicator, and each thread's last event on each one.
  SharedComms(const Trace& trace, int32_t rank);

  int32_t threads() const { return static_cast<int32_t>(progress_.size()); }
  /// Empty, or why the threads' streams cannot be replayed: two threads
  /// of the rank make collective calls on one communicator, in an order
  /// across threads the trace does not record.
  const std::string& error() const { return error_; }
  /// The thread of this rank whose stream creates communicator `id`, if any.
  std::optional<int32_t> creator(int64_t id) const;

  /// Made by `thread`: the other threads waiting for it go on.
  void publish(int64_t id, MPI_Comm c, const std::vector<int>* cart_dims);
  /// Waits until the creator thread has made `id`. Sets `dims` when it is
  /// a Cartesian communicator.
  MPI_Comm await(int64_t id, std::vector<int>* dims);

  /// Before `thread` frees `id`: waits until every other thread has made
  /// its last call on it. The program freed it after those calls (another
  /// order is erroneous MPI), but replay threads do not run in step.
  void await_other_users(int64_t id, int32_t thread) const;
  void erase(int64_t id);

  /// Whether the trace notes the order of point-to-point calls across the
  /// threads of a rank (some call has `others` or `rothers`, docs/format.md
  /// "Message order across threads"): the threads then make their calls on
  /// each key in that order (Engine::ordered_issue).
  bool ordered() const { return ordered_; }
  /// Waits until the rank's first `turn` calls on `key` are made.
  void await_turn(const OrderKey& key, uint64_t turn);
  /// One more call on `key` is made.
  void took_turn(const OrderKey& key);

  /// Thread `thread` has finished its first `events` events.
  void progress(int32_t thread, uint64_t events) {
    progress_[static_cast<std::size_t>(thread)]->store(events, std::memory_order_release);
  }
  void finished(int32_t thread) { progress(thread, UINT64_MAX); }

 private:
  struct Made {
    MPI_Comm comm = MPI_COMM_NULL;
    std::vector<int> dims;
    bool cart = false;
  };
  std::string error_;
  std::unordered_map<int64_t, int32_t> creators_;
  // Per thread: communicator id -> index of the thread's last event on it.
  std::vector<std::unordered_map<int64_t, uint64_t>> last_use_;
  std::vector<std::unique_ptr<std::atomic<uint64_t>>> progress_;
  std::mutex mutex_;
  std::condition_variable made_cv_;
  std::unordered_map<int64_t, Made> made_;
  bool ordered_ = false;
  std::mutex order_mutex_;
  std::condition_variable order_cv_;
  std::map<OrderKey, uint64_t> order_made_;  // per key, the calls made
};

}  // namespace tracefold::replay_detail
