// The clock condition (a message is received after it was sent) enforced on
// recorded timestamps before the analysis: see repair_clock_condition in
// waits.hpp. Clock offsets measured at start and end (clock_sync.hpp) leave
// errors between the two samples; a receive that seems to end before its
// send began would otherwise show as a negative wait.
#include <algorithm>

#include "tracefold/waits.hpp"

namespace tracefold {

uint64_t repair_clock_condition(const Trace& trace, WaitInput& in, int passes) {
  std::vector<std::vector<Event>> evs(in.ranks.size());
  for (std::size_t r = 0; r < evs.size(); ++r)
    for (const TimedEvent& te : in.ranks[r]) evs[r].push_back(te.ev);
  MatchResult m = match_messages(trace.comms, evs);
  std::vector<const Message*> order;
  for (const Message& msg : m.messages)
    if (msg.sender != msg.receiver) order.push_back(&msg);
  std::stable_sort(order.begin(), order.end(), [](const Message* x, const Message* y) {
    return std::tie(x->receiver, x->recv_complete_event) <
           std::tie(y->receiver, y->recv_complete_event);
  });
  uint64_t first = 0;
  for (int pass = 0; pass < passes; ++pass) {
    uint64_t found = 0;
    for (std::size_t i = 0; i < order.size();) {
      const int32_t r = order[i]->receiver;
      auto& mine = in.ranks[std::size_t(r)];
      // Shifts starting at an event, in event order; later events carry
      // every shift before them, so local intervals stay as recorded.
      std::vector<std::pair<std::size_t, int64_t>> starts;
      int64_t running = 0;
      for (; i < order.size() && order[i]->receiver == r; ++i) {
        const Message& msg = *order[i];
        const int64_t sent = in.ranks[std::size_t(msg.sender)][msg.send_event].start_ns;
        const int64_t received = mine[msg.recv_complete_event].end_ns + running;
        if (received >= sent) continue;
        ++found;
        running += sent - received;
        starts.push_back({msg.recv_complete_event, sent - received});
      }
      int64_t shift = 0;
      std::size_t next = 0;
      for (std::size_t k = starts.empty() ? mine.size() : starts.front().first; k < mine.size();
           ++k) {
        const int64_t before = shift;
        while (next < starts.size() && starts[next].first == k) shift += starts[next++].second;
        mine[k].compute_start_ns += before;
        mine[k].start_ns += shift;
        mine[k].end_ns += shift;
      }
    }
    if (pass == 0) first = found;
    if (found == 0) break;
  }
  return first;
}

}  // namespace tracefold
