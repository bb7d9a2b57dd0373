#include "tracefold/folder.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tracefold {

namespace {

// One element of a (partly) folded sequence: an event or a loop. `reps` holds
// one value per traversal of the enclosing body: for an event, whether it
// happened (0/1); for a loop, how many iterations it ran.
struct Item {
  bool loop = false;
  uint64_t key = 0;    // event: packed EventKey
  uint64_t first = 0;  // first / last event key in this subtree
  uint64_t last = 0;
  ValueSeq reps;
  std::vector<Item> body;                            // loop only
  std::vector<std::pair<FieldId, ValueSeq>> fields;  // event only, sorted by id
  std::vector<Timing> timings;                       // event only, sorted by pred
  // A fresh event keeps its one timing sample raw until it is merged into an
  // existing event: no histogram allocations on the per-event hot path.
  bool raw_timing = false;
  EventKey raw_pred = kStartKey;
  int64_t raw_compute = -1, raw_comm = -1;
  // Which node of a recorded iteration this is (see "replay" in
  // Folder::Impl); no effect on folding.
  int32_t tag = std::numeric_limits<int32_t>::min();

  uint64_t traversals() const { return reps.size(); }
  void refresh_keys() {
    if (!loop) {
      first = last = key;
      return;
    }
    first = body.front().first;
    last = body.back().last;
  }
};

using Items = std::vector<Item>;

EventKey unpack(uint64_t k) {
  return EventKey{static_cast<OpId>(k >> 32), static_cast<SiteId>(k & 0xFFFFFFFFu)};
}

bool directly_compatible(const Item& a, const Item& b) {
  if (a.loop != b.loop) return false;
  if (!a.loop) return a.key == b.key;
  return a.first == b.first && a.last == b.last;
}

void pad_after(Item& it, uint64_t n) {
  it.reps.append_repeated(0, n);
}
void pad_before(Item& it, uint64_t n) {
  it.reps.prepend_repeated(0, n);
}

// Absent values for `executions` executions of a field (list fields: one
// length value per execution).
ValueSeq absent_values(uint64_t executions) {
  return ValueSeq::repeated(kAbsent, executions);
}

Timing timing_of_raw(const Item& it, int32_t rank) {
  Timing t;
  t.pred = it.raw_pred;
  if (it.raw_compute >= 0) t.compute.add(it.raw_compute, rank);
  if (it.raw_comm >= 0) t.comm.add(it.raw_comm, rank);
  return t;
}

// b's timing as histograms (a fresh event keeps its one sample raw).
void settle_timing(Item& b, int32_t rank) {
  if (!b.raw_timing) return;
  auto t = timing_of_raw(b, rank);
  b.raw_timing = false;
  merge_timings(b.timings, {t});
}

// Adds one raw timing sample to b (settled).
void add_raw_timing(Item& b, EventKey pred, int64_t compute, int64_t comm, int32_t rank) {
  auto it = std::lower_bound(b.timings.begin(), b.timings.end(), pred,
                             [](const Timing& x, EventKey k) { return x.pred < k; });
  if (it != b.timings.end() && it->pred == pred) {
    if (compute >= 0) it->compute.add(compute, rank);
    if (comm >= 0) it->comm.add(comm, rank);
  } else {
    Timing t;
    t.pred = pred;
    if (compute >= 0) t.compute.add(compute, rank);
    if (comm >= 0) t.comm.add(comm, rank);
    b.timings.insert(it, std::move(t));
  }
}

// Moves the timing of `s` into `b` (b keeps histograms; s may still be raw).
void merge_item_timings(Item& b, const Item& s, int32_t rank) {
  settle_timing(b, rank);
  if (!s.raw_timing) {
    merge_timings(b.timings, s.timings);
    return;
  }
  add_raw_timing(b, s.raw_pred, s.raw_compute, s.raw_comm, rank);
}

// merge_pair of two events with the same field ids: b's history, then s's.
void merge_same_fields(Item& b, const Item& s, int32_t rank) {
  for (std::size_t i = 0; i < b.fields.size(); ++i) b.fields[i].second.append(s.fields[i].second);
  b.reps.append(s.reps);
  merge_item_timings(b, s, rank);
}

constexpr int32_t kUntagged = std::numeric_limits<int32_t>::min();

// One value operation of the general path, on tagged nodes (tag >= 0: an
// item made during the recorded iteration; tag < 0: -1 - the preorder index
// of an item of the loop the iteration folds into).
struct FoldOp {
  // kDirectEvent only in a compiled program (Folder::Impl::compile_program):
  // a kNewEvent into a slot whose only use is a kMergeEvent into a real node.
  enum Kind : uint8_t { kNewEvent, kNewLoop, kSetBack, kMergeEvent, kMergeLoop, kDirectEvent };
  Kind kind = kNewEvent;
  int32_t a = 0, b = 0;  // kNewEvent: slot, event index; merges: into, from;
                         // kDirectEvent: real node, event index
  bool operator==(const FoldOp&) const = default;
};

// The value operations of one recorded iteration. `clean` turns false (and
// recording stops) at any operation the replay does not reproduce.
struct OpLog {
  bool active = false;
  bool clean = true;
  std::vector<FoldOp> ops;
  void add(FoldOp::Kind k, int32_t a, int32_t b = 0) {
    if (!active) return;
    if (a == kUntagged || b == kUntagged) return spoil();
    ops.push_back(FoldOp{k, a, b});
  }
  void spoil() {
    active = false;
    clean = false;
  }
};

class Merger {
 public:
  Merger(std::size_t max_cells, int32_t rank) : max_cells_(max_cells), rank_(rank) {}
  OpLog* log = nullptr;

  // How two sequences line up (see align()).
  enum class Step : uint8_t { kSkipB, kSkipS, kPair, kLoopBGroupS, kGroupBLoopS };
  struct Plan {
    std::vector<std::pair<std::size_t, std::size_t>> cells;  // (i, j) where each step starts
    std::vector<Step> steps;
    std::vector<std::size_t> group_end;  // end index of grouped run (for group steps)
    std::size_t score = 0;
  };

  // Merges two items known to be directly compatible: S's history follows B's.
  void merge_pair(Item& b, Item&& s) {
    if (!b.loop) {
      bool same_fields = b.fields.size() == s.fields.size();
      for (std::size_t i = 0; i < b.fields.size() && same_fields; ++i)
        same_fields = b.fields[i].first == s.fields[i].first;
      if (same_fields) {
        log->add(FoldOp::kMergeEvent, b.tag, s.tag);
        merge_same_fields(b, s, rank_);
        return;
      }
      log->spoil();
      const uint64_t eb = static_cast<uint64_t>(b.reps.sum());
      const uint64_t es = static_cast<uint64_t>(s.reps.sum());
      b.reps.append(s.reps);
      std::vector<std::pair<FieldId, ValueSeq>> merged;
      merged.reserve(std::max(b.fields.size(), s.fields.size()));
      auto bi = b.fields.begin(), si = s.fields.begin();
      while (bi != b.fields.end() || si != s.fields.end()) {
        if (si == s.fields.end() || (bi != b.fields.end() && bi->first < si->first)) {
          bi->second.append(absent_values(es));
          merged.push_back(std::move(*bi++));
        } else if (bi == b.fields.end() || si->first < bi->first) {
          ValueSeq v = absent_values(eb);
          v.append(si->second);
          merged.emplace_back(si->first, std::move(v));
          ++si;
        } else {
          bi->second.append(si->second);
          merged.push_back(std::move(*bi++));
          ++si;
        }
      }
      b.fields = std::move(merged);
      merge_item_timings(b, s, rank_);
      return;
    }
    log->add(FoldOp::kMergeLoop, b.tag, s.tag);
    b.reps.append(s.reps);
    b.body = merge_seq(std::move(b.body), std::move(s.body));
    b.refresh_keys();
  }

