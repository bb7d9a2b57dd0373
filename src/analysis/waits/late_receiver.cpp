// Late Receiver: a sender blocked until its receive was posted, by one of
// two rules (LateReceiverRule, docs/analyze.md#patterns). The serial and
// the parallel analysis both call late_receivers() per sender; the parallel
// one asks late_receiver_candidate() which sends need the receive's enter
// time sent back.
#include "internal.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold {

const std::map<std::string, LateReceiverRule>& late_receiver_rules() {
  static const std::map<std::string, LateReceiverRule> rules = {
      {"scalasca", LateReceiverRule::kScalasca},
      {"protocol", LateReceiverRule::kProtocol},
  };
  return rules;
}

namespace waits_detail {

bool late_receiver_candidate(const WaitOptions& opt, OpId send, OpId completion, uint64_t bytes) {
  const OpTraits& t = op_traits(send);
  if (opt.late_receiver == LateReceiverRule::kProtocol)
    return t.variant == OpVariant::kSynchronous || bytes >= opt.rendezvous_bytes;
  // As Scalasca: a buffered send never waits for its receive, a ready send
  // must find it posted, a Sendrecv may be held up by its own receive, and
  // Waitall/Waitany/Waitsome/Test* by their other requests.
  switch (classify(send)) {
    case OpClass::kSend:
      return t.variant == OpVariant::kPlain || t.variant == OpVariant::kSynchronous;
    case OpClass::kIsend:
      return op_traits(completion).variant == OpVariant::kWait;
    default:
      return false;
  }
}

void late_receivers(Analysis& a, int32_t r, const std::vector<SendMatch>& msgs) {
  const bool scalasca = a.opt.late_receiver == LateReceiverRule::kScalasca;
  for (const SendMatch& m : msgs) {
    a.syncs[std::size_t(r)].push_back({m.send_event, m.receiver, 0, 0});
    const TimedEvent& send = a.at(r, m.send_event);
    const TimedEvent& blocked = a.at(r, m.send_complete_event);
    if (!late_receiver_candidate(a.opt, send.ev.op, blocked.ev.op, m.bytes)) continue;
    // Scalasca's rule asks whether the call lasted past the receive's post:
    // an eager send may well have returned before. The protocol rule takes
    // it as given (such a send cannot complete earlier), so a send that did
    // return earlier, by the clocks, is charged its whole length.
    if (scalasca && blocked.end_ns <= m.recv_start) continue;
    const int64_t lr = clamp_wait(m.recv_start - blocked.start_ns, blocked);
    if (lr <= 0) continue;
    a.add(WaitPattern::kLateReceiver, a.callpath(send.ev, false), r, lr);
    a.note_wait(
        {r, m.send_complete_event, m.receiver, m.recv_event, lr, WaitPattern::kLateReceiver});
  }
}

}  // namespace waits_detail
}  // namespace tracefold
