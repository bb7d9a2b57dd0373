#include "shared_comms.hpp"

#include <chrono>
#include <thread>

#include "replay_internal.hpp"
#include "tracefold/event.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold::replay_detail {

SharedComms::SharedComms(const Trace& trace, int32_t rank) {
  const auto threads = static_cast<std::size_t>(std::max(trace.threads, 1));
  last_use_.resize(threads);
  for (std::size_t t = 0; t < threads; ++t)
    progress_.push_back(std::make_unique<std::atomic<uint64_t>>(0));
  const FieldId comm = FieldTable::comm();
  const FieldId pcomm = FieldTable::intern("pcomm", FieldKind::kScalar);
  const FieldId newcomm = FieldTable::intern("newcomm", FieldKind::kScalar);
  // Per communicator, the first thread that makes a collective call on it
  // and the node of that call.
  std::unordered_map<int64_t, std::pair<int32_t, std::size_t>> collective_by;
  for (std::size_t t = 0; t < threads; ++t) {
    RankIterator it(trace, static_cast<int32_t>(t) * trace.world_size + rank);
    auto& last = last_use_[t];
    Event ev;
    for (uint64_t i = 0; it.next(ev); ++i) {
      for (const FieldId f : {comm, pcomm})
        if (const int64_t id = ev.get(f); id != kAbsent && id != kNull) last[id] = i;
      if (const int64_t id = ev.get(newcomm); id != kAbsent && id != kNull)
        creators_.emplace(id, static_cast<int32_t>(t));
      ordered_ = ordered_ || ev.get(others_field()) > 0 || ev.get(rothers_field()) > 0;
      if (!collective_over_comm(ev.op) || !error_.empty()) continue;
      int64_t id = ev.get(comm);
      if (id == kAbsent) id = CommTable::kWorld;
      const auto node = static_cast<std::size_t>(it.current_node() - trace.nodes.data());
      const auto [first, fresh] = collective_by.try_emplace(id, static_cast<int32_t>(t), node);
      if (fresh || first->second.first == static_cast<int32_t>(t)) continue;
      error_ = "rank " + std::to_string(rank) + ": threads " + std::to_string(first->second.first) +
               " and " + std::to_string(t) + " both make collective calls on communicator " +
               std::to_string(id) + " (" + node_label(trace, first->second.second) + ", " +
               node_label(trace, node) +
               "); the trace does not record their order across threads, so the replay "
               "cannot make them in the program's order";
    }
  }
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