  // Merges body histories: the result replays B's traversals, then S's.
  Items merge_seq(Items&& B, Items&& S) {
    if (B.empty() || S.empty()) log->spoil();
    if (B.empty()) return std::move(S);
    if (S.empty()) return std::move(B);
    if (B.size() == S.size()) {
      bool direct = true;
      for (std::size_t i = 0; i < B.size() && direct; ++i) direct = directly_compatible(B[i], S[i]);
      if (direct) {
        for (std::size_t i = 0; i < B.size(); ++i) merge_pair(B[i], std::move(S[i]));
        return std::move(B);
      }
    }
    log->spoil();
    Plan plan;
    if (!align(B, S, plan)) {
      // Too large to align: keep both, each idle during the other's traversals.
      const uint64_t kb = B.front().traversals(), ks = S.front().traversals();
      for (Item& it : B) pad_after(it, ks);
      for (Item& it : S) {
        pad_before(it, kb);
        B.push_back(std::move(it));
      }
      return std::move(B);
    }
    return apply(std::move(B), std::move(S), plan);
  }

  // Longest-common-subsequence alignment of B and S. A loop in one sequence
  // may align with a run of the other whose first and last calls match the
  // loop's (that run then counts as one iteration). Returns false if the
  // alignment table would exceed the cap.
  bool align(std::span<const Item> B, std::span<const Item> S, Plan& plan) {
    const std::size_t n = B.size(), m = S.size();
    if ((n + 1) * (m + 1) > max_cells_) return false;
    const std::size_t w = m + 1;
    score_.assign((n + 1) * (m + 1), 0);
    choice_.assign((n + 1) * (m + 1), Step::kSkipB);
    gend_.assign((n + 1) * (m + 1), 0);
    for (std::size_t ii = n; ii-- > 0;) {
      for (std::size_t jj = m; jj-- > 0;) {
        uint32_t best = score_[(ii + 1) * w + jj];
        Step step = Step::kSkipB;
        std::size_t ge = 0;
        if (score_[ii * w + jj + 1] > best) {
          best = score_[ii * w + jj + 1];
          step = Step::kSkipS;
        }
        const Item& b = B[ii];
        const Item& s = S[jj];
        if (directly_compatible(b, s)) {
          uint32_t c = 2 + score_[(ii + 1) * w + jj + 1];
          if (c >= best) {
            best = c;
            step = Step::kPair;
          }
        } else if (b.loop && s.first == b.first) {
          for (std::size_t e = jj; e < m; ++e) {
            if (S[e].last == b.last) {
              uint32_t c = static_cast<uint32_t>(1 + (e + 1 - jj)) + score_[(ii + 1) * w + e + 1];
              if (c >= best) {
                best = c;
                step = Step::kLoopBGroupS;
                ge = e + 1;
              }
              break;
            }
          }
        } else if (s.loop && b.first == s.first) {
          for (std::size_t e = ii; e < n; ++e) {
            if (B[e].last == s.last) {
              uint32_t c = static_cast<uint32_t>(1 + (e + 1 - ii)) + score_[(e + 1) * w + jj + 1];
              if (c >= best) {
                best = c;
                step = Step::kGroupBLoopS;
                ge = e + 1;
              }
              break;
            }
          }
        }
        score_[ii * w + jj] = best;
        choice_[ii * w + jj] = step;
        gend_[ii * w + jj] = ge;
      }
    }
    plan = Plan{};
    plan.score = score_[0];
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
      Step st;
      std::size_t ge = 0;
      if (i == n) {
        st = Step::kSkipS;
      } else if (j == m) {
        st = Step::kSkipB;
      } else {
        st = choice_[i * w + j];
        ge = gend_[i * w + j];
      }
      plan.cells.emplace_back(i, j);
      plan.steps.push_back(st);
      plan.group_end.push_back(ge);
      switch (st) {
        case Step::kSkipB:
          ++i;
          break;
        case Step::kSkipS:
          ++j;
          break;
        case Step::kPair:
          ++i;
          ++j;
          break;
        case Step::kLoopBGroupS:
          ++i;
          j = ge;
          break;
        case Step::kGroupBLoopS:
          i = ge;
          ++j;
          break;
      }
    }
    return true;
  }

  Items apply(Items&& B, Items&& S, const Plan& plan) {
    const uint64_t kb = B.front().traversals(), ks = S.front().traversals();
    Items out;
    out.reserve(B.size() + S.size());
    for (std::size_t k = 0; k < plan.steps.size(); ++k) {
      auto [i, j] = plan.cells[k];
      switch (plan.steps[k]) {
        case Step::kSkipB:
          pad_after(B[i], ks);
          out.push_back(std::move(B[i]));
          break;
        case Step::kSkipS:
          pad_before(S[j], kb);
          out.push_back(std::move(S[j]));
          break;
        case Step::kPair:
          merge_pair(B[i], std::move(S[j]));
          out.push_back(std::move(B[i]));
          break;
        case Step::kLoopBGroupS: {
          Item pseudo = wrap(S, j, plan.group_end[k], ks);
          merge_pair(B[i], std::move(pseudo));
          out.push_back(std::move(B[i]));
          break;
        }
        case Step::kGroupBLoopS: {
          Item pseudo = wrap(B, i, plan.group_end[k], kb);
          merge_pair(pseudo, std::move(S[j]));
          out.push_back(std::move(pseudo));
          break;
        }
      }
    }
    return out;
  }

 private:
  // A one-iteration loop around items[from, to): changes no order or count.
  static Item wrap(Items& items, std::size_t from, std::size_t to, uint64_t traversals) {
    Item p;
    p.loop = true;
    p.reps = ValueSeq::repeated(1, traversals);
    for (std::size_t k = from; k < to; ++k) p.body.push_back(std::move(items[k]));
    p.refresh_keys();
    return p;
  }

  std::size_t max_cells_;
  int32_t rank_;
  std::vector<uint32_t> score_;
  std::vector<Step> choice_;
  std::vector<std::size_t> gend_;
};

void describe(const Items& items, std::string& out) {
  bool firstItem = true;
  for (const Item& it : items) {
    if (!firstItem) out += ' ';
    firstItem = false;
    if (it.loop) {
      out += '[';
      describe(it.body, out);
      out += "]*" + it.reps.to_string();
      continue;
    }
    EventKey k = unpack(it.key);
    out += std::to_string(k.op) + ":" + std::to_string(k.site);
    bool always = it.reps.size() > 0 && it.reps.run_count() == 1 && it.reps.back() == 1;
    if (!always) out += "{" + it.reps.to_string() + "}";
  }
}

}  // namespace

struct Folder::Impl {
  int32_t rank;
  FoldOptions options;
  Items top;
  uint64_t events = 0;
  uint64_t prev_key = kStartKey.packed();
  Merger merger;
  // Positions in `top` by last key, and positions of loops: lets the search
  // skip items that cannot match instead of scanning the whole window.
  std::unordered_map<uint64_t, std::vector<std::size_t>> by_last;
  std::vector<std::size_t> loops;
  std::vector<Item*> chain_scratch;

