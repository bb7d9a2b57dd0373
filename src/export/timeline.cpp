// Synthesized timelines, point-to-point matching and the communication
// matrix (see timeline.hpp).
#include "tracefold/timeline.hpp"

#include <filesystem>
#include <limits>

#include "tracefold/timeline_io.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <string_view>
#include <tuple>

#include "tracefold/expand.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/wildcards.hpp"

namespace tracefold {

int64_t field_by_literal(const Event& ev, const char* name) {
  // Only found ids are kept (a name may be registered later).
  struct Known {
    const char* name;
    FieldId id;
  };
  thread_local std::vector<Known> known;
  for (const Known& k : known)
    if (k.name == name) return ev.get(k.id);
  const auto id = FieldTable::find(name);
  if (!id) return kAbsent;
  if (known.size() < 32) known.push_back({name, *id});
  return ev.get(*id);
}

OpClass classify(OpId op) {
  // The core's classification, in the coarser classes the exporters pair
  // messages and colour slices by.
  const OpTraits& t = op_traits(op);
  switch (t.family) {
    case OpFamily::kSend:
      return t.nonblocking ? OpClass::kIsend : OpClass::kSend;
    case OpFamily::kRecv:
      return t.nonblocking ? OpClass::kIrecv : OpClass::kRecv;
    case OpFamily::kSendrecv:
      return OpClass::kSendrecv;
    default:
      break;
  }
  if (t.category == OpCategory::kCollective)
    return t.nonblocking || t.shape == CollectiveShape::kNeighbor ? OpClass::kICollective
                                                                  : OpClass::kCollective;
  if (t.category == OpCategory::kCompletion) return OpClass::kCompletion;
  return OpClass::kOther;
}

std::vector<RankTimeline> synthesize_timeline(const Trace& trace) {
  std::vector<RankTimeline> out;
  out.reserve(static_cast<std::size_t>(trace.world_size));
  for (int32_t loc = 0; loc < trace.locations(); ++loc) {
    RankTimeline tl;
    tl.rank = trace.rank_of(loc);
    tl.thread = trace.thread_of(loc);
    RankIterator it(trace, loc);
    int64_t t = 0;
    TimedEvent te;
    while (it.next(te.ev)) {
      const int64_t gap = te.ev.compute_ns > 0 ? te.ev.compute_ns : 0;
      te.timed = te.ev.comm_ns >= 0;
      // A recorded 0 ns still gets 1 ns so that every call is a real slice.
      const int64_t dur = te.timed ? std::max<int64_t>(te.ev.comm_ns, 1) : kNominalCallNs;
      te.compute_start_ns = t;
      te.start_ns = t + gap;
      te.end_ns = te.start_ns + dur;
      t = te.end_ns;
      tl.compute_ns += gap;
      if (te.timed) tl.comm_ns += te.ev.comm_ns;
      tl.events.push_back(te);
    }
    tl.end_ns = t;
    // Ranks keep their place even without events; a rank's later threads
    // are listed only when they called MPI.
    if (tl.thread == 0 || !tl.events.empty()) out.push_back(std::move(tl));
  }
  return out;
}

std::string TraceTimeline::describe() const {
  if (!recorded)
    return "timeline synthesized from mean times" + (note.empty() ? "" : " (" + note + ")");
  uint64_t n = 0;
  for (const RankTimeline& r : ranks) n += r.events.size();
  return "timeline recorded (" + std::to_string(n - dropped) + " events with timestamps" +
         (dropped ? ", " + std::to_string(dropped) +
                        " dropped at the size bound and laid out with mean times"
                  : "") +
         ")" + (clock.applied() ? "; " + clock.describe() : "");
}

TraceTimeline synthesized_timeline(const Trace& trace) {
  TraceTimeline t;
  t.ranks = synthesize_timeline(trace);
  return t;
}

namespace {

// Every rank's timeline file in `dir`, checked against the trace.
std::vector<RankTimelineFile> read_rank_files(const Trace& trace, const std::string& dir) {
  std::vector<RankTimelineFile> files;
  for (int32_t r = 0; r < trace.world_size; ++r) {
    const std::string path =
        (std::filesystem::path(dir) / ("rank-" + std::to_string(r) + ".tft")).string();
    files.push_back(read_timeline_file(path));
    const RankTimelineFile& f = files.back();
    if (f.rank != r || f.world_size != trace.world_size)
      throw std::runtime_error(path + ": timeline of rank " + std::to_string(f.rank) + " of " +
                               std::to_string(f.world_size) + ", the trace has " +
                               std::to_string(trace.world_size) + " ranks");
  }
  return files;
}

// Why files recorded without the thread of each call cannot time a trace
// with threads, or "" when they can.
std::string threadless(const Trace& trace, const std::vector<RankTimelineFile>& files) {
  if (trace.threads <= 1) return "";
  for (const RankTimelineFile& f : files)
    if (!f.has_threads())
      return f.source + " (timeline version " + std::to_string(f.version) +
             ") does not say which thread made each call";
  return "";
}

// Location `loc`'s events at the times of its records.
RankTimeline lay_out_location(const Trace& trace, const RankTimelineFile& f, int32_t loc,
                              int64_t origin, uint64_t& dropped) {
  RankTimeline tl;
  tl.rank = trace.rank_of(loc);
  tl.thread = trace.thread_of(loc);
  const std::vector<TimelineRecord> threads_records =
      trace.threads > 1 ? f.thread_records(tl.thread) : std::vector<TimelineRecord>{};
  const std::vector<TimelineRecord>& records = trace.threads > 1 ? threads_records : f.records;
  const std::string who = trace.threads > 1 ? "thread " + std::to_string(tl.thread) + " of rank " +
                                                  std::to_string(tl.rank)
                                            : "rank " + std::to_string(tl.rank);
  RankIterator it(trace, loc);
  TimedEvent te;
  std::size_t k = 0;
  int64_t t = 0;
  while (it.next(te.ev)) {
    if (k < records.size()) {
      const TimelineRecord& rec = records[k];
      if (rec.op != te.ev.op)
        throw std::runtime_error(f.source + ": event " + std::to_string(k) + " of " + who + " is " +
                                 OpTable::name(rec.op) + ", the trace has " +
                                 OpTable::name(te.ev.op) + " (not this trace's timeline?)");
      te.start_ns = f.to_global(rec.enter_ns) - origin;
      te.end_ns = std::max(te.start_ns + 1, f.to_global(rec.exit_ns) - origin);
      te.compute_start_ns = k == 0 ? te.start_ns : std::min(t, te.start_ns);
      te.timed = true;
      te.measured = true;
    } else {
      // Past the recorder's budget: mean times, as in a synthesized timeline.
      ++dropped;
      te.compute_start_ns = t;
      te.start_ns = t + std::max<int64_t>(te.ev.compute_ns, 0);
      te.end_ns =
          te.start_ns + (te.ev.comm_ns >= 0 ? std::max<int64_t>(te.ev.comm_ns, 1) : kNominalCallNs);
      te.timed = te.ev.comm_ns >= 0;
    }
    tl.compute_ns += te.start_ns - te.compute_start_ns;
    if (te.timed) tl.comm_ns += te.end_ns - te.start_ns;
    t = te.end_ns;
    tl.events.push_back(te);
    ++k;
  }
  if (k < records.size())
    throw std::runtime_error(f.source + ": " + std::to_string(records.size()) +
                             " events, the trace has " + std::to_string(k) + " for " + who);
  tl.end_ns = t;
  return tl;
}

TraceTimeline lay_out_recorded(const Trace& trace, const std::vector<RankTimelineFile>& files) {
  TraceTimeline out;
  out.recorded = true;
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const RankTimelineFile& f : files) {
    out.clock.add(f.clock());
    if (!f.records.empty()) origin = std::min(origin, f.to_global(f.records.front().enter_ns));
  }
  if (origin == std::numeric_limits<int64_t>::max()) origin = 0;
  // Location order, as synthesize_timeline: the ranks' first threads, then
  // the later threads that called MPI.
  for (int32_t loc = 0; loc < trace.locations(); ++loc) {
    RankTimeline tl =
        lay_out_location(trace, files[std::size_t(trace.rank_of(loc))], loc, origin, out.dropped);
    if (tl.thread == 0 || !tl.events.empty()) out.ranks.push_back(std::move(tl));
  }
  return out;
}

}  // namespace

