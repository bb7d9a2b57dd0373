// Folder: finding repeats in the top-level items (rolling hashes over their
// calls, candidates that end like the tail) and folding them into loops.
#include "folder_impl.hpp"

#include <algorithm>

namespace tracefold {

using namespace folding;

void Folder::Impl::index_push(std::size_t pos) {
  by_last[top[pos].last].push_back(pos);
  if (top[pos].loop) loops.push_back(pos);
  prefix_hash_.resize(pos + 1);
  prefix_hash_.push_back(prefix_hash_[pos] * kHashBase + compat_hash(top[pos]));
  while (base_power_.size() < prefix_hash_.size())
    base_power_.push_back(base_power_.back() * kHashBase);
  flat_items_ = std::min(flat_items_, pos);
  if (pos <= chain_keys_k_) chain_keys_k_ = kNoChainKeys;
}

void Folder::Impl::reindex_kept(std::size_t k, uint64_t last_before) {
  // What unindex_from(k) and index_push(k) would do, without looking k up
  // twice when its last call stayed (the common case). k is the last entry
  // of its list: unindex_from(k + 1) removed the positions after it.
  if (top[k].last != last_before) {
    by_last[last_before].pop_back();
    by_last[top[k].last].push_back(k);
  }
  prefix_hash_.resize(k + 1);
  prefix_hash_.push_back(prefix_hash_[k] * kHashBase + compat_hash(top[k]));
  flat_items_ = std::min(flat_items_, k);
  if (k <= chain_keys_k_) chain_keys_k_ = kNoChainKeys;
}

void Folder::Impl::flatten_upto(std::size_t to) {
  if (to <= flat_items_) return;
  flat_start_.resize(flat_items_ + 1);
  flat_keys_.resize(flat_start_[flat_items_]);
  chain_start_.resize(flat_items_ + 1);
  chain_at_.resize(chain_start_[flat_items_]);
  flat_filter_.resize(flat_items_);
  for (std::size_t pos = flat_items_; pos < to; ++pos) {
    const std::size_t from = flat_keys_.size();
    flatten_calls(top[pos], from + kMaxFlatKeys + 1, true, flat_keys_, chain_at_);
    flat_start_.push_back(flat_keys_.size());
    chain_start_.push_back(chain_at_.size());
    uint64_t filter = 0;
    for (std::size_t i = from; i < flat_keys_.size(); ++i) filter |= filter_bit(flat_keys_[i]);
    flat_filter_.push_back(filter);
  }
  flat_items_ = to;
}

void folding::flatten_calls(const Item& it, std::size_t limit, bool chain,
                            std::vector<uint64_t>& keys, std::vector<std::size_t>& chain_at) {
  if (keys.size() >= limit) return;
  if (!it.loop) {
    keys.push_back(it.key);
    return;
  }
  const std::size_t last = it.body.size() - 1;
  for (std::size_t i = 0; i < last; ++i) flatten_calls(it.body[i], limit, false, keys, chain_at);
  const Item& tail = it.body[last];
  if (chain && tail.loop) chain_at.push_back(keys.size());
  flatten_calls(tail, limit, chain, keys, chain_at);
}

Folder::Impl::Calls Folder::Impl::calls_of(std::size_t from, std::size_t to) {
  flatten_upto(to);
  Calls c;
  c.keys = std::span<const uint64_t>(flat_keys_)
               .subspan(flat_start_[from], flat_start_[to] - flat_start_[from]);
  for (std::size_t i = from; i < to; ++i) c.filter |= flat_filter_[i];
  c.filtered = true;
  return c;
}

Folder::Impl::Calls Folder::Impl::chain_calls(std::size_t k, std::size_t c, const Item& target) {
  if (c == 0) return calls_of(k, k + 1);
  flatten_upto(k + 1);
  const std::size_t from = flat_start_[k], to = flat_start_[k + 1];
  // Kept whole (not cut at the bound) and deep enough: a suffix of top[k]'s.
  if (to - from <= kMaxFlatKeys && chain_start_[k] + c <= chain_start_[k + 1]) {
    Calls out;
    out.keys = chain_slice(flat_keys_,
                           std::span<const std::size_t>(chain_at_).subspan(chain_start_[k]), to, c);
    return out;
  }
  // A loop's iteration is tried against the same target once per call
  // appended after it: its calls are flattened once while top[k] stays
  // as it is (the same condition that keeps flat_keys_ valid).
  if (chain_keys_k_ != k || chain_keys_c_ != c) {
    chain_keys_.clear();
    flatten_keys(target.body, chain_keys_);
    chain_keys_k_ = k;
    chain_keys_c_ = c;
  }
  Calls out;
  out.keys = chain_keys_;
  return out;
}

uint64_t Folder::Impl::mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

uint64_t Folder::Impl::compat_hash(const Item& it) {
  if (!it.loop) return mix64(it.key);
  return mix64(mix64(it.first ^ 0x6a09e667f3bcc908ull) + it.last);
}

uint64_t Folder::Impl::range_hash(std::size_t from, std::size_t to) const {
  return prefix_hash_[to] - prefix_hash_[from] * base_power_[to - from];
}

uint64_t Folder::Impl::body_hash(const Item& loop) {
  uint64_t h = 0;
  for (const Item& b : loop.body) h = h * kHashBase + compat_hash(b);
  return h;
}

bool Folder::Impl::same_calls(const Item* a, const Item* b, std::size_t len) {
  for (std::size_t t = 0; t < len; ++t)
    if (!directly_compatible(a[t], b[t])) return false;
  return true;
}

void Folder::Impl::unindex_from(std::size_t from) {
  for (std::size_t p = from; p < top.size(); ++p) {
    auto& v = by_last[top[p].last];
    while (!v.empty() && v.back() >= from) v.pop_back();
  }
  while (!loops.empty() && loops.back() >= from) loops.pop_back();
}

void Folder::Impl::replace_tail(std::size_t from, Item&& item) {
  top.resize(from);
  top.push_back(std::move(item));
  index_push(top.size() - 1);
}

bool Folder::Impl::alike(std::span<const Item> a, std::span<const Item> b, Calls ca, Calls cb,
                         bool growing) {
  const std::size_t n = ca.keys.size(), m = cb.keys.size();
  if (n > kMaxFlatKeys || m > kMaxFlatKeys) {
    // Too many calls to compare: the items' alignment decides.
    Merger::Plan& plan = merger.scratch_plan();
    if (!merger.align(a, b, plan)) return false;
    return static_cast<double>(plan.score) / static_cast<double>(a.size() + b.size()) >=
           options.min_similarity;
  }
  const auto share = [&](std::size_t pairs) {
    return n + m == 0 ? 1.0 : 2.0 * static_cast<double>(pairs) / static_cast<double>(n + m);
  };
  // Only the size of the items' alignment matters here, not the
  // alignment itself (merge_seq aligns again when the stretches fold).
  const bool fits = merger.fits(a.size(), b.size());
  // The LCS is at most the shorter side: sides whose lengths are too far
  // apart are alike only by their sets of calls, which is cheaper to ask
  // first than the alignment (most candidates of an irregular code end
  // here).
  if (share(std::min(n, m)) < options.min_similarity) return same_call_sets(ca, cb) && fits;
  if (!fits) return false;
  const std::size_t pairs =
      growing ? retest_lcs_.length(ca.keys, cb.keys) : lcs_length(ca.keys, cb.keys, lcs_);
  return share(pairs) >= options.min_similarity || same_call_sets(ca, cb);
}

namespace {

using LcsSlot = LcsScratch::Slot;

LcsSlot& lcs_slot(LcsScratch& s, uint64_t key) {
  const std::size_t cap = s.slots.size();
  std::size_t i = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - s.bits));
  while (s.slots[i].stamp == s.stamp && s.slots[i].key != key) i = (i + 1) & (cap - 1);
  return s.slots[i];
}

