#include "fold.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "fold_batch.hpp"
#include "fold_codec.hpp"
#include "tracefold/merge.hpp"

namespace tracefold::memtrace {

using namespace fold_detail;

namespace {

// The most iterations a run with free positions takes (fold_codec.hpp).
constexpr std::uint64_t kMaxFreeTrips = 4096;

// context, size, index and store fill one 8-byte word of a MemRef, ordinal
// and owner another, without padding: compared a word at a time.
static_assert(offsetof(MemRef, context) == 16 && offsetof(MemRef, size) == 20 &&
              offsetof(MemRef, index) == 22 && offsetof(MemRef, store) == 23 &&
              offsetof(MemRef, ordinal) == 32 && offsetof(MemRef, owner) == 36 &&
              sizeof(MemRef::owner) == 4);
[[gnu::always_inline]] inline std::uint64_t word_at(const MemRef& m, std::size_t at) {
  std::uint64_t w;
  std::memcpy(&w, reinterpret_cast<const char*>(&m) + at, sizeof w);
  return w;
}

// Inlined: asked of every reference a run continues. The differences are
// or-ed rather than tested one by one: one branch a reference.
[[gnu::always_inline]] inline bool same_but_offset(const MemRef& a, const MemRef& b) {
  const std::uint64_t d =
      (a.iaddr ^ b.iaddr) | (word_at(a, 16) ^ word_at(b, 16)) | (word_at(a, 32) ^ word_at(b, 32)) |
      std::uint64_t{a.region ^ b.region} |
      (static_cast<std::uint64_t>(a.kind) ^ static_cast<std::uint64_t>(b.kind)) |
      static_cast<std::uint64_t>(dbase_of(a) ^ dbase_of(b));
  return d == 0;
}

}  // namespace

// ------------------------------------------------------------------ folding

struct ThreadFolder::Impl {
  std::uint32_t thread;
  SiteTable& sites;
  MemFoldOptions options;
  Folder folder;
  // Third level: loops around runs with free positions, one event each.
  LoopBatcher batch;
  MemFoldStats stats;
  const Fields& f = fields();
  std::unordered_map<SiteKey, SiteId, SiteKeyHash> site_ids;
  // Compound run sites by body (its sites in order).
  struct BodyHash {
    std::size_t operator()(const std::vector<SiteId>& v) const {
      std::uint64_t h = v.size();
      for (SiteId s : v) h = (h ^ s) * 0x9e3779b97f4a7c15ULL;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::vector<SiteId>, SiteId, BodyHash> compound_ids;
  std::vector<SiteId> body_key;  // body sites, then the mask's two halves
  // The latest run's body, mask and site: a loop's runs mostly repeat it.
  std::vector<SiteId> last_body;
  std::uint64_t last_mask = 0;
  SiteId last_body_id = 0;
  bool any_body = false;
  // The latest run's layout, as run_layout (which locks) gave it.
  const RunLayout* layout = nullptr;
  std::size_t layout_width = 0;
  bool layout_free = false;
  std::vector<std::int64_t> slots;  // a compound run's field values, by slot
  // close_run's unfinished iterations, one buffer per depth of recursion.
  std::vector<std::vector<MemRef>> partials;
  std::size_t depth = 0;

  // First level. Pending references (not yet in a run nor emitted), the
  // first at absolute position pend_base; last[site]: 1 + the absolute
  // position of the site's latest pending reference.
  std::vector<MemRef> pend;
  std::vector<SiteId> pend_site;
  std::uint64_t pend_base = 0;
  std::vector<std::uint64_t> last;
  // The current run: body (first iteration), strides, complete iterations
  // `trips`, position within the next one.
  bool in_run = false;
  std::vector<MemRef> body;
  std::vector<SiteId> body_site;
  std::vector<std::int64_t> stride;
  std::uint64_t trips = 0;
  std::size_t pos = 0;
  // Free positions (fold_codec.hpp RunLayout): is_free[i], and for a free
  // position the offsets of iterations 0 to trips (the last one unfinished
  // when pos > i).
  std::vector<char> is_free;
  std::vector<std::vector<std::int64_t>> free_off;
  bool any_free = false;
  std::vector<std::int64_t> free_list;  // the freeoff field being made
  // By SiteId: whether the site has been free in a run. Such a site is
  // free in its later runs of a few iterations too, strided or not, so
  // that its offsets go to one field whatever the run's length.
  std::vector<char> free_site;
  // Bodies with free positions, by their first site: such a body is taken
  // as a run from its first reference on (trips counted from 0), so that a
  // loop whose trip counts follow data (a CSR row's length) gives one run
  // per execution whatever its trip count, 1 included, instead of single
  // references or runs of other shapes where the row is short: the folder
  // then sees the same events every time, only their values varying. The
  // strides of its last run stand in for a run of one trip (which has
  // none), so that the stride fields keep their value.
  struct KnownBody {
    std::vector<SiteId> sites;
    std::vector<std::int64_t> stride;
  };
  std::unordered_map<SiteId, KnownBody> known;
  // By SiteId: whether `known` has a body starting at the site (asked of
  // every reference outside a run, ahead of the map).
  std::vector<char> known_first;
  // The known body the current run started as (start_known), else null:
  // its entry, found again at the run's end without hashing. Entries of an
  // unordered_map stay put, and none is erased.
  KnownBody* run_known = nullptr;
  // Set while the first reference of a failed attempt at a known body goes
  // through append again: it must not start the same attempt.
  bool no_known = false;

  // Second level: per site the previous offset, data-address base and owner
  // (the first ones are the site's origin, kept apart: see merge_threads),
  // the previous run's trip count.
  std::vector<SiteOrigin::Values> prev;
  std::vector<char> seen;
  std::vector<SiteOrigin> origins;  // by SiteId, valid where seen
  std::int64_t prev_trips = 0;
  // One event per form, reused: a mem event's five fields are set up once
  // (only their values change), and a run event keeps its lists' storage.
  Event mem_ev;
  std::array<std::size_t, RunLayout::kPerPosition> mem_at{};  // value i's place in mem_ev
  Event run_ev;
  const RunLayout* run_ev_layout = nullptr;  // whose fields run_ev has
  std::vector<std::uint32_t> run_ev_slot;    // by field: its slot
  std::size_t run_ev_list = 0;               // the list field's place, if any
  bool run_ev_has_list = false;
  // Recently met sites, direct-mapped by instruction address ahead of
  // site_ids: most references of a loop come from a few instructions.
  struct CachedSite {
    SiteKey key;
    SiteId id = 0;
    bool valid = false;
  };
  static constexpr std::size_t kSiteCache = 256;
  std::array<CachedSite, kSiteCache> site_cache{};
  // By SiteId: the key of each site this thread met (set by site_of).
  std::vector<SiteKey> key_of;

  Impl(std::uint32_t t, SiteTable& s, const MemFoldOptions& o)
      : thread(t),
        sites(s),
        options(o),
        folder(static_cast<std::int32_t>(t), o.folder),
        batch(folder, s) {
    if (options.max_body == 0) options.max_body = 1;
    mem_ev.op = mem_op();
    const FieldId ids[RunLayout::kPerPosition] = {f.off, f.stride, f.ord, f.own, f.dbase};
    for (FieldId id : ids) mem_ev.fields.push_back({id, 0, {}});
    f.sort(mem_ev.fields);
    for (std::size_t i = 0; i < mem_at.size(); i++)
      for (std::size_t j = 0; j < mem_ev.fields.size(); j++)
        if (mem_ev.fields[j].field == ids[i]) mem_at[i] = j;
  }

  SiteId site_of(const MemRef& m) {
    const SiteKey k = SiteKey::of(m);
    CachedSite& c = site_cache[(m.iaddr ^ (m.iaddr >> 8) ^ m.index) % kSiteCache];
    if (c.valid && c.key == k) return c.id;
    auto it = site_ids.find(k);
    SiteId id;
    if (it != site_ids.end()) {
      id = it->second;
    } else {
      id = sites.intern(encode_site(k));
      site_ids.emplace(k, id);
    }
    if (id >= key_of.size()) key_of.resize(id + 1);
    key_of[id] = k;
    c = {k, id, true};
    return id;
  }

  // A reference's five numbers as the event fields hold them (off, stride,
  // ord, own, dbase: differences from the site's previous values), the
  // site's previous values moved on.
  void step(const MemRef& m, SiteId s, std::int64_t stride_value, std::int64_t* out) {
    const SiteOrigin::Values v = {m.offset, dbase_of(m), std::int64_t{m.owner}};
    if (s >= seen.size()) {
      seen.resize(s + 1, 0);
      prev.resize(s + 1);
      origins.resize(s + 1);
    }
    if (!seen[s]) {
      seen[s] = 1;
      origins[s] = {s, v};
      prev[s] = v;
    }
    out[0] = wrap_sub(v[0], prev[s][0]);
    out[1] = stride_value;
    out[2] = std::int64_t{m.ordinal};
    out[3] = wrap_sub(v[2], prev[s][2]);
    out[4] = wrap_sub(v[1], prev[s][1]);
    prev[s] = v;
  }

  void emit_mem(const MemRef& m, SiteId s, std::int64_t stride_value) {
    std::int64_t v[RunLayout::kPerPosition];
    step(m, s, stride_value, v);
    mem_ev.site = s;
    for (std::size_t i = 0; i < mem_at.size(); i++) mem_ev.fields[mem_at[i]].scalar = v[i];
    batch.push(mem_ev, false, &mem_at);
  }

  void emit_single(std::size_t i) { emit_mem(pend[i], pend_site[i], 0); }

  // The site naming a run body (its sites in order) and its free
  // positions, interned once.
  SiteId body_site_id(std::uint64_t mask) {
    if (any_body && mask == last_mask && body_site == last_body) return last_body_id;
    last_body_id = body_site_id_of(mask);
    last_body.assign(body_site.begin(), body_site.end());
    last_mask = mask;
    any_body = true;
    return last_body_id;
  }
  SiteId body_site_id_of(std::uint64_t mask) {
    body_key.assign(body_site.begin(), body_site.end());
    body_key.push_back(static_cast<SiteId>(mask));
    body_key.push_back(static_cast<SiteId>(mask >> 32));
    auto it = compound_ids.find(body_key);
    if (it != compound_ids.end()) return it->second;
    std::vector<const CallSite*> members;
    for (SiteId s : body_site) members.push_back(&sites.at(s));
    const SiteId id = sites.intern(compound_site(members, mask));
    compound_ids.emplace(body_key, id);
    return id;
  }

  // The known body starting at site s, if any: the current run's own when
  // it started as one.
  const KnownBody* known_body(SiteId s) const {
    if (run_known != nullptr) return run_known;
    if (s >= known_first.size() || !known_first[s]) return nullptr;
    return &known.find(s)->second;
  }

  void emit_run() {
    if (trips == 1) {
      // No stride was seen: keep the body's last ones (expansion does not
      // use them for a single iteration).
      const KnownBody* k = known_body(body_site[0]);
      if (k != nullptr && k->sites == body_site)
        std::copy(k->stride.begin(), k->stride.end(), stride.begin());
    }
    slots.resize(1 + RunLayout::kPerPosition * body.size());
    slots[0] = static_cast<std::int64_t>(trips) - prev_trips;
    prev_trips = static_cast<std::int64_t>(trips);
    std::uint64_t mask = 0;
    free_list.clear();
    for (std::size_t i = 0; i < body.size(); i++) {
      const SiteId s = body_site[i];
      const bool was =
          s < free_site.size() && free_site[s] && i < RunLayout::kMaxFree && trips <= kMaxFreeTrips;
      if (any_free && is_free[i]) {
        if (s >= free_site.size()) free_site.resize(s + 1, 0);
        free_site[s] = 1;
        for (std::uint64_t j = 1; j < trips; j++)
          free_list.push_back(wrap_sub(free_off[i][j], free_off[i][j - 1]));
      } else if (was) {
        free_list.insert(free_list.end(), trips - 1, stride[i]);
      } else {
        step(body[i], s, stride[i], &slots[1 + RunLayout::kPerPosition * i]);
        continue;
      }
      mask |= std::uint64_t{1} << i;
      step(body[i], s, 0, &slots[1 + RunLayout::kPerPosition * i]);
    }
    if (mask != 0) {
      KnownBody* kb = run_known;
      if (kb == nullptr) {
        kb = &known[body_site[0]];
        kb->sites.assign(body_site.begin(), body_site.end());
        const SiteId s0 = body_site[0];
        if (s0 >= known_first.size()) known_first.resize(s0 + 1, 0);
        known_first[s0] = 1;
      }
      // A run started as a known body has that body's sites already.
      KnownBody& k = *kb;
      k.stride.assign(stride.begin(), stride.end());
      for (std::size_t i = 0; i < body.size(); i++)
        if ((mask >> i) & 1) k.stride[i] = 0;
    }
    if (layout == nullptr || layout_width != body.size() || layout_free != (mask != 0)) {
      layout = &run_layout(body.size(), mask != 0);
      layout_width = body.size();
      layout_free = mask != 0;
    }
    const RunLayout& l = *layout;
    run_ev.op = run_op();
    run_ev.site = body_site_id(mask);
    if (run_ev_layout != &l) set_run_fields(l);
    // The list field's slot is the one past the body's, which holds kAbsent.
    slots.push_back(kAbsent);
    FieldValue* fv = run_ev.fields.data();
    const std::uint32_t* from = run_ev_slot.data();
    for (std::size_t j = 0; j < run_ev_slot.size(); j++) fv[j].scalar = slots[from[j]];
    if (run_ev_has_list) fv[run_ev_list].list.swap(free_list);  // free_list is made anew every run
    batch.push(run_ev, mask != 0, &l);
    stats.runs++;
    stats.in_runs += trips * body.size();
  }

  // Gives run_ev the fields of layout l, ids set once: later runs of the
  // same layout only change the values.
  void set_run_fields(const RunLayout& l) {
    run_ev_layout = &l;
    run_ev.fields.assign(l.order.size(), FieldValue{});
    run_ev_slot.resize(l.order.size());
    run_ev_has_list = false;
    for (std::size_t j = 0; j < l.order.size(); j++) {
      run_ev.fields[j].field = l.order[j].first;
      if (l.order[j].second == RunLayout::kListSlot) {
        run_ev_slot[j] = static_cast<std::uint32_t>(l.ids.size());
        run_ev_list = j;
        run_ev_has_list = true;
      } else {
        run_ev_slot[j] = l.order[j].second;
      }
    }
  }

  void close_run() {
    in_run = false;
    if (trips == 0) {
      // A known body's first iteration did not complete: its references
      // go to the first level as any others, the first without trying
      // the body again.
      const std::size_t d = depth++;
      if (partials.size() <= d) partials.emplace_back();
      partials[d].assign(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(pos));
      for (std::size_t i = 0; i < partials[d].size(); i++) {
        no_known = i == 0;
        append(MemRef(partials[d][i]));
      }
      depth--;
      return;
    }
    emit_run();
    // The unfinished iteration's references start over, in order: should
    // they start a run of their own, the rest of them (and then the
    // reference that ended this run) must go to that run first.
    // Copied out of body (another run reuses it) into a buffer of this
    // depth: appending them may close runs again, recursively.
    if (pos == 0) return;
    const std::size_t d = depth++;
    if (partials.size() <= d) partials.emplace_back();
    partials[d].assign(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(pos));
    for (std::size_t i = 0; i < partials[d].size(); i++) {
      const std::int64_t to = is_free[i]
                                  ? free_off[i][trips]
                                  : body[i].offset + stride[i] * static_cast<std::int64_t>(trips);
      partials[d][i].daddr += static_cast<std::uint64_t>(to - body[i].offset);
      partials[d][i].offset = to;
    }
    for (std::size_t i = 0; i < partials[d].size(); i++) {
      const MemRef m = partials[d][i];
      append(m);
    }
    depth--;
  }

  void flush_pending(std::size_t n) {
    for (std::size_t i = 0; i < n; i++) emit_single(i);
    pend.erase(pend.begin(), pend.begin() + static_cast<std::ptrdiff_t>(n));
    pend_site.erase(pend_site.begin(), pend_site.begin() + static_cast<std::ptrdiff_t>(n));
    pend_base += n;
  }

  void add_pending(const MemRef& m, SiteId s) {
    const std::uint64_t n = pend_base + pend.size();
    pend.push_back(m);
    pend_site.push_back(s);
    if (s >= last.size()) last.resize(s + 1, 0);
    const std::uint64_t prev = last[s];
    last[s] = n + 1;
    if (prev != 0) {
      const std::uint64_t p = n - (prev - 1);
      if (p <= options.max_body && n + 1 >= pend_base + 2 * p) {
        const std::size_t a = static_cast<std::size_t>(n + 1 - 2 * p - pend_base);
        bool same = true;
        for (std::size_t i = 0; i < p && same; i++)
          same = pend_site[a + i] == pend_site[a + p + i] &&
                 same_but_offset(pend[a + i], pend[a + p + i]);
        // A body of several references that repeats exactly (every stride
        // 0) is left to the second level, which folds it as a loop: as
        // a run it would fold differently from the same repetition with
        // one more reference in the body than the first level looks for
        // (the edge and interior ranks of a halo exchange).
        bool moves = p == 1;
        for (std::size_t i = 0; i < p && same && !moves; i++)
          moves = pend[a + i].offset != pend[a + p + i].offset;
        if (same && moves) {
          flush_pending(a);
          body.assign(pend.begin(), pend.begin() + static_cast<std::ptrdiff_t>(p));
          body_site.assign(pend_site.begin(), pend_site.begin() + static_cast<std::ptrdiff_t>(p));
          stride.resize(p);
          for (std::size_t i = 0; i < p; i++) stride[i] = pend[p + i].offset - pend[i].offset;
          pend.clear();
          pend_site.clear();
          pend_base = n + 1;
          in_run = true;
          run_known = nullptr;
          trips = 2;
          pos = 0;
          is_free.assign(p, 0);
          any_free = false;
          return;
        }
      }
    }
    // Only the last 2 * max_body references can still start a run.
    if (pend.size() >= 4 * std::size_t{options.max_body}) flush_pending(pend.size() / 2);
  }

  // A known body's first two iterations: the first fills the body, the
  // second the strides.
  bool takes_early(const MemRef& m) {
    if (trips == 0) {
      // The body's sites are this thread's: their keys are at hand.
      if (!(SiteKey::of(m) == key_of[body_site[pos]])) return false;
      body[pos] = m;
      if (pos + 1 == body.size()) {
        // The run is certain: what came before it goes first.
        flush_pending(pend.size());
      }
      return true;
    }
    if (!same_but_offset(m, body[pos])) return false;
    stride[pos] = m.offset - body[pos].offset;
    return true;
  }

  // Whether the current run takes m as its next reference.
  bool takes(const MemRef& m) {
    if (trips < 2) return takes_early(m);
    const MemRef& b = body[pos];
    if (!same_but_offset(m, b)) return false;
    if (is_free[pos]) {
      // A bound on the list a free run holds (and hands the folder).
      if (trips >= kMaxFreeTrips) return false;
      free_off[pos].push_back(m.offset);
      return true;
    }
    if (m.offset == b.offset + stride[pos] * static_cast<std::int64_t>(trips)) return true;
    // Only in the third iteration, the first that can break a stride, and
    // behind a position that kept a stride of its own: otherwise the
    // reference ends the run (a new row of a nested loop breaks its first
    // position's stride, or every position's).
    // Later only at a site that has been free before (data-driven offsets
    // that happened to follow a stride for a few iterations).
    const SiteId s = body_site[pos];
    const bool known_free = s < free_site.size() && free_site[s];
    if ((trips != 2 && !known_free) || trips >= kMaxFreeTrips || pos >= RunLayout::kMaxFree)
      return false;
    bool led = false;
    for (std::size_t q = 0; q < pos && !led; q++) led = !is_free[q] && stride[q] != 0;
    if (!led) return false;
    if (free_off.size() < body.size()) free_off.resize(body.size());
    free_off[pos].clear();
    for (std::uint64_t j = 0; j < trips; j++)
      free_off[pos].push_back(b.offset + stride[pos] * static_cast<std::int64_t>(j));
    free_off[pos].push_back(m.offset);
    stride[pos] = 0;
    is_free[pos] = 1;
    any_free = true;
    return true;
  }

  void append(const MemRef& m) {
    while (in_run) {
      if (takes(m)) {
        if (++pos == body.size()) {
          pos = 0;
          trips++;
        }
        return;
      }
      close_run();
    }
    const SiteId s = site_of(m);
    if (!no_known && s < known_first.size() && known_first[s]) {
      start_known(known.find(s)->second, m);
      return;
    }
    no_known = false;
    add_pending(m, s);
  }

  // Starts a run of a known body at its first reference m.
  void start_known(KnownBody& k, const MemRef& m) {
    run_known = &k;
    body.assign(k.sites.size(), m);
    body_site.assign(k.sites.begin(), k.sites.end());
    stride.assign(k.stride.begin(), k.stride.end());
    is_free.assign(body.size(), 0);
    any_free = false;
    in_run = true;
    trips = 0;
    pos = 1;  // a body with a free position has at least two
  }

  // The same for a batch: a run's continuation in a loop of its own, the
  // state in locals (most references of a regular kernel go this way).
  void append(const MemRef* refs, std::size_t n) {
    std::size_t i = 0;
    while (i < n) {
      if (in_run && trips >= 2 && !any_free)
        i = continue_run<false>(refs, i, n);
      else if (in_run && trips >= 1)
        i = continue_run<true>(refs, i, n);
      if (i == n) break;
      append(refs[i++]);
    }
  }

  // Takes refs[i...] into the current run while it continues; returns
  // where it stopped. Strided: every position strided from the third
  // iteration on (the regular kernels' loop, kept to one test a
  // reference); otherwise also the second iteration (which gives the
  // strides, as takes_early) and free positions (as takes).
  template <bool General>
  std::size_t continue_run(const MemRef* refs, std::size_t i, std::size_t n) {
    const MemRef* b = body.data();
    std::int64_t* st = stride.data();
    const char* fr = any_free ? is_free.data() : nullptr;
    const std::size_t width = body.size();
    std::size_t p = pos;
    std::uint64_t k = trips;
    for (; i < n; i++) {
      const MemRef& m = refs[i];
      if (!same_but_offset(m, b[p])) break;
      if (General && k == 1) {
        st[p] = m.offset - b[p].offset;
      } else if (General && fr && fr[p]) {
        if (k >= kMaxFreeTrips) break;
        free_off[p].push_back(m.offset);
      } else if (m.offset != b[p].offset + st[p] * static_cast<std::int64_t>(k)) {
        break;
      }
      if (++p == width) {
        p = 0;
        k++;
      }
    }
    pos = p;
    trips = k;
    return i;
  }
};

ThreadFolder::ThreadFolder(std::uint32_t thread, SiteTable& sites, const MemFoldOptions& options)
    : impl_(std::make_unique<Impl>(thread, sites, options)) {}
ThreadFolder::~ThreadFolder() = default;

void ThreadFolder::append(const MemRef* refs, std::size_t n) {
  impl_->stats.refs += n;
  impl_->append(refs, n);
}

Trace ThreadFolder::finish(std::uint32_t threads) {
  Impl& d = *impl_;
  // Closing a run hands its unfinished iteration back, which may start
  // another.
  while (d.in_run) d.close_run();
  d.flush_pending(d.pend.size());
  d.batch.finish();
  d.stats.events = d.batch.events();
  CommTable comms;
  comms.define_world(static_cast<std::int32_t>(threads));
  return d.folder.finish(static_cast<std::int32_t>(threads), d.sites, comms);
}

const MemFoldStats& ThreadFolder::stats() const {
  return impl_->stats;
}

std::vector<SiteOrigin> ThreadFolder::origins() const {
  std::vector<SiteOrigin> out;
  for (std::size_t s = 0; s < impl_->seen.size(); s++)
    if (impl_->seen[s]) out.push_back(impl_->origins[s]);
  return out;
}

}  // namespace tracefold::memtrace
