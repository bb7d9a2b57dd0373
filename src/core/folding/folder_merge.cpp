// Folder: merging the histories of two item sequences (pairwise when they
// line up, else aligned by a longest common subsequence).

#include <algorithm>

#include "folder_impl.hpp"

namespace tracefold::folding {

ValueSeq absent_values(uint64_t executions) {
  return ValueSeq::repeated(kAbsent, executions);
}

namespace {

// timing_record, with the record it makes taken from `spares` when kPooled
// and there is one (histogram buffers kept from a record merged away). The
// walk and replay paths make records without spares: their instance has no
// pool to look at.
template <bool kPooled>
std::size_t find_record(Item& b, EventKey pred, std::vector<Timing>* spares) {
  // Mostly the record of the event's last sample (a poll after a poll): the
  // hint is checked, so any change to the records since only costs a search.
  // Keys compare as their packed form ((op, site) order), one integer
  // comparison each.
  const uint64_t want = pred.packed();
  std::vector<Timing>& t = b.timings;
  if (b.timing_hint < t.size() && t[b.timing_hint].pred.packed() == want) return b.timing_hint;
  // A node has a record per call that preceded it: a few, so a scan is
  // cheaper than a binary search until there are many.
  std::size_t i = 0;
  if (t.size() <= 8) {
    while (i < t.size() && t[i].pred.packed() < want) ++i;
  } else {
    i = static_cast<std::size_t>(
        std::lower_bound(t.begin(), t.end(), want,
                         [](const Timing& x, uint64_t k) { return x.pred.packed() < k; }) -
        t.begin());
  }
  if (i == t.size() || t[i].pred.packed() != want) {
    // A call merged through the general path mostly gains a record per
    // predecessor it meets (a poll after a send, after a poll, after a
    // receive): growing one at a time moved every record at each step.
    if (t.capacity() == 0) t.reserve(4);
    if constexpr (kPooled) {
      if (!spares->empty()) {
        t.insert(t.begin() + static_cast<std::ptrdiff_t>(i), std::move(spares->back()));
        spares->pop_back();
        t[i].pred = pred;
        b.timing_hint = static_cast<uint32_t>(i);
        return i;
      }
    }
    Timing fresh;
    fresh.pred = pred;
    t.insert(t.begin() + static_cast<std::ptrdiff_t>(i), std::move(fresh));
  }
  b.timing_hint = static_cast<uint32_t>(i);
  return i;
}

template <bool kPooled>
void add_sample(Item& b, EventKey pred, int64_t compute, int64_t comm, int32_t rank,
                std::vector<Timing>* spares) {
  Timing& t = b.timings[find_record<kPooled>(b, pred, spares)];
  if (compute >= 0) t.compute.add(compute, rank);
  if (comm >= 0) t.comm.add(comm, rank);
}

constexpr std::size_t kMaxSpareRaws = 64;

// A raw sample buffer with room for kMaxRawSamples: a spare one if any.
std::vector<RawSample> take_raws(TimingSpares* spares) {
  if (spares && !spares->raws.empty()) {
    std::vector<RawSample> r = std::move(spares->raws.back());
    spares->raws.pop_back();
    return r;
  }
  std::vector<RawSample> r;
  r.reserve(kMaxRawSamples);
  return r;
}

void give_raws(TimingSpares* spares, std::vector<RawSample>& r) {
  if (r.capacity() == 0) return;
  if (spares && spares->raws.size() < kMaxSpareRaws && r.capacity() <= kMaxRawSamples) {
    r.clear();
    spares->raws.push_back(std::move(r));
    return;
  }
  std::vector<RawSample>().swap(r);
}

template <bool kPooled>
void settle(Item& b, int32_t rank, TimingSpares* spares) {
  std::vector<Timing>* records = kPooled ? &spares->records : nullptr;
  if (b.raw_timing) {
    b.raw_timing = false;
    // Merging the sample's one-value histograms gives what adding the
    // sample gives (histograms do not depend on the order of adds and
    // merges), and needs no Timing made and copied first.
    add_sample<kPooled>(b, b.raw_pred, b.raw_compute, b.raw_comm, rank, records);
  }
  if (b.raw_more.capacity() == 0) return;
  for (const RawSample& r : b.raw_more)
    add_sample<kPooled>(b, unpack(r.pred), r.compute, r.comm, rank, records);
  give_raws(spares, b.raw_more);
}

// s's raw samples appended to b's (b has no records; both fit).
void gather_raw(Item& b, Item& s, TimingSpares* spares) {
  if (s.raw_timing && !b.raw_timing) {
    b.raw_timing = true;
    b.raw_pred = s.raw_pred;
    b.raw_compute = s.raw_compute;
    b.raw_comm = s.raw_comm;
    s.raw_timing = false;
  }
  if (!s.raw_timing && s.raw_more.empty()) return;
  if (b.raw_more.capacity() == 0) {
    if (s.raw_more.capacity() != 0)
      b.raw_more.swap(s.raw_more);  // b's is empty: s's buffer, samples and all
    else
      b.raw_more = take_raws(spares);
  }
  if (!s.raw_more.empty())
    b.raw_more.insert(b.raw_more.end(), s.raw_more.begin(), s.raw_more.end());
  if (s.raw_timing) {
    s.raw_timing = false;
    b.raw_more.push_back(RawSample{s.raw_pred.packed(), s.raw_compute, s.raw_comm});
  }
}

template <bool kPooled>
void merge_timings_of(Item& b, Item& s, int32_t rank, TimingSpares* spares) {
  std::vector<Timing>* records = kPooled ? &spares->records : nullptr;
  if (b.timings.empty() && s.timings.empty() &&
      (b.raw_timing ? 1 : 0) + b.raw_more.size() + (s.raw_timing ? 1 : 0) + s.raw_more.size() <=
          kMaxRawSamples) {
    gather_raw(b, s, spares);
    give_raws(spares, s.raw_more);
    return;
  }
  settle<kPooled>(b, rank, spares);
  if (s.raw_timing) add_sample<kPooled>(b, s.raw_pred, s.raw_compute, s.raw_comm, rank, records);
  if (s.raw_more.capacity() != 0) {
    for (const RawSample& r : s.raw_more)
      add_sample<kPooled>(b, unpack(r.pred), r.compute, r.comm, rank, records);
    give_raws(spares, s.raw_more);
  }
  if (s.timings.empty()) return;
  // s is merged away: a record b lacks moves over whole, not copied with
  // its histograms' buffers and then freed with s. merge_timings merges
  // the records both have (and would insert the others where these go).
  std::vector<Timing>& into = b.timings;
  std::vector<Timing>& from = s.timings;
  std::size_t shared = 0;
  for (std::size_t k = 0; k < from.size(); ++k) {
    const auto it = std::lower_bound(into.begin(), into.end(), from[k].pred,
                                     [](const Timing& x, EventKey p) { return x.pred < p; });
    if (it == into.end() || !(it->pred == from[k].pred)) {
      into.insert(it, std::move(from[k]));
    } else {
      if (shared != k) from[shared] = std::move(from[k]);
      ++shared;
    }
  }
  from.resize(shared);
  if (shared == 0) return;
  merge_timings(into, from);
  if constexpr (kPooled) {
    // Copy-assigning an empty histogram empties one and keeps its buffer.
    static const Histogram kEmpty;
    constexpr std::size_t kMaxSpare = 64;
    for (Timing& t : from) {
      if (records->size() >= kMaxSpare) break;
      if (!t.stats.empty()) continue;
      t.compute = kEmpty;
      t.comm = kEmpty;
      records->push_back(std::move(t));
    }
    from.clear();
  }
}

}  // namespace

std::vector<Timing> settled_timings(const Item& it, int32_t rank) {
  Item copy;
  copy.timings = it.timings;
  copy.raw_timing = it.raw_timing;
  copy.raw_pred = it.raw_pred;
  copy.raw_compute = it.raw_compute;
  copy.raw_comm = it.raw_comm;
  copy.raw_more = it.raw_more;
  settle<false>(copy, rank, nullptr);
  return std::move(copy.timings);
}

void settle_raw_timing(Item& b, int32_t rank) {
  settle<false>(b, rank, nullptr);
}

std::size_t timing_record(Item& b, EventKey pred) {
  return find_record<false>(b, pred, nullptr);
}

void add_raw_timing(Item& b, EventKey pred, int64_t compute, int64_t comm, int32_t rank) {
  add_sample<false>(b, pred, compute, comm, rank, nullptr);
}

void merge_item_timings(Item& b, Item& s, int32_t rank, TimingSpares* spares) {
  if (spares)
    merge_timings_of<true>(b, s, rank, spares);
  else
    merge_timings_of<false>(b, s, rank, nullptr);
}

// Flattened: the general path merges most events it makes, one call per
// merge to each step of this file (see CMakeLists.txt: bound locally).
[[gnu::flatten]] void merge_same_fields(Item& b, Item& s, int32_t rank, TimingSpares* spares) {
  // A one-value sequence appended is that value pushed (ValueSeq::append ->
  // append_repeated(v, 1), as the fast path's merge_event relies on too):
  // an event's scalar fields when it is merged after one traversal, as most
  // merges are. push_back keeps the one-value case inline.
  for (std::size_t i = 0; i < b.fields.size(); ++i) {
    const ValueSeq& from = s.fields[i].second;
    if (from.size() == 1 && !from.is_histogram())
      b.fields[i].second.push_back(from.back());
    else
      b.fields[i].second.append(from);
  }
  if (s.reps.size() == 1 && !s.reps.is_histogram())
    b.reps.push_back(s.reps.back());
  else
    b.reps.append(s.reps);
  merge_item_timings(b, s, rank, spares);
}

void Merger::merge_pair(Item& b, Item&& s) {
  if (!b.loop) {
    bool same_fields = b.fields.size() == s.fields.size();
    for (std::size_t i = 0; i < b.fields.size() && same_fields; ++i)
      same_fields = b.fields[i].first == s.fields[i].first;
    if (same_fields) {
      log->add(FoldOp::kMergeEvent, b.tag, s.tag);
      merge_same_fields(b, s, rank_, &spare_timings_);
      give_fields(std::move(s.fields));
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
    merge_item_timings(b, s, rank_, &spare_timings_);
    return;
  }
  log->add(FoldOp::kMergeLoop, b.tag, s.tag);
  b.reps.append(s.reps);
  Items merged = merge_seq(std::move(b.body), std::move(s.body));
  // Whichever side's buffer the result did not take.
  give_items(std::move(b.body));
  give_items(std::move(s.body));
  b.body = std::move(merged);
  b.refresh_keys();
}

void Merger::give_fields(FieldSeqs&& f) {
  // Enough for the items of a few iterations in flight; a sequence keeps
  // buffers of up to 16 values (a new item's values start small).
  constexpr std::size_t kMaxSpare = 64, kKeepValues = 16;
  if (spare_fields_.size() >= kMaxSpare || f.capacity() > 32) return;
  for (auto& [id, seq] : f) seq.recycle(kKeepValues);
  spare_fields_.push_back(std::move(f));
}

Items Merger::merge_seq(Items&& B, Items&& S) {
  if (B.empty() || S.empty()) log->spoil();
  if (B.empty()) {
    reshaped = true;
    return std::move(S);
  }
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
  if (plans_.size() <= plan_depth_) plans_.emplace_back();
  Plan& plan = plans_[plan_depth_];
  struct Depth {
    std::size_t& d;
    explicit Depth(std::size_t& depth) : d(depth) { ++d; }
    ~Depth() { --d; }
  } depth(plan_depth_);
  if (!align(B, S, plan)) {
    // Too large to align: keep both, each idle during the other's traversals.
    reshaped = true;
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

bool Merger::align(std::span<const Item> B, std::span<const Item> S, Plan& plan) {
  const std::size_t n = B.size(), m = S.size();
  if (!fits(n, m)) return false;
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
  plan.cells.clear();
  plan.steps.clear();
  plan.group_end.clear();
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

Items Merger::apply(Items&& B, Items&& S, const Plan& plan) {
  const uint64_t kb = B.front().traversals(), ks = S.front().traversals();
  Items out = take_items();
  out.reserve(B.size() + S.size());
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    auto [i, j] = plan.cells[k];
    switch (plan.steps[k]) {
      case Step::kSkipB:
        pad_after(B[i], ks);
        out.push_back(std::move(B[i]));
        break;
      case Step::kSkipS:
        reshaped = true;
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
        reshaped = true;
        Item pseudo = wrap(B, i, plan.group_end[k], kb);
        merge_pair(pseudo, std::move(S[j]));
        out.push_back(std::move(pseudo));
        break;
      }
    }
  }
  return out;
}

Item Merger::wrap(Items& items, std::size_t from, std::size_t to, uint64_t traversals) {
  Item p;
  p.loop = true;
  p.reps = ValueSeq::repeated(1, traversals);
  p.body = take_items();
  for (std::size_t k = from; k < to; ++k) p.body.push_back(std::move(items[k]));
  p.refresh_keys();
  return p;
}

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

}  // namespace tracefold::folding
