// Ranks that the folded trace cannot tell apart, and the assembly of global
// patterns over them (classes.cpp, assemble_classes.cpp): the work of
// find_process_patterns is done once per class of alike ranks, and only
// the union of per-process patterns and the bookkeeping that names ranks
// stay per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns::detail {

/// The class of every rank (numbered 0, 1, ... in order of their first
/// rank): two ranks share a class when they have the same nodes, the same
/// value sequence of every elastic value of those nodes (so the same stored
/// events, peers being stored relative to the rank) and communicator groups
/// of the same sizes (so the same relative peers). Their expanded events
/// then differ only in where their relative peers land.
std::vector<uint32_t> rank_classes(const Trace& trace);

/// Puts each global pattern's channels, rank order and edges in the order
/// the output promises (edges without duplicates): the last step of both
/// assemblies, per rank and per class.
void sort_globals(std::vector<GlobalPattern>& out);

/// The events of a class of ranks as the assembly needs them.
struct ClassEvents {
  std::vector<int32_t> ranks;  ///< ascending
  /// Peers (peer, rpeer) are ranks in the communicator, valid for the one
  /// rank of the class only; otherwise they are offsets from the rank's
  /// position: rank r's partner is (me + offset) mod size in the comm.
  bool absolute = false;
  std::vector<Message> events;
  std::vector<Symbol> symbols;
  std::vector<uint32_t> contexts;
  std::vector<int32_t> pattern_of;  ///< per event, as RankEvents::pattern_of
  std::size_t group = 0;            ///< its ranks' entry of Result::groups
};

/// Step 2 over classes: the same global patterns (assemble()) and the same
/// coverage as walking every rank, with per-rank work proportional to the
/// rank's channels and per-process patterns, not its events, except for
/// the hops of its matched messages inside patterns (the wavefront fit
/// reads them). `class_of[r]` indexes `classes`; `names` names contexts.
void assemble_classes(const std::vector<ClassEvents>& classes,
                      const std::vector<uint32_t>& class_of, const CommTable& comms,
                      const std::vector<std::string>& names, bool whole_rank, Result& result);

}  // namespace tracefold::patterns::detail
