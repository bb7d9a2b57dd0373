// What the parts of the diagnosis share (not a public header).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "reduction.hpp"
#include "tracefold/diagnose.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/symbolize.hpp"
#include "tracefold/timeline.hpp"

namespace tracefold::diagnose_detail {

/// One instance of a global synchronisation: the k-th one on every rank.
struct SyncInstance {
  std::vector<std::size_t> ev;  ///< per rank: its event
  int64_t spread_ns = 0;        ///< latest exit - earliest exit
};

/// A code place's time per rank: a function's calling context (from
/// samples) or the computation before one MPI call path (without them).
struct PlaceTimes {
  std::string label;
  std::vector<std::string> stack;  ///< outermost first
  std::string parent;              ///< key of the caller's place ("" for none)
  std::vector<int64_t> ns;         ///< per rank
};
using Places = std::map<std::string, PlaceTimes>;

/// What digesting a rank's samples needs of one of its events (after clock
/// alignment and the wait analysis).
struct EventSpan {
  int64_t compute_start_ns = 0, start_ns = 0, end_ns = 0;
  int64_t waited_ns = 0;  ///< waiting found by the waits module
  OpId op = 0;
  SiteId site = 0;
  /// Its innermost loop (an index into LoopFacts::loops, -1: none), which
  /// entry of that loop on its rank and which iteration of the entry
  /// (both from 1).
  int32_t loop = -1;
  uint32_t entry = 0;
  int64_t iteration = 0;
  /// Iterations of that entry (LoopAt::of).
  int64_t of = 0;
  /// Bytes the call moves (EventFacts::bytes).
  uint64_t bytes = 0;
};

/// Where one event is in the trace's loops: its innermost loop and
/// iteration (EventSpan::loop, entry, iteration).
struct LoopAt {
  int32_t loop = -1;
  uint32_t entry = 0;
  int64_t iteration = 0;
  /// Iterations of that entry.
  int64_t of = 0;
};
/// A loop of the folded trace: level `level` of trace node `node`.
struct LoopInfo {
  std::size_t node = 0, level = 0;
  int32_t parent = -1;  ///< the loop it is in (-1: none)
};
/// The loops of the trace every rank's events are in.
struct LoopFacts {
  std::vector<LoopInfo> loops;
  std::vector<std::vector<LoopAt>> at;  ///< per rank and event
};
/// Walks each rank's expansion of `trace` along its timed `events`
/// (core's RankIterator) for the loops each event is in. A trace without
/// nodes (a --sample-only run) gives no loops.
LoopFacts loop_facts(const Trace& trace, const WaitInput& events);

/// One node of a rank's temporal context tree as its digest holds it
/// (ContextTreeNode before naming).
struct TreeNode {
  enum Kind : uint8_t { kLoop, kIteration, kFrame, kCall };
  uint32_t parent = UINT32_MAX;  ///< UINT32_MAX: a root
  uint8_t kind = kFrame;
  /// kLoop: loop index; kIteration: the iteration; kFrame: index into
  /// RankDigest::frames; kCall: the OpId.
  int64_t what = 0;
  int64_t start_ns = 0, end_ns = 0;  ///< on the analysis clock
  uint64_t samples = 0;
};
/// Nodes a digest keeps of its rank's tree (preorder, the rest counted).
constexpr std::size_t kTreeNodes = 200;

/// What every rank's digest is made against: the run's bounds, its
/// sampling period and the picture's time bins.
struct DigestParams {
  int64_t run_start = 0, run_end = 0, period_ns = 0;
  int64_t bin_ns = 0;  ///< 0: no picture (an empty run)
};

/// One recorded rank's samples digested, so that the diagnosis never needs
/// the samples themselves: the analysis rank that reads a rank's samples
/// makes it, and only it travels (parallel/). The serial diagnosis makes
/// the same digests with the same function (digest_rank).
struct RankDigest {
  bool sampled = false;     ///< its samples file has a period
  uint64_t samples = 0;     ///< samples of every thread
  int64_t period_ns = 0;    ///< its file's period
  int64_t max_periods = 1;  ///< the most periods one computation sample stands for
  /// Where its samples end when its file lost some while it still computed
  /// (the size bound, or the rank died): later computation is named by MPI
  /// call site, as on a rank without samples. INT64_MAX otherwise.
  int64_t samples_end = INT64_MAX;
  /// Samples ended so in a file with a trailer (a report note), and the
  /// last sample's time.
  bool cut = false;
  int64_t cut_last = 0;
  /// Place keys of its user-code calling contexts (function names
  /// outermost first, joined by " > "; "" for none), indexed below.
  std::vector<std::string> keys;
  /// Per event k: the computation samples of the gap before it, as (key,
  /// periods) in gaps[gap_at[k], gap_at[k + 1]).
  std::vector<uint32_t> gap_at;
  std::vector<std::pair<uint32_t, int64_t>> gaps;
  /// For derived labels: computation periods per user-code path ...
  std::vector<std::vector<std::string>> paths;
  std::vector<int64_t> path_periods;
  /// ... and periods per (call site, label) of the samples inside MPI calls.
  struct InCall {
    SiteId site = 0;
    uint8_t label = 0;
    int64_t periods = 0;
  };
  std::vector<InCall> in_calls;
  /// For the picture: the (key, time bin) pairs its computation samples cover.
  std::vector<std::pair<uint32_t, uint32_t>> bins;
  /// Its temporal context tree (context_tree.cpp), at most kTreeNodes
  /// nodes in preorder; the names of its frame nodes; nodes left out.
  std::vector<TreeNode> tree;
  std::vector<std::string> frames;
  uint64_t tree_left_out = 0;
};

/// The temporal context tree of a rank's main-thread samples
/// `in_time_order` (indexes into rs.samples) and its events, into `d`
/// (context_tree.cpp).
/// `paths`: each context's user-code path (outermost first); `depths`:
/// those frames' depths in their whole context, which a sample's LCA
/// marker (Sample::lca_depth) is counted in.
void build_tree(const RankSamples& rs, const std::vector<uint32_t>& in_time_order,
                const std::vector<std::vector<std::string>>& paths,
                const std::vector<std::vector<uint16_t>>& depths,
                const std::vector<EventSpan>& events, const DigestParams& p, RankDigest& d);

/// The picture's time bins over a run of `run_ns`.
constexpr int32_t kPictureBins = 400;
inline int64_t picture_bin_ns(int64_t run_ns) {
  return run_ns > 0 ? (run_ns + kPictureBins - 1) / kPictureBins : 0;
}

/// Digests `rs` (on the analysis clock) against its rank's `events`.
/// `names`: its contexts' names (DiagnoseInput::context_names), empty for
/// module+offset.
RankDigest digest_rank(const RankSamples& rs, const std::vector<std::string>& names,
                       const std::vector<EventSpan>& events, const DigestParams& p);

/// The run's sampling period from each rank's (RankSamples::period_ns, 0
/// without samples): the last rank's that has one, 0 when none has.
int64_t run_period(const std::vector<int64_t>& periods);

/// What the diagnosis finds from the events alone, before any sample.
struct EventFacts {
  WaitReport waits;  ///< with its instances
  /// Per rank and event: waiting found by the waits module, in ns.
  std::vector<std::vector<int64_t>> waited;
  /// Per rank and event: bytes the call moves (a completion: its requests').
  std::vector<std::vector<uint64_t>> bytes;
  int64_t run_start = 0, run_end = 0;
  LoopFacts loops;
};
/// `matched`: the messages of `events` (DiagnoseInput::matched), or null.
EventFacts event_facts(const Trace& trace, const WaitInput& events,
                       const MatchResult* matched = nullptr);
/// `rank`'s events as digest_rank needs them.
std::vector<EventSpan> event_spans(const WaitInput& events, const EventFacts& f, int32_t rank);
/// The digests' parameters for a run sampled at `period_ns` (run_period;
/// 0: not sampled, the frequent-call default is used).
DigestParams digest_params(const EventFacts& f, int64_t period_ns);

/// The diagnosis from the events (`in`: its samples are not read), their
/// facts, the reduction of every recorded rank's events (reduce_rank,
/// merged) and every recorded rank's digest (in rank order; empty when
/// `have_samples` is false). Throws DiagnoseError when `reduced` does not
/// cover every recorded rank.
DiagnoseReport diagnose_digests(const Trace& trace, const DiagnoseInput& in, EventFacts&& facts,
                                Reduction&& reduced, std::vector<RankDigest>&& digests,
                                bool have_samples, const DiagnoseOptions& options);

struct Context {
  const Trace& trace;
  const DiagnoseInput& in;
  const DiagnoseOptions& opt;
  DiagnoseReport& rep;
  int32_t size = 0;
  int64_t run_start = 0, run_end = 0;  ///< MPI_Init's earliest exit .. MPI_Finalize's latest enter
  int64_t period_ns = 0;               ///< sampling period, or the frequent-call default
  /// Per rank and event: waiting found by the waits module, in ns.
  std::vector<std::vector<int64_t>> waited;
  /// Per rank and event: bytes the call moves (a completion: its requests').
  std::vector<std::vector<uint64_t>> bytes;
  /// The wait states (waits.hpp), kept per instance.
  WaitReport waits;
  std::vector<SyncInstance> syncs;  ///< global synchronisations closing a phase
  /// Per phase kind (index into rep.phases): the instances closing one.
  std::vector<std::vector<std::size_t>> phase_syncs;
  /// Per phase kind: the closing call path.
  std::vector<std::pair<OpId, SiteId>> phase_key;
  /// Call paths diagnosed as frequent communication: the waiting in them
  /// is counted there, not as the imbalance of the phases they close.
  std::set<std::pair<OpId, SiteId>> frequent;
  /// The loops every event is in (LoopFacts).
  LoopFacts loops;
  /// Every recorded rank's events reduced (the call-path rule reads these).
  Reduction reduced;
  /// Where the given global synchronisation instances (indexes into syncs)
  /// with their shares of a loss lie in the loops (CodePlace::where): the
  /// iterations that hold the loss when not all of them do.
  std::string iterations_of(const std::vector<std::pair<std::size_t, double>>& instances,
                            double noise_s) const;
  /// A share of a loss at one rank's event.
  struct LossAt {
    int32_t rank = 0;
    std::size_t event = 0;
    double seconds = 0;
  };
  /// The same for losses at any ranks' events (a call path's time, the
  /// waiting of wait states): the shares of one iteration of a loop add up
  /// over the ranks and events in it.
  std::string iterations_where(const std::vector<LossAt>& losses, double noise_s) const;
  /// A loss already summed per loop iteration, in the order the ranks'
  /// events meet them.
  struct IterationLoss {
    int32_t loop = -1;
    uint32_t entry = 0;
    int64_t iteration = 0;
    double seconds = 0;
  };
  /// The same from such sums: `ranks`, the ranks the loss is on, tell the
  /// loop's iterations and entries (from reduced.entries).
  std::string iterations_summed(const std::vector<IterationLoss>& hits,
                                const std::vector<int32_t>& ranks, double noise_s) const;
  /// `the loop at MPI_Allreduce at main (x.c:40)`.
  std::string loop_label(int32_t loop) const;

