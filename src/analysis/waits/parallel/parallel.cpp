// The parallel wait-state analysis (parallel.hpp): each rank reads its own
// timeline, learns its partners' timestamps by exchanges in the recorded
// direction, and runs the serial analysis's per-rank pattern code
// (internal.hpp) on them. Rank 0 then gathers the severities and a compact
// copy of every rank's event times for the backward replay (critical path,
// delay costs), which follows wait states across ranks.
#include "parallel.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>

#include "internal.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/timeline.hpp"

namespace tracefold::waits_parallel {

using namespace waits_detail;

namespace {

using Buffer = std::vector<int64_t>;

// Each destination's records in one exchange. Returns what arrived, with
// `from[s]` the offset of source s's part (from[P] = the end).
Buffer alltoallv(MPI_Comm c, const std::vector<Buffer>& out, std::vector<int>& from) {
  const int n = static_cast<int>(out.size());
  const auto un = static_cast<std::size_t>(n);
  std::vector<int> sc(un), sd(un), rc(un);
  Buffer send;
  for (int p = 0; p < n; ++p) {
    sc[std::size_t(p)] = static_cast<int>(out[std::size_t(p)].size());
    sd[std::size_t(p)] = static_cast<int>(send.size());
    send.insert(send.end(), out[std::size_t(p)].begin(), out[std::size_t(p)].end());
  }
  MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, c);
  from.assign(std::size_t(n) + 1, 0);
  for (int p = 0; p < n; ++p) from[std::size_t(p) + 1] = from[std::size_t(p)] + rc[std::size_t(p)];
  Buffer got(std::size_t(from.back()) + 1);  // never empty: data() is a valid pointer
  send.push_back(0);
  MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_INT64_T, got.data(), rc.data(), from.data(),
                MPI_INT64_T, c);
  got.pop_back();
  return got;
}

int64_t comm_of(const Event& ev) {
  const int64_t c = field_of(ev, "comm");
  return c == kAbsent ? CommTable::kWorld : c;
}

// One rank's view of the messages it received.
struct Received {
  int32_t from;
  std::size_t k;  // position in `from`'s records to this rank
  std::size_t send_event, recv_event, recv_complete;
};

// Ranks agree on failing: the lowest failing rank throws its message, the
// others a PeerFailed.
void agree(MPI_Comm c, const std::string& err) {
  int me = 0, size = 0;
  MPI_Comm_rank(c, &me);
  MPI_Comm_size(c, &size);
  int mine = err.empty() ? size : me, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c);
  if (first == size) return;
  if (first == me) throw WaitsError(err);
  throw PeerFailed("rank " + std::to_string(first) + " failed");
}

}  // namespace

void agree_or_throw(MPI_Comm c, const std::string& err) {
  agree(c, err);
}