  Impl(int32_t r, FoldOptions o)
      : rank(r), options(std::move(o)), merger(options.max_align_cells, r) {
    merger.log = &log_;
  }

  void index_push(std::size_t pos) {
    by_last[top[pos].last].push_back(pos);
    if (top[pos].loop) loops.push_back(pos);
    prefix_hash_.resize(pos + 1);
    prefix_hash_.push_back(prefix_hash_[pos] * kHashBase + compat_hash(top[pos]));
    while (base_power_.size() < prefix_hash_.size())
      base_power_.push_back(base_power_.back() * kHashBase);
  }

  // ------------------------------------------------- repeats at any distance
  //
  // Exact repeats (every item directly compatible with its counterpart) are
  // found at any distance, so a loop whose body has more calls than the
  // window still folds: a polynomial hash over the top-level items'
  // compatibility keys (an event's key; a loop's first and last keys, which
  // is all directly_compatible looks at) compares two stretches, or a loop
  // body with a stretch, in O(1). A hash match is confirmed item by item
  // before anything folds, so collisions cost time, never correctness. Each
  // event looks at no more than kMaxCandidates earlier items that end like
  // it, which bounds the cost per event whatever the body length. The
  // window still bounds the approximate (LCS) matching, whose cost grows
  // with the body.
  static constexpr uint64_t kHashBase = 0x9E3779B97F4A7C15ull;
  static constexpr std::size_t kMaxCandidates = 64;
  std::vector<uint64_t> prefix_hash_{0};  // hash of top[0, i)
  std::vector<uint64_t> base_power_{1};

