// Timelines, message matching and communication profiles derived from a
// folded trace (the analysis behind `tracefold export`, `stats --matrix` and
// `report`). No MPI here.
//
// A folded trace keeps no timestamps, only per-node histograms of the time
// before each call (computation) and inside it. synthesize_timeline() builds
// a representative timeline: each rank's events, in order, each preceded by
// its node's mean computation time and lasting its mean time in the call.
// Ranks are laid out independently (there is no replay), so a message's
// receive can appear before its send.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracefold/clock_sync.hpp"
#include "tracefold/event.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// Duration given to a call whose time in the call was not recorded.
inline constexpr int64_t kNominalCallNs = 1000;

/// One event placed on a synthesized timeline.
struct TimedEvent {
  Event ev;
  int64_t compute_start_ns = 0;  ///< start of the computation gap before the call
  int64_t start_ns = 0;          ///< start of the call (= compute_start_ns + gap)
  int64_t end_ns = 0;            ///< end of the call
  bool timed = false;            ///< the time in the call was recorded (else nominal)
  /// The times are the call's own, from a recorded timeline; else laid out
  /// from means (a synthesized timeline, or events past the recorder's budget).
  bool measured = false;
};

/// One rank's events on the timeline, back to back from time 0; with
/// threads, one location's (thread `thread` of rank `rank`).
struct RankTimeline {
  int32_t rank = 0;
  int32_t thread = 0;
  std::vector<TimedEvent> events;
  int64_t end_ns = 0;
  int64_t compute_ns = 0;  ///< sum of the computation gaps
  int64_t comm_ns = 0;     ///< sum of the times in calls (recorded ones only)
};

/// Expands every rank with RankIterator and lays its events out with the
/// recorded mean times (compute then call; unknown compute = 0, unknown call
/// time = kNominalCallNs, not counted in comm_ns). A trace with threads gives
/// one timeline per location that has events, in location order (thread t
/// of rank r is location t * world_size + r), so the first world_size are
/// the ranks' first threads.
std::vector<RankTimeline> synthesize_timeline(const Trace& trace);

/// The timeline exports draw: recorded (`tracefold record --timeline`) or
/// synthesized from the folded trace's means.
struct TraceTimeline {
  std::vector<RankTimeline> ranks;
  bool recorded = false;
  /// Events the recorder dropped at its byte budget; they are laid out after
  /// the last recorded one with their mean times.
  uint64_t dropped = 0;
  /// Recorded timelines: how far ranks' clocks were moved onto rank 0's
  /// (clock_sync.hpp); nothing applied on a single host.
  ClockCorrection clock;
  /// Why a recorded timeline beside the trace was not used, if it was not.
  std::string note;
  /// "synthesized from mean times" or "recorded (N events, D dropped)",
  /// followed by the clock correction when one was applied.
  std::string describe() const;
};

/// The synthesized timeline, as a TraceTimeline.
TraceTimeline synthesized_timeline(const Trace& trace);

/// Reads `dir/rank-R.tft` for every rank and lays the trace's events out at
/// their recorded times, on rank 0's clock (each rank's clock corrected
/// linearly between its two offset samples, summed up in `clock`),
/// starting at 0. A trace with threads gets one timeline per location, in
/// synthesize_timeline's order, each thread's calls at the times of the
/// records that name it. Throws std::runtime_error naming the file, rank
/// and event if the timeline does not belong to the trace (other rank
/// count, other operations), or if the trace has threads and a file does
/// not name the thread of each call (recorded before timeline version 3).
TraceTimeline load_recorded_timeline(const Trace& trace, const std::string& dir);

/// `dir` if given, else TRACE_PATH.timeline/ when it exists (what `record
/// --timeline` writes), else the synthesized timeline. A timeline beside a
/// trace with threads that does not name each call's thread is left out
/// for the synthesized one, and `note` says why.
TraceTimeline timeline_for(const Trace& trace, const std::string& trace_path,
                           const std::string& dir);

// ------------------------------------------------------------ classification

enum class OpClass : uint8_t {
  kOther,
  kSend,         ///< blocking send (Send, Bsend, Ssend, Rsend)
  kIsend,        ///< nonblocking send (Isend, Ibsend, Issend, Irsend)
  kRecv,         ///< blocking receive (Recv)
  kIrecv,        ///< nonblocking receive (Irecv)
  kSendrecv,     ///< Sendrecv, Sendrecv_replace: a send and a receive
  kCollective,   ///< blocking collective (Barrier .. Exscan)
  kICollective,  ///< nonblocking or neighbourhood collective
  kCompletion,   ///< Wait*/Test*
};
OpClass classify(OpId op);

/// Whether a call of class `c` sends a point-to-point message (Sendrecv
/// does both), or receives one: one definition for every matcher.
constexpr bool sends_message(OpClass c) {
  return c == OpClass::kSend || c == OpClass::kIsend || c == OpClass::kSendrecv;
}
constexpr bool receives_message(OpClass c) {
  return c == OpClass::kRecv || c == OpClass::kIrecv || c == OpClass::kSendrecv;
}

