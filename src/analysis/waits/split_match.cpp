// Message matching split by receiver (split_match.hpp). The rules are the
// core matcher's (match_messages) for one thread per rank: a key's sends
// and receives are taken in each rank's event order.
#include "split_match.hpp"

#include <algorithm>
#include <tuple>

#include "tracefold/value_seq.hpp"

namespace tracefold::waits_detail {

namespace {

template <class D>
auto key_of(const D& d) {
  return std::tie(d.comm, d.sender, d.receiver, d.tag);
}

}  // namespace

BlockMessages block_messages(const Trace& trace, WaitInput& in, int32_t first, int32_t last) {
  constexpr std::size_t npos = RequestCompletions::npos;
  BlockMessages out;
  std::vector<Event> lent;
  for (int32_t r = first; r < last; ++r) {
    std::vector<TimedEvent>& evs = in.ranks.at(std::size_t(r));
    // find_completions reads a vector of events: lent, not copied.
    lent.clear();
    lent.reserve(evs.size());
    for (TimedEvent& te : evs) lent.push_back(std::move(te.ev));
    RequestCompletions done;
    try {
      done = find_completions(lent);
    } catch (...) {
      for (std::size_t k = 0; k < evs.size(); ++k) evs[k].ev = std::move(lent[k]);
      throw;
    }
    for (std::size_t k = 0; k < evs.size(); ++k) evs[k].ev = std::move(lent[k]);
    for (std::size_t i = 0; i < evs.size(); ++i) {
      const Event& ev = evs[i].ev;
      const OpClass c = classify(ev.op);
      const int64_t comm = event_comm(ev);
      if (sends_message(c)) {
        const int32_t dest = world_peer(trace.comms, comm, r, field_by_literal(ev, "peer"));
        if (dest >= 0) {
          const std::size_t complete =
              c == OpClass::kIsend && done.done[i] != npos ? done.done[i] : i;
          out.sends.push_back(
              {comm, r, dest, field_by_literal(ev, "tag"), i, complete, send_bytes(ev)});
        }
      }
      if (!receives_message(c)) continue;
      int64_t source = field_by_literal(ev, c == OpClass::kSendrecv ? "rpeer" : "peer");
      int64_t tag = field_by_literal(ev, c == OpClass::kSendrecv ? "rtag" : "tag");
      if (source == kNull) continue;
      int64_t msrc = field_by_literal(ev, "src"), mtag = field_by_literal(ev, "mtag");
      if (c == OpClass::kIrecv) msrc = done.src[i], mtag = done.mtag[i];
      if (source == kAny) source = msrc;
      if (tag == kAny) tag = mtag;
      const int32_t from = world_peer(trace.comms, comm, r, source);
      if (from < 0 || is_sentinel(tag)) {
        ++out.unmatched_recvs;
        continue;
      }
      const std::size_t complete = c == OpClass::kIrecv && done.done[i] != npos ? done.done[i] : i;
      out.recvs.push_back({comm, from, r, tag, i, complete});
    }
  }
  return out;
}

MatchResult match_block(std::vector<SendDescriptor>&& sends, std::vector<RecvDescriptor>&& recvs,
                        uint64_t unmatched_recvs) {
  MatchResult res;
  res.unmatched_recvs = unmatched_recvs;
  // A key has one sender and one receiver: its sends in the sender's
  // order, its receives in the receiver's.
  const auto by_key = [](const auto& a, const auto& b) {
    return std::tuple_cat(key_of(a), std::tie(a.event)) <
           std::tuple_cat(key_of(b), std::tie(b.event));
  };
  std::sort(sends.begin(), sends.end(), by_key);
  std::sort(recvs.begin(), recvs.end(), by_key);
  std::size_t s = 0;
  for (std::size_t i = 0; i < recvs.size();) {
    const RecvDescriptor& first = recvs[i];
    while (s < sends.size() && key_of(sends[s]) < key_of(first)) ++s, ++res.unmatched_sends;
    for (; i < recvs.size() && key_of(recvs[i]) == key_of(first); ++i) {
      if (s == sends.size() || key_of(sends[s]) != key_of(recvs[i])) {
        ++res.unmatched_recvs;
        continue;
      }
      const SendDescriptor& sd = sends[s++];
      const RecvDescriptor& rd = recvs[i];
      Message m;
      m.sender = int32_t(rd.sender);
      m.receiver = int32_t(rd.receiver);
      m.sender_stream = std::size_t(rd.sender);
      m.receiver_stream = std::size_t(rd.receiver);
      m.comm = rd.comm;
      m.tag = rd.tag;
      m.bytes = sd.bytes;
      m.send_event = sd.event;
      m.send_complete_event = sd.complete;
      m.recv_event = rd.event;
      m.recv_complete_event = rd.complete;
      res.messages.push_back(m);
    }
  }
  res.unmatched_sends += sends.size() - s;
  std::sort(res.messages.begin(), res.messages.end(), [](const Message& a, const Message& b) {
    return std::tie(a.receiver_stream, a.recv_event) < std::tie(b.receiver_stream, b.recv_event);
  });
  return res;
}

}  // namespace tracefold::waits_detail
