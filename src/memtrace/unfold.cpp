// Expansion of a folded memory trace back into each stream's references
// (fold.hpp's MemStreamReader).
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "fold.hpp"
#include "fold_codec.hpp"
#include "tracefold/expand.hpp"

namespace tracefold::memtrace {

using namespace fold_detail;

bool is_memory_trace(const Trace& trace) {
  // An empty trace qualifies: it expands to empty streams.
  for (const Node& n : trace.nodes)
    if (n.key.op != mem_op() && n.key.op != run_op() && n.key.op != origin_op()) return false;
  return true;
}

// ---------------------------------------------------------------- expansion

struct MemStreamReader::Impl {
  RankIterator it;
  std::uint32_t thread;
  const Fields& f = fields();
  std::vector<std::optional<SiteKey>> keys;  // by SiteId
  std::vector<char> stream_sites;            // by SiteId: is_stream_site
  // From the stream's own memorg node (traces of several logs): streams per
  // log (0: one log) and the heap shift.
  std::int64_t per_log = 0, heap_shift = 0;
  std::vector<SiteOrigin::Values> prev;
  std::vector<char> seen;
  std::int64_t prev_trips = 0;
  Event ev;
  // The run being expanded: body references of its first iteration.
  std::vector<MemRef> body;
  std::vector<std::int64_t> stride;
  std::uint64_t trips = 0, iter = 0;
  std::size_t pos = 0;
  // A compound run's free positions: their offsets, iteration by iteration
  // (empty for the others).
  std::vector<std::vector<std::int64_t>> free_off;
  bool has_free = false;

  // By SiteId: a compound run's body sites (empty for other sites).
  std::vector<std::vector<SiteId>> compound;
  std::vector<std::uint64_t> compound_mask;        // by SiteId: its free positions
  std::vector<std::vector<std::int32_t>> slot_of;  // slots_of by width - 1
  std::vector<std::int64_t> slots;
  std::set<SiteId> broken;  // compound sites whose body sites the table lacks

  // By SiteId: a memloop site's members (empty for other sites), each a
  // mem site or a compound run's body, and the slot of each of its scalar
  // columns (fold_codec.hpp loop_site): for a mem member the place among
  // off, stride, ord, own, dbase; for a run member its layout's slot.
  struct LoopMember {
    bool run = false;
    SiteId site = 0;
    std::vector<SiteId> body;
    std::uint64_t mask = 0;
    std::vector<std::uint32_t> slot;
  };
  std::vector<std::vector<LoopMember>> loops;
  // The loop being expanded: its list, each member's columns and what is
  // left of its free offsets, the next iteration and member.
  struct Column {
    std::int64_t code = 0, first = 0, rest = 0;
    const std::int64_t* all = nullptr;
  };
  const std::vector<LoopMember>* loop = nullptr;
  std::vector<std::int64_t> loop_list;
  std::vector<std::vector<Column>> columns;
  std::vector<const std::int64_t*> loop_free;
  std::vector<std::size_t> loop_free_left;
  std::uint64_t loop_iters = 0, loop_iter = 0;
  std::size_t loop_pos = 0;