WaitReport analyze_parallel(MPI_Comm world, const Trace& trace, const std::string& dir,
                            const WaitOptions& options) {
  int me_i = 0, np = 0;
  MPI_Comm_rank(world, &me_i);
  MPI_Comm_size(world, &np);
  const int32_t me = me_i;
  const std::size_t P = std::size_t(np);
  WaitInput in;
  in.ranks.resize(P);
  std::string err;
  try {
    if (!std::filesystem::is_directory(dir))
      throw WaitsError(dir +
                       ": no timeline directory; wait-state analysis needs event times: record "
                       "the run with `tracefold record --timeline`");
    in.ranks[std::size_t(me)] = load_rank_events(trace, dir, me, in.dropped);
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree(world, err);
  std::vector<TimedEvent>& mine = in.ranks[std::size_t(me)];
  std::vector<Event> evs;
  evs.reserve(mine.size());
  for (const TimedEvent& te : mine) evs.push_back(te.ev);
  const RequestCompletions done = find_completions(evs);
  constexpr std::size_t npos = RequestCompletions::npos;

  // Sends, per destination in program order: the receiver matches them to
  // its receives as MPI does (per communicator, source and tag, FIFO).
  struct Sent {
    std::size_t ev, complete;
    uint64_t bytes;
  };
  std::vector<std::vector<Sent>> sent(P);
  std::vector<Buffer> out(P);
  int64_t sends = 0;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const OpClass c = classify(evs[i].op);
    if (c != OpClass::kSend && c != OpClass::kIsend && c != OpClass::kSendrecv) continue;
    const int64_t comm = comm_of(evs[i]);
    const int32_t dest = world_peer(trace.comms, comm, me, field_of(evs[i], "peer"));
    if (dest < 0) continue;
    const std::size_t complete = c == OpClass::kIsend && done.done[i] != npos ? done.done[i] : i;
    sent[std::size_t(dest)].push_back({i, complete, send_bytes(evs[i])});
    auto& o = out[std::size_t(dest)];
    o.insert(o.end(), {comm, field_of(evs[i], "tag")});
    ++sends;
  }
  std::vector<int> from;
  Buffer got = alltoallv(world, out, from);
  std::map<std::tuple<int64_t, int32_t, int64_t>, std::deque<std::size_t>> queues;
  for (std::size_t s = 0; s < P; ++s)
    for (int k = from[s]; k < from[s + 1]; k += 2)
      queues[{got[std::size_t(k)], int32_t(s), got[std::size_t(k) + 1]}].push_back(
          std::size_t(k - from[s]) / 2);
  std::vector<Received> recvd;
  int64_t unmatched_recvs = 0;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const OpClass c = classify(evs[i].op);
    if (c != OpClass::kRecv && c != OpClass::kIrecv && c != OpClass::kSendrecv) continue;
    const int64_t comm = comm_of(evs[i]);
    int64_t source = field_of(evs[i], c == OpClass::kSendrecv ? "rpeer" : "peer");
    int64_t tag = field_of(evs[i], c == OpClass::kSendrecv ? "rtag" : "tag");
    if (source == kNull) continue;
    int64_t msrc = field_of(evs[i], "src"), mtag = field_of(evs[i], "mtag");
    if (c == OpClass::kIrecv) {
      msrc = done.src[i];
      mtag = done.mtag[i];
    }
    if (source == kAny) source = msrc;
    if (tag == kAny) tag = mtag;
    const int32_t src = world_peer(trace.comms, comm, me, source);
    auto q = src < 0 || is_sentinel(tag) ? queues.end() : queues.find({comm, src, tag});
    if (q == queues.end() || q->second.empty()) {
      ++unmatched_recvs;
      continue;
    }
    const std::size_t k = q->second.front();
    q->second.pop_front();
    const std::size_t complete = c == OpClass::kIrecv && done.done[i] != npos ? done.done[i] : i;
    recvd.push_back({src, k, 0, i, complete});
  }

  // The senders' current enter times, per received message.
  auto send_starts = [&] {
    std::vector<Buffer> o(P);
    for (std::size_t d = 0; d < P; ++d)
      for (const Sent& s : sent[d]) o[d].push_back(mine[s.ev].start_ns);
    std::vector<int> at;
    const Buffer t = alltoallv(world, o, at);
    std::vector<int64_t> res(recvd.size());
    for (std::size_t j = 0; j < recvd.size(); ++j)
      res[j] = t[std::size_t(at[std::size_t(recvd[j].from)]) + recvd[j].k];
    return res;
  };

  // The clock condition, pass by pass as repair_clock_condition does it.
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < recvd.size(); ++j)
    if (recvd[j].from != me) order.push_back(j);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return recvd[x].recv_complete < recvd[y].recv_complete;
  });
  uint64_t violations = 0;
  std::vector<std::pair<std::size_t, int64_t>> pass_msgs;
  for (int pass = 0; pass < 20; ++pass) {
    const std::vector<int64_t> starts = send_starts();
    pass_msgs.clear();
    for (std::size_t j : order) pass_msgs.push_back({recvd[j].recv_complete, starts[j]});
    const uint64_t found_here = repair_receiver(mine, pass_msgs);
    uint64_t found = 0;
    MPI_Allreduce(&found_here, &found, 1, MPI_UINT64_T, MPI_SUM, world);
    if (pass == 0) violations = found;
    if (found == 0) break;
  }

  // Late Sender needs the send's enter time at the receiver; Late Receiver
  // the receive's at the sender (sent back).
  const std::vector<int64_t> starts = send_starts();
  std::vector<RecvMatch> recv_matches;
  std::vector<Buffer> back(P);
  for (std::size_t j = 0; j < recvd.size(); ++j) {
    const Received& m = recvd[j];
    recv_matches.push_back({m.recv_event, m.recv_complete, m.from, 0, starts[j]});
    back[std::size_t(m.from)].insert(
        back[std::size_t(m.from)].end(),
        {int64_t(m.k), int64_t(m.recv_event), mine[m.recv_event].start_ns});
  }
  // The sender's event index of each received message, for the wait states.
  {
    std::vector<Buffer> o(P);
    for (std::size_t d = 0; d < P; ++d)
      for (const Sent& s : sent[d]) o[d].push_back(int64_t(s.ev));
    std::vector<int> at;
    const Buffer t = alltoallv(world, o, at);
    for (std::size_t j = 0; j < recvd.size(); ++j)
      recv_matches[j].send_event =
          std::size_t(t[std::size_t(at[std::size_t(recvd[j].from)]) + recvd[j].k]);
  }
  got = alltoallv(world, back, from);
  std::vector<SendMatch> send_matches;
  for (std::size_t s = 0; s < P; ++s)
    for (int k = from[s]; k < from[s + 1]; k += 3) {
      const Sent& snd = sent[s][std::size_t(got[std::size_t(k)])];
      send_matches.push_back({snd.ev, snd.complete, int32_t(s),
                              std::size_t(got[std::size_t(k) + 1]), got[std::size_t(k) + 2],
                              snd.bytes});
    }

  WaitReport local;
  local.world_size = np;
  local.patterns = wait_patterns();
  Analysis a(trace, in, local, options);
  basic_times(a, me);
  const int64_t matched = int64_t(recv_matches.size());
  late_senders(a, me, std::move(recv_matches));
  late_receivers(a, me, send_matches);
  detail::Counters counters;
  counters.messages = matched;
  counters.unmatched_recvs = unmatched_recvs;
  counters.sends = sends;
  counters.dropped = int64_t(in.dropped);
  detail::collectives_parallel(world, a, me, counters);
  return detail::gather_report(world, trace, a, options, counters, violations);
}

}  // namespace tracefold::waits_parallel
