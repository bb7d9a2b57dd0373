// Wait-state analysis of a recorded timeline (`tracefold analyze`): where
// ranks wait in MPI, which of Scalasca's patterns the waiting is (seed 003),
// who caused it (delay costs) and which rank/call-path segments make up the
// run time (critical path). No MPI here: the serial analysis replays every
// rank's recorded events in one process; the parallel one (`mpirun -np P
// tracefold analyze`, src/analysis/waits/parallel/) runs the same pattern
// code with one MPI rank per recorded rank and gives the same report.
//
// Input is a `tracefold record --timeline` recording: the folded trace gives
// each rank's calls and parameters, TRACE.timeline/rank-R.tft their enter and
// exit times. Point-to-point messages are paired with the core's matching
// (timeline.hpp), collectives per communicator instance in call order, and
// operations are told apart by the core's classification (op_class.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tracefold/progress.hpp"
#include "tracefold/timeline.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// The analysis cannot run on this input (no timeline, wrong rank count).
class WaitsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The metric tree, as Scalasca arranges it: a child is a part of its
/// parent's time.
enum class WaitPattern : uint8_t {
  kTime,               ///< computation + MPI
  kComputation,        ///< time between MPI calls
  kMpi,                ///< time in MPI calls
  kPointToPoint,       ///< send, receive, Wait/Test calls
  kLateSender,         ///< receive (or its Wait) entered before the send began
  kWrongOrder,         ///< Late Sender while an earlier-sent message was still pending
  kLateReceiver,       ///< send still blocked when its receive was posted (LateReceiverRule)
  kCollective,         ///< data-moving collectives
  kLateBroadcast,      ///< 1-to-N: non-root enters before the root
  kEarlyReduce,        ///< N-to-1: root enters before the first non-root
  kEarlyScan,          ///< Scan/Exscan: rank enters before a lower rank
  kWaitNxN,            ///< N×N: waiting for the last rank to enter
  kNxNCompletion,      ///< N×N: time after the first rank has left
  kSynchronization,    ///< Barrier
  kWaitBarrier,        ///< waiting for the last rank to enter
  kBarrierCompletion,  ///< time after the first rank has left
  kCount
};

struct WaitPatternInfo {
  std::string id;           ///< short name, e.g. `late_sender` (JSON, CUBE unique name)
  std::string name;         ///< display name, e.g. `Late Sender`
  int32_t parent = -1;      ///< index of the parent pattern, -1 for the root
  std::string description;  ///< one sentence
};

/// The pattern tree, indexed by WaitPattern.
const std::vector<WaitPatternInfo>& wait_patterns();

/// A call path: one MPI call site (operation + call stack), or the
/// computation before calls from one call site.
struct WaitCallPath {
  OpId op = 0;
  SiteId site = 0;
  bool computation = false;  ///< the time before calls of (op, site)
  std::string label;         ///< `MPI_Recv at main (ring.c:12)`, `computation before ...`
  int32_t parent = -1;       ///< -1: the list is flat (the CUBE tree comes from `stack`)
  /// The call stack, outermost frame first (symbolized where known):
  /// the CUBE call tree nests call paths along it.
  std::vector<std::string> stack;
};

/// One (pattern, call path, rank) cell; with threads the "rank" is a
/// location (WaitReport::locations).
using WaitKey = std::tuple<int32_t, int32_t, int32_t>;

/// Which sends Late Receiver charges, and how much (docs/analyze.md).
enum class LateReceiverRule : uint8_t {
  /// Scalasca's: a blocking MPI_Send or MPI_Ssend, or the single MPI_Wait
  /// of a nonblocking send, still in its call when the receive was posted,
  /// from the call's enter to the receive's enter. Any message size.
  kScalasca,
  /// By protocol: synchronous sends and messages of at least
  /// `rendezvous_bytes` (they cannot complete before the receive is
  /// posted), from the blocking call's enter to the receive's enter, at
  /// most the call's length.
  kProtocol,
};
/// The rules by their names on the command line (`--late-receiver
/// scalasca|protocol`).
const std::map<std::string, LateReceiverRule>& late_receiver_rules();

struct WaitOptions {
  LateReceiverRule late_receiver = LateReceiverRule::kScalasca;
  /// kProtocol: sends of at least this many bytes are taken as rendezvous.
  uint64_t rendezvous_bytes = 65536;
  /// Pending Late Sender instances kept per rank for Wrong Order.
  std::size_t wrong_order_queue = 100;
  /// Keep every wait state in WaitReport::instances (for analyses that
  /// need to know who waited for whom, such as `diagnose`).
  bool keep_instances = false;
  /// The messages of the input, matched already (match_wait_input on the
  /// same events); null: the analysis matches them itself, on a copy of
  /// every event.
  const MatchResult* matched = nullptr;
  /// Walk the critical path and charge the delay costs (critical_path,
  /// delay_costs, propagated_costs and the `no cause found` note). Off,
  /// the analysis finds the wait states alone, which is all `diagnose`
  /// uses of it: the walk back over every wait state costs as much again.
  bool causes = true;
  /// Told after each of the analysis's passes (basic times, point-to-point,
  /// collectives, critical path): done of kWaitPasses.
  ProgressFn progress;
};
inline constexpr std::size_t kWaitPasses = 4;

/// One wait state: `waiter` lost `seconds` in its event `event` because
/// `late` had not yet reached its event `late_event` (event indexes of the
/// ranks' recorded sequences).
struct WaitInstance {
  int32_t waiter = 0;
  uint64_t event = 0;
  int32_t late = 0;
  uint64_t late_event = 0;
  double seconds = 0;
  WaitPattern pattern = WaitPattern::kTime;  ///< the leaf pattern it is charged to
};

/// A (rank, thread) location of a trace with threads; `name` is `R.T` for
/// a rank with more than one thread, else `R`.
struct WaitLocation {
  int32_t rank = 0, thread = 0;
  std::string name;
};

/// The analysis result. Severities are seconds, *inclusive* along the
/// pattern tree (Late Sender includes Wrong Order); exclusive() subtracts
/// the children, as CUBE stores them.
struct WaitReport {
  int32_t world_size = 0;
  double run_seconds = 0;  ///< first enter to last exit over all ranks
  uint64_t events = 0;     ///< events analysed
  uint64_t dropped = 0;    ///< events past the timeline bound, not analysed
  uint64_t messages = 0, unmatched_sends = 0, unmatched_recvs = 0;
  uint64_t collectives = 0;  ///< collective instances analysed
  uint64_t incomplete_collectives = 0;
  std::vector<WaitPatternInfo> patterns;
  std::vector<WaitCallPath> callpaths;
  std::map<WaitKey, double> severity;
  /// Time on the critical path per (call path, rank).
  std::map<std::pair<int32_t, int32_t>, double> critical_path;
  /// Waiting time others spent directly because of the excess time of
  /// this (call path, rank) (direct delay costs), per (call path, rank).
  std::map<std::pair<int32_t, int32_t>, double> delay_costs;
  /// Waiting time caused indirectly by the excess time of this (call path,
  /// rank): wait states of ranks that were late only because they had
  /// waited themselves, traced back along the chain to the excess time
  /// that started it (propagated delay costs; direct + propagated = every
  /// wait state whose cause was found).
  std::map<std::pair<int32_t, int32_t>, double> propagated_costs;
  std::vector<std::string> notes;  ///< what the reader should know (truncation, ...)
  /// Every wait state, when WaitOptions::keep_instances asked for them.
  std::vector<WaitInstance> instances;
  /// Receives that ended before their send began (clock condition), found
  /// and repaired by the controlled logical clock before the analysis.
  uint64_t clock_violations = 0;
  /// With threads: what the "rank" of every cell, critical path entry,
  /// delay cost and instance is (an index here). Empty: one thread per
  /// rank, the index is the rank.
  std::vector<WaitLocation> locations;

  /// Ranks, or locations when there are threads.
  int32_t location_count() const {
    return locations.empty() ? world_size : int32_t(locations.size());
  }
  /// `R`, or `R.T` for a thread of a rank with several.
  std::string location_name(int32_t location) const {
    return locations.empty() ? std::to_string(location) : locations[std::size_t(location)].name;
  }

  /// Sum of `pattern` over call paths and ranks (inclusive).
  double total(WaitPattern pattern) const;
  /// Value of one cell minus its children's.
  double exclusive(int32_t pattern, int32_t callpath, int32_t rank) const;
};

