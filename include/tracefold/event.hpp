// The neutral event model shared by every part of tracefold.
//
// An Event is one call the recorder saw (an MPI function or a marker such as
// `compute`), the call site it came from, and its parameters as named integer
// fields. Fields are open-ended: the known ones below have fixed meaning, and
// any other name is accepted and carried through folding, merging and the file
// format unchanged, so new parameters never need a redesign.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tracefold/members.hpp"
#include "tracefold/ranklist.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold {

// ---------------------------------------------------------------- operations

using OpId = uint16_t;

/// Operation names, interned process-wide. All MPI-3.1 functions the recorder
/// wraps are predefined (see ops.def); markers are `compute`, `enter`, `exit`.
class OpTable {
 public:
  /// Id of a known operation name, or nullopt.
  static std::optional<OpId> find(std::string_view name);
  /// Name of an op id.
  static const std::string& name(OpId id);
  /// Number of known operations.
  static std::size_t size();
  /// Does a call of `id` create or start requests? These are the calls the
  /// `links` field counts back in (see FieldTable): nonblocking
  /// point-to-point and collective calls, MPI_Imrecv, persistent *_init,
  /// MPI_Start and MPI_Startall.
  static bool makes_request(OpId id);
};

// -------------------------------------------------------------------- fields

using FieldId = uint16_t;

enum class FieldKind : uint8_t { kScalar, kList };

/// What a field means to the core. Peer-like fields are stored relative to
/// the caller's rank in the field's communicator (seed 000, 2.2) so that SPMD
/// ranks fold into one group; they are always decoded back to absolute ranks.
enum class FieldRole : uint8_t { kPlain, kPeer };

/// Field names, interned process-wide. Known fields (in canonical print order):
///   peer  - destination/source/partner rank in `comm` (any = ANY_SOURCE, null = PROC_NULL)
///   src   - the source actually matched (from the status) for wildcard receives/probes
///   rpeer - the source argument of a combined send-receive (Sendrecv)
///   srcs  - list: per wildcard receive completed by Waitall/Waitsome/Testall/
///           Testsome, in request array order, the source matched (undef if it
///           did not complete in that call); peer-like, element by element
///   tag   - message tag as called (any = ANY_TAG)
///   mtag  - the tag actually matched for ANY_TAG receives
///   mtags - list: the tags matched, alongside srcs
///   count - element count; dtype - datatype id; dsize - datatype size in bytes
///   comm  - trace-wide communicator id; root - root rank in `comm`; redop - reduction op id
///   newcomm - communicator id created by the call; color/key - split arguments
///   links - for completion calls, which earlier calls created their requests,
///           as backward distances (1 = most recent); the recorder counts only
///           calls that create or start requests, so polling loops fold
///   req   - number of requests handled (Waitall/Testall/...); flag - test outcome
///   counts/displs - per-peer vectors of v/w collectives
class FieldTable {
 public:
  static FieldId peer();
  static FieldId src();
  static FieldId comm();
  static FieldId links();
  /// Id of `name`, registering it with `kind` if unknown. Throws
  /// std::invalid_argument if the name is known with a different kind or
  /// is not a valid field name ([a-z][a-z0-9_]*).
  static FieldId intern(std::string_view name, FieldKind kind);
  static std::optional<FieldId> find(std::string_view name);
  static const std::string& name(FieldId id);
  /// Ids below kBuiltinFields are the built-in fields (peer, src, ...,
  /// rdispls: see src/core/event.cpp), of which these are lists.
  static constexpr FieldId kBuiltinFields = 26;
  static constexpr uint32_t kBuiltinListMask =
      (1u << 3) | (1u << 6) | (1u << 21) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25);
  /// Inline for the built-in fields: folding asks for every field of every
  /// event (the registry checks the mask against its list when built).
  static FieldKind kind(FieldId id) {
    if (id < kBuiltinFields)
      return (kBuiltinListMask >> id) & 1u ? FieldKind::kList : FieldKind::kScalar;
    return registered_kind(id);
  }
  static FieldKind registered_kind(FieldId id);
  /// Peer-like fields are the first known ids (peer, src, rpeer, srcs);
  /// inline: the recorder asks for every field of every call.
  static FieldRole role(FieldId id) { return id <= 3 ? FieldRole::kPeer : FieldRole::kPlain; }
  /// Canonical order: known fields in the order listed above, then others by name.
  static bool print_before(FieldId a, FieldId b);
};

