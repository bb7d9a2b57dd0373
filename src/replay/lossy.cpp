#include "lossy.hpp"

namespace tracefold::replay_detail {

namespace {
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

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

}  // namespace tracefold::replay_detail
