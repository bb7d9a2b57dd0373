// The per-process step of find_process_patterns over classes of alike
// ranks (symbols.cpp, rank_walk.cpp, absolute_names.cpp, find.cpp): a
// rank's events as symbols and messages, and --absolute's naming of a
// class's symbols per rank.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "classes_internal.hpp"
#include "neighbourhood.hpp"
#include "tracefold/patterns.hpp"

namespace tracefold::patterns::detail {

/// The name of an operation family: blocking and nonblocking members
/// share it (an MPI_Isend is a send posted), as they share a symbol.
std::string family_name(OpFamily f);

/// `k` with its peer as the distance from `rank` in the communicator, the
/// short way round (-1 rather than size - 1).
SymbolKey relative(SymbolKey k, int32_t rank, const CommTable& comms);

/// What a shape needs beyond the symbol: the bytes sent, whether a
/// receive blocks and was a wildcard, and a wildcard tag's matched tag.
void fill_details(const Event& ev, Message& m);

/// Walks ranks into ClassEvents: symbols numbered in `walked` in order of
/// first use, contexts named once per call site, communicator topologies
/// noted in `hoods`.
class RankWalker {
 public:
  RankWalker(const Trace& trace, const Options& options,
             const std::function<std::string(SiteId)>& context_of);
  /// The classes of alike ranks (rank_classes()), walked once through their
  /// first rank, or rank by rank where their peers fall outside a group,
  /// in order of their first rank; `class_of` indexes the result.
  std::vector<ClassEvents> classes(std::vector<uint32_t>& class_of);

  /// Symbols in order of first use by rank (find_process_patterns
  /// renumbers them), whatever order the ranks are walked in.
  Alphabet walked;
  std::vector<std::string> context_names;
  /// The topologies communicators were created with, and the neighbourhood
  /// collectives made on them: their messages are not in the trace.
  Neighbourhoods hoods;

 private:
  void walk(int32_t rank, ClassEvents& c);
  uint32_t context_id(SiteId site);

  const Trace& trace_;
  const Options& options_;
  const std::function<std::string(SiteId)>& context_of_;
  // Absolute peers name ranks, so alike ranks have different symbols; but
  // one rank's absolute and relative symbols are equal where the other's
  // are, so the classes are worked on with relative symbols as by default,
  // and each rank's symbols named absolutely at the end (a walk of every
  // rank took 3.5 GiB at 16,384 ranks).
  const bool absolute_;
  std::map<SiteId, uint32_t> site_context_;
  std::map<std::string, uint32_t> context_ids_;
};

/// --absolute over classes of alike ranks: a class's symbols (relative, or
/// absolute for a rank walked alone) named as each of its ranks sees them.
/// Only the distinct symbols of a group are named per rank, in order of
/// first use, so result.alphabet is numbered as a walk of every rank in
/// order would number it.
class AbsoluteNames {
 public:
  AbsoluteNames(const std::vector<ClassEvents>& classes, const std::vector<uint32_t>& class_of,
                const Alphabet& by_class, Result& result, const CommTable& comms);
  /// Class symbol `s` as rank `rank` names it.
  Symbol symbol(int32_t rank, Symbol s) const {
    const auto r = static_cast<std::size_t>(rank);
    return of_rank_[r][index_[group_[r]].at(s)];
  }
  /// Result::groups rebuilt from the class groups: ranks whose absolute
  /// strings and contexts are equal, in order of their first rank. Equal
  /// strings make equal patterns, in the same order, so the global
  /// patterns' (rank, pattern) pairs stay valid.
  void regroup(const std::vector<ClassEvents>& classes, const std::vector<uint32_t>& class_of,
               Result& result);

 private:
  std::vector<std::vector<Symbol>> distinct_;
  std::vector<std::map<Symbol, uint32_t>> index_;
  std::vector<std::vector<Symbol>> of_rank_;
  std::vector<std::size_t> group_;
};

}  // namespace tracefold::patterns::detail
