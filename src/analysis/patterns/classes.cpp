#include <map>
#include <unordered_map>

#include "classes_internal.hpp"

namespace tracefold::patterns::detail {

namespace {

// Partition refinement: each call splits the current classes by which of
// `parts` (disjoint ranklists) a rank lies in; ranks in none keep their
// class. New classes get fresh numbers, so they never meet the kept ones.
class Refiner {
 public:
  explicit Refiner(int32_t world) : cls_(static_cast<std::size_t>(world), 0), world_(world) {}

  void split(const std::vector<const Ranklist*>& parts) {
    fresh_.clear();
    for (std::size_t j = 0; j < parts.size(); ++j)
      parts[j]->for_each([&](int32_t r) {
        if (r < 0 || r >= world_) return;
        uint32_t& c = cls_[static_cast<std::size_t>(r)];
        const uint64_t key = (uint64_t{c} << 32) | j;
        auto [it, added] = fresh_.try_emplace(key, next_);
        if (added) ++next_;
        c = it->second;
      });
  }

  // Dense numbers in order of each class's first rank.
  std::vector<uint32_t> finish() {
    std::unordered_map<uint32_t, uint32_t> dense;
    for (uint32_t& c : cls_)
      c = dense.try_emplace(c, static_cast<uint32_t>(dense.size())).first->second;
    return std::move(cls_);
  }

 private:
  std::vector<uint32_t> cls_;
  int32_t world_;
  uint32_t next_ = 1;
  std::unordered_map<uint64_t, uint32_t> fresh_;
};

}  // namespace

std::vector<uint32_t> rank_classes(const Trace& trace) {
  Refiner refiner(trace.world_size);
  const auto world = static_cast<std::size_t>(trace.world_size);
  std::vector<const Ranklist*> parts;
  auto by_entries = [&](const Elastic& e, const Ranklist& node_ranks) {
    // One sequence for all of the node's ranks splits nothing the node's
    // own ranklist has not split already (the common case, skipped).
    if (e.entries().size() == 1 && e.entries()[0].ranks == node_ranks) return;
    parts.clear();
    for (const ElasticEntry& entry : e.entries()) parts.push_back(&entry.ranks);
    refiner.split(parts);
  };
  for (const Node& n : trace.nodes) {
    if (n.ranks.size() != world) refiner.split({&n.ranks});
    for (const LoopLevel& l : n.loops) {
      by_entries(l.members, n.ranks);
      by_entries(l.iters, n.ranks);
    }
    by_entries(n.count, n.ranks);
    for (const auto& [f, e] : n.fields) by_entries(e, n.ranks);
  }
  // Relative peers are taken modulo the size of the rank's group.
  std::vector<Ranklist> by_size;
  for (const auto& [id, groups] : trace.comms.all()) {
    if (groups.size() == 1 && groups[0].members.size() == world) continue;
    std::map<std::size_t, std::vector<int32_t>> sizes;
    for (const CommGroup& g : groups)
      for (int32_t r : g.members) sizes[g.members.size()].push_back(r);
    by_size.clear();
    for (auto& [size, ranks] : sizes) by_size.push_back(Ranklist::from_ranks(std::move(ranks)));
    parts.clear();
    for (const Ranklist& r : by_size) parts.push_back(&r);
    refiner.split(parts);
  }
  return refiner.finish();
}

}  // namespace tracefold::patterns::detail
