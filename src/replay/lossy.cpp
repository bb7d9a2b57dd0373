#include "lossy.hpp"
#include <algorithm>

namespace tracefold::replay_detail {

namespace {
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

// A histogram shared by alike ranks (merge.hpp, share_histograms) holds at
// least as many values as each of them executes: each rank draws its own
// number from it, and since every rank repeats a sender's draws the same
// way, the receives planned from them still pair with the sends.
int64_t LossyResolver::draw(Bag& bag, uint64_t key) {
  if (bag.total == 0) {
    // More executions than the histogram holds (an inconsistent trace):
    // keep going with the last value rather than stopping a parallel run.
    return bag.left.empty() ? 0 : bag.left.back().first;
  }
  uint64_t k = mix(key ^ mix(bag.draws++)) % bag.total;
  for (auto& [value, copies] : bag.left) {
    if (k < copies) {
      --copies;
      --bag.total;
      return value;
    }
    k -= copies;
  }
  return bag.left.back().first;
}

void LossyResolver::resolve(Event& ev, const Node* node, bool collective) {
  if (!node) return;
  const std::size_t index = static_cast<std::size_t>(node - trace_.nodes.data());
  bool changed = false;
  Event relative;
  relative.op = ev.op;
  for (const auto& [field, elastic] : node->fields) {
    const ValueSeq* seq = elastic.for_rank(rank_);
    if (!seq || !seq->is_histogram()) continue;
    auto [it, fresh] = bags_.try_emplace({index, field});
    Bag& bag = it->second;
    if (fresh) {
      for (const ValueSeq::Run& run : seq->runs()) {
        if (run.pattern.empty()) continue;
        bag.left.emplace_back(run.pattern.front(), run.reps);
        bag.total += run.reps;
      }
    }
    const uint64_t who = collective ? 0x5EEDull : static_cast<uint64_t>(rank_) + 1;
    const uint64_t key = mix(seed_ ^ mix(who ^ mix(index * 131 + field)));
    const int64_t v = draw(bag, key);
    if (FieldTable::kind(field) != FieldKind::kScalar) continue;
    relative.set(field, v);
    changed = true;
  }
  if (!changed) return;
  // Peer-like fields are stored relative to the caller; decode like the
  // iterator does, then overwrite the event's values.
  if (int64_t c = ev.get(FieldTable::comm()); c != kAbsent) relative.set(FieldTable::comm(), c);
  decode_relative(relative, rank_, trace_.comms);
  for (const FieldValue& fv : relative.fields)
    if (fv.field != FieldTable::comm() || ev.get(fv.field) == kAbsent) ev.set(fv.field, fv.scalar);
}

namespace {
// The largest value of `f` at a node over all its ranks, histogram or not
// (of every element, for a list field).
int64_t largest_of(const Node& node, FieldId f) {
  const Elastic* e = node.field(f);
  int64_t best = 0;
  if (!e) return best;
  const bool list = FieldTable::kind(f) == FieldKind::kList;
  for (const ElasticEntry& en : e->entries()) {
    if (en.values.is_histogram()) {
      for (const ValueSeq::Run& run : en.values.runs())
        for (int64_t v : run.pattern)
          if (!is_sentinel(v)) best = std::max(best, v);
      continue;
    }
    for (auto c = en.values.cursor(); !c.done();) {
      int64_t n = c.next();
      if (!list) {
        if (!is_sentinel(n)) best = std::max(best, n);
        continue;
      }
      for (int64_t k = 0; k < n && !c.done(); ++k) {
        const int64_t v = c.next();
        if (!is_sentinel(v)) best = std::max(best, v);
      }
    }
  }
  return best;
}
}  // namespace

void LossyResolver::raise_receives(Event& ev, const Node* node) {
  if (!node) return;
  static const FieldId count = *FieldTable::find("count"), counts = *FieldTable::find("counts"),
                       dsize = *FieldTable::find("dsize"), rcount = *FieldTable::find("rcount"),
                       rcounts = *FieldTable::find("rcounts"), rdsize = *FieldTable::find("rdsize");
  const std::size_t index = static_cast<std::size_t>(node - trace_.nodes.data());
  auto [it, fresh] = largest_sent_.try_emplace(index, -1);
  if (fresh) {
    bool drawn = false;
    for (const auto& [field, elastic] : node->fields)
      for (const ElasticEntry& en : elastic.entries()) drawn = drawn || en.values.is_histogram();
    if (drawn)
      it->second = std::max(largest_of(*node, count), largest_of(*node, counts)) *
                   std::max<int64_t>(largest_of(*node, dsize), 1);
  }
  if (it->second < 0) return;
  int64_t unit = ev.get(rdsize);
  if (unit == kAbsent || is_sentinel(unit)) unit = ev.get(dsize);
  if (unit == kAbsent || is_sentinel(unit) || unit < 1) unit = 1;
  const int64_t least = (it->second + unit - 1) / unit;
  if (const int64_t r = ev.get(rcount); r != kAbsent && !is_sentinel(r) && r < least)
    ev.set(rcount, least);
  if (const FieldValue* fv = ev.find(rcounts)) {
    std::vector<int64_t> raised = fv->list;
    bool changed = false;
    for (int64_t& v : raised)
      if (!is_sentinel(v) && v < least) v = least, changed = true;
    if (changed) ev.set_list(rcounts, std::move(raised));
  }
}

}  // namespace tracefold::replay_detail
