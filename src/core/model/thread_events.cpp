#include "tracefold/thread_events.hpp"

#include <algorithm>

namespace tracefold {

ThreadEvents::ThreadEvents(std::span<const TimelineRecord> records) {
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto t = static_cast<std::size_t>(std::max(records[i].thread, 0));
    if (t >= calls_.size()) calls_.resize(t + 1);
    calls_[t].push_back(i);
  }
}

std::span<const uint64_t> ThreadEvents::calls(uint32_t thread) const {
  if (thread >= calls_.size()) return {};
  return calls_[thread];
}

std::optional<std::size_t> ThreadEvents::thread_event(uint32_t thread, uint64_t event) const {
  const std::span<const uint64_t> c = calls(thread);
  const auto it = std::lower_bound(c.begin(), c.end(), event);
  if (it == c.end()) return std::nullopt;
  return static_cast<std::size_t>(it - c.begin());
}

}  // namespace tracefold