TraceTimeline load_recorded_timeline(const Trace& trace, const std::string& dir) {
  const std::vector<RankTimelineFile> files = read_rank_files(trace, dir);
  if (const std::string why = threadless(trace, files); !why.empty())
    throw std::runtime_error(why + ", and the trace has " + std::to_string(trace.threads) +
                             " threads a rank (without --timeline each thread is laid out from "
                             "mean times)");
  return lay_out_recorded(trace, files);
}

TraceTimeline timeline_for(const Trace& trace, const std::string& trace_path,
                           const std::string& dir) {
  if (!dir.empty()) return load_recorded_timeline(trace, dir);
  const std::string beside = trace_path + ".timeline";
  if (!std::filesystem::is_directory(beside)) return synthesized_timeline(trace);
  const std::vector<RankTimelineFile> files = read_rank_files(trace, beside);
  if (const std::string why = threadless(trace, files); !why.empty()) {
    // A timeline of an older recorder mixes the threads' calls of a rank.
    TraceTimeline t = synthesized_timeline(trace);
    t.note = why + ": " + beside + " not used";
    return t;
  }
  return lay_out_recorded(trace, files);
}

int32_t world_peer(const CommTable& comms, int64_t comm, int32_t world_rank, int64_t peer) {
  if (is_sentinel(peer) || peer < 0) return -1;
  const CommGroup* g = comms.group_of(comm, world_rank);
  if (!g || peer >= static_cast<int64_t>(g->members.size())) return -1;
  return g->members[static_cast<std::size_t>(peer)];
}

