// Diagnosis of scalability losses (`tracefold diagnose`, seed 002): splits a
// recorded run into phases at its global synchronisations, labels every
// rank's time (computation, collective synchronisation, data transfer, wait
// for partner) and names what lost time and why: load imbalance (and the
// code that causes it), serialisation, frequent communication, waiting for a
// late partner, large transfers, long communication, and phases in which
// rank groups do different work (MPMD). No MPI here.
//
// The seed had only wall-clock samples. tracefold has the exact enter and
// exit of every MPI call (`record --timeline`), its peers and bytes, and the
// wait states of the waits module (waits.hpp); samples (`record --sample`,
// samples.hpp) are needed only to say *which code* inside a computation is
// the cause. Without samples, causes are named by the MPI call site that
// ends the computation ("computation before MPI_Allreduce at ...").
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/event_log.hpp"
#include "tracefold/samples.hpp"
#include "tracefold/trace.hpp"
#include "tracefold/waits.hpp"

namespace tracefold {

class DiagnoseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The seed's semantic labels of a rank's time.
enum class TimeLabel : uint8_t {
  kComputation,
  kCollectiveSync,  ///< in a collective call
  kTransfer,        ///< in a point-to-point or I/O call, not waiting
  kWait,            ///< in a point-to-point call, waiting for a late partner
  kCount
};

enum class DiagnosisKind : uint8_t {
  kLoadImbalance,
  kSerialisation,
  kFrequentCommunication,
  kWaitForPartner,
  kLargeTransfer,
  kLargeIo,
  kLongCommunication,
  kMpmdImbalance,
};

// Names, inline so that the report writer (src/export) can show a
// DiagnoseReport without linking the analysis.
inline const char* label_name(TimeLabel label) {
  switch (label) {
    case TimeLabel::kComputation:
      return "computation";
    case TimeLabel::kCollectiveSync:
      return "collective synchronisation";
    case TimeLabel::kTransfer:
      return "data transfer";
    case TimeLabel::kWait:
      return "wait for partner";
    default:
      return "?";
  }
}

inline const char* diagnosis_id(DiagnosisKind kind) {
  switch (kind) {
    case DiagnosisKind::kLoadImbalance:
      return "load_imbalance";
    case DiagnosisKind::kSerialisation:
      return "serialisation";
    case DiagnosisKind::kFrequentCommunication:
      return "frequent_communication";
    case DiagnosisKind::kWaitForPartner:
      return "wait_for_partner";
    case DiagnosisKind::kLargeTransfer:
      return "large_transfer";
    case DiagnosisKind::kLargeIo:
      return "large_io";
    case DiagnosisKind::kLongCommunication:
      return "long_communication";
    case DiagnosisKind::kMpmdImbalance:
      return "mpmd_imbalance";
  }
  return "?";
}

inline const char* diagnosis_remedy(DiagnosisKind kind) {
  switch (kind) {
    case DiagnosisKind::kLoadImbalance:
      return "balance the work of the cause among the ranks (repartition the data, or "
             "distribute it dynamically)";
    case DiagnosisKind::kSerialisation:
      return "parallelise the cause, or overlap it with the other ranks' work (it runs on one "
             "rank while all others wait)";
    case DiagnosisKind::kFrequentCommunication:
      return "aggregate the small messages or collectives into fewer, larger ones, or take "
             "the call out of the loop";
    case DiagnosisKind::kWaitForPartner:
      return "make the late partner send earlier (reorder its work) or overlap the wait with "
             "computation (nonblocking calls)";
    case DiagnosisKind::kLargeTransfer:
      return "send less data (compress, send only what changed) or overlap the transfer "
             "with computation";
    case DiagnosisKind::kLargeIo:
      return "reduce or aggregate the I/O (collective I/O, fewer and larger requests) or "
             "overlap it with computation";
    case DiagnosisKind::kLongCommunication:
      return "check the communication's algorithm and placement: it is neither frequent nor "
             "large, yet long";
    case DiagnosisKind::kMpmdImbalance:
      return "balance the work between the rank groups (give the slower group more ranks "
             "or less work)";
  }
  return "";
}

/// A person's name of a diagnosis (`load imbalance`, ...).
inline const char* diagnosis_name(DiagnosisKind k) {
  switch (k) {
    case DiagnosisKind::kLoadImbalance:
      return "load imbalance";
    case DiagnosisKind::kSerialisation:
      return "serialisation";
    case DiagnosisKind::kFrequentCommunication:
      return "frequent communication";
    case DiagnosisKind::kWaitForPartner:
      return "wait for partner";
    case DiagnosisKind::kLargeTransfer:
      return "large message transfer";
    case DiagnosisKind::kLargeIo:
      return "large I/O";
    case DiagnosisKind::kLongCommunication:
      return "long communication";
    case DiagnosisKind::kMpmdImbalance:
      return "imbalance between rank groups (MPMD phase)";
  }
  return "?";
}

/// A place in the program a diagnosis names: a function (from samples), or
/// an MPI call site (from the trace).
struct CodePlace {
  std::string label;               ///< `work at imbalance.c:12`, `MPI_Allreduce at main (x.c:40)`
  std::vector<std::string> stack;  ///< outermost frame first
  double seconds = 0;              ///< what this place contributes (imbalance: max - avg)
  int32_t rank = -1;               ///< the rank it is about, if one (the slowest, the late partner)
  /// What the picture matches it by: a samples' calling context
  /// (`main > work_a`), a computation's or a call's label.
  std::string key;
  /// The loop iterations it occurs in, from the temporal context trees'
  /// iteration layer: `in iterations 3-7 of 10 of the loop starting at
  /// ...`, `in all 10 iterations of ...`, or "" when it is in no loop the
  /// recorder folded. Every kind of diagnosis places its symptom (and
  /// imbalance, frequent communication and wait for partner their causes).
  std::string where;
};

struct Diagnosis {
  DiagnosisKind kind = DiagnosisKind::kLoadImbalance;
  int32_t phase = -1;             ///< index into DiagnoseReport::phases, -1: whole run
  double seconds = 0;             ///< severity: time the run could save (averaged over ranks)
  double percent = 0;             ///< seconds / run time * 100
  CodePlace symptom;              ///< where the loss shows (the call ranks wait in)
  std::vector<CodePlace> causes;  ///< most significant first
  std::string detail;             ///< one line with the numbers (counts, bytes, ranks)
};

struct Phase {
  /// All instances of a phase that ends at the same synchronisation (the
  /// same call site: an iterative solver's time steps) are one Phase.
  uint64_t instances = 0;
  int64_t start_ns = 0,
          end_ns = 0;  ///< first instance's start, last one's end (from the run's start)
  std::string
      closing;  ///< the synchronisation that ends it (`MPI_Allreduce at ...`), "" for the last
  double exit_spread_us = 0;  ///< largest spread of the closing synchronisation's exits over ranks
  /// Seconds per label summed over ranks.
  double labels[static_cast<int>(TimeLabel::kCount)] = {};
  /// Rank groups by the calls they make in the phase (one group: SPMD).
  std::vector<std::vector<int32_t>> groups;
};

struct DiagnoseOptions {
  /// Diagnoses below this share of the run time are not reported.
  double significant = 0.01;
  /// A cause of an imbalance must explain at least this share of it.
  double cause_share = 0.10;
  /// A global synchronisation closes a phase when no rank left it before
  /// the last one entered, give or take this much clock error.
  int64_t tolerance_ns = 100000;
  /// A call path is frequent communication when its ranks call it at least
  /// `frequent_calls` times on average and its mean duration without
  /// waiting is below `frequent_periods` sampling periods (the seed's 5;
  /// with no samples, of 5 ms): a few long calls are not frequent.
  double frequent_periods = 5;
  uint64_t frequent_calls = 50;
  /// Point-to-point transfers of at least this many bytes per message are
  /// large.
  uint64_t large_bytes = 1 << 20;
  /// Causes kept per diagnosis.
  std::size_t top = 3;
  /// A user function takes a derived label when at least this share of its
  /// samples has it on every rank that runs it (the seed's 70 %) ...
  double derived_share = 0.7;
  /// ... counting the ranks with at least this many of its samples.
  uint64_t derived_min_samples = 10;
};

/// A user function labelled by what its time is spent on (seed 002, 5.2):
/// from samples, a function whose samples fall mostly inside MPI calls of
/// one kind on every rank (its callees included).
struct DerivedLabel {
  std::string function;            ///< its name (and the functions inlined into it)
  std::vector<std::string> stack;  ///< outermost first, ending with it
  /// A TimeLabel's name (label_name), or "communication" when no single one
  /// of the three communication labels reaches the share but together they do.
  std::string label;
  double min_share = 0, max_share = 0;  ///< the label's share of its samples, over its ranks
  uint64_t samples = 0;                 ///< its samples over those ranks
  std::vector<int32_t> ranks;           ///< ranks with enough of its samples
};

/// The ranks x time picture of the report: per row (a rank, or a block of
/// ranks when there are many) and time bin, the label that took most of
/// the bin, and per diagnosis which cells show its symptom or its cause.
struct DiagnosePicture {
  static constexpr uint8_t kNone = 255;
  int32_t rows = 0, bins = 0;
  int64_t bin_ns = 0;
  std::vector<int32_t> row_first;  ///< first rank of each row (rows * ranks_per_row)
  int32_t ranks_per_row = 1;
  std::vector<uint8_t> label;  ///< rows * bins: a TimeLabel, or kNone (no time there)
  /// Per diagnosis (in report order, at most kMarked): rows * bins of 0
  /// (neither), 1 (its symptom) or 2 (its cause).
  std::vector<std::vector<uint8_t>> marks;
  static constexpr std::size_t kMarked = 8;
  std::vector<int64_t> phase_ends;  ///< ends of phase instances (from the run's start), at most 200
};

/// One line of the per-phase summary: how much of the run a phase takes and
/// how much of the run its diagnoses could save (their inefficiency ratios).
struct PhaseSummary {
  int32_t phase = -1;  ///< index into DiagnoseReport::phases; -1: diagnoses of the whole run
  double seconds = 0;  ///< the phase's time per rank (0 for the whole-run line)
  double share = 0;    ///< seconds / run time
  std::vector<std::size_t>
      diagnoses;  ///< indices into DiagnoseReport::diagnoses, most severe first
  /// Sum of their severities over the run time, at most the phase's share:
  /// diagnoses of one phase can name the same lost time twice (an
  /// imbalance at a call that is also frequent communication).
  double could_save = 0;
};

/// One node of a rank's temporal context tree (seed 002, Section 3):
/// time-adjacent samples with a common prefix of (loop, iteration, calling
/// context) share the nodes of that prefix, so a node is one stretch of
/// time. Loops and iterations come from the trace's loop folding and the
/// rank's MPI events, not from a control-flow graph.
struct ContextTreeNode {
  /// `loop at MPI_Allreduce at main (x.c:40)`, `iteration 3`, a function
  /// (its name and those inlined into it), or an MPI call (`MPI_Recv`).
  std::string label;
  int32_t parent = -1;               ///< index of its parent in the tree's nodes, -1: a root
  int64_t start_ns = 0, end_ns = 0;  ///< from the run's start
  uint64_t samples = 0;              ///< its samples (its children's included)
};

/// A rank's temporal context tree, bounded: its first nodes in preorder
/// (time order), the rest counted.
struct ContextTree {
  int32_t rank = 0;
  std::vector<ContextTreeNode> nodes;
  uint64_t left_out = 0;  ///< nodes past the bound
};

struct DiagnoseReport {
  int32_t world_size = 0;
  double run_seconds = 0;
  int64_t period_ns = 0;  ///< sampling period (0: no samples)
  uint64_t samples = 0;
  std::vector<Phase> phases;
  double labels[static_cast<int>(TimeLabel::kCount)] = {};  ///< seconds over all ranks
  std::vector<Diagnosis> diagnoses;                         ///< most severe first
  /// Every phase in order, then the whole-run diagnoses if any; each
  /// diagnosis is in exactly one line.
  std::vector<PhaseSummary> summary;
  /// User functions whose time is mostly communication (with samples only),
  /// most sampled first; a callee that has its caller's label is left out.
  std::vector<DerivedLabel> derived;
  std::vector<std::string> notes;
  DiagnosePicture picture;
  /// The temporal context trees of the first ranks (with samples only;
  /// the JSON report shows them).
  std::vector<ContextTree> trees;
};

/// A rank's samples placed on the timeline's clock: `time_ns` of every
/// sample is on rank 0's clock like the WaitInput's events.
struct DiagnoseInput {
  WaitInput events;
  std::vector<RankSamples> samples;  ///< empty, or one per rank
  /// Per rank and sample context node: the display name of its frame
  /// (`work (imb.c:12)`, or `module+0x1f0` without symbols); "" for frames
  /// of system libraries (libc, the MPI library, tracefold's own), which a
  /// diagnosis never names as a cause. Empty: every frame by module+offset.
  std::vector<std::vector<std::string>> context_names;
  /// Receives found ending before their send began, repaired on loading.
  uint64_t clock_violations = 0;
  /// How far the clocks of ranks without a measured end offset may still be
  /// off after the exit-gap correction (3 times the largest median
  /// residual of their exit gaps); phases accept a synchronisation within
  /// DiagnoseOptions::tolerance_ns plus this. 0 when every clock was measured.
  int64_t clock_uncertainty_ns = 0;
  /// The messages of `events`, matched once on loading (match_wait_input)
  /// for the clock repair and the wait analysis alike, so that neither
  /// copies every event to match them. Unset: the analysis matches them.
  std::optional<MatchResult> matched;
};

/// Reads TRACE's timeline directory `dir` and the samples in it, putting
/// the samples on rank 0's clock and naming their frames with the
/// symbolizer. Throws DiagnoseError (no timeline: which option records it).
/// `unfolded`: a `record --sample-only` run (see load_diagnose_recording),
/// whose events are read instead of the trace's expansion (and moved out of
/// it); an event log cut before its timeline is analysed up to its end, and
/// the other ranks up to the time it ends at, with a note naming the cut.
DiagnoseInput load_diagnose_input(const Trace& trace, const std::string& dir,
                                  std::vector<std::string>& notes, UnfoldedRun* unfolded = nullptr);
/// The recording `trace_path` names: its folded trace; or, when there is
/// no such file and `dir` holds the event logs of a `record --sample-only`
/// run (event_log.hpp), their tables (sites, modules, communicators; no
/// nodes), with each rank's events and the logs' ends put in `unfolded`
/// (its `tables` are what is returned). `tables_only`: of such a run, only
/// the world size, from rank 0's log header, and no events (what an
/// analysis rank that reads no timeline needs). Throws what load_trace
/// throws, or DiagnoseError with the event log reader's message.
Trace load_diagnose_recording(const std::string& trace_path, const std::string& dir,
                              UnfoldedRun& unfolded, bool tables_only = false);

DiagnoseReport diagnose(const Trace& trace, const DiagnoseInput& input,
                        const DiagnoseOptions& options = {});

void write_diagnose_text(std::ostream& out, const DiagnoseReport& report);
void write_diagnose_json(std::ostream& out, const DiagnoseReport& report);
/// Throws DiagnoseError unless `path` is "" or ends in .txt or .json.
void check_diagnose_output(const std::string& path);
/// Writes the report to `path` in the form its extension chooses (.txt,
/// .json), or as text on standard output when `path` is "". Throws
/// DiagnoseError (unknown form, cannot write).
void write_diagnose_report(const DiagnoseReport& report, const std::string& path);

}  // namespace tracefold
