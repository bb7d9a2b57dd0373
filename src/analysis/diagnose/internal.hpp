// What the parts of the diagnosis share (not a public header).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

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
  /// Per rank: its main thread's computation samples (not inside MPI), in
  /// time order, as indexes into in.samples[rank].samples.
  std::vector<std::vector<uint32_t>> comp_samples;
  /// Per rank and sample context: the place key of its user-code path
  /// (function names outermost first, system frames left out), "" if none.
  std::vector<std::vector<std::string>> context_key;
  /// The same path as a list of frame names, outermost first.
  std::vector<std::vector<std::vector<std::string>>> context_path;

  Context(const Trace& t, const DiagnoseInput& i, const DiagnoseOptions& o, DiagnoseReport& r)
      : trace(t), in(i), opt(o), rep(r) {}
  const std::vector<TimedEvent>& events(int32_t rank) const {
    return in.events.ranks[std::size_t(rank)];
  }
  double seconds(int64_t ns) const { return static_cast<double>(ns) * 1e-9; }
  /// Whether `rank` has samples (a rank without a samples file is named by
  /// MPI call site, like a run without samples).
  bool sampled(int32_t rank) const {
    return std::size_t(rank) < in.samples.size() && in.samples[std::size_t(rank)].period_ns > 0;
  }
  /// How many sampling periods (period_ns) sample `s` of `rank` stands
  /// for: 1, or more where the sampler lowered its rate during the run
  /// (RankSamples::periods).
  int64_t sample_periods(int32_t rank, const Sample& s) const {
    const RankSamples& rs = in.samples[std::size_t(rank)];
    if (rs.periods.empty() || rs.period_ns <= 0) return 1;
    return std::max<int64_t>(1, rs.period_at(s.thread, s.time_ns) / rs.period_ns);
  }
  /// The most periods one sample of the main threads stands for: the
  /// coarsest sampling of the run, the noise floor of a cause.
  int64_t max_sample_periods = 1;
  /// Per rank: where its samples end when its samples file lost some (its
  /// size bound, or the rank died): computation after that is named by
  /// MPI call site, as on a rank without samples. INT64_MAX otherwise.
  std::vector<int64_t> samples_end;
  /// Whether `rank`'s computation from `from` on is named from samples.
  bool sampled_at(int32_t rank, int64_t from) const {
    return sampled(rank) &&
           (std::size_t(rank) >= samples_end.size() || from < samples_end[std::size_t(rank)]);
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
};
using Imbalances = std::map<std::string, Imbalance>;
/// Adds each place's max - avg over `ranks` in one phase instance.
void accumulate_imbalance(const Context& c, const Places& places, const std::vector<int32_t>& ranks,
                          Imbalances& out);
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

/// The report's ranks x time picture, after the diagnoses (picture.cpp).
void draw_picture(Context& c);

}  // namespace tracefold::diagnose_detail
