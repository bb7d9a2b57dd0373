// Intra-process folding (seed 000, 2.1 and 5.2.2).
//
// Events are appended one at a time. Whenever the tail of the sequence is a
// further iteration of a loop seen just before it, it is merged into that loop;
// whenever two consecutive stretches look like two iterations of a new loop,
// they become one. Iterations need not be identical: as in ScalaTrace 2, two
// stretches count as iterations when their first and last calls match, and the
// rest is aligned by a longest-common-subsequence pass. Calls that happen only
// in some iterations stay in the body with a per-iteration count of 0 or 1,
// and loop trip counts are value sequences, so nothing is lost. An iteration
// that continues an inner loop at the end of an enclosing loop's last
// iteration (the "trailing iteration" of Figure 5.2) is absorbed into that
// inner loop, so outer loops with varying inner trip counts stay folded.
//
// Exact repeats are found at any distance (a rolling hash over the top-level
// items compares two stretches, or a loop body and a stretch, in constant
// time), so a loop body of any length folds. Cost per event is bounded by a
// cap on the earlier items looked at (those that end like the newest one),
// by the window for approximate matches (top-level items looked back over)
// and by a cap on alignment work.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

struct FoldOptions {
  /// How many top-level items to look back over for an approximate
  /// (LCS-aligned) iteration; exact repeats are found at any distance.
  std::size_t window = 64;
  /// Minimum share of aligned calls for two stretches to count as iterations
  /// of one loop (1.0 = identical call sequences only).
  double min_similarity = 0.8;
  /// Largest alignment table (cells) for one approximate match.
  std::size_t max_align_cells = std::size_t{1} << 20;
  /// Lossy, off when 0: a value sequence of a histogram field whose text form
  /// still writes more than this many values at the end (a repeated pattern
  /// counts all its values) is replaced by a value histogram.
  std::size_t histogram_threshold = 0;
  /// Fields subject to histogram_threshold (default: peer, src, count, tag).
  std::vector<FieldId> histogram_fields;
  /// Take the allocation-free path for events that continue the current
  /// loop iteration. It gives the same folding as the general path; off only
  /// for tests that compare the two.
  bool fast_path = true;
  /// Fold iterations that are alike but not identical into the learned loop
  /// in place (the walk path, with fast_path): an iteration whose inner
  /// trip counts differ, or that skips some of the loop's calls, extends the
  /// loop's value sequences instead of going through the general path. And
  /// two stretches that make the same set of calls, first and last alike,
  /// count as iterations whatever their alignment (a data exchange's rounds
  /// poll, test and receive in a different order and number every time).
  /// Still lossless; the structure may differ from what the general path
  /// alone gives (off for tests that compare the two byte for byte).
  bool elastic_iterations = true;
};

/// The times of one repeat of an event (see Folder::append_repeats); -1: none.
struct RepeatTiming {
  int64_t compute_ns = -1;
  int64_t comm_ns = -1;
};

/// Which way the appended events went (Folder::path_counts). The folded
/// result does not depend on it; tests and benchmarks use it to see that the
/// cheap paths take the steady state.
struct FoldPathCounts {
  uint64_t general = 0;  ///< made an item and searched for folds
  uint64_t fast = 0;     ///< continued an iteration of a loop of plain events
  uint64_t replay = 0;   ///< replayed a learned iteration of a loop with inner loops
  uint64_t repeats = 0;  ///< folded in bulk by append_repeats
  uint64_t walk = 0;     ///< matched against a learned loop's structure in place
};

class Folder {
 public:
  explicit Folder(int32_t rank, FoldOptions options = {});
  ~Folder();
  Folder(Folder&&) noexcept;
  Folder& operator=(Folder&&) noexcept;

  /// Appends one event. Peer fields must already be relative-encoded and the
  /// site id must come from the SiteTable later passed to finish().
  void append(const Event& event);

  /// Appends times.size() more copies of `event` (which must have no stats),
  /// the i-th with the times in times[i]: the same result as that many
  /// append() calls. A polling loop that finds nothing repeats one event
  /// thousands of times; while those repeats only extend a loop of that one
  /// event, they cost a few constant-time updates, not a fold step each.
  void append_repeats(const Event& event, std::span<const RepeatTiming> times);
  /// The same, without copying the event: its times are set to each
  /// repeat's in turn while it is folded, and put back before this returns
  /// (the copy cost a recorder as much as folding a walked event).
  void append_repeats(Event& event, std::span<const RepeatTiming> times);

  /// Number of events appended so far.
  uint64_t events() const;
  /// How many of those events each path took (they add up to events()).
  FoldPathCounts path_counts() const;
  /// Number of top-level items (loops or events) currently held.
  std::size_t top_level_size() const;
  /// Loop structure as text, for tests and debugging: events as `op:site`,
  /// loops as `[body]*iters`, e.g. `[0:0 0:1{1 0} 0:2{0 1} 0:3]*2`.
  std::string structure() const;

  /// The folded single-rank trace (does not consume the folder).
  Trace finish(int32_t world_size, const SiteTable& sites, const CommTable& comms) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracefold
