// Inter-process merge (seed 000, 5.2.4) and the radix-tree reduction.
//
// Two traces of disjoint rank sets are merged by a longest-common-subsequence
// match of their node lists on call-site signatures only (operation + call
// site), regardless of the loops the nodes head: matched nodes unite their
// ranklists and merge their elastic values, unmatched nodes keep their own
// ranks. Each rank's own sub-list, and so its expansion, is unchanged
// (except in lossy traces, whose alike value histograms are shared: see
// share_histograms).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tracefold/trace.hpp"

namespace tracefold {

struct MergeOptions {
  /// Largest LCS table; bigger inputs are first trimmed of their common
  /// prefix and suffix, and what is left beyond this is kept unmatched
  /// (still lossless, only less compact).
  std::size_t max_cells = std::size_t{1} << 24;
  /// Whether reduce_trace and reduce_traces settle the merged trace's
  /// timing (settle_timings in trace.hpp: alike predecessors share a block,
  /// bin sums are count * rounded mean). merge_traces never does.
  bool settle_timing = true;
};

/// Merges a and b. Ranks of a and b must be disjoint; throws
/// std::invalid_argument otherwise or if the world sizes differ. Both are
/// taken by value: pass what is not needed afterwards with std::move, and
/// its nodes are moved into the result instead of copied.
Trace merge_traces(Trace a, Trace b, const MergeOptions& options = {});

/// LOSSY traces only (value histograms, apply_histogram_threshold): in each
/// field, histogram entries whose per-rank value counts lie in the same
/// power-of-two class become one entry shared by their ranks, holding the
/// pooled values scaled to the largest member's count (docs/format.md
/// "Shared value histograms"), and the trace's lossy note names the fields.
/// merge_traces does this for the entries it merges; a trace whose
/// histograms were made after merging (merge --histogram-threshold) calls
/// it. Histograms of one rank each are kept as they are.
void share_histograms(Trace& trace);

/// Renumbers call sites in order of first use by the node list (and drops
/// unused ones), so equal traces print the same bytes however they were built.
void canonicalize_sites(Trace& trace);

/// Point-to-point byte transport between the P participants of a reduction.
/// The recorder implements it with PMPI on a private communicator; tests use
/// InMemoryExchange.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void send(int to, const std::string& bytes) = 0;
  virtual std::string receive(int from) = 0;
};

/// The partner schedule of the radix-`radix` reduction tree: in round s
/// (stride = radix^s) rank r with r % (radix*stride) == 0 receives from
/// r + i*stride (i = 1..radix-1, in order, when < P); other ranks with
/// r % stride == 0 send to r - r % (radix*stride) and are done. Takes
/// ceil(log_radix P) rounds.
int reduction_rounds(int size, int radix);

/// Runs this participant's part of the reduction; returns the merged trace on
/// rank 0 and nullopt elsewhere. Without `errors`, a trace that cannot be
/// merged throws; with it, that child's subtree is left out, the problem is
/// appended to `errors`, and the protocol still completes on every rank.
/// Traces travel in the compact transfer form (encode_compact_transfer):
/// the text form was ten times larger and its parsing a third of a
/// round's work.
std::optional<Trace> reduce_trace(Trace local, Exchange& exchange, int radix = 2,
                                  const MergeOptions& options = {},
                                  std::vector<std::string>* errors = nullptr);

/// The same reduction, same merge order, for traces held in one process
/// (traces[i] belongs to participant i).
Trace reduce_traces(std::vector<Trace> traces, int radix = 2, const MergeOptions& options = {});

/// Thread-safe in-memory mailboxes for `size` participants; endpoint(i) is the
/// Exchange of participant i (run each participant on its own thread).
class InMemoryExchange {
 public:
  explicit InMemoryExchange(int size);
  ~InMemoryExchange();
  Exchange& endpoint(int rank);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracefold
