// Ranks that the folded trace cannot tell apart, and the assembly of global
// patterns over them (classes.cpp, assemble_classes.cpp): the work of
// find_process_patterns is done once per class of alike ranks, and only
// the union of per-process patterns and the bookkeeping that names ranks
// stay per rank.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns::detail {

/// Where a rank sits in its group of a communicator: its position and the
/// group's size. Relative peers are offsets from `me` modulo `size`.
struct Place {
  int64_t me = 0;
  int64_t size = 0;
};

/// `rank`'s place in `comm`; nullopt when no (non-empty) group of `comm`
/// holds it.
inline std::optional<Place> place_in(const CommTable& comms, int64_t comm, int32_t rank) {
  const CommGroup* g = comms.group_of(comm, rank);
  const int32_t me = comms.rank_in(comm, rank);
  if (!g || me < 0 || g->members.empty()) return std::nullopt;
  return Place{me, static_cast<int64_t>(g->members.size())};
}

/// The offset, 0 .. size - 1, at which `peer` lies from `at`.
inline int64_t offset_of(const Place& at, int64_t peer) {
  return ((peer - at.me) % at.size + at.size) % at.size;
}

/// offset_of() for a peer that must be a rank of the group (nullopt if not):
/// only such a peer lands on the same partner from every rank of a class.
inline std::optional<int64_t> stored_offset(const Place& at, int64_t peer) {
  if (peer < 0 || peer >= at.size) return std::nullopt;
  return offset_of(at, peer);
}

/// The rank in the group that offset `offset` names from `at`.
inline int64_t peer_at(const Place& at, int64_t offset) {
  return (offset + at.me) % at.size;
}

/// The (peer, tag) of the message `m` sends, when a receive can match it:
/// both known. Both assemblies match by these rules.
inline std::optional<std::pair<int64_t, int64_t>> sent_to(const Message& m) {
  const bool sends = m.kind == Message::Kind::kSend || m.kind == Message::Kind::kSendrecv;
  if (!sends || is_sentinel(m.peer) || is_sentinel(m.tag) || m.peer == kAbsent) return std::nullopt;
  return std::pair{m.peer, m.tag};
}

/// The (source, tag) of the message `m` receives, when a send can match it:
/// a receive whose source or tag is unknown (a nonblocking wildcard)
/// matches nothing.
inline std::optional<std::pair<int64_t, int64_t>> received_from(const Message& m) {
  const bool sendrecv = m.kind == Message::Kind::kSendrecv;
  if (!sendrecv && m.kind != Message::Kind::kRecv) return std::nullopt;
  const int64_t from = sendrecv ? m.rpeer : m.peer;
  const int64_t tag = sendrecv ? m.rtag : m.tag;
  if (is_sentinel(from) || is_sentinel(tag) || from == kAbsent) return std::nullopt;
  return std::pair{from, tag};
}

/// The class of every rank (numbered 0, 1, ... in order of their first
/// rank): two ranks share a class when they have the same nodes, the same
/// value sequence of every elastic value of those nodes (so the same stored
/// events, peers being stored relative to the rank) and communicator groups
/// of the same sizes (so the same relative peers). Their expanded events
/// then differ only in where their relative peers land.
std::vector<uint32_t> rank_classes(const Trace& trace);

/// Puts each global pattern's channels and rank order in the order the
/// output promises, and makes its edges (the channels' sender and
/// receiver, each pair once): the last step of both assemblies, per rank
/// and per class.
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
  /// With --absolute, the walked rank's symbols with absolute peers (a
  /// class walked rank by rank keeps these as its `symbols`; the others
  /// work on relative ones and name them per rank at the end).
  std::vector<Symbol> absolute_symbols;
  std::vector<uint32_t> contexts;
  /// Per event (the walked rank's; alike ranks run the same loops), the
  /// folded loops it lies in.
  LoopPlaces loops;
  std::vector<int32_t> pattern_of;  ///< per event, as RankEvents::pattern_of
  std::size_t group = 0;            ///< its ranks' entry of Result::groups
};

/// Step 2 over classes: the same global patterns (assemble()) and the same
/// coverage as walking every rank, with per-rank work proportional to the
/// rank's channels and per-process patterns, not its events: the hops of
/// its matched messages inside patterns (the wavefront fit reads them) are
/// steps shared by the ranks whose messages go alike, and the rank's own
/// partners. `class_of[r]` indexes `classes`; `names` names contexts.
/// `single_symbol`, when given, names a single event's symbol as rank r
/// sees it (absolute peers differ from rank to rank of one class).
void assemble_classes(const std::vector<ClassEvents>& classes,
                      const std::vector<uint32_t>& class_of, const CommTable& comms,
                      const std::vector<std::string>& names, bool whole_rank, Result& result,
                      const std::function<Symbol(int32_t, Symbol)>& single_symbol = {});

}  // namespace tracefold::patterns::detail
