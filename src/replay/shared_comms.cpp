#include "shared_comms.hpp"

#include <chrono>
#include <thread>

#include "tracefold/thread_comms.hpp"

namespace tracefold::replay_detail {

SharedComms::SharedComms(const Trace& trace, int32_t rank) {
  ThreadComms walked = thread_comms(trace, rank, "the replay");
  error_ = std::move(walked.error);
  creators_ = std::move(walked.creators);
  last_use_ = std::move(walked.last_use);
  for (std::size_t t = 0; t < last_use_.size(); ++t)
    progress_.push_back(std::make_unique<std::atomic<uint64_t>>(0));
  ordered_ = walked.ordered;
}

std::optional<int32_t> SharedComms::creator(int64_t id) const {
  const auto it = creators_.find(id);
  if (it == creators_.end()) return std::nullopt;
  return it->second;
}

void SharedComms::publish(int64_t id, MPI_Comm c, const std::vector<int>* cart_dims) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Made& m = made_[id];
    m.comm = c;
    m.cart = cart_dims != nullptr;
    if (cart_dims) m.dims = *cart_dims;
  }
  made_cv_.notify_all();
}

MPI_Comm SharedComms::await(int64_t id, std::vector<int>* dims) {
  std::unique_lock<std::mutex> lock(mutex_);
  made_cv_.wait(lock, [&] { return made_.count(id) != 0; });
  const Made& m = made_.at(id);
  if (dims && m.cart) *dims = m.dims;
  return m.comm;
}

void SharedComms::await_other_users(int64_t id, int32_t thread) const {
  for (std::size_t t = 0; t < last_use_.size(); ++t) {
    if (static_cast<int32_t>(t) == thread) continue;
    const auto it = last_use_[t].find(id);
    if (it == last_use_[t].end()) continue;
    // Frees are rare and the other thread may be computing for a while:
    // a short sleep, not a spin that takes its core.
    while (progress_[t]->load(std::memory_order_acquire) <= it->second)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void SharedComms::erase(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  made_.erase(id);
}

void SharedComms::await_turn(const OrderKey& key, uint64_t turn) {
  std::unique_lock lock(order_mutex_);
  order_cv_.wait(lock, [&] { return order_made_[key] >= turn; });
}

void SharedComms::took_turn(const OrderKey& key) {
  {
    std::lock_guard lock(order_mutex_);
    ++order_made_[key];
  }
  order_cv_.notify_all();
}

}  // namespace tracefold::replay_detail