  Context(const Trace& t, const DiagnoseInput& i, const DiagnoseOptions& o, DiagnoseReport& r)
      : trace(t), in(i), opt(o), rep(r) {}
  const std::vector<TimedEvent>& events(int32_t rank) const {
    return in.events.ranks[std::size_t(rank)];
  }
  double seconds(int64_t ns) const { return static_cast<double>(ns) * 1e-9; }
  /// Per recorded rank: its samples, digested (RankDigest). Empty for a
  /// run without samples.
  std::vector<RankDigest> digests;
  /// Whether the run has samples at all (a rank may still lack them).
  bool have_samples = false;
  /// Whether `rank` has samples (a rank without a samples file is named by
  /// MPI call site, like a run without samples).
  bool sampled(int32_t rank) const {
    return std::size_t(rank) < digests.size() && digests[std::size_t(rank)].sampled;
  }
  /// The most periods one sample of the main threads stands for: the
  /// coarsest sampling of the run, the noise floor of a cause.
  int64_t max_sample_periods = 1;
  /// Whether `rank`'s computation from `from` on is named from samples
  /// (not after its samples end: RankDigest::samples_end).
  bool sampled_at(int32_t rank, int64_t from) const {
    return sampled(rank) && from < digests[std::size_t(rank)].samples_end;
  }
  /// `MPI_Allreduce at main (x.c:12)`.
  std::string call_label(const Event& ev) const;
  std::vector<std::string> call_stack(const Event& ev) const;
  /// A diagnosis of `kind` and severity `seconds` whose symptom is the
  /// call path of `symptom`.
  Diagnosis at_call(DiagnosisKind kind, double seconds, const Event& symptom) const {
    Diagnosis d;
    d.kind = kind;
    d.seconds = seconds;
    d.symptom.label = call_label(symptom);
    d.symptom.stack = call_stack(symptom);
    d.symptom.seconds = seconds;
    return d;
  }
};

/// Adds the labelled time of `rank`'s event `k` (and the computation gap
/// before it) to `out`, in ns.
void event_labels(const Context& c, int32_t rank, std::size_t k,
                  int64_t out[static_cast<int>(TimeLabel::kCount)]);
/// A frame's name as places use it: its function, then the functions
/// inlined into it, joined by " > " ("" when none is named).
std::string function_names(const SourceFrames& frames);
/// MPI_Init and MPI_Finalize: their time is nobody's loss.
bool is_environment(OpId op);
/// Where the run starts and ends for the diagnosis (Context::run_start,
/// run_end): MPI_Init's earliest exit, MPI_Finalize's latest enter.
std::pair<int64_t, int64_t> run_bounds(const WaitInput& in);
bool is_io(OpId op);

/// Global synchronisations, phases and their rank groups (phases.cpp).
void find_phases(Context& c);
/// A blocking Barrier, Allreduce, Allgather(v), Alltoall(v,w),
/// Reduce_scatter(_block) or collective MPI-IO call ...
bool global_sync_op(OpId op);
/// ... on a communicator of all ranks.
bool over_world(const Trace& trace, const Event& ev, int32_t rank);
/// Per rank, its global synchronisations (event indexes) in program order:
/// the k-th of every rank are one instance.
std::vector<std::vector<std::size_t>> sync_candidates(const Trace& trace, const WaitInput& in);

/// A clock drift found by the seed's constant-exit-gap method (clock.cpp):
/// a rank's time t on rank 0's clock is t - slope * (t - origin_ns).
struct ExitGapDrift {
  int32_t rank = 0;
  double slope = 0;  ///< drift, as a fraction (1e-6: 1 ppm)
  int64_t origin_ns = 0;
  std::size_t syncs = 0;  ///< synchronisations it was fitted to
  /// False when the gaps show no drift beyond their scatter: nothing was
  /// corrected (slope 0).
  bool applied = true;
  /// Median distance of its gaps from the line (from a constant gap when
  /// not applied), rank 0's own scatter included: how far off its
  /// corrected times still are, typically.
  double residual_ns = 0;
  /// The largest distance from the line of a gap not far out of it (see
  /// clock.cpp): where the corrected times can still be off, at the run's
  /// ends. 0 when not applied.
  double inlier_max_ns = 0;
  /// The median gap of its (corrected) exits to rank 0's: what is left of
  /// its start offset's error, which the exits cannot tell from their order.
  double offset_ns = 0;
  int64_t correct(int64_t t) const {
    return t - static_cast<int64_t>(std::llround(slope * double(t - origin_ns)));
  }
};
/// For every rank but 0 whose timeline has no end offset (in.end_offset),
/// the drift of its exits of global synchronisations against rank 0's,
/// when at least 3 were reached: Theil-Sen slopes of each rank's exits
/// against the instance's median exit, relative to rank 0's. Corrects its
/// events in `in` when the line explains the gaps clearly better than a
/// constant gap (median residual under half the gaps' own).
std::vector<ExitGapDrift> align_by_exit_gaps(const Trace& trace, WaitInput& in,
                                             std::vector<int32_t>& unfitted);

/// load_diagnose_input in parts, so that tracefold-diagnose (parallel/)
/// reads and names each rank's samples on the analysis rank that digests
/// it. First the timelines: events on rank 0's clock, the drift of ranks
/// that ended early corrected (returned in `drifts`), the clock condition
/// repaired, with their notes.
DiagnoseInput load_diagnose_events(const Trace& trace, const std::string& dir,
                                   std::vector<std::string>& notes,
                                   std::vector<ExitGapDrift>& drifts,
                                   UnfoldedRun* unfolded = nullptr);
/// The same in parts, for a caller that matches the messages itself
/// (tracefold-diagnose splits the matching by receiver): the events and
/// their notes, unmatched ...
DiagnoseInput load_diagnose_timelines(const Trace& trace, const std::string& dir,
                                      std::vector<std::string>& notes,
                                      UnfoldedRun* unfolded = nullptr);
/// ... then, with `in.matched` set, the drift corrected and the clock
/// condition repaired.
void align_diagnose_events(const Trace& trace, DiagnoseInput& in, std::vector<std::string>& notes,
                           std::vector<ExitGapDrift>& drifts);
/// One recorded rank's samples as an analysis rank digests them.
struct RankSampleDigest {
  bool present = false;            ///< false: the rank has no samples file
  RankSamples samples;             ///< on rank 0's clock, before any exit-gap drift correction
  std::vector<std::string> names;  ///< its entry of DiagnoseInput::context_names
};
/// Reads rank `r`'s samples (if it has a file) and puts them on rank 0's
/// clock; `names` is left empty. Throws DiagnoseError naming the file.
RankSampleDigest read_rank_samples(const Trace& trace, const std::string& dir, int32_t r);
/// A frame as the symbolizer is asked about it: (module path, or name
/// without one; offset).
using FrameKey = std::pair<std::string, uint64_t>;
using FrameMemo = std::map<FrameKey, std::string>;
/// A frame to name: its key and the module to look it up in.
struct FrameQuery {
  FrameKey key;
  Module module;
};
/// Appends the frames of `rs`'s contexts not in `seen` (system libraries'
/// left out), in context order, and adds them to `seen`.
void frame_queries(const RankSamples& rs, std::set<FrameKey>& seen, std::vector<FrameQuery>& out);
/// The name of one frame as a place uses it (`unnamed`: no symbols, the
/// name is module+offset).
std::string name_frame(const FrameQuery& q, symbolize::Symbolizer& sym, bool& unnamed);
/// name_contexts when every frame is named in `memo` already.
std::vector<std::string> names_from_memo(const RankSamples& rs, const FrameMemo& memo);
/// The names of `rs`'s context nodes (DiagnoseInput::context_names); the
/// frames without symbols go into `unnamed` (their count is reported).
std::vector<std::string> name_contexts(const RankSamples& rs, symbolize::Symbolizer& sym,
                                       FrameMemo& memo, std::set<FrameKey>& unnamed);
/// Applies the exit-gap drift of `rank` (if corrected) to its samples.
void correct_drift(RankSamples& rs, int32_t rank, const std::vector<ExitGapDrift>& drifts);
/// What the report's notes about samples need of one recorded rank.
struct SampleFacts {
  bool present = false, has_trailer = false, lowered = false;
  int64_t period_ns = 0, slowest_ns = 0;  ///< asked for; the coarsest it lowered to
};
SampleFacts sample_facts(const RankSampleDigest& d);
/// The notes about samples in the serial reader's order; false when no
/// rank has samples. `unnamed`: frames without symbols over all ranks.
bool sample_notes(const std::vector<SampleFacts>& ranks, std::size_t unnamed,
                  const std::string& dir, std::vector<std::string>& notes);
/// Puts every recorded rank's digest (in rank order) into `in`: applies
/// the drifts, adds the notes about samples in the serial reader's order.
/// `unnamed`: frames without symbols over all ranks.
void add_samples(DiagnoseInput& in, std::vector<RankSampleDigest>&& ranks,
                 const std::vector<ExitGapDrift>& drifts, std::size_t unnamed,
                 const std::string& dir, std::vector<std::string>& notes);

/// Adds `rank`'s computation in [from, to) to `places`: its samples'
/// calling contexts when there are samples, else the computation before
/// event `next` (its MPI call path).
void add_computation(const Context& c, int32_t rank, int64_t from, int64_t to, std::size_t next,
                     Places& places);
/// `rank`'s computation gaps before events (first, last] into `places`.
void add_gaps(const Context& c, int32_t rank, std::size_t first, std::size_t last, Places& places);

/// Imbalance of one place summed over phase instances.
struct Imbalance {
  std::string label, parent;
  std::vector<std::string> stack;
  double seconds = 0;           ///< sum of max - avg over the instances
  std::vector<double> by_rank;  ///< of it, what each rank was the maximum for
  /// Per phase instance it was imbalanced in (an index into
  /// Context::syncs): max - avg there.
  std::vector<std::pair<std::size_t, double>> by_instance;
};
using Imbalances = std::map<std::string, Imbalance>;
/// Adds each place's max - avg over `ranks` in one phase instance.
/// `instance`: the synchronisation instance closing it (Imbalance::by_instance).
void accumulate_imbalance(const Context& c, const Places& places, const std::vector<int32_t>& ranks,
                          Imbalances& out, std::size_t instance = SIZE_MAX);
/// The places to name as causes: the most specific ones whose imbalance is
/// at least `floor_s`, most imbalanced first (rank: the one most often
/// the slowest).
std::vector<CodePlace> imbalance_causes(const Context& c, const Imbalances& imb, double floor_s);
/// Where one rank's computation went: the most specific places holding at
/// least half of `total_ns`, then others above the cause share.
std::vector<CodePlace> dominant_places(const Context& c, const Places& places, int32_t rank,
                                       int64_t total_ns);

/// Load imbalance, serialisation and MPMD phases (imbalance.cpp).
void diagnose_imbalance(Context& c);
void diagnose_serialisation(Context& c);
/// Frequent communication, wait for partner, large transfers and long
/// communication (communication.cpp).
void diagnose_communication(Context& c);

/// User functions whose samples are mostly one kind of communication
/// (derived.cpp).
void derive_labels(Context& c);

/// The report's temporal context trees, named (context_tree.cpp).
void name_trees(Context& c);

/// The report's ranks x time picture, after the diagnoses (picture.cpp).
void draw_picture(Context& c);

}  // namespace tracefold::diagnose_detail
