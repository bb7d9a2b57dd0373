// Patterns per thread class (patterns.hpp thread_classes()): the analysis
// reads one event string per rank and pairs the k-th message of a channel
// with the k-th receive on it. A rank's threads make strings of their
// own, so each thread index across the ranks is analysed as a trace of
// one thread per rank -- which is sound only while no channel is used by
// two threads of a rank: then the order of their calls on it, which the
// trace does not keep, would decide the pairing.
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tracefold/expand.hpp"
#include "tracefold/patterns.hpp"
#include "tracefold/thread_streams.hpp"

namespace tracefold::patterns {

namespace {

using Key = std::tuple<int64_t, int64_t, int64_t>;  // (comm, peer, tag)

std::string value_text(int64_t v) {
  return v == kAny ? std::string("any") : std::to_string(v);
}

// Whether two channels meet: the same communicator, and peer and tag equal
// or a wildcard.
bool meet(const Key& a, const Key& b) {
  auto same = [](int64_t x, int64_t y) { return x == y || x == kAny || y == kAny; };
  return std::get<0>(a) == std::get<0>(b) && same(std::get<1>(a), std::get<1>(b)) &&
         same(std::get<2>(a), std::get<2>(b));
}

// Per rank of `stream`, the channels its events send or receive on.
std::vector<std::set<Key>> channels_of(const Trace& stream) {
  std::vector<std::set<Key>> out(static_cast<std::size_t>(stream.world_size));
  for (int32_t r = 0; r < stream.world_size; ++r) {
    RankIterator it(stream, r);
    Event ev;
    while (it.next(ev)) {
      const std::optional<SymbolKey> k = symbol_of(ev, r, stream.comms, PeerMode::kAbsolute);
      if (!k || k->peer == kAbsent) continue;  // a collective: no channel
      out[static_cast<std::size_t>(r)].emplace(k->comm, k->peer, k->tag);
    }
  }
  return out;
}

std::optional<SharedChannel> first_shared(const std::vector<std::vector<std::set<Key>>>& per) {
  const std::size_t ranks = per.empty() ? 0 : per.front().size();
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t a = 0; a < per.size(); ++a)
      for (std::size_t b = a + 1; b < per.size(); ++b)
        for (const Key& x : per[a][r])
          for (const Key& y : per[b][r])
            if (meet(x, y)) {
              SharedChannel s;
              s.rank = static_cast<int32_t>(r);
              s.threads[0] = static_cast<int32_t>(a);
              s.threads[1] = static_cast<int32_t>(b);
              s.comm = std::get<0>(x);
              // The wildcard's other side names the channel better.
              s.peer = std::get<1>(x) == kAny ? std::get<1>(y) : std::get<1>(x);
              s.tag = std::get<2>(x) == kAny ? std::get<2>(y) : std::get<2>(x);
              return s;
            }
  return std::nullopt;
}

std::vector<Trace> streams_of(const Trace& trace) {
  std::vector<Trace> out;
  for (int32_t t = 0; t < trace.threads; ++t) out.push_back(thread_stream(trace, t));
  return out;
}

std::vector<std::vector<std::set<Key>>> channels_per_thread(const std::vector<Trace>& streams) {
  std::vector<std::vector<std::set<Key>>> per;
  per.reserve(streams.size());
  for (const Trace& s : streams) per.push_back(channels_of(s));
  return per;
}

}  // namespace

std::string SharedChannel::describe() const {
  return "rank " + std::to_string(rank) + " threads " + std::to_string(threads[0]) + " and " +
         std::to_string(threads[1]) + " both use communicator " + std::to_string(comm) + ", peer " +
         value_text(peer) + ", tag " + value_text(tag);
}

std::optional<SharedChannel> shared_channel(const Trace& trace) {
  if (trace.threads <= 1) return std::nullopt;
  return first_shared(channels_per_thread(streams_of(trace)));
}

std::vector<Trace> thread_classes(const Trace& trace) {
  if (trace.threads <= 1) return {trace};
  std::vector<Trace> streams = streams_of(trace);
  if (const auto s = first_shared(channels_per_thread(streams)))
    throw std::runtime_error(
        "patterns per thread class need each channel on one thread of a rank: " + s->describe() +
        " (which message is whose follows the run's timing, which the trace does not keep)");
  return streams;
}

}  // namespace tracefold::patterns