uint64_t send_bytes(const Event& ev) {
  const int64_t count = field_by_literal(ev, "count"), dsize = field_by_literal(ev, "dsize");
  if (is_sentinel(count) || is_sentinel(dsize) || count <= 0 || dsize <= 0) return 0;
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(dsize);
}

int64_t event_comm(const Event& ev) {
  const int64_t c = field_by_literal(ev, "comm");
  return c == kAbsent ? CommTable::kWorld : c;
}

RequestCompletions find_completions(const std::vector<Event>& evs) {
  constexpr std::size_t npos = RequestCompletions::npos;
  RequestCompletions c;
  c.done.assign(evs.size(), npos);
  c.src.assign(evs.size(), kAbsent);
  c.mtag.assign(evs.size(), kAbsent);
  std::vector<std::size_t> reqs;  // request-creating events, in order
  std::vector<bool> wild;         // per link of the current completion
  // Completed by a Waitsome/Testsome, which does not record which of its
  // requests completed: a later call naming the request proves it was still
  // live, and takes over.
  std::vector<bool> tentative(evs.size(), false);
  const auto links_id = FieldTable::links();
  // A request another thread made counts back in that thread's requests,
  // not in these (`lthreads`, docs/format.md): left uncompleted here rather
  // than pinned on one of this thread's own.
  const std::optional<FieldId> lthreads_id = FieldTable::find("lthreads");
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const Event& ev = evs[i];
    if (OpTable::makes_request(ev.op)) {
      reqs.push_back(i);
      continue;
    }
    if (classify(ev.op) != OpClass::kCompletion) continue;
    const FieldValue* links = ev.find(links_id);
    if (!links) continue;
    const FieldValue* makers = lthreads_id ? ev.find(*lthreads_id) : nullptr;
    auto foreign = [&](std::size_t k) {
      return makers && k < makers->list.size() && !is_sentinel(makers->list[k]);
    };
    const int64_t flag = field_by_literal(ev, "flag");
    if (flag == 0) continue;  // a Test that found nothing complete
    const int64_t index = field_by_literal(ev, "index");
    static const OpId waitany = *OpTable::find("MPI_Waitany"),
                      testany = *OpTable::find("MPI_Testany"),
                      waitsome = *OpTable::find("MPI_Waitsome"),
                      testsome = *OpTable::find("MPI_Testsome");
    const bool any = ev.op == waitany || ev.op == testany;
    const bool some = ev.op == waitsome || ev.op == testsome;
    // Which wildcard receive matched what (and, for Waitsome/Testsome,
    // which of them did not complete in this call).
    wild.assign(links->list.size(), false);
    for (std::size_t k = 0; k < links->list.size(); ++k) {
      const int64_t d = links->list[k];
      if (foreign(k) || is_sentinel(d) || d <= 0 || static_cast<std::size_t>(d) > reqs.size())
        continue;
      wild[k] = is_wildcard_receive(evs[reqs[reqs.size() - static_cast<std::size_t>(d)]]);
    }
    const std::vector<WildcardMatch> matches = wildcard_matches(ev, wild);
    for (std::size_t k = 0; k < links->list.size(); ++k) {
      if (any && !is_sentinel(index) && static_cast<int64_t>(k) != index) continue;
      if (matches[k].outcome == WildcardOutcome::kNotCompleted || foreign(k)) continue;
      const int64_t d = links->list[k];
      if (is_sentinel(d) || d <= 0 || static_cast<std::size_t>(d) > reqs.size()) continue;
      const std::size_t creator = reqs[reqs.size() - static_cast<std::size_t>(d)];
      if (c.done[creator] != npos && !tentative[creator]) continue;
      c.done[creator] = i;
      tentative[creator] = some && matches[k].outcome != WildcardOutcome::kMatched;
      if (matches[k].outcome == WildcardOutcome::kMatched) {
        c.src[creator] = matches[k].src;
        c.mtag[creator] = matches[k].tag;
      } else if (links->list.size() == 1 || any) {
        c.src[creator] = field_by_literal(ev, "src");
        c.mtag[creator] = field_by_literal(ev, "mtag");
      }
    }
  }
  return c;
}

