// CommTable (event.hpp): which ranks each communicator holds on each rank,
// indexed so that a world rank finds its group quickly, and kept as a rule
// instead of per-rank entries where the groups follow one.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "tracefold/event.hpp"

namespace tracefold {

void CommTable::define_world(int32_t size) {
  CommGroup g{MemberList::run(0, 1, size)};
  comms_[kWorld] = {std::move(g)};
  reindex(kWorld);
}

namespace {

using CommIndex = std::unordered_map<int32_t, std::pair<int32_t, int32_t>>;

// The groups of an id often follow a rule: rows of a grid (group g holds
// ranks g*L .. g*L+L-1; the world is one such group) or its columns (group
// g holds g, g+S, g+2S ...). Such an id keeps only its rule under negative
// keys, no per-rank entries: an index of a million ranks per communicator
// costs tens of MiB and seconds (an extrapolated trace's world, rows and
// columns). An id follows a rule or has per-rank entries, never both.
constexpr int32_t kBlockKey = -1;     // {L, G}: G groups of L consecutive ranks
constexpr int32_t kStrideKey = -2;    // {S, L}: groups of L ranks S apart ...
constexpr int32_t kStrideCount = -3;  // {G, 0}: ... the first G of them (G <= S)

using Slot = std::pair<int32_t, int32_t>;  // group index, rank in the group
constexpr Slot kNowhere{-1, -1};

Slot find_slot(const CommIndex& idx, int32_t r) {
  if (r < 0) return kNowhere;
  if (auto it = idx.find(r); it != idx.end()) return it->second;
  if (auto b = idx.find(kBlockKey); b != idx.end()) {
    const auto [len, count] = b->second;
    return r / len < count ? Slot{r / len, r % len} : kNowhere;
  }
  if (auto st = idx.find(kStrideKey); st != idx.end()) {
    const auto [stride, len] = st->second;
    const int32_t count = idx.at(kStrideCount).first;
    return r % stride < count && r / stride < len ? Slot{r % stride, r / stride} : kNowhere;
  }
  return kNowhere;
}

bool follows_rule(const CommIndex& idx) {
  return idx.count(kBlockKey) || idx.count(kStrideKey);
}

// Whether `m` is group number `g` of the block rule with groups of len
// ranks, or of the stride rule with stride `stride`.
// Compared as runs: a world-sized group is one run, not a walk.
bool is_block(const MemberList& m, int64_t g, int64_t len) {
  if (static_cast<int64_t>(m.size()) != len) return false;
  return m == MemberList::run(static_cast<int32_t>(g * len), 1, len);
}
bool is_stride(const MemberList& m, int64_t g, int64_t stride, int64_t len) {
  if (static_cast<int64_t>(m.size()) != len || g >= stride) return false;
  return m == MemberList::run(static_cast<int32_t>(g), static_cast<int32_t>(stride), len);
}

// The rule all of `groups` follow, written into an empty idx; false if none.
bool find_rule(const std::vector<CommGroup>& groups, CommIndex& idx) {
  if (groups.empty() || groups[0].members.empty()) return false;
  const auto& first = groups[0].members;
  const auto n = static_cast<int64_t>(groups.size());
  const auto len = static_cast<int64_t>(first.size());
  bool block = true;
  for (int64_t g = 0; block && g < n; ++g) block = is_block(groups[g].members, g, len);
  if (block) {
    idx[kBlockKey] = {static_cast<int32_t>(len), static_cast<int32_t>(n)};
    return true;
  }
  if (len < 2 || first[0] != 0) return false;
  const int64_t stride = first[1];
  bool strided = stride > 1;
  for (int64_t g = 0; strided && g < n; ++g) strided = is_stride(groups[g].members, g, stride, len);
  if (!strided) return false;
  idx[kStrideKey] = {static_cast<int32_t>(stride), static_cast<int32_t>(len)};
  idx[kStrideCount] = {static_cast<int32_t>(n), 0};
  return true;
}

// Replaces a rule by per-rank entries, before a group that breaks it.
void spell_out(const std::vector<CommGroup>& groups, CommIndex& idx) {
  if (!follows_rule(idx)) return;
  idx.clear();
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    int32_t pos = 0;
    for (int32_t m : groups[gi].members) idx[m] = {static_cast<int32_t>(gi), pos++};
  }
}

std::invalid_argument duplicate_rank(int64_t id, int32_t rank, bool same_group) {
  return std::invalid_argument(
      "communicator " + std::to_string(id) + ": rank " + std::to_string(rank) +
      (same_group ? " appears twice in one group" : " is already in another group"));
}

// The index of `groups` (sorted); throws on a rank in two groups or twice in one.
CommIndex build_index(int64_t id, const std::vector<CommGroup>& groups) {
  CommIndex idx;
  if (find_rule(groups, idx)) return idx;
  std::size_t total = 0;
  for (const auto& g : groups) total += g.members.size();
  idx.reserve(total);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    int32_t pos = 0;
    for (int32_t m : groups[gi].members) {
      auto [it, fresh] = idx.try_emplace(m, static_cast<int32_t>(gi), pos++);
      if (!fresh) throw duplicate_rank(id, m, it->second.first == static_cast<int32_t>(gi));
    }
  }
  return idx;
}