// The masks of b's symbols (an open-addressing table, a power of two at
// least twice their number, each symbol with the bit set of its positions
// in b) and the row before any symbol of the other side. b is not empty.
void lcs_prepare(std::span<const uint64_t> b, LcsScratch& s) {
  const std::size_t m = b.size(), words = (m + 63) / 64;
  s.m = m;
  int bits = 4;
  while ((std::size_t{1} << bits) < std::max(2 * m, s.slots.size())) ++bits;
  s.bits = bits;
  const std::size_t cap = std::size_t{1} << bits;
  if (s.slots.size() != cap || ++s.stamp == 0) {
    s.slots.assign(cap, LcsSlot{});
    s.stamp = 1;
  }
  s.masks.clear();
  for (std::size_t j = 0; j < m; ++j) {
    LcsSlot& sl = lcs_slot(s, b[j]);
    if (sl.stamp != s.stamp) {
      sl = LcsSlot{b[j], static_cast<uint32_t>(s.masks.size() / words), s.stamp};
      s.masks.resize(s.masks.size() + words, 0);
    }
    s.masks[sl.mask * words + j / 64] |= uint64_t{1} << (j % 64);
  }
  // Bit j of the row is 0 where the LCS of the fed prefix and b[0..j]
  // grows at j: the zeros counted at the end are the LCS's length.
  s.row.assign(words, ~uint64_t{0});
}

