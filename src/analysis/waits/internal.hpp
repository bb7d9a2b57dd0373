// What the parts of the wait-state analysis share (not a public header).
//
// The pattern logic is written per rank and per synchronization so that the
// serial analysis (every rank in one process, analyze.cpp) and the parallel
// one (one MPI rank per recorded rank, parallel/) call the same functions:
// they differ only in how a rank learns its partners' timestamps.
#pragma once

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "tracefold/timeline.hpp"
#include "tracefold/waits.hpp"

namespace tracefold::waits_detail {

/// One wait state: `waiter` lost `ns` in its event `wev` because `late` had
/// not yet reached its event `lev`.
struct WaitState {
  int32_t waiter = 0;
  std::size_t wev = 0;
  int32_t late = 0;
  std::size_t lev = 0;
  int64_t ns = 0;
  WaitPattern pattern = WaitPattern::kTime;  ///< the leaf pattern it was charged to
};

/// A point where a rank synchronized with a partner (a message) or with the
/// members of a communicator group (a collective).
struct SyncPoint {
  std::size_t ev = 0;
  int32_t partner = -1;  ///< -1: a collective
  int64_t comm = 0;      ///< collectives: communicator id and first member of the group
  int32_t group_first = 0;
};

struct Analysis {
  const Trace& trace;
  const WaitInput& in;
  WaitReport& rep;
  const WaitOptions& opt;
  std::map<std::tuple<OpId, SiteId, bool>, int32_t> cp_index;
  std::vector<WaitState> waits;
  /// Per rank and event: the waiting time found in that call.
  std::vector<std::vector<int64_t>> waited;
  std::vector<std::vector<SyncPoint>> syncs;
  /// Severities and critical path in integer nanoseconds: sums are exact,
  /// so they do not depend on the order the ranks were analysed in.
  std::map<WaitKey, int64_t> ns;
  std::map<std::pair<int32_t, int32_t>, int64_t> critical_ns;
  /// Delay costs (call path, late rank) in integer nanoseconds, so the
  /// serial and the parallel backward replay give the same sums whatever
  /// order the shares arrive in.
  std::map<std::pair<int32_t, int32_t>, int64_t> delay_ns, propagated_ns;
  uint64_t uncaused = 0;  ///< wait states without a cause found
  /// Per rank, once computed: collective_completions of its events (see
  /// collective_done).
  std::vector<std::vector<std::size_t>> coll_done;
  /// With threads: the location that calls the collectives of each (world
  /// rank, communicator, first member of its group).
  std::map<std::tuple<int32_t, int64_t, int32_t>, int32_t> coll_caller;