namespace {

// match_messages over streams, `rank_of[k]` the world rank of stream k.
// The sends of one key, and its receives, are taken in their rank-wide
// order: a stream's own order, with the threads' calls interleaved as the
// recorder's `others` / `rothers` say (docs/format.md "Message order across
// threads"). Without them (one thread per rank, or threads with keys of
// their own) that is each stream's order, as MPI's non-overtaking rule has it.
MatchResult match_streams(const CommTable& comms, const std::vector<std::vector<Event>>& ranks,
                          const std::vector<int32_t>& rank_of) {
  constexpr std::size_t npos = std::size_t(-1);
  MatchResult res;
  using Key = std::tuple<int64_t, int32_t, int32_t, int64_t>;  // comm, sender, receiver, tag
  struct SendRef {
    uint64_t order;
    std::size_t stream, event, complete;
    uint64_t bytes;
  };
  struct RecvRef {
    Key key;
    uint64_t order;
    std::size_t stream, event;
  };
  // Per stream and key: calls so far, and the other threads' calls before
  // them; their sum is the next call's place in the rank-wide order.
  std::map<std::tuple<std::size_t, bool, Key>, uint64_t> seen;
  const auto place = [&](std::size_t stream, bool recv, const Key& key, const Event& ev,
                         const char* others_field) {
    const int64_t others = field_by_literal(ev, others_field);
    uint64_t& n = seen[{stream, recv, key}];
    if (!is_sentinel(others) && others > 0) n += static_cast<uint64_t>(others);
    return n++;
  };
  std::map<Key, std::vector<SendRef>> queues;
  std::vector<RequestCompletions> completions;
  completions.reserve(ranks.size());
  for (const auto& evs : ranks) completions.push_back(find_completions(evs));

  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int32_t me = rank_of[r];
    for (std::size_t i = 0; i < ranks[r].size(); ++i) {
      const Event& ev = ranks[r][i];
      const OpClass c = classify(ev.op);
      if (!sends_message(c)) continue;
      const int64_t comm = event_comm(ev);
      const int32_t dest = world_peer(comms, comm, me, field_by_literal(ev, "peer"));
      if (dest < 0) continue;
      std::size_t complete = i;
      if (c == OpClass::kIsend && completions[r].done[i] != npos) complete = completions[r].done[i];
      const Key key{comm, me, dest, field_by_literal(ev, "tag")};
      queues[key].push_back(
          SendRef{place(r, false, key, ev, "others"), r, i, complete, send_bytes(ev)});
    }
  }
  for (auto& [key, q] : queues)
    std::stable_sort(q.begin(), q.end(), [](const SendRef& a, const SendRef& b) {
      return std::tie(a.order, a.stream) < std::tie(b.order, b.stream);
    });
  std::vector<RecvRef> recvs;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int32_t me = rank_of[r];
    for (std::size_t i = 0; i < ranks[r].size(); ++i) {
      const Event& ev = ranks[r][i];
      const OpClass c = classify(ev.op);
      if (!receives_message(c)) continue;
      const int64_t comm = event_comm(ev);
      int64_t source = field_by_literal(ev, c == OpClass::kSendrecv ? "rpeer" : "peer");
      int64_t tag = field_by_literal(ev, c == OpClass::kSendrecv ? "rtag" : "tag");
      if (source == kNull) continue;
      int64_t msrc = field_by_literal(ev, "src"), mtag = field_by_literal(ev, "mtag");
      if (c == OpClass::kIrecv) {
        msrc = completions[r].src[i];
        mtag = completions[r].mtag[i];
      }
      if (source == kAny) source = msrc;
      if (tag == kAny) tag = mtag;
      const int32_t from = world_peer(comms, comm, me, source);
      if (from < 0 || is_sentinel(tag)) {
        ++res.unmatched_recvs;
        continue;
      }
      const Key key{comm, from, me, tag};
      recvs.push_back(RecvRef{
          key, place(r, true, key, ev, c == OpClass::kSendrecv ? "rothers" : "others"), r, i});
    }
  }
  std::stable_sort(recvs.begin(), recvs.end(), [](const RecvRef& a, const RecvRef& b) {
    return std::tie(a.key, a.order, a.stream) < std::tie(b.key, b.order, b.stream);
  });
  std::map<Key, std::size_t> taken;  // per key, the sends matched so far
  for (const RecvRef& rv : recvs) {
    const auto q = queues.find(rv.key);
    std::size_t& next = taken[rv.key];
    if (q == queues.end() || next >= q->second.size()) {
      ++res.unmatched_recvs;
      continue;
    }
    const SendRef s = q->second[next++];
    const std::size_t r = rv.stream, i = rv.event;
    const OpClass c = classify(ranks[r][i].op);
    Message m;
    m.sender = std::get<1>(rv.key);
    m.receiver = std::get<2>(rv.key);
    m.sender_stream = s.stream;
    m.receiver_stream = r;
    m.comm = std::get<0>(rv.key);
    m.tag = std::get<3>(rv.key);
    m.bytes = s.bytes;
    m.send_event = s.event;
    m.send_complete_event = s.complete;
    m.recv_event = i;
    m.recv_complete_event = i;
    if (c == OpClass::kIrecv && completions[r].done[i] != npos)
      m.recv_complete_event = completions[r].done[i];
    res.messages.push_back(m);
  }
  for (const auto& [key, q] : queues) res.unmatched_sends += q.size() - taken[key];
  // In the receivers' order, stream by stream, as the callers take them.
  std::sort(res.messages.begin(), res.messages.end(), [](const Message& a, const Message& b) {
    return std::tie(a.receiver_stream, a.recv_event) < std::tie(b.receiver_stream, b.recv_event);
  });
  return res;
}

}  // namespace