  Impl(const Trace& trace, std::uint32_t t) : it(trace, static_cast<std::int32_t>(t)), thread(t) {
    keys.reserve(trace.sites.size());
    std::map<CallSite, SiteId> ids;
    for (const CallSite& s : trace.sites.all()) {
      ids.emplace(s, static_cast<SiteId>(keys.size()));
      keys.push_back(decode_site(s));
      stream_sites.push_back(is_stream_site(s));
    }
    compound.resize(keys.size());
    compound_mask.resize(keys.size());
    for (SiteId id = 0; id < keys.size(); id++) {
      const auto c = compound_members(trace.sites.at(id));
      if (!c) continue;
      compound_mask[id] = c->mask;
      for (const CallSite& m : c->members) {
        const auto found = ids.find(m);
        // A body site the table lacks cannot have had an origin either.
        if (found == ids.end() || !keys[found->second]) {
          compound[id].clear();
          broken.insert(id);
          break;
        }
        compound[id].push_back(found->second);
      }
    }
    loops.resize(keys.size());
    for (SiteId id = 0; id < keys.size(); id++) {
      const auto ms = loop_members(trace.sites.at(id));
      if (!ms) continue;
      for (const CallSite& c : *ms) {
        LoopMember m;
        if (const auto run = compound_members(c)) {
          m.run = true;
          m.mask = run->mask;
          for (const CallSite& b : run->members) {
            const auto found = ids.find(b);
            if (found == ids.end() || !keys[found->second]) break;
            m.body.push_back(found->second);
          }
          if (m.body.size() != run->members.size()) break;
          const RunLayout& l = run_layout(m.body.size(), m.mask != 0);
          for (std::uint32_t x = 0; x < l.ids.size(); x++) m.slot.push_back(x);
        } else {
          const auto found = ids.find(c);
          if (found == ids.end() || !keys[found->second]) break;
          m.site = found->second;
          const FieldId ids[] = {f.off, f.stride, f.ord, f.own, f.dbase};
          for (std::uint32_t x = 0; x < 5; x++) m.slot.push_back(x);
          std::sort(m.slot.begin(), m.slot.end(), [&ids](std::uint32_t x, std::uint32_t y) {
            return FieldTable::name(ids[x]) < FieldTable::name(ids[y]);
          });
          loops[id].push_back(std::move(m));
          continue;
        }
        const RunLayout& l = run_layout(m.body.size(), m.mask != 0);
        std::sort(m.slot.begin(), m.slot.end(), [&l](std::uint32_t x, std::uint32_t y) {
          return FieldTable::name(l.ids[x]) < FieldTable::name(l.ids[y]);
        });
        loops[id].push_back(std::move(m));
      }
      if (loops[id].size() != ms->size()) {
        loops[id].clear();
        broken.insert(id);
      }
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ExpandError("memory trace, thread " + std::to_string(thread) + ": " + what);
  }

  std::int64_t field(FieldId id) const {
    const std::int64_t v = ev.get(id);
    if (v == kAbsent) fail("an event lacks field " + FieldTable::name(id));
    return v;
  }

  // A reference of `site` from its five event numbers (off, stride, ord,
  // own, dbase), the site's previous values moved on.
  void decode_values(MemRef& m, SiteId site, const std::int64_t* v) {
    if (site >= keys.size() || !keys[site]) fail("a reference without an access site");
    const SiteKey& k = *keys[site];
    if (site >= seen.size() || !seen[site]) fail("a reference before its site's origin");
    SiteOrigin::Values& p = prev[site];
    m.iaddr = k.iaddr;
    m.index = k.index;
    m.size = k.size;
    m.store = k.store;
    m.kind = k.kind;
    m.region = k.region;
    m.context = k.context;
    p[0] = wrap_add(p[0], v[0]);
    p[1] = wrap_add(p[1], v[4]);
    p[2] = wrap_add(p[2], v[3]);
    m.offset = p[0];
    m.daddr = static_cast<std::uint64_t>(wrap_add(p[1], p[0]));
    m.owner = static_cast<std::uint32_t>(p[2]);
    m.ordinal = static_cast<std::uint32_t>(v[2]);
  }

  // The event just read, a mem event, as a reference (its stride in *st).
  void decode(MemRef& m, std::int64_t* st) {
    if (ev.op != mem_op()) fail("expected a mem event with an access site");
    const std::int64_t v[RunLayout::kPerPosition] = {field(f.off), st ? field(f.stride) : 0,
                                                     field(f.ord), field(f.own), field(f.dbase)};
    decode_values(m, ev.site, v);
    if (st) *st = v[1];
  }

  // The slot of each field of a compound run of `width` positions (-1: none).
  const std::vector<std::int32_t>& slots_of(std::size_t width) {
    if (slot_of.size() < width) slot_of.resize(width);
    std::vector<std::int32_t>& so = slot_of[width - 1];
    if (so.empty()) {
      const RunLayout& l = run_layout(width, false);
      for (std::size_t x = 0; x < l.ids.size(); x++) {
        if (l.ids[x] >= so.size()) so.resize(l.ids[x] + 1, -1);
        so[l.ids[x]] = static_cast<std::int32_t>(x);
      }
    }
    return so;
  }

  // The compound run event just read: its body and strides in place.
  void start_compound(const std::vector<SiteId>& members, std::uint64_t mask) {
    const std::vector<std::int32_t>& so = slots_of(members.size());
    const RunLayout& l = run_layout(members.size(), mask != 0);
    slots.assign(l.ids.size(), kAbsent);
    const std::vector<std::int64_t>* list = nullptr;
    for (const FieldValue& fv : ev.fields)
      if (mask && fv.field == l.list)
        list = &fv.list;
      else if (fv.field < so.size() && so[fv.field] >= 0)
        slots[so[fv.field]] = fv.scalar;
    for (std::size_t x = 0; x < slots.size(); x++)
      if (slots[x] == kAbsent) fail("a run lacks field " + FieldTable::name(l.ids[x]));
    static const std::vector<std::int64_t> none;
    if (mask && !list) fail("a run lacks field " + FieldTable::name(l.list));
    if (!list) list = &none;
    if (begin_run(members, mask, list->data(), list->size()) != list->size())
      fail("a run's list of free offsets is too long");
  }

  // A compound run from `slots` (its fields) and its free positions'
  // offsets, which `list` (of `avail` values) begins with: its body and
  // strides in place. Returns how many values of the list it took.
  std::size_t begin_run(const std::vector<SiteId>& members, std::uint64_t mask,
                        const std::int64_t* list, std::size_t avail) {
    const std::int64_t t = prev_trips + slots[0];
    // One trip for a body with free positions (fold.cpp's known bodies).
    if (t < (mask ? 1 : 2)) fail("a run of " + std::to_string(t) + " trips");
    prev_trips = t;
    body.resize(members.size());
    stride.resize(body.size());
    free_off.resize(body.size());
    has_free = mask != 0;
    std::size_t at = 0;  // in the list
    for (std::size_t i = 0; i < body.size(); i++) {
      const std::int64_t* v = &slots[1 + RunLayout::kPerPosition * i];
      decode_values(body[i], members[i], v);
      stride[i] = v[1];
      free_off[i].clear();
      if (i >= 64 || !((mask >> i) & 1)) continue;
      if (avail - at < static_cast<std::uint64_t>(t - 1))
        fail("a run's list of free offsets ends early");
      free_off[i].push_back(body[i].offset);
      for (std::int64_t j = 1; j < t; j++)
        free_off[i].push_back(wrap_add(free_off[i].back(), list[at++]));
    }
    trips = static_cast<std::uint64_t>(t);
    iter = 0;
    pos = 0;
    return at;
  }

  // The memloop event just read: its list parsed into columns.
  void start_loop(const std::vector<LoopMember>& members) {
    const std::int64_t n = field(loop_iters_field());
    if (n < 1) fail("a loop of " + std::to_string(n) + " iterations");
    loop_list.clear();
    for (FieldValue& fv : ev.fields)
      if (fv.field == loop_list_field()) loop_list.swap(fv.list);
    const std::size_t size = loop_list.size();
    std::size_t at = 0;
    const auto take = [&](std::size_t k) {
      if (size - at < k) fail("a loop's list ends early");
      at += k;
      return loop_list.data() + (at - k);
    };
    columns.resize(members.size());
    for (std::size_t m = 0; m < members.size(); m++) {
      columns[m].resize(members[m].slot.size());
      for (Column& c : columns[m]) {
        c = Column{};
        c.code = *take(1);
        if (c.code == kColumnSame) {
          c.first = c.rest = *take(1);
        } else if (c.code == kColumnFirst) {
          c.first = *take(1);
          c.rest = *take(1);
        } else if (c.code == kColumnAll) {
          c.all = take(static_cast<std::size_t>(n));
        } else {
          fail("a loop's list has an unknown column code " + std::to_string(c.code));
        }
      }
    }
    loop_free.assign(members.size(), nullptr);
    loop_free_left.assign(members.size(), 0);
    for (std::size_t m = 0; m < members.size(); m++) {
      if (!members[m].mask) continue;
      const std::int64_t len = *take(1);
      if (len < 0) fail("a loop's list ends early");
      loop_free_left[m] = static_cast<std::size_t>(len);
      loop_free[m] = take(loop_free_left[m]);
    }
    if (at != size) fail("a loop's list is too long");
    loop = &members;
    loop_iters = static_cast<std::uint64_t>(n);
    loop_iter = 0;
    loop_pos = 0;
  }

  // The loop's next member event: a reference in *out (returns true) or a
  // run begun.
  bool step_loop(MemRef* out) {
    const LoopMember& m = (*loop)[loop_pos];
    const std::vector<Column>& cols = columns[loop_pos];
    const std::size_t m_at = loop_pos;
    slots.assign(m.run ? 1 + RunLayout::kPerPosition * m.body.size() : RunLayout::kPerPosition, 0);
    for (std::size_t k = 0; k < cols.size(); k++) {
      const Column& c = cols[k];
      slots[m.slot[k]] = c.all ? c.all[loop_iter] : loop_iter == 0 ? c.first : c.rest;
    }
    bool ref = true;
    if (!m.run) {
      decode_values(*out, m.site, slots.data());
    } else {
      const std::size_t used = begin_run(m.body, m.mask, loop_free[m_at], loop_free_left[m_at]);
      loop_free[m_at] += used;
      loop_free_left[m_at] -= used;
      ref = false;
    }
    if (++loop_pos == loop->size()) {
      loop_pos = 0;
      if (++loop_iter == loop_iters) {
        loop = nullptr;
        for (std::size_t left : loop_free_left)
          if (left) fail("a loop's list of free offsets is too long");
      }
    }
    return ref;
  }

  std::size_t next_batch(MemRef* out, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      if (iter < trips) {
        // The run's state in locals for the whole batch: stores through
        // `out` may alias the members, which would otherwise be reloaded
        // for every reference.
        const MemRef* const b = body.data();
        const std::int64_t* const st = stride.data();
        const std::size_t w = body.size();
        const std::uint64_t tr = trips;
        const bool fr = has_free;
        std::size_t p = pos;
        std::uint64_t k = iter;
        while (got < n && k < tr) {
          MemRef& m = out[got++];
          m = b[p];
          const std::int64_t d = fr && !free_off[p].empty() ? wrap_sub(free_off[p][k], b[p].offset)
                                                            : st[p] * static_cast<std::int64_t>(k);
          m.offset += d;
          m.daddr += static_cast<std::uint64_t>(d);
          if (++p == w) {
            p = 0;
            k++;
          }
        }
        pos = p;
        iter = k;
        continue;
      }
      if (loop) {
        if (step_loop(&out[got])) got++;
        continue;
      }
      if (!it.next(ev)) break;
      if (ev.op == origin_op()) {
        if (ev.site < stream_sites.size() && stream_sites[ev.site]) {
          per_log = field(f.per);
          heap_shift = field(f.dbase);
          if (per_log < 0) fail("a negative number of streams per log");
          continue;
        }
        if (ev.site >= keys.size() || !keys[ev.site]) fail("an origin without an access site");
        if (ev.site >= seen.size()) {
          seen.resize(ev.site + 1, 0);
          prev.resize(ev.site + 1);
        }
        seen[ev.site] = 1;
        const auto s = static_cast<std::int64_t>(thread);
        const std::int64_t t = per_log ? s % per_log : s, r = per_log ? s / per_log : 0;
        const auto mul = [](std::int64_t x, std::int64_t y) {
          return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) *
                                           static_cast<std::uint64_t>(y));
        };
        const FieldId ids[3][4] = {{f.off, f.offa, f.offb, f.offc},
                                   {f.dbase, f.dbasea, f.dbaseb, f.dbasec},
                                   {f.own, f.owna, f.ownb, f.ownc}};
        for (std::size_t k = 0; k < 3; k++) {
          // The log's coefficient only in traces of several logs.
          const std::int64_t c = ev.get(ids[k][3]);
          std::int64_t v =
              wrap_add(wrap_add(field(ids[k][1]), mul(field(ids[k][2]), t)), field(ids[k][0]));
          if (c != kAbsent) v = wrap_add(v, mul(c, r));
          prev[ev.site][k] = v;
        }
        if (keys[ev.site]->kind == AddrKind::Heap)
          prev[ev.site][1] = wrap_add(prev[ev.site][1], heap_shift);
        continue;
      }
      if (ev.op == run_op()) {
        if (ev.site < compound.size() && !compound[ev.site].empty()) {
          start_compound(compound[ev.site], compound_mask[ev.site]);
          continue;
        }
        if (ev.site < loops.size() && !loops[ev.site].empty()) {
          start_loop(loops[ev.site]);
          continue;
        }
        if (broken.count(ev.site)) fail("a run whose body sites the site table lacks");
        const std::int64_t width = field(f.width);
        const std::int64_t t = prev_trips + field(f.trips);
        if (width <= 0 || t < 2)
          fail("a run of width " + std::to_string(width) + ", " + std::to_string(t) + " trips");
        prev_trips = t;
        has_free = false;
        body.resize(static_cast<std::size_t>(width));
        stride.resize(body.size());
        for (std::size_t i = 0; i < body.size(); i++) {
          if (!it.next(ev)) fail("a run ends early");
          decode(body[i], &stride[i]);
        }
        trips = static_cast<std::uint64_t>(t);
        iter = 0;
        pos = 0;
        continue;
      }
      decode(out[got++], nullptr);  // a single reference
    }
    return got;
  }
};

MemStreamReader::MemStreamReader(const Trace& trace, std::uint32_t thread)
    : impl_(std::make_unique<Impl>(trace, thread)) {}
MemStreamReader::~MemStreamReader() = default;
std::size_t MemStreamReader::next_batch(MemRef* out, std::size_t n) {
  return impl_->next_batch(out, n);
}

std::vector<std::unique_ptr<RefSource>> folded_sources(const Trace& trace) {
  if (!is_memory_trace(trace)) throw std::runtime_error("not a folded memory trace");
  std::vector<std::unique_ptr<RefSource>> out;
  for (std::int32_t t = 0; t < trace.world_size; t++)
    out.push_back(std::make_unique<MemStreamReader>(trace, static_cast<std::uint32_t>(t)));
  return out;
}

}  // namespace tracefold::memtrace