  Analysis(const Trace& t, const WaitInput& i, WaitReport& r, const WaitOptions& o);
  int32_t callpath(const Event& ev, bool computation);
  void add(WaitPattern p, int32_t cp, int32_t rank, int64_t ns);
  void note_wait(const WaitState& w);
  const TimedEvent& at(int32_t rank, std::size_t ev) const {
    return in.ranks[std::size_t(rank)][ev];
  }
  /// The world rank of a location (the pattern code's "rank" is the index
  /// of in.ranks: a location when the trace has threads).
  int32_t world_rank(int32_t location) const {
    return in.locations.empty() ? location : in.locations[std::size_t(location)].rank;
  }
};

/// The point-to-point messages of `in`, matched by the core between its
/// entries (ranks, or locations: Message::sender_stream/receiver_stream).
MatchResult match_locations(const Trace& trace, const WaitInput& in);

/// Time per call path of one rank: computation, MPI and their groups.
void basic_times(Analysis& a, int32_t rank);

/// A wait of `w` ns found in the call `in_call`, bounded by 0 and by the
/// time the call lasted (a partner's clock may put its side outside it).
inline int64_t clamp_wait(int64_t w, const TimedEvent& in_call) {
  return std::clamp<int64_t>(w, 0, in_call.end_ns - in_call.start_ns);
}

/// A message as its receiver sees it.
struct RecvMatch {
  std::size_t recv_event = 0, recv_complete_event = 0;
  int32_t sender = 0;
  std::size_t send_event = 0;
  int64_t send_start = 0;  ///< the send call's enter time
};
/// Late Sender and Wrong Order on `rank`'s received messages (any order).
void late_senders(Analysis& a, int32_t rank, std::vector<RecvMatch> msgs);

/// A message as its sender sees it.
struct SendMatch {
  std::size_t send_event = 0, send_complete_event = 0;
  int32_t receiver = 0;
  std::size_t recv_event = 0;
  int64_t recv_start = 0;  ///< the receive's enter time (when it was posted)
  uint64_t bytes = 0;
};
/// Late Receiver on `rank`'s sent messages.
void late_receivers(Analysis& a, int32_t rank, const std::vector<SendMatch>& msgs);
/// Whether a send of `bytes` by operation `send`, completed by the call
/// `completion` (the send itself if blocking), can be Late Receiver under
/// `opt`'s rule: the sends that need their receive's enter time.
bool late_receiver_candidate(const WaitOptions& opt, OpId send, OpId completion, uint64_t bytes);

/// A member's entry into a collective instance: enter time, world rank, event.
struct CollPoint {
  int64_t start = 0;
  int32_t rank = -1;  ///< -1: none (no such member)
  std::size_t ev = 0;
};
/// What a member of a collective instance needs to know of the others.
struct CollSummary {
  CollPoint last_in;        ///< latest entry (lowest rank on ties)
  int64_t first_out = 0;    ///< earliest exit
  CollPoint root;           ///< 1-to-N, N-to-1: the root's entry
  CollPoint first_nonroot;  ///< N-to-1: earliest non-root entry (lowest rank on ties)
  CollPoint latest_below;   ///< Scan: latest entry of a lower rank (lowest on ties)
  int64_t comm = 0;
  int32_t group_first = 0;
};
/// The wait states of one member (`rank`, event `ev`) of a complete
/// collective instance; `wait_ev` is where it waits: `ev` for a blocking
/// collective, the Wait/Test that completed a nonblocking one's request
/// (RequestCompletions::npos if none did). A member's entry is the start
/// of `ev` either way.
void collective_member(Analysis& a, int32_t rank, std::size_t ev, std::size_t wait_ev,
                       const CollSummary& s);
/// Per event of one rank: for a nonblocking collective, the event that
/// completed its request (else RequestCompletions::npos).
std::vector<std::size_t> collective_completions(const std::vector<TimedEvent>& evs);
/// The same from the request completions of all its events.
std::vector<std::size_t> collective_completions(const std::vector<TimedEvent>& evs,
                                                std::vector<std::size_t> done);
/// collective_completions of `rank`'s events, computed once per analysis
/// (the pattern passes and the basic times all need it).
const std::vector<std::size_t>& collective_done(Analysis& a, int32_t rank);

/// The communicator group of the collective `ev` of rank `r` if the
/// analysis covers it (blocking or not, not neighbourhood), else nullptr;
/// sets `comm`.
const CommGroup* analysed_collective(const Trace& trace, const Event& ev, int32_t r, int64_t& comm);
/// The root of a rooted collective as a world rank, or -1.
int32_t collective_root(const Event& ev, const CommGroup& g);
/// The serial analysis's collective pass (collectives.cpp): every rank's
/// analysed collectives grouped into instances per communicator group in
/// call order (every member calls them in the same order), each complete
/// instance's members handed to collective_member.
void collectives(Analysis& a);

/// Events analysed and the first and last time stamp over some ranks.
struct Span {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  uint64_t events = 0;
  void add(const std::vector<TimedEvent>& evs);
};

/// Sorts a rank's synchronization points by event and the wait states into
/// their canonical order (before the backward replay).
void sort_for_replay(Analysis& a);

/// After the backward replay: converts nanoseconds to seconds into the
/// report, sets the run time and counts and adds the notes.
void finish(Analysis& a, const Span& span);

/// Serial backward replay over every rank: the critical path and the delay
/// costs (delay.cpp); the parallel one (parallel/backward.cpp) computes the
/// same numbers with the same per-rank functions below.
void critical_path_and_delays(Analysis& a);

/// A call path independent of an Analysis's numbering: what the ranks of
/// the parallel backward replay exchange.
using CallPathKey = int64_t;
inline CallPathKey callpath_key(const Event& ev, bool computation) {
  return (int64_t(ev.site) << 17) | (int64_t(ev.op) << 1) | (computation ? 1 : 0);
}
/// Nanoseconds per call path a rank spent on its own (not waiting).
using OwnTime = std::map<CallPathKey, int64_t>;

/// The last event of `rank` before `ev` at which it synchronized with
/// `other` (a.syncs sorted); -1 if none.
int64_t previous_sync(const Analysis& a, int32_t rank, std::size_t ev, int32_t other);
/// `rank`'s own time after event `from` up to the start of event `to`.
OwnTime own_time(const Analysis& a, int32_t rank, int64_t from, std::size_t to);

/// A rank's wait states as (event, index in a.waits), sorted.
using WaitsByEvent = std::vector<std::pair<std::size_t, std::size_t>>;
/// The positions in `late_waits` (the late rank's waits) of the wait
/// states a wait for event `lev` of `late`, waited for by `waiter`, passes
/// shares on to: those after the two ranks' previous synchronization,
/// before lev. As [first, last).
std::pair<std::size_t, std::size_t> fed_waits(const Analysis& a, int32_t late, std::size_t lev,
                                              int32_t waiter, const WaitsByEvent& late_waits);
/// The late rank's side of wait state `w` in the backward replay: shares
/// `w.ns` (direct) and `carried` (what w has propagated from later waits)
/// among the late rank's excess time over `waiter_time` (the waiter's own
/// time since their previous synchronization) and its own wait states in
/// that interval (`late_waits`: the late rank's waits; their shares are
/// added to `propagated`, indexed like a.waits). The costs go to
/// a.delay_ns and a.propagated_ns; a wait without cause to a.uncaused.
void charge_delay(Analysis& a, const WaitState& w, int64_t carried, const OwnTime& waiter_time,
                  const WaitsByEvent& late_waits, std::vector<int64_t>& propagated);

/// The critical path's walk over one rank, event by event backwards: the
/// token holder adds its calls and computation to a.critical_ns until a
/// call that waited, where the token goes to the rank it waited for.
struct CriticalWalk {
  bool holds = false, whole_call = true;
  /// Event `k` of `rank` (visited from the last backwards); `biggest` is
  /// the index in a.waits of the biggest wait state at k or npos. Returns
  /// that index when the token leaves with it, else npos.
  std::size_t step(Analysis& a, int32_t rank, std::size_t k, std::size_t biggest);
  /// The token arrives at event `k` (the late side of a wait state).
  void arrive() { holds = true, whole_call = false; }
  static constexpr std::size_t npos = std::size_t(-1);
};

/// One receiver's part of a clock-condition pass: `msgs` are (receive
/// completion event, send enter time) in completion order; moves the
/// receives ending before their send, and everything after them, forward.
/// Returns the violations found; `first_moved` (if given) is set to the
/// first event moved (mine.size() if none).
uint64_t repair_receiver(std::vector<TimedEvent>& mine,
                         const std::vector<std::pair<std::size_t, int64_t>>& msgs,
                         std::size_t* first_moved = nullptr);

/// The events of `rank` from its timeline file in `dir` (see load_wait_input).
std::vector<TimedEvent> load_rank_events(const Trace& trace, const std::string& dir, int32_t rank,
                                         uint64_t& dropped, bool* has_end_offset = nullptr);
/// Where a rank's recording ends before its calls do (WaitInput's cut).
struct RankEnd {
  /// Timeline records without an event (an event log that ended first),
  /// and the first one's enter on rank 0's clock.
  uint64_t unlogged = 0;
  int64_t unlogged_from_ns = 0;
  /// Events without a timeline record (past its size bound), and the exit
  /// of the last timed one on rank 0's clock (the next began later).
  uint64_t untimed = 0;
  int64_t untimed_from_ns = 0;
};
/// The same for a `--sample-only` run: the events come from its event log
/// (event_log.hpp), moved out of `events`, which is released; `tables`
/// gives the world size. A log shorter than the timeline, or a timeline
/// shorter than the log, is timed up to its end, said in `end`.
std::vector<TimedEvent> load_rank_events(const Trace& tables, std::vector<Event>&& events,
                                         const std::string& dir, int32_t rank, uint64_t& dropped,
                                         bool* has_end_offset, RankEnd& end);

/// Reads the `field` of an event (kAbsent if missing).
int64_t field_of(const Event& ev, const char* name);

}  // namespace tracefold::waits_detail