  static uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
  }
  static uint64_t compat_hash(const Item& it) {
    if (!it.loop) return mix64(it.key);
    return mix64(mix64(it.first ^ 0x6a09e667f3bcc908ull) + it.last);
  }
  uint64_t range_hash(std::size_t from, std::size_t to) const {
    return prefix_hash_[to] - prefix_hash_[from] * base_power_[to - from];
  }
  static uint64_t body_hash(const Item& loop) {
    uint64_t h = 0;
    for (const Item& b : loop.body) h = h * kHashBase + compat_hash(b);
    return h;
  }
  // Whether items a[0, len) and b[0, len) are pairwise directly compatible.
  static bool same_calls(const Item* a, const Item* b, std::size_t len) {
    for (std::size_t t = 0; t < len; ++t)
      if (!directly_compatible(a[t], b[t])) return false;
    return true;
  }

  // Forgets the index entries of top[from..]; call before changing those items.
  void unindex_from(std::size_t from) {
    for (std::size_t p = from; p < top.size(); ++p) {
      auto& v = by_last[top[p].last];
      while (!v.empty() && v.back() >= from) v.pop_back();
    }
    while (!loops.empty() && loops.back() >= from) loops.pop_back();
  }

  // top[from..] (already unindexed) is replaced by `item`.
  void replace_tail(std::size_t from, Item item) {
    top.resize(from);
    top.push_back(std::move(item));
    index_push(top.size() - 1);
  }

  // The values of one field on one execution, as the general path stores them.
  static ValueSeq field_values(const FieldValue& fv) {
    ValueSeq v;
    if (FieldTable::kind(fv.field) == FieldKind::kList) {
      v.push_back(static_cast<int64_t>(fv.list.size()));
      for (int64_t x : fv.list) v.push_back(x);
    } else {
      v.push_back(fv.scalar);
    }
    return v;
  }

  Item make_item(const Event& ev, uint64_t pred) const {
    Item it;
    it.key = ev.key().packed();
    it.first = it.last = it.key;
    it.reps = ValueSeq::repeated(1, 1);
    it.fields.reserve(ev.fields.size());
    for (const FieldValue& fv : ev.fields) it.fields.emplace_back(fv.field, field_values(fv));
    if (!ev.stats.empty()) {
      Timing t;
      t.pred = unpack(pred);
      if (ev.compute_ns >= 0) t.compute.add(ev.compute_ns, rank);
      if (ev.comm_ns >= 0) t.comm.add(ev.comm_ns, rank);
      for (const auto& [name, value] : ev.stats) {
        Histogram h;
        h.add(value, rank);
        t.stats.emplace_back(name, std::move(h));
      }
      it.timings.push_back(std::move(t));
    } else if (ev.compute_ns >= 0 || ev.comm_ns >= 0) {
      it.raw_timing = true;
      it.raw_pred = unpack(pred);
      it.raw_compute = ev.compute_ns;
      it.raw_comm = ev.comm_ns;
    }
    return it;
  }

  void append(const Event& ev) {
    if (fast_append(ev)) return;
    if (replay_append(ev)) return;
    materialize();
    general_append(ev);
  }

  void general_append(const Event& ev) {
    if (recording_) record_event(ev);
    Item it = make_item(ev, prev_key);
    if (recording_) {
      it.tag = next_slot_++;
      log_.add(FoldOp::kNewEvent, it.tag, static_cast<int32_t>(rec_.keys.size() - 1));
    }
    prev_key = it.key;
    ++events;
    top.push_back(std::move(it));
    index_push(top.size() - 1);
    while (try_fold()) {
    }
    if (recording_ && (!log_.clean || top.size() <= session_n0_)) end_recording();
    arm();
  }

  // ------------------------------------------------------------ fast path
  //
  // Most events continue the iteration of the loop that ends the sequence.
  // The general path makes an Item for each, finds nothing to fold until the
  // iteration is complete, and then merges the stretch into the loop body
  // item by item. The fast path keeps such events aside (copied into reused
  // buffers) and merges them into the body directly, giving the same items,
  // values and index as the general path would. It is armed only when that
  // equivalence is cheap to see: the last top-level item is a loop whose
  // body is plain events, and try_fold provably finds nothing for the
  // pending events (quiet_). Anything else materializes the pending events
  // as Items and falls back to the general path.

  struct Pending {
    Event ev;  // stats are always empty here
    uint64_t pred = 0;
  };
  bool armed_ = false;
  std::vector<uint8_t> quiet_;  // per body index: an event there cannot fold
  std::unordered_set<uint64_t> seen_keys_;
  std::vector<uint8_t> has_list_;  // per body index: the event has list fields
  std::vector<Pending> pending_;   // reused slots; the first pending_count_ are live
  std::size_t pending_count_ = 0;
  bool refold_after_iteration_ = false;

  // Whether an item before position exclude_from ends in `last`. try_fold
  // can only fold the tail when that holds for the tail's last key (exact
  // repeats are found at any distance, so any such item counts).
  bool ends_earlier(uint64_t last, std::size_t exclude_from) const {
    auto found = by_last.find(last);
    if (found == by_last.end()) return false;
    return !found->second.empty() && found->second.front() < exclude_from;
  }

  void arm() {
    armed_ = false;
    const bool follows_clean = follows_clean_;
    follows_clean_ = false;
    if (recording_) return;  // the session's iteration goes the general way
    if (!options.fast_path || top.empty() || !top.back().loop) {
      have_prev_ = learned_ = false;
      return;
    }
    const Item& loop = top.back();
    const std::size_t len = loop.body.size();
    for (const Item& b : loop.body)
      if (b.loop) return start_session(follows_clean);
    have_prev_ = learned_ = false;
    if (len == 0) return;
    const std::size_t k = top.size() - 1;
    has_list_.assign(len, 0);
    for (std::size_t p = 0; p < len; ++p)
      for (const auto& f : loop.body[p].fields)
        if (FieldTable::kind(f.first) == FieldKind::kList) has_list_[p] = 1;
    quiet_.assign(len, 0);
    seen_keys_.clear();
    for (std::size_t p = 0; p + 1 < len; ++p) {
      const uint64_t key = loop.body[p].key;
      const bool repeats = !seen_keys_.insert(key).second;
      // The pending event for body[p] would sit at k + 1 + p, after the real
      // items (indexed in by_last) and the pending events before it.
      quiet_[p] = !repeats && !ends_earlier(key, k + 1);
    }
    refold_after_iteration_ = ends_earlier(loop.last, k);
    armed_ = true;
  }

  bool fast_append(const Event& ev) {
    if (!armed_ || !ev.stats.empty()) return false;
    Item& loop = top.back();
    const std::size_t p = pending_count_;
    const Item& b = loop.body[p];
    if (ev.key().packed() != b.key || ev.fields.size() != b.fields.size()) return false;
    for (std::size_t i = 0; i < b.fields.size(); ++i)
      if (ev.fields[i].field != b.fields[i].first) return false;
    const bool completes = p + 1 == loop.body.size();
    if (!completes && !quiet_[p]) return false;
    if (completes) {
      // The general path finds the iteration at this loop first (the latest
      // loop), whole and directly compatible, and merges it in pairwise.
      const uint64_t pred = prev_key;
      loop.reps.set_back(loop.reps.back() + 1);
      for (std::size_t i = 0; i < p; ++i)
        merge_event(loop.body[i], pending_[i].ev, pending_[i].pred, has_list_[i]);
      merge_event(loop.body[p], ev, pred, has_list_[p]);
      pending_count_ = 0;
      prev_key = b.key;
      ++events;
      if (refold_after_iteration_ && try_fold()) {
        while (try_fold()) {
        }
        arm();
      }
      return true;
    }
    if (pending_.size() <= p) pending_.resize(p + 1);
    Pending& slot = pending_[p];
    slot.ev.op = ev.op;
    slot.ev.site = ev.site;
    slot.ev.fields = ev.fields;  // reuses the slot's buffers
    slot.ev.compute_ns = ev.compute_ns;
    slot.ev.comm_ns = ev.comm_ns;
    slot.pred = prev_key;
    ++pending_count_;
    prev_key = b.key;
    ++events;
    return true;
  }

  // merge_pair of event item `b` with the item make_item(ev, pred) would
  // give, without making it.
  void merge_event(Item& b, const Event& ev, uint64_t pred, bool has_list) {
    // Appending a one-value sequence is push_back (ValueSeq::append ->
    // append_repeated(v, 1)); a list's values must go through append, which
    // folds a run of equal values differently from pushing them one by one.
    for (std::size_t i = 0; i < b.fields.size(); ++i) {
      const FieldValue& fv = ev.fields[i];
      if (has_list && FieldTable::kind(fv.field) == FieldKind::kList)
        b.fields[i].second.append(field_values(fv));
      else
        b.fields[i].second.push_back(fv.scalar);
    }
    b.reps.push_back(1);
    settle_timing(b, rank);
    // An event without timings brings none (merge_timings with nothing).
    if (ev.compute_ns >= 0 || ev.comm_ns >= 0)
      add_raw_timing(b, unpack(pred), ev.compute_ns, ev.comm_ns, rank);
  }

  // k more copies of `ev` (times: theirs). While the sequence ends in a loop
  // whose body is that one event, fast_append would take each copy as a
  // complete iteration: count +1 on the loop, each field value pushed once
  // more, one timing sample, nothing to refold (refold_after_iteration_
  // false). Those updates are done here k at a time, by operations that
  // promise the representation k single ones give; anything else goes
  // through append() copy by copy until that state is reached.
  Event repeat_scratch_;

  void append_repeats(const Event& ev, std::span<const RepeatTiming> times) {
    std::size_t i = 0;
    while (i < times.size()) {
      // A session (see "replay") logs the general path's steps through an
      // iteration of a loop with inner loops, to replay them on the next
      // one; a polling loop inside that iteration would keep every poll on
      // the general path. Sessions never change what is folded, only how
      // fast, so this one is given up and the polls can take the fast path.
      if (recording_) {
        log_.spoil();
        end_recording();
        arm();
      }
      if (repeat_in_place(ev, times.subspan(i))) return;
      repeat_scratch_.op = ev.op;
      repeat_scratch_.site = ev.site;
      repeat_scratch_.fields = ev.fields;
      repeat_scratch_.stats = ev.stats;
      repeat_scratch_.compute_ns = times[i].compute_ns;
      repeat_scratch_.comm_ns = times[i].comm_ns;
      append(repeat_scratch_);
      ++i;
    }
  }

  bool repeat_in_place(const Event& ev, std::span<const RepeatTiming> times) {
    if (!armed_ || !ev.stats.empty() || pending_count_ != 0 || refold_after_iteration_)
      return false;
    Item& loop = top.back();
    if (loop.body.size() != 1) return false;
    Item& b = loop.body[0];
    if (ev.key().packed() != b.key || prev_key != b.key || ev.fields.size() != b.fields.size())
      return false;
    for (std::size_t f = 0; f < b.fields.size(); ++f)
      if (ev.fields[f].field != b.fields[f].first) return false;
    const uint64_t k = times.size();
    loop.reps.step_back(1, k);
    for (std::size_t f = 0; f < b.fields.size(); ++f) {
      const FieldValue& fv = ev.fields[f];
      if (has_list_[0] && FieldTable::kind(fv.field) == FieldKind::kList) {
        const ValueSeq values = field_values(fv);
        for (uint64_t r = 0; r < k; ++r) b.fields[f].second.append(values);
      } else {
        b.fields[f].second.push_back_n(fv.scalar, k);
      }
    }
    b.reps.push_back_n(1, k);
    settle_timing(b, rank);
    const EventKey pred = unpack(prev_key);
    // A copy without times adds no timing record (add_raw_timing is not
    // called for it); one with either time finds or makes the record.
    const bool timed = std::any_of(times.begin(), times.end(), [](const RepeatTiming& rt) {
      return rt.compute_ns >= 0 || rt.comm_ns >= 0;
    });
    if (timed) {
      auto it = std::lower_bound(b.timings.begin(), b.timings.end(), pred,
                                 [](const Timing& x, EventKey key) { return x.pred < key; });
      if (it == b.timings.end() || !(it->pred == pred)) {
        Timing fresh;
        fresh.pred = pred;
        it = b.timings.insert(it, std::move(fresh));
      }
      it->compute.add_each(
          times.size(), [&](std::size_t j) { return times[j].compute_ns; }, rank);
      it->comm.add_each(
          times.size(), [&](std::size_t j) { return times[j].comm_ns; }, rank);
    }
    events += k;
    return true;
  }

  // Pending events become Items, as the general path would have made them
  // (try_fold would have found nothing for them: quiet_ checked that).
  void materialize() {
    if (replaying_ && replay_pos_ > 0) abort_replay();
    armed_ = false;
    for (std::size_t i = 0; i < pending_count_; ++i) {
      top.push_back(make_item(pending_[i].ev, pending_[i].pred));
      index_push(top.size() - 1);
    }
    pending_count_ = 0;
  }

  // ---------------------------------------------------------- replay path
  //
  // Events that continue an iteration of a loop whose body holds loops
  // (`[[[Irecv]*4 [Isend]*4 Waitall]*10 Allreduce]*N`). The general path
  // folds such an iteration in the tail (making and growing inner loops) and
  // then merges it into the loop. Which folds it makes depends only on the
  // calls (op + site) of the iteration and on the loop structure around it,
  // never on field values or timings. So when the general path takes the
  // loop at the end of the sequence through one iteration (a session) with
  // only operations the replay reproduces (direct pairwise merges: no
  // alignment, padding, or change to items before the tail; same field ids;
  // no stats), it records its value operations on tagged nodes; when two
  // consecutive sessions had the same calls, field ids and operations, the
  // structure after each is the same (direct merges keep it, and the last
  // values of every count the folding looks at come from the same
  // operations), so every later session with the same calls makes the same
  // operations again. Those are replayed on reused slot items and the real
  // loop items, with no search and no tail items. An event that departs from
  // the recorded calls (or finish()) replays the session's events so far
  // through the general path, which then records afresh.

  OpLog log_;
  bool recording_ = false;      // a session runs the general path, logged
  std::size_t session_n0_ = 0;  // top.size() when the session started
  int32_t next_slot_ = 0;
  struct Session {
    std::size_t n0 = 0;
    int32_t slots = 0;
    std::vector<uint64_t> keys;       // per event: packed key
    std::vector<uint32_t> field_end;  // per event: end of its ids in `fields`
    std::vector<FieldId> fields;
    std::vector<FoldOp> ops;
    bool operator==(const Session&) const = default;
  };
  Session rec_;   // the session being recorded
  Session prev_;  // the last clean session, or the replayed program
  bool have_prev_ = false;
  bool learned_ = false;        // prev_ is replayed at the next session
  bool follows_clean_ = false;  // the last append ended a clean session
  bool replaying_ = false;
  std::size_t replay_pos_ = 0;
  uint64_t replay_prev_key_ = 0;
  std::vector<Event> replay_events_;
  std::vector<Item*> real_;  // items of the loop, preorder (tag -1 - i)
  std::vector<Item> slots_;
  static constexpr std::size_t kMaxSessionEvents = 4096;

  static void tag_tree(Item& it, int32_t& next) {
    it.tag = -1 - next++;
    for (Item& c : it.body) tag_tree(c, next);
  }
  static void collect_tree(Item& it, std::vector<Item*>& out) {
    out.push_back(&it);
    for (Item& c : it.body) collect_tree(c, out);
  }

  // top.back() is a loop with loops in its body.
  void start_session(bool follows_clean) {
    if (!follows_clean) have_prev_ = learned_ = false;
    session_n0_ = top.size();
    if (learned_ && prev_.n0 == session_n0_) {
      replaying_ = true;
      replay_pos_ = 0;
      replay_prev_key_ = prev_key;
      return;
    }
    learned_ = false;
    start_recording();
  }

  void start_recording() {
    recording_ = true;
    log_.active = true;
    log_.clean = true;
    rec_.n0 = session_n0_;
    rec_.keys.clear();
    rec_.field_end.clear();
    rec_.fields.clear();
    next_slot_ = 0;
    int32_t next = 0;
    tag_tree(top[session_n0_ - 1], next);
  }

  void record_event(const Event& ev) {
    if (!ev.stats.empty() || rec_.keys.size() >= kMaxSessionEvents) log_.spoil();
    rec_.keys.push_back(ev.key().packed());
    for (const FieldValue& fv : ev.fields) rec_.fields.push_back(fv.field);
    rec_.field_end.push_back(static_cast<uint32_t>(rec_.fields.size()));
  }

  // The session ended (its iteration folded in) or was spoiled.
  void end_recording() {
    recording_ = false;
    const bool clean = log_.clean && top.size() == session_n0_;
    log_.active = false;
    learned_ = false;
    if (!clean) {
      have_prev_ = false;
      return;
    }
    rec_.slots = next_slot_;
    rec_.ops.swap(log_.ops);
    log_.ops.clear();
    if (have_prev_ && rec_ == prev_) {
      learned_ = find_timing_homes();
      if (learned_) compile_program();
      real_.clear();
      collect_tree(top[session_n0_ - 1], real_);
      if (slots_.size() < static_cast<std::size_t>(prev_.slots))
        slots_.resize(static_cast<std::size_t>(prev_.slots));
    } else {
      std::swap(rec_, prev_);
      have_prev_ = true;
    }
    follows_clean_ = true;
  }

  bool replay_append(const Event& ev) {
    if (!replaying_) return false;
    const std::size_t i = replay_pos_;
    bool same = ev.stats.empty() && ev.key().packed() == prev_.keys[i];
    const std::size_t f0 = i == 0 ? 0 : prev_.field_end[i - 1];
    same = same && ev.fields.size() == prev_.field_end[i] - f0;
    for (std::size_t f = 0; same && f < ev.fields.size(); ++f)
      same = ev.fields[f].field == prev_.fields[f0 + f];
    if (!same) {
      abort_replay();
      return false;
    }
    if (replay_events_.size() <= i) replay_events_.resize(i + 1);
    Event& slot = replay_events_[i];
    slot.op = ev.op;
    slot.site = ev.site;
    copy_fields(slot.fields, ev.fields);
    slot.compute_ns = ev.compute_ns;
    slot.comm_ns = ev.comm_ns;
    prev_key = prev_.keys[i];
    ++events;
    if (++replay_pos_ == prev_.keys.size()) {
      run_program();
      replay_pos_ = 0;
      replay_prev_key_ = prev_key;
    }
    return true;
  }

  // dst = src, reusing dst's buffers; cheaper than vector assignment, which
  // assigns every (mostly empty) list too.
  static void copy_fields(std::vector<FieldValue>& dst, const std::vector<FieldValue>& src) {
    if (dst.size() != src.size()) dst.resize(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
      dst[i].field = src[i].field;
      dst[i].scalar = src[i].scalar;
      if (!src[i].list.empty() || !dst[i].list.empty()) dst[i].list = src[i].list;
    }
  }

  // The session so far goes through the general path (recorded again).
  void abort_replay() {
    replaying_ = false;
    const std::size_t n = replay_pos_;
    replay_pos_ = 0;
    prev_key = replay_prev_key_;
    events -= n;
    learned_ = false;  // prev_ stays: the session before this one
    start_recording();
    for (std::size_t i = 0; i < n; ++i) general_append(replay_events_[i]);
  }

  // Timings are histograms and merge without regard to order or grouping:
  // an item's timings depend only on the samples merged into it. So each
  // event's sample goes straight to the loop item its slot ends up merged
  // into (home_, a real tag), not through the slots.
  std::vector<int32_t> home_;
  bool find_timing_homes() {
    std::vector<int32_t> into(static_cast<std::size_t>(prev_.slots), kUntagged);
    home_.assign(prev_.keys.size(), kUntagged);
    for (const FoldOp& op : prev_.ops) {
      if (op.kind == FoldOp::kNewEvent) home_[static_cast<std::size_t>(op.b)] = op.a;
      if (op.kind == FoldOp::kMergeEvent) {
        if (op.b < 0 || into[static_cast<std::size_t>(op.b)] != kUntagged) return false;
        into[static_cast<std::size_t>(op.b)] = op.a;
      }
    }
    for (int32_t& h : home_) {
      for (std::size_t guard = 0; h >= 0 && guard <= into.size(); ++guard)
        h = into[static_cast<std::size_t>(h)];
      if (h >= 0 || h == kUntagged) return false;
    }
    return true;
  }

  // prev_.ops with the common case short-cut: an event whose slot is made
  // and then merged straight into a real node of the loop. Merging a fresh
  // one-value slot appends each value with append_repeated(v, 1) (see
  // ValueSeq::append), so doing exactly that at the merge's place in the
  // program gives the same representation without filling the slot first.
  // Events with list fields keep the slot (their slot values are not one
  // value per field).
  std::vector<FoldOp> program_;
  std::vector<bool> event_has_list_;  // per event of prev_: any list field
  void compile_program() {
    const auto slots = static_cast<std::size_t>(prev_.slots);
    std::vector<int32_t> uses(slots, 0), made_from(slots, -1), merged_into(slots, kUntagged);
    auto use = [&](int32_t tag) {
      if (tag >= 0) ++uses[static_cast<std::size_t>(tag)];
    };
    for (const FoldOp& op : prev_.ops) {
      use(op.a);
      if (op.kind == FoldOp::kMergeEvent || op.kind == FoldOp::kMergeLoop) use(op.b);
      if (op.kind == FoldOp::kNewEvent) made_from[static_cast<std::size_t>(op.a)] = op.b;
      if (op.kind == FoldOp::kMergeEvent && op.b >= 0)
        merged_into[static_cast<std::size_t>(op.b)] = op.a;
    }
    auto scalar_only = [&](int32_t event) {
      const auto i = static_cast<std::size_t>(event);
      for (std::size_t f = i == 0 ? 0 : prev_.field_end[i - 1]; f < prev_.field_end[i]; ++f)
        if (FieldTable::kind(prev_.fields[f]) == FieldKind::kList) return false;
      return true;
    };
    auto direct = [&](int32_t slot) {
      if (slot < 0) return false;
      const auto s = static_cast<std::size_t>(slot);
      return uses[s] == 2 && made_from[s] >= 0 && merged_into[s] != kUntagged &&
             merged_into[s] < 0 && scalar_only(made_from[s]);
    };
    event_has_list_.assign(prev_.keys.size(), false);
    for (std::size_t i = 0; i < prev_.keys.size(); ++i)
      event_has_list_[i] = !scalar_only(static_cast<int32_t>(i));
    program_.clear();
    for (const FoldOp& op : prev_.ops) {
      if (op.kind == FoldOp::kNewEvent && direct(op.a)) continue;
      if (op.kind == FoldOp::kMergeEvent && direct(op.b)) {
        program_.push_back(
            FoldOp{FoldOp::kDirectEvent, op.a, made_from[static_cast<std::size_t>(op.b)]});
        continue;
      }
      program_.push_back(op);
    }
    find_slot_trees(slots);
  }

  // Slot trees: event slots joined by merges, each ending (at most once) in
  // a merge into a real node of the loop. What a tree's slots hold when that
  // merge happens depends only on the field values of the tree's events,
  // since the program is the same every iteration. So a tree none of whose
  // events changed since the previous replayed iteration still holds exactly
  // what rebuilding it would give (stencils repeat their peers, tags, counts
  // and request links step after step): its resets and slot-to-slot merges
  // are skipped, only its merge into the real node runs. A tree that is
  // touched again after its real merge, or merges into real nodes twice,
  // is always rebuilt.
  std::vector<int32_t> op_tree_;     // per op of program_: tree of its target slot, or -1
  std::vector<int32_t> event_tree_;  // per event: tree of its slot, or -1 (direct events)
  std::vector<bool> tree_rebuild_;   // per tree: rebuild every iteration (not freezable)
  std::vector<bool> dirty_;          // this iteration: tree must be rebuilt
  std::vector<std::vector<FieldValue>> last_fields_;  // per event: values last iteration
  bool last_fields_valid_ = false;

  void find_slot_trees(std::size_t slots) {
    std::vector<int32_t> parent(slots);
    for (std::size_t i = 0; i < slots; ++i) parent[i] = static_cast<int32_t>(i);
    auto root = [&](int32_t x) {
      while (parent[static_cast<std::size_t>(x)] != x)
        x = parent[static_cast<std::size_t>(x)] =
            parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
      return x;
    };
    std::vector<bool> event_slot(slots, false);
    for (const FoldOp& op : program_) {
      if (op.kind == FoldOp::kNewEvent) event_slot[static_cast<std::size_t>(op.a)] = true;
      if (op.kind == FoldOp::kMergeEvent && op.a >= 0 && op.b >= 0)
        parent[static_cast<std::size_t>(root(op.a))] = root(op.b);
    }
    const std::size_t n = program_.size();
    std::vector<int64_t> last_touch(slots, -1), real_merge(slots, -1);
    std::vector<int32_t> real_merges(slots, 0);
    std::vector<bool> rebuild(slots, false);
    op_tree_.assign(n, -1);
    for (std::size_t k = 0; k < n; ++k) {
      const FoldOp& op = program_[k];
      auto touch = [&](int32_t tag) {
        if (tag < 0) return;
        const auto t = static_cast<std::size_t>(root(tag));
        if (!event_slot[static_cast<std::size_t>(tag)])
          rebuild[t] = true;  // a loop slot in an event tree
        last_touch[t] = static_cast<int64_t>(k);
      };
      switch (op.kind) {
        case FoldOp::kNewEvent:
          touch(op.a);
          op_tree_[k] = root(op.a);
          break;
        case FoldOp::kMergeEvent:
          touch(op.a);
          touch(op.b);
          if (op.a >= 0) {
            op_tree_[k] = root(op.a);
          } else if (op.b >= 0) {
            const auto t = static_cast<std::size_t>(root(op.b));
            ++real_merges[t];
            real_merge[t] = static_cast<int64_t>(k);
          }
          break;
        case FoldOp::kSetBack:
          if (op.a >= 0 && event_slot[static_cast<std::size_t>(op.a)])
            rebuild[static_cast<std::size_t>(root(op.a))] = true;
          break;
        default:
          break;
      }
    }
    tree_rebuild_.assign(slots, false);
    for (std::size_t t = 0; t < slots; ++t)
      tree_rebuild_[t] = rebuild[t] || real_merges[t] > 1 ||
                         (real_merges[t] == 1 && last_touch[t] != real_merge[t]);
    event_tree_.assign(prev_.keys.size(), -1);
    for (const FoldOp& op : program_)
      if (op.kind == FoldOp::kNewEvent) event_tree_[static_cast<std::size_t>(op.b)] = root(op.a);
    last_fields_valid_ = false;
  }

  static bool same_fields(const std::vector<FieldValue>& a, const std::vector<FieldValue>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i].field != b[i].field || a[i].scalar != b[i].scalar || a[i].list != b[i].list)
        return false;
    return true;
  }

  void mark_dirty_trees() {
    dirty_.assign(tree_rebuild_.begin(), tree_rebuild_.end());
    last_fields_.resize(event_tree_.size());
    for (std::size_t i = 0; i < event_tree_.size(); ++i) {
      const int32_t t = event_tree_[i];
      if (t < 0) continue;
      if (last_fields_valid_ && same_fields(replay_events_[i].fields, last_fields_[i])) continue;
      dirty_[static_cast<std::size_t>(t)] = true;
      copy_fields(last_fields_[i], replay_events_[i].fields);
    }
    if (!last_fields_valid_) dirty_.assign(dirty_.size(), true);
    last_fields_valid_ = true;
  }
  bool tree_dirty(int32_t t) const { return t < 0 || dirty_[static_cast<std::size_t>(t)]; }

  Item& node(int32_t tag) {
    return tag >= 0 ? slots_[static_cast<std::size_t>(tag)]
                    : *real_[static_cast<std::size_t>(-1 - tag)];
  }

  // The values make_item gives (ev has no stats; timings: see home_), in a
  // reused item.
  void reset_event(Item& s, const Event& ev, bool has_list) {
    s.fields.resize(ev.fields.size());
    for (std::size_t i = 0; i < ev.fields.size(); ++i) {
      const FieldValue& fv = ev.fields[i];
      auto& [id, values] = s.fields[i];
      const bool list = has_list && FieldTable::kind(fv.field) == FieldKind::kList;
      id = fv.field;
      values.clear();
      if (list) {
        values.push_back(static_cast<int64_t>(fv.list.size()));
        for (int64_t x : fv.list) values.push_back(x);
      } else {
        values.push_back(fv.scalar);
      }
    }
    s.reps.clear();
    s.reps.push_back(1);
  }

  void run_program() {
    mark_dirty_trees();
    for (std::size_t k = 0; k < program_.size(); ++k) {
      const FoldOp& op = program_[k];
      switch (op.kind) {
        case FoldOp::kDirectEvent: {
          Item& b = node(op.a);
          const Event& ev = replay_events_[static_cast<std::size_t>(op.b)];
          for (std::size_t i = 0; i < b.fields.size(); ++i)
            b.fields[i].second.append_repeated(ev.fields[i].scalar, 1);
          b.reps.append_repeated(1, 1);
          break;
        }
        case FoldOp::kNewEvent: {
          if (!tree_dirty(op_tree_[k])) break;
          const auto event = static_cast<std::size_t>(op.b);
          reset_event(node(op.a), replay_events_[event], event_has_list_[event]);
          break;
        }
        case FoldOp::kNewLoop: {
          Item& s = node(op.a);
          s.reps.clear();
          s.reps.append_repeated(2, 1);
          break;
        }
        case FoldOp::kSetBack: {
          Item& t = node(op.a);
          t.reps.set_back(t.reps.back() + 1);
          break;
        }
        case FoldOp::kMergeEvent: {
          Item& b = node(op.a);
          const Item& from = node(op.b);
          if (op.a >= 0 && !tree_dirty(op_tree_[k])) break;
          for (std::size_t i = 0; i < b.fields.size(); ++i)
            b.fields[i].second.append(from.fields[i].second);
          b.reps.append(from.reps);
          break;
        }
        case FoldOp::kMergeLoop:
          node(op.a).reps.append(node(op.b).reps);
          break;
      }
    }
    for (std::size_t i = 0; i < home_.size(); ++i) {
      const Event& ev = replay_events_[i];
      if (ev.compute_ns < 0 && ev.comm_ns < 0) continue;  // brings no timing
      Item& h = node(home_[i]);
      settle_timing(h, rank);
      add_raw_timing(h, unpack(i == 0 ? replay_prev_key_ : prev_.keys[i - 1]), ev.compute_ns,
                     ev.comm_ns, rank);
    }
  }

  // How alike two candidate iterations are: the share of their calls (one
  // pass through every loop body) that a longest common subsequence pairs
  // up. Comparing calls, not items, keeps a half-finished iteration from
  // looking like a whole loop just because its ends match.
  double similarity(std::span<const Item> a, std::span<const Item> b, const Merger::Plan& plan) {
    flat_a_.clear();
    flat_b_.clear();
    const bool small = flatten_keys(a, flat_a_) && flatten_keys(b, flat_b_);
    if (!small) return static_cast<double>(plan.score) / static_cast<double>(a.size() + b.size());
    const std::size_t n = flat_a_.size(), m = flat_b_.size();
    lcs_.assign((n + 1) * (m + 1), 0);
    for (std::size_t i = n; i-- > 0;)
      for (std::size_t j = m; j-- > 0;)
        lcs_[i * (m + 1) + j] = flat_a_[i] == flat_b_[j] ? lcs_[(i + 1) * (m + 1) + j + 1] + 1
                                                         : std::max(lcs_[(i + 1) * (m + 1) + j],
                                                                    lcs_[i * (m + 1) + j + 1]);
    return 2.0 * lcs_[0] / static_cast<double>(n + m);
  }

  static constexpr std::size_t kMaxFlatKeys = 512;
  static bool flatten_keys(std::span<const Item> items, std::vector<uint64_t>& out) {
    for (const Item& it : items) {
      if (out.size() > kMaxFlatKeys) return false;
      if (it.loop) {
        if (!flatten_keys(it.body, out)) return false;
      } else {
        out.push_back(it.key);
      }
    }
    return out.size() <= kMaxFlatKeys;
  }
  std::vector<uint64_t> flat_a_, flat_b_;
  std::vector<uint32_t> lcs_;

  bool try_fold() {
    const std::size_t n = top.size();
    if (n < 2) return false;
    const std::size_t lo = n - 1 > options.window ? n - 1 - options.window : 0;
    // Every fold below needs an item in top[0, n-2] that ends like the tail:
    // a loop whose iteration (or trailing inner iteration) the tail
    // completes, or the end of a first iteration the tail repeats.
    const uint64_t last_key = top[n - 1].last;
    auto found = by_last.find(last_key);
    if (found == by_last.end() || found->second.front() >= n - 1) return false;
    // The candidates, latest first; `found` may be invalidated by a fold.
    cands_.clear();
    for (std::size_t ci = found->second.size(); ci-- > 0 && cands_.size() < kMaxCandidates;)
      if (found->second[ci] < n - 1) cands_.push_back(found->second[ci]);

    // (a) The tail after a loop is its next iteration, or the next iteration
    // of an inner loop that ends that loop's last iteration (a trailing one).
    // Within the window iterations may differ (aligned by LCS); beyond it
    // only an exact iteration is taken.
    for (const std::size_t k : cands_) {
      if (!top[k].loop) continue;
      const bool near = k >= lo;
      const uint64_t seg_first = top[k + 1].first, seg_last = top[n - 1].last;
      const std::size_t seg_len = n - 1 - k;
      std::vector<Item*>& chain = chain_scratch;
      chain.assign(1, &top[k]);
      while (chain.back()->reps.back() > 0 && chain.back()->body.back().loop)
        chain.push_back(&chain.back()->body.back());
      for (std::size_t c = chain.size(); c-- > 0;) {
        Item& target = *chain[c];
        if (target.first != seg_first || target.last != seg_last) continue;
        if (near) {
          if (!accept_iteration(target.body, std::span<const Item>(top).subspan(k + 1))) continue;
        } else if (seg_len != target.body.size() || body_hash(target) != range_hash(k + 1, n) ||
                   !same_calls(target.body.data(), &top[k + 1], seg_len)) {
          continue;
        }
        Items seg(std::make_move_iterator(top.begin() + static_cast<std::ptrdiff_t>(k + 1)),
                  std::make_move_iterator(top.end()));
        if (recording_ && k + 1 < session_n0_) log_.spoil();
        log_.add(FoldOp::kSetBack, target.tag);
        unindex_from(k);
        target.reps.set_back(target.reps.back() + 1);
        target.body = merger.merge_seq(std::move(target.body), std::move(seg));
        for (std::size_t up = c + 1; up-- > 0;) chain[up]->refresh_keys();
        Item keep = std::move(top[k]);
        replace_tail(k, std::move(keep));
        return true;
      }
      if (!near) continue;
      // The tail repeats the end of a loop's last iteration: that end was the
      // first iteration of an inner loop nobody had seen repeat yet (the
      // trailing iteration of seed 000, Figure 5.2). Give it its own loop.
      for (std::size_t c = chain.size(); c-- > 0;) {
        Item& target = *chain[c];
        if (target.reps.back() == 0 || seg_len >= target.body.size()) continue;
        const std::size_t from = target.body.size() - seg_len;
        if (!same_calls(&target.body[from], &top[k + 1], seg_len)) continue;
        log_.spoil();
        unindex_from(k);
        Item inner;
        inner.loop = true;
        inner.reps = ValueSeq::repeated(1, target.body.front().traversals());
        inner.body.assign(
            std::make_move_iterator(target.body.begin() + static_cast<std::ptrdiff_t>(from)),
            std::make_move_iterator(target.body.end()));
        target.body.resize(from);
        Items seg(std::make_move_iterator(top.begin() + static_cast<std::ptrdiff_t>(k + 1)),
                  std::make_move_iterator(top.end()));
        inner.reps.set_back(2);
        inner.body = merger.merge_seq(std::move(inner.body), std::move(seg));
        inner.refresh_keys();
        target.body.push_back(std::move(inner));
        for (std::size_t up = c + 1; up-- > 0;) chain[up]->refresh_keys();
        Item keep = std::move(top[k]);
        replace_tail(k, std::move(keep));
        return true;
      }
    }

    // (b) Two consecutive stretches ending in the same call form a new loop.
    // Exact repetition first (most loops are regular), at any distance.
    for (const std::size_t m : cands_) {
      const std::size_t len = n - 1 - m;
      if (m + 1 < len) continue;
      const std::size_t j = m + 1 - len;
      if (range_hash(j, m + 1) != range_hash(m + 1, n)) continue;
      if (!same_calls(&top[j], &top[m + 1], len)) continue;
      make_loop(j, m);
      return true;
    }
    // Then approximate, within the window: first and last calls match, the
    // rest aligns well enough.
    int tried = 0;
    for (const std::size_t m : cands_) {
      if (tried >= 2 || m < lo) break;
      ++tried;
      const uint64_t first_key = top[m + 1].first;
      for (std::size_t j = m + 1; j-- > lo;) {
        if (top[j].first != first_key) continue;
        std::span<const Item> all(top);
        Merger::Plan plan;
        if (!merger.align(all.subspan(j, m + 1 - j), all.subspan(m + 1), plan)) break;
        if (similarity(all.subspan(j, m + 1 - j), all.subspan(m + 1), plan) <
            options.min_similarity)
          break;
        make_loop(j, m);
        return true;
      }
    }
    return false;
  }
  std::vector<std::size_t> cands_;

  // Whether `seg` is similar enough to `body` to be merged as an iteration.
  bool accept_iteration(std::span<const Item> body, std::span<const Item> seg) {
    if (body.size() == seg.size()) {
      bool direct = true;
      for (std::size_t i = 0; i < body.size() && direct; ++i)
        direct = directly_compatible(body[i], seg[i]);
      if (direct) return true;
    }
    Merger::Plan plan;
    if (!merger.align(body, seg, plan)) return false;
    return similarity(body, seg, plan) >= options.min_similarity;
  }

  // top[j..m] and top[m+1..] become two iterations of a new loop.
  void make_loop(std::size_t j, std::size_t m) {
    if (recording_ && j < session_n0_) log_.spoil();
    unindex_from(j);
    Items first(std::make_move_iterator(top.begin() + static_cast<std::ptrdiff_t>(j)),
                std::make_move_iterator(top.begin() + static_cast<std::ptrdiff_t>(m + 1)));
    Items second(std::make_move_iterator(top.begin() + static_cast<std::ptrdiff_t>(m + 1)),
                 std::make_move_iterator(top.end()));
    Item loop;
    loop.loop = true;
    loop.reps = ValueSeq::repeated(2, 1);
    if (recording_) {
      loop.tag = next_slot_++;
      log_.add(FoldOp::kNewLoop, loop.tag);
    }
    loop.body = merger.merge_seq(std::move(first), std::move(second));
    loop.refresh_keys();
    replace_tail(j, std::move(loop));
  }

  // ----------------------------------------------------------- flattening

  std::size_t flatten(const Item& it, std::vector<const Item*>& heads, std::vector<Node>& out) {
    if (!it.loop) {
      Node node;
      node.key = unpack(it.key);
      node.ranks = Ranklist::single(rank);
      for (const Item* h : heads) {
        LoopLevel level;
        level.iters = Elastic::of(h->reps, rank);
        node.loops.push_back(std::move(level));
      }
      heads.clear();
      node.count = Elastic::of(it.reps, rank);
      for (const auto& [f, v] : it.fields) {
        ValueSeq values = v;
        if (options.histogram_threshold > 0 && values.run_count() > options.histogram_threshold &&
            lossy_field(f))
          values.make_histogram();
        node.fields.emplace_back(f, Elastic::of(std::move(values), rank));
      }
      node.timings = it.timings;
      if (it.raw_timing) merge_timings(node.timings, {timing_of_raw(it, rank)});
      out.push_back(std::move(node));
      return 1;
    }
    const std::size_t head_index = out.size();
    const std::size_t level = heads.size();
    heads.push_back(&it);
    std::size_t members = 0;
    for (const Item& child : it.body) members += flatten(child, heads, out);
    out[head_index].loops[level].members =
        Elastic::of(ValueSeq::repeated(static_cast<int64_t>(members), it.reps.size()), rank);
    return members;
  }

  bool lossy_field(FieldId f) const {
    if (options.histogram_fields.empty())
      return f == FieldTable::peer() || f == FieldTable::src() || f == *FieldTable::find("count");
    return std::find(options.histogram_fields.begin(), options.histogram_fields.end(), f) !=
           options.histogram_fields.end();
  }
};