// The other side's symbols `a`, one row step each.
void lcs_feed(std::span<const uint64_t> a, LcsScratch& s) {
  const std::size_t words = (s.m + 63) / 64;
  for (const uint64_t x : a) {
    const LcsSlot& sl = lcs_slot(s, x);
    if (sl.stamp != s.stamp) continue;  // no match in b: the row stays
    const uint64_t* match = s.masks.data() + static_cast<std::size_t>(sl.mask) * words;
    uint64_t carry = 0;
    for (std::size_t w = 0; w < words; ++w) {
      const uint64_t v = s.row[w], u = v & match[w];
      const uint64_t sum = v + u + carry;
      carry = (sum < v || (carry && sum == v)) ? 1 : 0;
      s.row[w] = sum | (v & ~match[w]);
    }
  }
}

std::size_t lcs_result(const LcsScratch& s) {
  const std::size_t m = s.m, words = (m + 63) / 64;
  std::size_t ones = 0;
  for (std::size_t w = 0; w < words; ++w) {
    uint64_t v = s.row[w];
    if (w + 1 == words && m % 64 != 0) v &= (uint64_t{1} << (m % 64)) - 1;
    ones += static_cast<std::size_t>(__builtin_popcountll(v));
  }
  return m - ones;
}

}  // namespace

std::size_t folding::lcs_length(std::span<const uint64_t> a, std::span<const uint64_t> b,
                                LcsScratch& s) {
  if (a.empty() || b.empty()) return 0;
  lcs_prepare(b, s);
  lcs_feed(a, s);
  return lcs_result(s);
}

std::size_t GrowingLcs::length(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  if (a.empty() || b.empty()) return 0;
  const bool same_a = a.size() == a_.size() && std::equal(a.begin(), a.end(), a_.begin());
  const bool extends =
      same_a && fed_.size() <= b.size() && std::equal(fed_.begin(), fed_.end(), b.begin());
  if (!extends) {
    a_.assign(a.begin(), a.end());
    fed_.clear();
    lcs_prepare(a, s_);  // masks over the side that stays
  }
  const std::span<const uint64_t> fresh = b.subspan(fed_.size());
  lcs_feed(fresh, s_);
  fed_.insert(fed_.end(), fresh.begin(), fresh.end());
  return lcs_result(s_);
}

bool Folder::Impl::flatten_keys(std::span<const Item> items, std::vector<uint64_t>& out) {
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

bool Folder::Impl::try_fold() {
  const std::size_t n = top.size();
  if (n < 2) return false;
  const std::size_t lo = n - 1 > options.window ? n - 1 - options.window : 0;
  // Every fold below needs an item in top[0, n-2] that ends like the tail:
  // a loop whose iteration (or trailing inner iteration) the tail
  // completes, or the end of a first iteration the tail repeats.
  const uint64_t last_key = top[n - 1].last;
  const std::vector<std::size_t>* found = by_last.find(last_key);
  if (!found || found->empty() || found->front() >= n - 1) return false;
  // The candidates, latest first; `found` may be invalidated by a fold.
  cands_.clear();
  for (std::size_t ci = found->size(); ci-- > 0 && cands_.size() < kMaxCandidates;)
    if ((*found)[ci] < n - 1) cands_.push_back((*found)[ci]);

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
        if (!accept_iteration(k, c, target)) continue;
      } else if (seg_len != target.body.size() || body_hash(target) != range_hash(k + 1, n) ||
                 !same_calls(target.body.data(), &top[k + 1], seg_len)) {
        continue;
      }
      if (recording_ && k + 1 < session_n0_) log_.spoil();
      log_.add(FoldOp::kSetBack, target.tag);
      const uint64_t last_before = top[k].last;
      unindex_from(k + 1);
      target.reps.set_back(target.reps.back() + 1);
      merger.reshaped = false;
      if (seg_len == target.body.size() && same_calls(target.body.data(), &top[k + 1], seg_len)) {
        merger.merge_direct(target.body, std::span<Item>(top).subspan(k + 1));
      } else {
        Items& seg = seg_scratch_;
        seg.assign(std::make_move_iterator(top.begin() + static_cast<std::ptrdiff_t>(k + 1)),
                   std::make_move_iterator(top.end()));
        target.body = merger.merge_seq(std::move(target.body), std::move(seg));
        seg.clear();
      }
      for (std::size_t up = c + 1; up-- > 0;) chain[up]->refresh_keys();
      const std::size_t flat_before = flat_items_, chain_keys_before = chain_keys_k_;
      // top[k] stays where it is; the segment merged into it goes.
      top.resize(k + 1);
      reindex_kept(k, last_before);
      // An iteration that took the loop's shape (every call and inner loop
      // paired with one of the body's) left top[k]'s calls as they were:
      // flattening them again at the next test was most of what an
      // irregular code's general path spent on flattening.
      if (!merger.reshaped && flat_before > k) flat_items_ = k + 1;
      if (!merger.reshaped && chain_keys_before == k) chain_keys_k_ = k;
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
      top.resize(k + 1);
      index_push(k);
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
      // Both sides' calls are spans of one buffer: flattened first, so
      // neither call's growth can move the other's (arguments are
      // evaluated in no fixed order).
      flatten_upto(n);
      if (!alike(all.subspan(j, m + 1 - j), all.subspan(m + 1), calls_of(j, m + 1),
                 calls_of(m + 1, n)))
        break;
      make_loop(j, m);
      return true;
    }
  }
  return false;
}