/// The fields every call of `op` carries (the `required` column of
/// src/core/ops.def), in that column's order. Readers refuse a node or event
/// that lacks one, since replay and the analyses cannot do without them.
const std::vector<FieldId>& required_fields(OpId op);

/// One field value on one event.
struct FieldValue {
  FieldId field = 0;
  int64_t scalar = kAbsent;   ///< for kScalar fields
  std::vector<int64_t> list;  ///< for kList fields
  bool operator==(const FieldValue&) const = default;
};

// ------------------------------------------------------------------ call sites

/// One stack frame, normalized to module + offset so it is identical on every
/// rank despite address-space randomization.
struct Frame {
  std::string module;
  uint64_t offset = 0;
  auto operator<=>(const Frame&) const = default;
};

/// A call-site signature: frames from the MPI call outward.
struct CallSite {
  std::vector<Frame> frames;
  auto operator<=>(const CallSite&) const = default;
};

using SiteId = uint32_t;

/// Interning table of call sites. Ids are dense, in order of first insertion.
class SiteTable {
 public:
  SiteId intern(const CallSite& site);
  const CallSite& at(SiteId id) const { return sites_.at(id); }
  std::size_t size() const { return sites_.size(); }
  const std::vector<CallSite>& all() const { return sites_; }
  /// Text of one frame list: `module+0xoff module+0xoff ...` (or `-` when empty).
  static std::string format(const CallSite& site);
  /// Inverse of format; returns false on bad text.
  static bool parse(std::string_view text, CallSite& out);

 private:
  std::vector<CallSite> sites_;
  std::map<CallSite, SiteId> index_;
};

// --------------------------------------------------------------- communicators

/// A communicator as seen by one set of ranks: its members in comm-rank order
/// (world ranks). A trace-wide communicator id may stand for several disjoint
/// groups (e.g. every row communicator made by one MPI_Comm_split call).
/// Members are runs (tracefold/members.hpp): a world of a million ranks is
/// one run, not a million entries.
struct CommGroup {
  MemberList members;
  bool operator==(const CommGroup&) const = default;
};

/// Communicator id -> groups; lets any rank recover its rank and size in a comm.
class CommTable {
 public:
  /// World communicator id (always defined once the world size is known).
  static constexpr int64_t kWorld = 0;
  void define_world(int32_t size);
  /// Adds/extends communicator `id` with a group. Throws std::invalid_argument
  /// if a member is already in a different group of the same id.
  void define(int64_t id, CommGroup group);
  /// The group of `id` that holds world rank `rank`, or nullptr.
  const CommGroup* group_of(int64_t id, int32_t world_rank) const;
  /// Rank of `world_rank` in comm `id`, or -1.
  int32_t rank_in(int64_t id, int32_t world_rank) const;
  const std::map<int64_t, std::vector<CommGroup>>& all() const { return comms_; }
  void merge(const CommTable& other);
  bool operator==(const CommTable& other) const { return comms_ == other.comms_; }

 private:
  void reindex(int64_t id);
  std::map<int64_t, std::vector<CommGroup>> comms_;
  // id -> world rank -> (group index, rank in group): lookups on the
  // recorder's and the expander's hot paths must not scan member lists.
  std::map<int64_t, std::unordered_map<int32_t, std::pair<int32_t, int32_t>>> index_;
};

// ---------------------------------------------------------------------- events

/// Matching key of an event: operation + call site.
struct EventKey {
  OpId op = 0;
  SiteId site = 0;
  auto operator<=>(const EventKey&) const = default;
  uint64_t packed() const { return (uint64_t{op} << 32) | site; }
};