Folder::Folder(int32_t rank, FoldOptions options)
    : impl_(std::make_unique<Impl>(rank, std::move(options))) {}
Folder::~Folder() = default;
Folder::Folder(Folder&&) noexcept = default;
Folder& Folder::operator=(Folder&&) noexcept = default;

void Folder::append(const Event& event) {
  impl_->append(event);
}
void Folder::append_repeats(const Event& event, std::span<const RepeatTiming> times) {
  impl_->append_repeats(event, times);
}
uint64_t Folder::events() const {
  return impl_->events;
}
std::size_t Folder::top_level_size() const {
  impl_->materialize();
  return impl_->top.size();
}

std::string Folder::structure() const {
  impl_->materialize();
  std::string out;
  describe(impl_->top, out);
  return out;
}

Trace Folder::finish(int32_t world_size, const SiteTable& sites, const CommTable& comms) const {
  Trace t;
  t.world_size = world_size;
  t.sites = sites;
  t.comms = comms;
  impl_->materialize();
  std::vector<const Item*> heads;
  for (const Item& it : impl_->top) impl_->flatten(it, heads, t.nodes);
  if (impl_->options.histogram_threshold > 0) {
    bool any = false;
    for (const Node& n : t.nodes)
      for (const auto& [f, el] : n.fields)
        for (const auto& e : el.entries())
          if (e.values.is_histogram()) any = true;
    if (any) t.lossy = "histogram threshold=" + std::to_string(impl_->options.histogram_threshold);
  }
  return t;
}

}  // namespace tracefold