bool Folder::Impl::accept_iteration(std::size_t k, std::size_t c, const Item& target) {
  const std::span<const Item> body(target.body), seg = std::span<const Item>(top).subspan(k + 1);
  if (body.size() == seg.size()) {
    bool direct = true;
    for (std::size_t i = 0; i < body.size() && direct; ++i)
      direct = directly_compatible(body[i], seg[i]);
    if (direct) return true;
  }
  flatten_upto(top.size());  // as in try_fold: no span may move under the other
  return alike(body, seg, chain_calls(k, c, target), calls_of(k + 1, top.size()), true);
}

bool Folder::Impl::same_call_sets(Calls& ca, Calls& cb) {
  if (!options.elastic_iterations || ca.keys.empty() || cb.keys.empty() ||
      ca.keys.size() > kMaxFlatKeys || cb.keys.size() > kMaxFlatKeys)
    return false;
  // Equal sets give equal 64-bit filters of their hashed keys: most unequal
  // ones are told apart here, without sorting either side.
  for (Calls* c : {&ca, &cb}) {
    if (c->filtered) continue;
    for (const uint64_t k : c->keys) c->filter |= filter_bit(k);
    c->filtered = true;
  }
  if (ca.filter != cb.filter) return false;
  const auto set_of = [](std::span<const uint64_t> keys, std::vector<uint64_t>& out) {
    out.assign(keys.begin(), keys.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  set_of(ca.keys, set_a_);
  set_of(cb.keys, set_b_);
  return set_a_ == set_b_;
}

// Flattened: the general path of a polling code makes a loop every few
// events.
[[gnu::flatten]] void Folder::Impl::make_loop(std::size_t j, std::size_t m) {
  if (recording_ && j < session_n0_) log_.spoil();
  unindex_from(j);
  Items first = merger.take_items();
  first.assign(std::make_move_iterator(top.begin() + static_cast<std::ptrdiff_t>(j)),
               std::make_move_iterator(top.begin() + static_cast<std::ptrdiff_t>(m + 1)));
  Item loop;
  loop.loop = true;
  loop.reps = ValueSeq::repeated(2, 1);
  if (recording_) {
    loop.tag = next_slot_++;
    log_.add(FoldOp::kNewLoop, loop.tag);
  }
  const std::span<Item> rest = std::span<Item>(top).subspan(m + 1);
  if (first.size() == rest.size() && same_calls(first.data(), rest.data(), rest.size())) {
    merger.merge_direct(first, rest);
    loop.body = std::move(first);
  } else {
    Items& second = seg_scratch_;
    second.assign(std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
    loop.body = merger.merge_seq(std::move(first), std::move(second));
    // Unless the result took its buffer, `first` gives it to the next loop.
    merger.give_items(std::move(first));
    second.clear();  // merged away; its buffer stays for the next fold
  }
  loop.refresh_keys();
  replace_tail(j, std::move(loop));
}

}  // namespace tracefold
