// The "Communication patterns" section of the HTML report: what the CLI
// hands the report writer about `tracefold patterns`' global patterns.
// Plain data, so that export need not link the patterns library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracefold/ranklist.hpp"

namespace tracefold {

struct ReportPattern {
  /// The shape's title (`2-D halo, partial (1 edge missing)`) and its
  /// parameters as `tracefold patterns` lists them.
  std::string title;
  std::vector<std::pair<std::string, std::string>> params;
  bool classified = false;
  double quality = 0;
  std::size_t matched = 0, total_edges = 0;
  /// The functions its per-process patterns lie in, and the file:line
  /// of the call sites its ranks' events come from there (a few).
  std::vector<std::string> contexts;
  std::vector<std::string> sites;
  Ranklist ranks;
  std::size_t occurrences = 0;  ///< of one rank's pattern (the most any rank has)
  std::size_t messages = 0;
  uint64_t bytes = 0;  ///< of all its messages
  /// Share of the run's time in MPI calls, when the caller can tell.
  std::optional<double> time_share;
  /// Grid sides (`3x2` -> {3, 2}) when the shape has a grid, else empty.
  std::vector<int32_t> grid;
  /// (sender, receiver) of its messages, each once: one instance's edges.
  std::vector<std::pair<int32_t, int32_t>> edges;
  /// The thread class it was found in (the threads of this index on every
  /// rank, docs/patterns.md "Threads"); 0 in a trace without threads.
  int32_t thread = 0;
};

struct PatternsReport {
  int32_t world_size = 0;
  std::vector<ReportPattern> patterns;
  /// Set when the analysis failed: the report says so instead.
  std::string error;
  /// Threads per rank calling MPI: above 1, each thread class was analysed
  /// alone and the section names every pattern's class.
  int32_t threads = 1;
};

/// `3x2` -> {3, 2}; empty if `text` is no grid of positive sides.
std::vector<int32_t> parse_grid(const std::string& text);

struct RankPoint {
  double x = 0, y = 0;
};

/// Where each of `ranks` ranks goes in a `size` x `size` picture: on the
/// grid when its sides multiply to `ranks` (row-major, the last side
/// fastest, as MPI_Cart_create numbers them; a 3-D grid's planes side by
/// side), else evenly on a circle, rank 0 at the top, clockwise.
std::vector<RankPoint> rank_layout(int32_t ranks, const std::vector<int32_t>& grid, double size);

}  // namespace tracefold