/// Each rank's events of a recorded timeline, on rank 0's clock; events past
/// the recorder's size bound are left out (counted in `dropped`). A trace
/// with threads gives one entry of `ranks` per (rank, thread) location,
/// named in `locations`.
struct WaitInput {
  std::vector<std::vector<TimedEvent>> ranks;
  /// With threads: the location of each entry of `ranks` (empty: entry r
  /// is rank r).
  std::vector<WaitLocation> locations;
  /// How the times were made, when they are not the recorded ones (the
  /// report's first note).
  std::string note;
  uint64_t dropped = 0;
  /// Per rank: 1 when its timeline has the clock offset measured at
  /// MPI_Finalize, 0 when it ends early (the rank died, or the run was
  /// aborted): then its clock is mapped by the start offset alone and its
  /// drift is not corrected. Empty: unknown (all measured).
  std::vector<uint8_t> end_offset;
  /// A `--sample-only` run one of whose event logs ends before its
  /// timeline (the log reached its size bound, or the rank died between
  /// the two files' last blocks): per rank, the timeline records left
  /// without an event (not analysed). Empty when no event log was cut.
  std::vector<uint64_t> unlogged;
  /// Per rank: events past its timeline's size bound, without times (not
  /// analysed; their sum is `dropped`). Empty when every timeline holds
  /// all its rank's events.
  std::vector<uint64_t> untimed;
  /// Then every rank is analysed up to `cut_ns` only, on rank 0's clock:
  /// rank `cut_rank`'s earliest call without parameters began there, or
  /// (`cut_by_timeline`) its last timed call ended there and its first
  /// untimed one began later. A call that ended later may have waited for
  /// that one (a receive for its send, a collective for its entry), and
  /// nothing says when or what that call was. Per rank, the events left
  /// out for that.
  int64_t cut_ns = std::numeric_limits<int64_t>::max();
  int32_t cut_rank = -1;
  bool cut_by_timeline = false;
  std::vector<uint64_t> after_cut;
};

/// Reads TRACE's timeline directory `dir` (every rank). Throws WaitsError
/// if it is missing (record with --timeline) or belongs to another run.
/// A trace with threads gets one entry per location laid out from its mean
/// times (synthesize_timeline), each thread from time 0, and says so in
/// `note`: a recorded timeline holds one sequence per rank with its
/// threads' calls mixed, and does not say which thread made each call.
/// A timeline cut by its size bound is analysed up to its end, and every
/// rank up to the time it ends at (WaitInput::cut_ns).
WaitInput load_wait_input(const Trace& trace, const std::string& dir);
/// The same for a `record --sample-only` run (event_log.hpp): the events
/// are `events` (per rank, sites in `tables`), not a trace's expansion;
/// each rank's are moved into the result and released as they are timed.
/// An event log shorter than its timeline is analysed up to its end, and
/// every rank up to the time it ends at (WaitInput::cut_ns).
WaitInput load_wait_input(const Trace& tables, std::vector<std::vector<Event>>&& events,
                          const std::string& dir);
/// The timeline directory `record --timeline` wrote beside `trace_path`.
std::string default_timeline_dir(const std::string& trace_path);

/// The point-to-point messages of `input`, matched by the core
/// (match_messages) as analyze_waits and repair_clock_condition match them,
/// without a copy of the events: the matcher borrows each rank's calls and
/// gives them back. Matching reads the calls, not their times, so the
/// result still holds after the times are moved (clock alignment, repair).
MatchResult match_wait_input(const Trace& trace, WaitInput& input);

/// The analysis of recorded events (serial replay).
WaitReport analyze_waits(const Trace& trace, const WaitInput& input,
                         const WaitOptions& options = {});

/// Records in `report` how many clock-condition violations
/// repair_clock_condition found (count and note).
void note_clock_repair(WaitReport& report, uint64_t violations);

/// Writes the report to `path` in the form its extension names: .txt, .json
/// or .cubex. Throws WaitsError for another extension or a failed write.
void write_wait_report(const WaitReport& report, const std::string& path, std::size_t top = 5);

/// Text report: total time, patterns with share of run time, top call paths
/// and ranks per pattern, critical path, top delay costs.
void write_wait_text(std::ostream& out, const WaitReport& report, std::size_t top = 5);
/// The whole result as JSON (every non-zero cell).
void write_wait_json(std::ostream& out, const WaitReport& report);
/// The result as a CUBE4 profile (cube4.hpp): the pattern tree plus
/// `critical_path`, `delay_costs` and `propagated_delay_costs` metrics; a
/// call tree whose inner nodes are the frames of the call stacks (common
/// prefixes shared) and whose leaves are the call paths (the MPI call, or
/// the computation before it); one location per rank; values exclusive
/// along both trees (only leaves hold values). `leaves`, if given, gets
/// the call-tree node of each call path.
struct Cube4Profile;
Cube4Profile wait_cube(const WaitReport& report, std::vector<int32_t>* leaves = nullptr);

/// Scalasca's controlled logical clock, simplified: a receive that ends
/// before its matched send began is moved to end at the send's start, and
/// everything after it on that rank moves along by the same amount (local
/// intervals kept), repeated until no violation is left (at most `passes`
/// times). Returns the number of violations found in the first pass.
/// `matched`: the messages of `input` (match_wait_input), or null.
uint64_t repair_clock_condition(const Trace& trace, WaitInput& input, int passes = 20,
                                const MatchResult* matched = nullptr);

}  // namespace tracefold
