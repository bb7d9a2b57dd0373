// --absolute over classes of alike ranks (AbsoluteNames).
#include <map>
#include <optional>
#include <utility>

#include "walk_internal.hpp"

namespace tracefold::patterns::detail {

AbsoluteNames::AbsoluteNames(const std::vector<ClassEvents>& classes,
                             const std::vector<uint32_t>& class_of, const Alphabet& by_class,
                             Result& result, const CommTable& comms)
    : distinct_(result.groups.size()),
      index_(result.groups.size()),
      of_rank_(class_of.size()),
      group_(class_of.size()) {
  for (std::size_t r = 0; r < class_of.size(); ++r) group_[r] = classes[class_of[r]].group;
  for (const ClassEvents& c : classes) {
    std::map<Symbol, uint32_t>& index = index_[c.group];
    if (!index.empty()) continue;
    for (Symbol s : c.symbols)
      if (index.try_emplace(s, static_cast<uint32_t>(distinct_[c.group].size())).second)
        distinct_[c.group].push_back(s);
  }
  for (std::size_t r = 0; r < class_of.size(); ++r) {
    const ClassEvents& c = classes[class_of[r]];
    for (Symbol s : distinct_[c.group]) {
      SymbolKey k = by_class.at(s);
      if (!c.absolute && !is_sentinel(k.peer) && k.peer != kAbsent)
        if (const std::optional<Place> at = place_in(comms, k.comm, static_cast<int32_t>(r)))
          k.peer = peer_at(*at, (k.peer % at->size + at->size) % at->size);
      of_rank_[r].push_back(result.alphabet.intern(k));
    }
  }
}

void AbsoluteNames::regroup(const std::vector<ClassEvents>& classes,
                            const std::vector<uint32_t>& class_of, Result& result) {
  std::vector<RankPatterns> class_groups = std::move(result.groups);
  result.groups.clear();
  // A group's string up to renaming (each symbol by its first use) and
  // its contexts: two groups whose ranks read the same absolutely.
  std::vector<std::size_t> form(class_groups.size(), 0);
  std::map<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>, std::size_t> forms;
  std::vector<bool> seen(class_groups.size(), false);
  for (const ClassEvents& c : classes) {
    if (seen[c.group]) continue;
    seen[c.group] = true;
    std::vector<uint32_t> canonical;
    canonical.reserve(c.symbols.size());
    for (Symbol s : c.symbols) canonical.push_back(index_[c.group].at(s));
    form[c.group] =
        forms.try_emplace({std::move(canonical), c.contexts}, forms.size()).first->second;
  }
  std::map<std::pair<std::size_t, std::vector<Symbol>>, std::size_t> group_of;
  std::vector<std::vector<int32_t>> members;
  for (std::size_t r = 0; r < class_of.size(); ++r) {
    const std::size_t g = group_[r];
    auto [it, fresh] = group_of.try_emplace({form[g], of_rank_[r]}, result.groups.size());
    if (fresh) {
      RankPatterns named = class_groups[g];
      for (RankPatterns::Entry& e : named.patterns)
        for (Symbol& s : e.pattern.symbols) s = symbol(static_cast<int32_t>(r), s);
      result.groups.push_back(std::move(named));
      members.emplace_back();
    }
    members[it->second].push_back(static_cast<int32_t>(r));
  }
  for (std::size_t g = 0; g < result.groups.size(); ++g)
    result.groups[g].ranks = Ranklist::from_ranks(std::move(members[g]));
}

}  // namespace tracefold::patterns::detail
