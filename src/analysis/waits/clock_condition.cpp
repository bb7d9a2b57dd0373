// The clock condition (a message is received after it was sent) enforced on
// recorded timestamps before the analysis: see repair_clock_condition in
// waits.hpp. Clock offsets measured at start and end (clock_sync.hpp) leave
// errors between the two samples; a receive that seems to end before its
// send began would otherwise show as a negative wait.
#include <algorithm>

#include "internal.hpp"

namespace tracefold {

namespace waits_detail {

uint64_t repair_receiver(std::vector<TimedEvent>& mine,
                         const std::vector<std::pair<std::size_t, int64_t>>& msgs,
                         std::size_t* first_moved) {
  // Shifts starting at an event, in event order; later events carry every
  // shift before them, so local intervals stay as recorded.
  std::vector<std::pair<std::size_t, int64_t>> starts;
  int64_t running = 0;
  uint64_t found = 0;
  for (const auto& [ev, sent] : msgs) {
    const int64_t received = mine[ev].end_ns + running;
    if (received >= sent) continue;
    ++found;
    running += sent - received;
    starts.push_back({ev, sent - received});
  }
  if (first_moved) *first_moved = starts.empty() ? mine.size() : starts.front().first;
  int64_t shift = 0;
  std::size_t next = 0;
  for (std::size_t k = starts.empty() ? mine.size() : starts.front().first; k < mine.size(); ++k) {
    const int64_t before = shift;
    while (next < starts.size() && starts[next].first == k) shift += starts[next++].second;
    mine[k].compute_start_ns += before;
    mine[k].start_ns += shift;
    mine[k].end_ns += shift;
  }
  return found;
}

}  // namespace waits_detail

uint64_t repair_clock_condition(const Trace& trace, WaitInput& in, int passes,
                                const MatchResult* matched) {
  // With threads the entries are locations, each laid out on its own.
  MatchResult own;
  if (!matched) own = match_wait_input(trace, in);
  const MatchResult& m = matched ? *matched : own;
  std::vector<const Message*> order;
  for (const Message& msg : m.messages)
    if (msg.sender_stream != msg.receiver_stream) order.push_back(&msg);
  std::stable_sort(order.begin(), order.end(), [](const Message* x, const Message* y) {
    return std::tie(x->receiver_stream, x->recv_complete_event) <
           std::tie(y->receiver_stream, y->recv_complete_event);
  });
  uint64_t first = 0;
  std::vector<std::pair<std::size_t, int64_t>> msgs;
  for (int pass = 0; pass < passes; ++pass) {
    // Every receiver of a pass sees the send times as they were when the
    // pass began (as the ranks of the parallel analysis do), so the count
    // does not depend on the order ranks are visited in.
    std::vector<int64_t> sent(order.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      sent[i] = in.ranks[order[i]->sender_stream][order[i]->send_event].start_ns;
    uint64_t found = 0;
    for (std::size_t i = 0; i < order.size();) {
      const std::size_t r = order[i]->receiver_stream;
      msgs.clear();
      for (; i < order.size() && order[i]->receiver_stream == r; ++i)
        msgs.push_back({order[i]->recv_complete_event, sent[i]});
      found += waits_detail::repair_receiver(in.ranks[r], msgs);
    }
    if (pass == 0) first = found;
    if (found == 0) break;
  }
  return first;
}

}  // namespace tracefold
