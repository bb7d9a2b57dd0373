// What fold.cpp writes and unfold.cpp reads: the operations, fields and
// site frames of a folded memory trace (docs/memtrace.md "Folding").
// Internal to src/memtrace.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "raw_reader.hpp"
#include "tracefold/event.hpp"

namespace tracefold::memtrace::fold_detail {

// The event fields of a memory trace.
struct Fields {
  FieldId off, stride, ord, own, dbase, width, trips, offa, offb, dbasea, dbaseb, owna, ownb;
  // Traces of several logs (MPI ranks) only: the per-log coefficients of
  // the origins and the streams per log (docs/memtrace.md "Folding").
  FieldId offc, dbasec, ownc, per;
  Fields()
      : off(FieldTable::intern("off", FieldKind::kScalar)),
        stride(FieldTable::intern("stride", FieldKind::kScalar)),
        ord(FieldTable::intern("ord", FieldKind::kScalar)),
        own(FieldTable::intern("own", FieldKind::kScalar)),
        dbase(FieldTable::intern("dbase", FieldKind::kScalar)),
        width(FieldTable::intern("width", FieldKind::kScalar)),
        trips(FieldTable::intern("trips", FieldKind::kScalar)),
        offa(FieldTable::intern("offa", FieldKind::kScalar)),
        offb(FieldTable::intern("offb", FieldKind::kScalar)),
        dbasea(FieldTable::intern("dbasea", FieldKind::kScalar)),
        dbaseb(FieldTable::intern("dbaseb", FieldKind::kScalar)),
        owna(FieldTable::intern("owna", FieldKind::kScalar)),
        ownb(FieldTable::intern("ownb", FieldKind::kScalar)),
        offc(FieldTable::intern("offc", FieldKind::kScalar)),
        dbasec(FieldTable::intern("dbasec", FieldKind::kScalar)),
        ownc(FieldTable::intern("ownc", FieldKind::kScalar)),
        per(FieldTable::intern("per", FieldKind::kScalar)) {
    in_order = off < stride && stride < ord && ord < own && own < dbase && width < trips;
  }
  // Events hold fields sorted by id; the ids are in this order unless some
  // trace named them before.
  bool in_order = true;
  void sort(std::vector<FieldValue>& v) const {
    if (!in_order)
      std::sort(v.begin(), v.end(),
                [](const FieldValue& a, const FieldValue& b) { return a.field < b.field; });
  }
};

inline const Fields& fields() {
  static const Fields f;
  return f;
}

inline OpId op_named(const char* name) {
  auto id = OpTable::find(name);
  if (!id) throw std::logic_error(std::string("operation table lacks ") + name);
  return *id;
}
inline OpId mem_op() {
  static const OpId id = op_named("mem");
  return id;
}
inline OpId run_op() {
  static const OpId id = op_named("memrun");
  return id;
}
inline OpId origin_op() {
  static const OpId id = op_named("memorg");
  return id;
}

// What stays the same for every execution of one access: the site table's
// key. Frames: `L8#0+0xIADDR` (load or store, size, access index; the
// instruction), `KIND+0xREGION`, `ctx+0xCONTEXT`.
struct SiteKey {
  std::uint64_t iaddr = 0;
  std::uint32_t region = 0, context = 0;
  std::uint16_t size = 0;
  std::uint8_t index = 0;
  bool store = false;
  AddrKind kind = AddrKind::Other;
  bool operator==(const SiteKey&) const = default;
  static SiteKey of(const MemRef& m) {
    return {m.iaddr, m.region, m.context, m.size, m.index, m.store, m.kind};
  }
};

struct SiteKeyHash {
  std::size_t operator()(const SiteKey& k) const {
    std::uint64_t h = k.iaddr * 0x9e3779b97f4a7c15ULL;
    h ^= (std::uint64_t{k.region} << 32 | k.context) + 0x7f4a7c15 + (h << 6) + (h >> 2);
    h ^= (std::uint64_t{k.size} << 16 | std::uint64_t{k.index} << 8 | std::uint64_t{k.store} << 2 |
          static_cast<std::uint64_t>(k.kind)) +
         (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

inline CallSite encode_site(const SiteKey& k) {
  CallSite s;
  s.frames.push_back({std::string(k.store ? "S" : "L") + std::to_string(k.size) + "#" +
                          std::to_string(unsigned{k.index}),
                      k.iaddr});
  s.frames.push_back({addr_kind_name(k.kind), k.region});
  s.frames.push_back({"ctx", k.context});
  return s;
}

inline CallSite run_site() {
  CallSite s;
  s.frames.push_back({"memrun", 0});
  return s;
}

// A run as one `memrun` event (a compound event): its site names the body,
// frames `memrun+0xWIDTH` then each body reference's site frames in order
// and, when the run has free positions, `free+0xMASK`; its fields are the
// trip count and five per body position (off, stride, ord, own, dbase;
// position 0 under those names, position i under `off<i>`...). One event a
// run instead of one per body reference: core's folder costs about the
// same per event. A `memrun+0x0` site is the other form, a run whose
// `width` body references follow as mem events; expansion reads it too.
//
// Free positions: a body position whose offset follows no stride (the
// x[col[k]] of a sparse product) while an earlier position of the body
// advances by its own. Bit i of MASK is set for a free position i (its
// `stride` is then 0), and the list field `freeoff` holds, free position
// after free position, the differences of its offset from one iteration to
// the next (trips - 1 of them each). A run without free positions has no
// `free` frame and no `freeoff` field.
inline CallSite compound_site(const std::vector<const CallSite*>& members, std::uint64_t mask) {
  CallSite s;
  s.frames.reserve(2 + 3 * members.size());
  s.frames.push_back({"memrun", members.size()});
  for (const CallSite* m : members)
    s.frames.insert(s.frames.end(), m->frames.begin(), m->frames.end());
  if (mask) s.frames.push_back({"free", mask});
  return s;
}
struct CompoundSite {
  std::vector<CallSite> members;  // of three frames each
  std::uint64_t mask = 0;         // free positions
};
// nullopt if `s` is not a compound run's site.
inline std::optional<CompoundSite> compound_members(const CallSite& s) {
  if (s.frames.size() < 4 || s.frames[0].module != "memrun") return std::nullopt;
  CompoundSite c;
  std::size_t n = s.frames.size() - 1;
  if (n % 3 == 1 && s.frames.back().module == "free") {
    c.mask = s.frames.back().offset;
    n--;
  }
  if (n % 3 != 0 || s.frames[0].offset != n / 3 || c.mask >> std::min<std::size_t>(n / 3, 63))
    return std::nullopt;
  c.members.resize(n / 3);
  for (std::size_t i = 0; i < c.members.size(); i++)
    c.members[i].frames.assign(s.frames.begin() + static_cast<std::ptrdiff_t>(1 + 3 * i),
                               s.frames.begin() + static_cast<std::ptrdiff_t>(4 + 3 * i));
  return c;
}

// The fields of a compound run event of `width` body positions. Slot 0 is
// the trip count, slots 1 + 5i ... 5 + 5i position i's off, stride, ord,
// own and dbase; with free positions also the list `freeoff`, without a
// slot (kListSlot in `order`). Made once per form and kept for the process.
struct RunLayout {
  static constexpr std::size_t kPerPosition = 5;
  static constexpr std::uint32_t kListSlot = 0xffffffffu;
  // Positions from this one on are never free (the mask is one word).
  static constexpr std::size_t kMaxFree = 63;
  std::vector<FieldId> ids;                              // by slot
  std::vector<std::pair<FieldId, std::uint32_t>> order;  // (id, slot) by id: an event's order
  FieldId list = 0;                                      // freeoff, with free positions
};
inline const RunLayout& run_layout(std::size_t width, bool free) {
  static std::mutex lock;
  static std::deque<RunLayout> made;  // made[2 * (w - 1) + free]; references stay valid
  const std::lock_guard<std::mutex> hold(lock);
  while (made.size() < 2 * width) {
    const std::size_t w = made.size() / 2 + 1;
    const bool with_list = made.size() % 2 == 1;
    RunLayout l;
    const Fields& f = fields();
    l.ids.push_back(f.trips);
    for (std::size_t i = 0; i < w; i++) {
      if (i == 0) {
        l.ids.insert(l.ids.end(), {f.off, f.stride, f.ord, f.own, f.dbase});
        continue;
      }
      const std::string n = std::to_string(i);
      for (const char* name : {"off", "stride", "ord", "own", "dbase"})
        l.ids.push_back(FieldTable::intern(name + n, FieldKind::kScalar));
    }
    for (std::size_t s = 0; s < l.ids.size(); s++)
      l.order.emplace_back(l.ids[s], static_cast<std::uint32_t>(s));
    if (with_list) {
      l.list = FieldTable::intern("freeoff", FieldKind::kList);
      l.order.emplace_back(l.list, RunLayout::kListSlot);
    }
    std::sort(l.order.begin(), l.order.end());
    made.push_back(std::move(l));
  }
  return made[2 * (width - 1) + (free ? 1 : 0)];
}

// A loop of events around a run with free positions (fold_batch.hpp) as
// one `memrun` event: its site is `memloop+0xP` followed by the frames of
// the loop body's P event sites in order (a mem site's three frames, or a
// compound run's site, `memrun+0xWIDTH` and what follows it); its fields
// are `iters`, the iterations, and the list `loop`: first, member after
// member, each of the member's scalar fields in the member event's field
// order as a column of `iters` values, coded by its first entry (0: all
// equal, one value follows; 2: the first differs and the rest are equal,
// the first and the rest follow; 1: `iters` values follow); then, for each
// member with free positions in turn, the length of its free offsets'
// lists put end to end, and those lists.
inline CallSite loop_site(const std::vector<const CallSite*>& members) {
  CallSite s;
  s.frames.push_back({"memloop", members.size()});
  for (const CallSite* m : members)
    s.frames.insert(s.frames.end(), m->frames.begin(), m->frames.end());
  return s;
}
// The member sites of a `memloop` site; nullopt for another site or a
// malformed one.
inline std::optional<std::vector<CallSite>> loop_members(const CallSite& s) {
  if (s.frames.empty() || s.frames[0].module != "memloop" || s.frames[0].offset == 0)
    return std::nullopt;
  std::vector<CallSite> out;
  std::size_t i = 1;
  while (i < s.frames.size()) {
    std::size_t n = 3;
    if (s.frames[i].module == "memrun") {
      if (s.frames[i].offset == 0 || s.frames[i].offset > (s.frames.size() - i) / 3)
        return std::nullopt;
      n = 1 + 3 * static_cast<std::size_t>(s.frames[i].offset);
      if (i + n < s.frames.size() && s.frames[i + n].module == "free") n++;
    }
    if (i + n > s.frames.size()) return std::nullopt;
    CallSite m;
    m.frames.assign(s.frames.begin() + static_cast<std::ptrdiff_t>(i),
                    s.frames.begin() + static_cast<std::ptrdiff_t>(i + n));
    out.push_back(std::move(m));
    i += n;
  }
  if (out.size() != s.frames[0].offset) return std::nullopt;
  return out;
}
inline FieldId loop_iters_field() {
  static const FieldId id = FieldTable::intern("iters", FieldKind::kScalar);
  return id;
}
inline FieldId loop_list_field() {
  static const FieldId id = FieldTable::intern("loop", FieldKind::kList);
  return id;
}
// A column's codes in the `loop` list.
enum LoopColumn : std::int64_t { kColumnSame = 0, kColumnAll = 1, kColumnFirst = 2 };
// The column is v[0], v[step], ... (n values): read in place from the
// loop's rows.
inline void put_column(const std::int64_t* v, std::size_t step, std::size_t n,
                       std::vector<std::int64_t>& out) {
  bool rest_same = true;
  for (std::size_t i = 2; i < n && rest_same; i++) rest_same = v[i * step] == v[step];
  if (rest_same && (n < 2 || v[0] == v[step])) {
    out.insert(out.end(), {kColumnSame, v[0]});
  } else if (rest_same) {
    out.insert(out.end(), {kColumnFirst, v[0], v[step]});
  } else {
    out.push_back(kColumnAll);
    for (std::size_t i = 0; i < n; i++) out.push_back(v[i * step]);
  }
}

// The site of a stream's own memorg node in a trace of several logs: the
// streams per log and its log's heap shift (see merge_threads).
inline CallSite stream_site() {
  CallSite s;
  s.frames.push_back({"memstream", 0});
  return s;
}
inline bool is_stream_site(const CallSite& s) {
  return s.frames.size() == 1 && s.frames[0].module == "memstream";
}

inline std::optional<SiteKey> decode_site(const CallSite& s) {
  if (s.frames.size() != 3 || s.frames[2].module != "ctx") return std::nullopt;
  SiteKey k;
  const std::string& a = s.frames[0].module;
  const auto hash = a.find('#');
  if (a.size() < 4 || (a[0] != 'L' && a[0] != 'S') || hash == std::string::npos)
    return std::nullopt;
  try {
    const unsigned long size = std::stoul(a.substr(1, hash - 1));
    const unsigned long index = std::stoul(a.substr(hash + 1));
    if (size > 0xffff || index > 0xff) return std::nullopt;
    k.size = static_cast<std::uint16_t>(size);
    k.index = static_cast<std::uint8_t>(index);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  k.store = a[0] == 'S';
  k.iaddr = s.frames[0].offset;
  bool known = false;
  for (AddrKind kind : {AddrKind::Other, AddrKind::Static, AddrKind::Stack, AddrKind::Heap})
    if (s.frames[1].module == addr_kind_name(kind)) {
      k.kind = kind;
      known = true;
    }
  if (!known || s.frames[1].offset > 0xffffffffu || s.frames[2].offset > 0xffffffffu)
    return std::nullopt;
  k.region = static_cast<std::uint32_t>(s.frames[1].offset);
  k.context = static_cast<std::uint32_t>(s.frames[2].offset);
  return k;
}

// Everything of a reference but its site and offset must stay the same
// along a run; the base of the data address is daddr - offset.
inline std::int64_t dbase_of(const MemRef& m) {
  return static_cast<std::int64_t>(m.daddr - static_cast<std::uint64_t>(m.offset));
}

// Differences and sums of offsets and bases wrap (an address of kind
// `other` minus another may not fit).
inline std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

}  // namespace tracefold::memtrace::fold_detail