MatchResult match_messages(const CommTable& comms, const std::vector<std::vector<Event>>& ranks) {
  std::vector<int32_t> rank_of(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) rank_of[r] = static_cast<int32_t>(r);
  return match_streams(comms, ranks, rank_of);
}

MatchResult match_messages(const CommTable& comms, const std::vector<RankTimeline>& timeline) {
  std::vector<std::vector<Event>> ranks(timeline.size());
  std::vector<int32_t> rank_of(timeline.size());
  for (std::size_t r = 0; r < timeline.size(); ++r) {
    rank_of[r] = timeline[r].rank;
    ranks[r].reserve(timeline[r].events.size());
    for (const auto& te : timeline[r].events) ranks[r].push_back(te.ev);
  }
  return match_streams(comms, ranks, rank_of);
}

CommMatrix comm_matrix(const Trace& trace) {
  CommMatrix m;
  m.size = trace.world_size;
  const std::size_t n = static_cast<std::size_t>(m.size);
  m.messages.assign(n * n, 0);
  m.bytes.assign(n * n, 0);
  // Every thread's sends count at its rank.
  for (int32_t loc = 0; loc < trace.locations(); ++loc) {
    const int32_t r = trace.rank_of(loc);
    RankIterator it(trace, loc);
    Event ev;
    while (it.next(ev)) {
      if (!sends_message(classify(ev.op))) continue;
      const int32_t dest = world_peer(trace.comms, event_comm(ev), r, field_by_literal(ev, "peer"));
      if (dest < 0) continue;
      const std::size_t k = std::size_t(r) * n + std::size_t(dest);
      ++m.messages[k];
      m.bytes[k] += send_bytes(ev);
    }
  }
  return m;
}

}  // namespace tracefold