// --------------------------------------------------------------- matching

/// Which call completed each request of one rank, found through the
/// completion calls' `links` (Wait, Waitall: every linked request; Test*:
/// only with flag 1; Waitany/Testany: the one at `index`; Waitsome/Testsome:
/// wildcard receives by their `srcs` entries; other requests are taken as
/// completed by the last Waitsome/Testsome that names them, since which of
/// them completed is not recorded).
struct RequestCompletions {
  static constexpr std::size_t npos = std::size_t(-1);
  std::vector<std::size_t> done;  ///< per event: completing event, or npos
  /// Matched source/tag of wildcard receives, from their completion's
  /// status (`src`/`mtag`, or `srcs`/`mtags` of multi-request completions;
  /// see wildcards.hpp); kAbsent when not recorded.
  std::vector<int64_t> src, mtag;
};
RequestCompletions find_completions(const std::vector<Event>& events);

/// One point-to-point message matched from a send to a receive. Event
/// indexes refer to the per-rank event vectors given to match_messages.
struct Message {
  int32_t sender = 0;  ///< world ranks
  int32_t receiver = 0;
  /// Indexes of the sender's and the receiver's event vectors (or
  /// timelines) among those given: the world ranks, unless a rank has
  /// several threads.
  std::size_t sender_stream = 0, receiver_stream = 0;
  int64_t comm = 0;  ///< trace-wide communicator id
  int64_t tag = 0;
  uint64_t bytes = 0;          ///< as sent (count * dsize)
  std::size_t send_event = 0;  ///< index in the sender's events
  std::size_t recv_event = 0;  ///< index in the receiver's events (Recv, Irecv, Sendrecv)
  /// Where the receive completes: recv_event for blocking receives; for an
  /// Irecv the Wait/Test call that completed its request (via `links`), or
  /// recv_event when no completion was found.
  std::size_t recv_complete_event = 0;
  /// For an Isend: the completion call of its request (else send_event).
  std::size_t send_complete_event = 0;
};

struct MatchResult {
  std::vector<Message> messages;  ///< in order of the receivers' receives
  uint64_t unmatched_sends = 0;   ///< sends no receive consumed
  uint64_t unmatched_recvs = 0;   ///< receives with no send (or an unknown wildcard source)
};

/// Matches sends to receives per (communicator, sender, receiver, tag) in
/// FIFO order (MPI's non-overtaking rule). Receives are taken in each
/// receiver's program order; wildcard receives use the recorded matched
/// source (`src`) and tag (`mtag`): on the Recv/Sendrecv itself, or on the
/// single-request Wait/Test that completed an Irecv. MPI_PROC_NULL peers are
/// no messages. Persistent requests (Send_init/Recv_init + Start) and
/// matched probes (Mprobe/Mrecv) are not matched.
MatchResult match_messages(const CommTable& comms, const std::vector<std::vector<Event>>& ranks);
/// The same on a timeline, one entry per stream: with threads, several
/// streams belong to one rank, and a receive takes the sends its rank's
/// peer made from any of its threads. Where threads of one rank share a
/// (communicator, peer, tag), the sends and the receives are taken in the
/// rank-wide order the recorder noted under MPI_THREAD_MULTIPLE (fields
/// `others`/`rothers`, docs/format.md "Message order across threads");
/// without those, thread by thread in turn.
MatchResult match_messages(const CommTable& comms, const std::vector<RankTimeline>& timeline);

/// World rank of `peer` (a rank in communicator `comm`) as seen by
/// `world_rank`, or -1 for sentinels and unknown communicators.
int32_t world_peer(const CommTable& comms, int64_t comm, int32_t world_rank, int64_t peer);

/// The communicator a call names: its `comm` field, the world when absent.
int64_t event_comm(const Event& ev);

// --------------------------------------------------------------- profiles

/// Rank-to-rank point-to-point traffic: messages and bytes counted at the
/// sender, by absolute (world) ranks; with threads, every thread's sends at
/// its rank. Counts Send/Bsend/Ssend/Rsend, their
/// nonblocking forms and the send half of Sendrecv(_replace); sends to
/// MPI_PROC_NULL, persistent sends and collectives are not included.
struct CommMatrix {
  int32_t size = 0;
  std::vector<uint64_t> messages;  ///< row-major [sender * size + receiver]
  std::vector<uint64_t> bytes;
  uint64_t msgs(int32_t s, int32_t r) const { return messages[std::size_t(s) * size + r]; }
  uint64_t byte(int32_t s, int32_t r) const { return bytes[std::size_t(s) * size + r]; }
};
CommMatrix comm_matrix(const Trace& trace);

/// Bytes the send half of a point-to-point call moves (count * dsize).
uint64_t send_bytes(const Event& ev);

/// Field `name` of `ev`, kAbsent when missing. For the names the per-event
/// walks ask for as string literals: ids are kept by the literal's address,
/// so a lookup is a short scan, not a hash of the name (~750 instructions).
int64_t field_by_literal(const Event& ev, const char* name);

}  // namespace tracefold