/// One recorded call, as handed from the recorder (or a raw log) to the core.
struct Event {
  OpId op = 0;
  SiteId site = 0;
  /// Fields sorted by FieldId, each at most once.
  std::vector<FieldValue> fields;
  /// Time spent before the call (computation) and inside it, in ns; -1 = unknown.
  int64_t compute_ns = -1;
  int64_t comm_ns = -1;
  /// Values of user statistics (plugins) for this call, by name; they go into
  /// histograms next to the timings.
  std::vector<std::pair<std::string, int64_t>> stats;

  EventKey key() const { return {op, site}; }
  /// Member by member: the recorder's queue trades events by swapping, and
  /// std::swap's three moves cost several times more.
  void swap(Event& other) noexcept {
    std::swap(op, other.op);
    std::swap(site, other.site);
    fields.swap(other.fields);
    std::swap(compute_ns, other.compute_ns);
    std::swap(comm_ns, other.comm_ns);
    stats.swap(other.stats);
  }
  /// Sets (or replaces) a scalar field.
  void set(FieldId f, int64_t v);
  void set_list(FieldId f, std::vector<int64_t> v);
  /// The scalar value of field f, or kAbsent.
  int64_t get(FieldId f) const {
    const FieldValue* fv = find(f);
    return fv ? fv->scalar : kAbsent;
  }
  /// Inline, like get: asked several times per recorded call, of a handful
  /// of fields sorted by id.
  const FieldValue* find(FieldId f) const {
    std::size_t lo = 0, hi = fields.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (fields[mid].field < f)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < fields.size() && fields[lo].field == f ? &fields[lo] : nullptr;
  }
  /// Equal operation, call site and fields (timings are not compared).
  bool same_call(const Event& other) const;
};

/// Rewrites peer-like fields (scalars, and each non-sentinel element of a
/// peer-like list) to offsets relative to `world_rank`'s position in
/// the event's communicator ((peer - me) mod size). Sentinels stay as they are.
/// Throws std::invalid_argument naming the field if the communicator is unknown
/// or a peer is out of range.
void encode_relative(Event& ev, int32_t world_rank, const CommTable& comms);
/// Whether `ev` has peer-like fields for encode_relative to rewrite.
bool has_relative_fields(const Event& ev);
/// encode_relative for a caller that already knows its rank `me` in the
/// event's communicator and that communicator's size (the recorder caches them).
void encode_relative(Event& ev, int32_t me, int32_t size);
/// The fields encode_relative rewrites, for an event whose fields are sorted
/// by id (Event::set and set_list keep them so): the peer-like ids are the
/// lowest (FieldTable::role), so they lead, and only these need a look.
inline std::span<FieldValue> leading_peer_fields(Event& ev) {
  std::size_t n = 0;
  while (n < ev.fields.size() && FieldTable::role(ev.fields[n].field) == FieldRole::kPeer) ++n;
  return {ev.fields.data(), n};
}
/// has_relative_fields and encode_relative over `fields` only (the
/// recorder's path, with leading_peer_fields).
bool has_relative_fields(std::span<const FieldValue> fields);
void encode_relative(std::span<FieldValue> fields, int32_t me, int32_t size);
/// Inverse of encode_relative.
void decode_relative(Event& ev, int32_t world_rank, const CommTable& comms);
/// decode_relative for a caller that knows `world_rank`'s position `me` in
/// the event's communicator and its size (comm_position), as RankIterator
/// keeps them per communicator instead of looking them up per event.
void decode_relative(Event& ev, int32_t me, int32_t size);
/// `world_rank`'s position in communicator `comm` (CommTable::kWorld when an
/// event has no `comm` field) and the size of its group there. Throws
/// std::invalid_argument if the rank has no group in it.
std::pair<int32_t, int32_t> comm_position(int64_t comm, int32_t world_rank, const CommTable& comms);

}  // namespace tracefold