bool by_members(const CommGroup& a, const CommGroup& b) {
  return a.members < b.members;
}

}  // namespace

void CommTable::reindex(int64_t id) {
  index_[id] = build_index(id, comms_[id]);
}

void CommTable::define(int64_t id, CommGroup group) {
  if (!comms_.count(id)) {
    std::vector<CommGroup> one{std::move(group)};
    CommIndex fresh = build_index(id, one);  // throws before anything changes
    comms_[id] = std::move(one);
    index_[id] = std::move(fresh);
    return;
  }
  auto& groups = comms_[id];
  auto& idx = index_[id];
  const auto& m = group.members;
  if (m.empty()) {
    if (groups[0].members.empty()) return;
  } else if (const Slot s = find_slot(idx, m[0]); s.first >= 0) {
    // Only the group that holds the first member can be equal.
    if (groups[static_cast<std::size_t>(s.first)] == group) return;
    throw duplicate_rank(id, m[0], false);
  }
  const auto gi = static_cast<int64_t>(groups.size());
  // The next group of the id's rule: nothing to index.
  if (auto b = idx.find(kBlockKey); b != idx.end() && is_block(m, gi, b->second.first)) {
    ++b->second.second;
    groups.push_back(std::move(group));
    return;
  }
  if (auto st = idx.find(kStrideKey);
      st != idx.end() && is_stride(m, gi, st->second.first, st->second.second)) {
    ++idx[kStrideCount].first;
    groups.push_back(std::move(group));
    return;
  }
  for (int32_t r : m)
    if (find_slot(idx, r).first >= 0) throw duplicate_rank(id, r, false);
  std::vector<int32_t> sorted = m.to_vector();
  std::sort(sorted.begin(), sorted.end());
  if (auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end())
    throw duplicate_rank(id, *d, true);
  if (groups.back().members < m) {
    // In order (as readers get groups from a file this project wrote):
    // index the new members only, so G groups cost time linear in their
    // members rather than G re-indexings.
    spell_out(groups, idx);
    int32_t pos = 0;
    for (int32_t r : m) idx[r] = {static_cast<int32_t>(gi), pos++};
    groups.push_back(std::move(group));
    return;
  }
  groups.insert(std::lower_bound(groups.begin(), groups.end(), group, by_members),
                std::move(group));
  reindex(id);
}

const CommGroup* CommTable::group_of(int64_t id, int32_t world_rank) const {
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  const Slot s = find_slot(it->second, world_rank);
  return s.first < 0 ? nullptr : &comms_.at(id)[static_cast<std::size_t>(s.first)];
}

int32_t CommTable::rank_in(int64_t id, int32_t world_rank) const {
  auto it = index_.find(id);
  return it == index_.end() ? -1 : find_slot(it->second, world_rank).second;
}

void CommTable::merge(const CommTable& other) {
  // All groups of an id at once: one sort and one index instead of a
  // re-index per group that falls between two of ours (the recorder merges
  // interleaved halves of the ranks).
  for (const auto& [id, theirs] : other.comms_) {
    std::vector<CommGroup> all = theirs;
    if (auto mine = comms_.find(id); mine != comms_.end())
      all.insert(all.end(), mine->second.begin(), mine->second.end());
    std::sort(all.begin(), all.end(), by_members);
    all.erase(std::unique(all.begin(), all.end()), all.end());
    CommIndex idx = build_index(id, all);
    comms_[id] = std::move(all);
    index_[id] = std::move(idx);
  }
}

}  // namespace tracefold
