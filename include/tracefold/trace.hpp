// The folded, rank-merged trace.
//
// A Trace is a flat list of nodes, one per distinct call in the folded
// program order (ScalaTrace 2's loop-agnostic layout, seed 000 5.2.4). Loops
// are not separate objects: a node that starts a loop carries a loop level
// (member count, iteration count) for each loop it heads, outermost first. For
// one rank r, keep only the nodes whose `ranks` contain r; in that sub-list a
// loop level `members m` covers the head node and the m-1 nodes after it.
//
// Every number in a node is an Elastic value: a list of <value sequence,
// ranklist> pairs. Values of one rank are consumed in order:
//   - a loop level's members/iters: one value each time the node is reached at
//     that level (once per iteration of the enclosing loop);
//   - `count`: one value (0 or 1) each time the node itself is reached inside
//     its innermost loop; 0 marks an iteration in which it did not happen
//     (ScalaTrace 2's dummy events);
//   - a field: one value per execution (list fields: length, then elements).
// Expanding a node list this way gives each rank's exact event sequence
// (see expand.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/histogram.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/ranklist.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold {

/// One <value vector, ranklist> pair.
struct ElasticEntry {
  ValueSeq values;
  Ranklist ranks;
};

/// An elastic data element (seed 000, 5.2.1): per group of ranks, the value
/// sequence they share. Ranklists of the entries are disjoint.
class Elastic {
 public:
  Elastic() = default;
  static Elastic of(ValueSeq values, int32_t rank);

  /// The sequence of `rank`, or nullptr if the rank has none.
  const ValueSeq* for_rank(int32_t rank) const;
  /// Adds the entries of `other` (ranks disjoint from ours): equal sequences
  /// share one entry with the union of their ranklists.
  void merge(const Elastic& other);
  /// The same, taking `other`'s entries instead of copying them (a merge
  /// round's received trace is consumed: copying its sequences, one per rank
  /// on a polling code, led rank 0's time in the merge).
  void merge(Elastic&& other);
  /// Union of all ranklists.
  Ranklist ranks() const;
  bool empty() const { return entries_.empty(); }
  const std::vector<ElasticEntry>& entries() const { return entries_; }
  std::vector<ElasticEntry>& entries() { return entries_; }
  /// Entries sorted by their first rank (the canonical order).
  void sort_entries();

  /// `SEQ @ RANKLIST ; SEQ @ RANKLIST ...`. With `whole` (the trace file
  /// passes the node's ranks), an entry whose ranklist equals `*whole` is
  /// written `SEQ @ *`; without it every ranklist is written out.
  std::string to_string(const Ranklist* whole = nullptr) const;
  /// Inverse of to_string; throws std::invalid_argument on bad text. A
  /// ranklist `*` stands for `*whole`; it is an error when `whole` is null.
  static Elastic parse(std::string_view text, const Ranklist* whole = nullptr);

 private:
  std::vector<ElasticEntry> entries_;
};

/// One loop headed by a node.
struct LoopLevel {
  Elastic members;  ///< nodes in the loop body (this rank's nodes only), head included
  Elastic iters;    ///< iterations, one value per time the loop is entered
};

/// Matching key for "no preceding event" (the first event of a rank).
inline constexpr EventKey kStartKey{0xFFFF, 0xFFFFFFFFu};

/// Predecessor of a timing block that stands for every predecessor of its
/// node without a block of its own: settle_timings() puts the times of
/// predecessors whose times are alike into one such block (text `pred=other`,
/// format version 3; docs/format.md "Timing"). Sorts just before kStartKey.
inline constexpr EventKey kOtherKey{0xFFFF, 0xFFFFFFFEu};

/// Whether `pred` is kStartKey or kOtherKey (no operation, no call site).
inline bool is_pred_marker(EventKey pred) {
  return pred == kStartKey || pred == kOtherKey;
}

/// Timing of a node reached from one preceding call (seed 000, 2.3): keeping
/// predecessors apart separates loop entry and loop back-edge paths.
struct Timing {
  EventKey pred = kStartKey;
  Histogram compute;  ///< time before the call (computation), ns
  Histogram comm;     ///< time inside the call, ns
  /// User statistics (plugins), by name.
  std::vector<std::pair<std::string, Histogram>> stats;
};

/// Name of the built-in statistic (`record --stats compute_cpu`) holding
/// the processor time the calling thread spent computing before each call;
/// `replay --compute-clock cpu` spins for it instead of the wall-clock
/// compute time (docs/replay.md).
inline constexpr std::string_view kComputeCpuStatistic = "compute_cpu";

/// Merges timing records (sorted by pred) into `into`, histogram by histogram.
void merge_timings(std::vector<Timing>& into, const std::vector<Timing>& from);

struct Node {
  EventKey key;
  Ranklist ranks;                ///< ranks that have this node at all
  std::vector<LoopLevel> loops;  ///< loops this node heads, outermost first
  Elastic count;                 ///< executions each time the node is reached (0/1)
  std::vector<std::pair<FieldId, Elastic>> fields;  ///< sorted by FieldId
  std::vector<Timing> timings;                      ///< sorted by pred

  Elastic* field(FieldId f);
  const Elastic* field(FieldId f) const;
  /// The timing block of this node when reached from `pred`: the block of
  /// `pred` itself, else the `other` block, else null.
  const Timing* timing_after(EventKey pred) const;
};

/// A ranklist as the trace file writes it: `*` when `whole` is given,
/// non-empty and equal to `ranks` (format version 2, docs/format.md).
std::string format_ranklist_or_whole(const Ranklist& ranks, const Ranklist* whole);
/// Inverse of format_ranklist_or_whole: `*` stands for `*whole`, and is an
/// error when `whole` is null or when it does not stand alone. Throws
/// std::invalid_argument on bad text.
Ranklist parse_ranklist_or_whole(std::string_view text, const Ranklist* whole);

/// The whole trace with its tables.
struct Trace {
  /// Newest text version, written by format_trace when the trace has a
  /// thread dimension (version 6: the `threads` and `omp` lines); version 5
  /// when it has a `pred=other` timing block; else version 2, which added
  /// the whole-set shorthand `*`. Versions 3 and 4 exist only in the
  /// compact form (docs/format.md "Format versions"). The text reader takes
  /// versions 1, 2, 5 and 6.
  static constexpr int kFormatVersion = 6;
  /// Version of the compact form (encode_compact), the default on disk.
  /// Version 7 stores the field values of a node that opens a loop by that
  /// loop's trip counts where that is shorter (a poll's flag: "0 but on
  /// the last iteration"). Version 6 compresses against a fixed dictionary of MPI and library
  /// names and stores the module table's build-ids as bytes, without
  /// repeating the frame table's module names. Version 5 adds `pred=other` and stores a bin's mean
  /// instead of its sum where the sum is count * mean; version 4 stored histograms in columns,
  /// version 3 in place. Version 8 adds the thread dimension and is written
  /// only for a trace that has one (has_thread_dimension); the others stay
  /// version 7. The reader takes all six (docs/format.md).
  static constexpr int kCompactVersion = 8;
  /// The compact version written for a trace without a thread dimension.
  static constexpr int kCompactVersionSingleThread = 7;
  int32_t world_size = 0;
  /// The thread dimension (docs/format.md "The thread dimension"). Every
  /// ranklist of a node counts *locations*, one per (rank, thread): thread
  /// t of rank r is location t * world_size + r, threads numbered per rank
  /// by the order of their first MPI call. Thread 0's locations are the
  /// ranks themselves, so a trace of one thread per rank is the trace it
  /// always was; `threads` is the most threads any rank had.
  int32_t threads = 1;
  /// Per location, the OpenMP thread number (omp_get_thread_num()) of the
  /// thread when its first MPI call was made inside a parallel region, else
  /// -1: one single-value sequence per location that has one. Empty when
  /// no thread was an OpenMP worker.
  Elastic omp;
  SiteTable sites;
  /// Modules of the sites' frames and embedded symbols (optional tables).
  SymbolTables symtab;
  CommTable comms;
  std::vector<Node> nodes;
  /// Empty when lossless; otherwise which lossy options were used.
  std::string lossy;

  /// Ranks that have at least one node (locations, with threads > 1).
  Ranklist ranks() const;
  /// Number of (rank, thread) locations: world_size * threads.
  int32_t locations() const { return world_size * threads; }
  int32_t rank_of(int32_t location) const { return location % world_size; }
  int32_t thread_of(int32_t location) const { return location / world_size; }
  /// Whether the trace is written with its thread dimension (threads > 1 or
  /// an OpenMP table); one without is byte for byte the trace of old.
  bool has_thread_dimension() const { return threads > 1 || !omp.empty(); }
  /// "rank R" for thread 0 of a trace without threads, else "rank R thread T".
  std::string location_name(int32_t location) const;
  /// A ranklist of locations for people: `ranks RL` without threads, else
  /// `thread T ranks RL; ...` per thread that has some.
  std::string describe_locations(const Ranklist& locations) const;
  /// Approximate in-memory size.
  std::size_t memory_bytes() const;
};

/// What a finished trace keeps of its timing (docs/format.md "Timing"), done
/// once the ranks are merged (reduce_trace, reduce_traces):
///   - the blocks of a node whose times are alike become one block with
///     pred kOtherKey: alike to the node's main block (the `other` block if
///     there is one, else the block with the most samples), that is for the
///     compute and the communication histogram each, both empty, or both
///     with typical values (the mean of the fuller bin) within a factor of
///     two or within kAlikeNs of each other, and the same statistics;
///   - each bin of three or more samples gets the sum count * (its mean
///     rounded to an integer): the mean stays exact to half a unit, and the
///     compact form stores it without digits that grow with the count.
/// Everything else (counts, minimums, maximums and their ranks, bins, spans)
/// is unchanged; parameters are never touched. Idempotent.
void settle_timings(Trace& trace);
/// The difference in typical time (ns) below which settle_timings() counts
/// two predecessors' times as alike whatever their ratio.
inline constexpr int64_t kAlikeNs = 1000;

/// Drops every compute and communication histogram (record --no-timing):
/// the trace keeps parameters only, and user statistics where there are any.
void drop_timing(Trace& trace);

/// The fields the lossy histogram threshold applies to unless told which:
/// peer, src, count and tag (record, fold and merge --histogram-threshold).
bool default_histogram_field(FieldId f);

/// LOSSY (record, fold and merge --histogram-threshold N): every value
/// sequence of a field in `fields` (empty: default_histogram_field) with
/// more than `threshold` values as the text form writes it (a repeated
/// pattern counts its pattern's values) becomes a value histogram, which keeps each
/// rank's values and their counts but not their order. Marks the trace
/// lossy when anything changed; returns whether it did. 0 changes nothing.
bool apply_histogram_threshold(Trace& trace, std::size_t threshold,
                               const std::vector<FieldId>& fields = {});

}  // namespace tracefold
