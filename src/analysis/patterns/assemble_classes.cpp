// assemble() over classes of alike ranks. The k-th send from a to b on a
// channel meets the k-th receive of b on it; which events of a's class and
// b's class those are depends only on the two classes and on where the
// partners' relative peers land, so each such match is worked out once
// and applied to every pair of ranks it fits. What stays per rank: the
// union-find of its per-process patterns (the patterns of a row's
// sub-communicator must not join another row's), the channels it sends on,
// and the partners of its hops inside patterns (their steps are shared by
// the ranks whose messages go alike).
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "classes_internal.hpp"
#include "tracefold/union_find.hpp"

namespace tracefold::patterns::detail {

namespace {

// (comm, tag, stored peer) -> events, ascending.
using Lists = std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<uint32_t>>;

// What the assembly keeps of a class besides its events.
struct ClassInfo {
  Lists sends, recvs;
  std::vector<int32_t> unit_of;  // per event: its unit in the class (-1: none)
  std::vector<bool> present;     // per pattern: it covers an event (has a unit)
  std::size_t units = 0;         // patterns, then loose message events
  std::vector<std::size_t> occurrences;
  // Per communicator, its collective calls in order: the pattern each lies
  // in (-1: none).
  std::map<int64_t, std::vector<int32_t>> collectives;
};

ClassInfo info_of(const ClassEvents& c, std::size_t patterns) {
  ClassInfo in;
  in.present.assign(patterns, false);
  for (int32_t p : c.pattern_of)
    if (p >= 0) in.present[static_cast<std::size_t>(p)] = true;
  in.occurrences.assign(patterns, 0);
  in.units = patterns;
  in.unit_of.assign(c.events.size(), -1);
  for (std::size_t e = 0; e < c.events.size(); ++e) {
    const Message& m = c.events[e];
    if (const auto to = sent_to(m))
      in.sends[{m.comm, to->second, to->first}].push_back(static_cast<uint32_t>(e));
    if (const auto from = received_from(m))
      in.recvs[{m.comm, from->second, from->first}].push_back(static_cast<uint32_t>(e));
    if (m.kind == Message::Kind::kOther) in.collectives[m.comm].push_back(c.pattern_of[e]);
    if (c.pattern_of[e] >= 0)
      in.unit_of[e] = c.pattern_of[e];
    else if (m.kind != Message::Kind::kOther)
      in.unit_of[e] = static_cast<int32_t>(in.units++);
  }
  return in;
}

// The k-th sends of one class's list matched with the k-th receives of
// another's, summarized.
struct Match {
  const std::vector<uint32_t>* sends = nullptr;
  const std::vector<uint32_t>* recvs = nullptr;
  std::size_t n = 0;
  std::vector<std::pair<int32_t, int32_t>> joins;  // (sender unit, receiver unit), each once
  struct PerUnit {
    int32_t unit;
    std::size_t messages = 0, wildcard = 0;
    uint64_t bytes = 0;
  };
  std::vector<PerUnit> by_send_unit;
};

class Assembler {
 public:
  Assembler(const std::vector<ClassEvents>& classes, const std::vector<uint32_t>& class_of,
            const CommTable& comms, std::vector<ClassInfo> info)
      : classes_(classes), class_of_(class_of), comms_(comms), info_(std::move(info)) {}

  const ClassEvents& cls(int32_t rank) const {
    return classes_[class_of_[static_cast<std::size_t>(rank)]];
  }
  const ClassInfo& info(int32_t rank) const {
    return info_[class_of_[static_cast<std::size_t>(rank)]];
  }

  // ChannelClass's (shift, modulo) that takes `rank` to where its stored
  // peer lands in `comm` (land()). An absolute peer inside the rank's group
  // gets the rule of a relative one: the ranks walked alone (a halo's
  // edges, every rank with --absolute) then share their classes with the
  // others.
  std::pair<int64_t, int64_t> receiver_rule(int32_t rank, int64_t comm, int64_t stored) const {
    const std::optional<Place> at = place_in(comms_, comm, rank);
    const std::optional<int64_t> offset = !at                  ? std::nullopt
                                          : cls(rank).absolute ? stored_offset(*at, stored)
                                                               : stored;
    if (!offset) return {stored - rank, 0};
    return {at->me - rank + *offset, at->size};
  }

  // The match of `rank`'s list (comm, tag, stored peer) with its partner's
  // list for it, or null: the rank's sends with the partner's receives
  // when `sends`, else the partner's sends with its receives. `other`
  // receives the partner's rank in the communicator, which is also taken
  // as its world rank (as assemble() keys channels).
  const Match* match_list(int32_t rank, const Lists::key_type& key, bool sends, int64_t& other) {
    const auto& [comm, tag, stored] = key;
    other = land(rank, comm, stored);
    if (other < 0 || other >= static_cast<int64_t>(class_of_.size())) return nullptr;
    const auto o = static_cast<int32_t>(other);
    const std::optional<int64_t> back = stored_for(o, comm, rank);
    if (!back) return nullptr;
    const uint32_t mine = class_of_[static_cast<std::size_t>(rank)];
    const uint32_t theirs = class_of_[static_cast<std::size_t>(o)];
    return sends ? match(mine, key, theirs, *back)
                 : match(theirs, {comm, tag, *back}, mine, stored);
  }

 private:
  // Where a stored peer of `rank` lands in `comm` (-1: nowhere).
  int64_t land(int32_t rank, int64_t comm, int64_t stored) const {
    if (cls(rank).absolute) return stored;
    const std::optional<Place> at = place_in(comms_, comm, rank);
    return at ? peer_at(*at, stored) : -1;
  }
  // The stored peer by which `rank` names `peer` in `comm` (nullopt: none).
  std::optional<int64_t> stored_for(int32_t rank, int64_t comm, int64_t peer) const {
    if (cls(rank).absolute) return peer;
    const std::optional<Place> at = place_in(comms_, comm, rank);
    return at ? stored_offset(*at, peer) : std::nullopt;
  }

  const Match* match(uint32_t ca, const Lists::key_type& skey, uint32_t cb, int64_t rstored) {
    const auto& [comm, tag, sstored] = skey;
    const auto key = std::make_tuple(ca, comm, tag, sstored, cb, rstored);
    auto [it, fresh] = cache_.try_emplace(key);
    Match& m = it->second;
    if (!fresh) return m.n ? &m : nullptr;
    const ClassInfo& ia = info_[ca];
    const ClassInfo& ib = info_[cb];
    auto s = ia.sends.find(skey);
    auto r = ib.recvs.find({comm, tag, rstored});
    if (s == ia.sends.end() || r == ib.recvs.end()) return nullptr;
    m.sends = &s->second;
    m.recvs = &r->second;
    m.n = std::min(s->second.size(), r->second.size());
    std::map<int32_t, Match::PerUnit> per;
    for (std::size_t k = 0; k < m.n; ++k) {
      const uint32_t se = s->second[k], re = r->second[k];
      const int32_t ua = ia.unit_of[se], ub = ib.unit_of[re];
      m.joins.emplace_back(ua, ub);
      Match::PerUnit& u = per.try_emplace(ua, Match::PerUnit{ua}).first->second;
      ++u.messages;
      u.bytes += classes_[ca].events[se].bytes;
      if (classes_[cb].events[re].wildcard) ++u.wildcard;
    }
    std::sort(m.joins.begin(), m.joins.end());
    m.joins.erase(std::unique(m.joins.begin(), m.joins.end()), m.joins.end());
    for (auto& [u, p] : per) m.by_send_unit.push_back(p);
    return m.n ? &m : nullptr;
  }

  const std::vector<ClassEvents>& classes_;
  const std::vector<uint32_t>& class_of_;
  const CommTable& comms_;
  std::vector<ClassInfo> info_;
  std::map<std::tuple<uint32_t, int64_t, int64_t, int64_t, uint32_t, int64_t>, Match> cache_;
};

}  // namespace

void assemble_classes(const std::vector<ClassEvents>& classes,
                      const std::vector<uint32_t>& class_of, const CommTable& comms,
                      const std::vector<std::string>& names, bool whole_rank, Result& result,
                      const std::function<Symbol(int32_t, Symbol)>& single_symbol) {
  const auto world = static_cast<int32_t>(class_of.size());
  std::vector<ClassInfo> infos;
  infos.reserve(classes.size());
  for (const ClassEvents& c : classes) {
    const RankPatterns& g = result.groups[c.group];
    ClassInfo in = info_of(c, g.patterns.size());
    for (std::size_t p = 0; p < g.patterns.size(); ++p)
      in.occurrences[p] = iterations(g.patterns[p].pattern);
    infos.push_back(std::move(in));
  }
  Assembler as(classes, class_of, comms, std::move(infos));
  // Units of rank r: base[r] + its class's unit numbers.
  std::vector<std::size_t> base(class_of.size() + 1, 0);
  for (int32_t r = 0; r < world; ++r)
    base[static_cast<std::size_t>(r) + 1] = base[static_cast<std::size_t>(r)] + as.info(r).units;
  UnionFind uf(base.back());
  auto unit = [&](int32_t r, int32_t u) {
    return base[static_cast<std::size_t>(r)] + static_cast<std::size_t>(u);
  };
  for (int32_t a = 0; a < world; ++a)
    for (const auto& [key, events] : as.info(a).sends) {
      int64_t to = 0;
      const Match* m = as.match_list(a, key, true, to);
      if (!m) continue;
      for (const auto& [ua, ub] : m->joins)
        uf.unite(unit(a, ua), unit(static_cast<int32_t>(to), ub));
    }
  // The k-th collective call on a communicator is one call of all its
  // members (MPI orders them alike on every rank), so the per-process
  // patterns that hold it are one communication: ft's transposes by
  // MPI_Alltoall, a multigrid's coarse-level reductions. Each member joins
  // the group's first rank; what joins depends only on the two classes and
  // the communicator. A collective outside patterns joins nothing: a
  // single reduction stays a single event.
  std::map<std::tuple<uint32_t, uint32_t, int64_t>, std::vector<std::pair<int32_t, int32_t>>>
      collective_joins;
  for (int32_t r = 0; r < world; ++r)
    for (const auto& [comm, mine] : as.info(r).collectives) {
      const CommGroup* g = comms.group_of(comm, r);
      if (!g || g->members.size() == 0) continue;
      const int32_t first = g->members[0];
      if (first == r || first < 0 || first >= world) continue;
      const auto key = std::make_tuple(class_of[static_cast<std::size_t>(r)],
                                       class_of[static_cast<std::size_t>(first)], comm);
      auto [it, fresh] = collective_joins.try_emplace(key);
      if (fresh) {
        const auto& theirs = as.info(first).collectives;
        const auto t = theirs.find(comm);
        if (t != theirs.end())
          for (std::size_t k = 0; k < mine.size() && k < t->second.size(); ++k)
            if (mine[k] >= 0 && t->second[k] >= 0) it->second.emplace_back(mine[k], t->second[k]);
        std::sort(it->second.begin(), it->second.end());
        it->second.erase(std::unique(it->second.begin(), it->second.end()), it->second.end());
      }
      for (const auto& [um, ut] : it->second) uf.unite(unit(r, um), unit(first, ut));
    }
  // Components holding a per-process pattern become global patterns, in
  // order of their first (rank, pattern).
  std::map<std::size_t, std::size_t> index;  // root -> position in global
  std::vector<GlobalPattern>& out = result.global;
  out.clear();
  auto global_of_unit = [&](int32_t r, int32_t u) -> int32_t {
    auto it = index.find(uf.find(unit(r, u)));
    return it == index.end() ? -1 : static_cast<int32_t>(it->second);
  };
  for (int32_t r = 0; r < world; ++r) {
    const ClassInfo& in = as.info(r);
    for (std::size_t p = 0; p < in.present.size(); ++p) {
      if (!in.present[p]) continue;
      auto [it, fresh] = index.try_emplace(uf.find(unit(r, static_cast<int32_t>(p))), out.size());
      if (fresh) out.emplace_back();
      out[it->second].patterns.emplace_back(r, static_cast<int32_t>(p));
    }
  }
  for (int32_t r = 0; r < world; ++r) {
    const ClassInfo& in = as.info(r);
    for (std::size_t u = in.present.size(); u < in.units; ++u)
      if (const int32_t g = global_of_unit(r, static_cast<int32_t>(u)); g >= 0)
        ++out[static_cast<std::size_t>(g)].loose_events;
  }
  // Channels, each message counted where its own send lies, gathered into
  // classes: the senders whose channel on a list lands at the same shift
  // and carries the same messages in the same global pattern (all ranks of
  // a class of alike ranks, in the common case) share one entry.
  using ClassKey = std::tuple<int32_t, int64_t, int64_t, int64_t, int64_t, std::size_t, uint64_t,
                              std::size_t>;  // global, comm, tag, shift, modulo, what it carries
  std::map<ClassKey, std::vector<int32_t>> senders;
  struct PerGlobal {
    int32_t g;
    std::size_t messages = 0, wildcard = 0;
    uint64_t bytes = 0;
  };
  std::vector<PerGlobal> by_global;
  for (int32_t a = 0; a < world; ++a)
    for (const auto& [key, events] : as.info(a).sends) {
      int64_t to = 0;
      const Match* m = as.match_list(a, key, true, to);
      if (!m) continue;
      const auto& [comm, tag, stored] = key;
      by_global.clear();
      for (const Match::PerUnit& u : m->by_send_unit) {
        const int32_t g = global_of_unit(a, u.unit);
        if (g < 0) continue;
        auto part = std::find_if(by_global.begin(), by_global.end(),
                                 [&](const auto& x) { return x.g == g; });
        if (part == by_global.end()) part = by_global.insert(part, {g});
        part->messages += u.messages;
        part->bytes += u.bytes;
        part->wildcard += u.wildcard;
      }
      const auto [shift, modulo] = as.receiver_rule(a, comm, stored);
      for (const PerGlobal& p : by_global) {
        out[static_cast<std::size_t>(p.g)].messages += p.messages;
        senders[{p.g, comm, tag, shift, modulo, p.messages, p.bytes, p.wildcard}].push_back(a);
      }
    }
  for (auto& [key, ranks] : senders) {
    const auto& [g, comm, tag, shift, modulo, messages, bytes, wildcard] = key;
    out[static_cast<std::size_t>(g)].channel_classes.push_back(
        {Ranklist::from_ranks(std::move(ranks)), shift, modulo, comm, tag, messages, bytes,
         wildcard});
  }
  senders.clear();
  // Each rank's hops inside its per-process patterns, in its order of
  // events; the two hops of one MPI_Sendrecv in the order of their
  // channels' keys (from, to, comm, tag), as assemble() has them. Which
  // events those are, and in what order, is the same for every rank of a
  // class whose lists meet the same matches: worked out once as a plan of
  // (event, list) steps. How the plan's hops split into orders depends
  // further only on which of its patterns fall into one global pattern and
  // on which way its Sendrecv pairs go: worked out once per such layout,
  // the steps shared by its ranks (halo26 at 16,384 ranks: 21 million hops
  // in a few thousand steps); per rank only the partners are filled in.
  struct Step {
    uint32_t event;
    uint32_t list;  // index into the rank's send lists, then its receive lists
    bool send;
  };
  struct Part {
    std::shared_ptr<const std::vector<HopStep>> steps;  // null: no hop
    std::vector<uint32_t> lists;                        // per partner: the list naming it
    std::size_t occurrences = 1;
  };
  struct Plan {
    std::vector<Step> steps;
    // The lists of one event's two hops (distinct), and per step the pair
    // whose first hop it is (-1: none).
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    std::vector<int32_t> pair_at;
    // (per pair: swapped, per pattern: its global pattern numbered in order
    // of first pattern, -1: none) -> per such number, its part.
    std::map<std::pair<std::vector<bool>, std::vector<int32_t>>, std::vector<Part>> layouts;
  };
  std::map<std::pair<uint32_t, std::vector<const Match*>>, Plan> plans;
  std::vector<const Match*> matches;
  std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> keys;  // per list: its channel
  std::vector<int32_t> local, globals;  // per pattern: its number; per number: global
  std::vector<bool> swapped;
  for (int32_t r = 0; r < world; ++r) {
    const ClassEvents& c = as.cls(r);
    const ClassInfo& in = as.info(r);
    matches.clear();
    keys.clear();
    for (const auto& [key, events] : in.sends) {
      int64_t to = 0;
      matches.push_back(as.match_list(r, key, true, to));
      keys.emplace_back(r, to, std::get<0>(key), std::get<1>(key));
    }
    for (const auto& [key, events] : in.recvs) {
      int64_t from = 0;
      matches.push_back(as.match_list(r, key, false, from));
      keys.emplace_back(from, r, std::get<0>(key), std::get<1>(key));
    }
    const std::size_t sends = in.sends.size();
    auto [plan_it, fresh] = plans.try_emplace({class_of[static_cast<std::size_t>(r)], matches});
    Plan& plan = plan_it->second;
    if (fresh) {
      for (std::size_t l = 0; l < matches.size(); ++l) {
        const Match* m = matches[l];
        if (!m) continue;
        const std::vector<uint32_t>& events = l < sends ? *m->sends : *m->recvs;
        for (std::size_t k = 0; k < m->n; ++k)
          if (c.pattern_of[events[k]] >= 0)
            plan.steps.push_back({events[k], static_cast<uint32_t>(l), l < sends});
      }
      std::stable_sort(plan.steps.begin(), plan.steps.end(),
                       [](const Step& x, const Step& y) { return x.event < y.event; });
      plan.pair_at.assign(plan.steps.size(), -1);
      for (std::size_t i = 0; i + 1 < plan.steps.size(); ++i) {
        if (plan.steps[i + 1].event != plan.steps[i].event) continue;
        const std::pair<uint32_t, uint32_t> lists{plan.steps[i].list, plan.steps[i + 1].list};
        auto at = std::find(plan.pairs.begin(), plan.pairs.end(), lists);
        if (at == plan.pairs.end()) at = plan.pairs.insert(at, lists);
        plan.pair_at[i] = static_cast<int32_t>(at - plan.pairs.begin());
      }
    }
    if (plan.steps.empty()) continue;
    local.assign(in.present.size(), -1);
    globals.clear();
    for (std::size_t p = 0; p < in.present.size(); ++p) {
      if (!in.present[p]) continue;
      const int32_t g = global_of_unit(r, static_cast<int32_t>(p));
      if (g < 0) continue;
      auto at = std::find(globals.begin(), globals.end(), g);
      if (at == globals.end()) at = globals.insert(at, g);
      local[p] = static_cast<int32_t>(at - globals.begin());
    }
    // One event's two hops go by their channels, which name this rank's
    // partners: the order may differ from rank to rank.
    swapped.clear();
    for (const auto& [first, second] : plan.pairs) swapped.push_back(keys[second] < keys[first]);
    auto [layout_it, new_layout] = plan.layouts.try_emplace({swapped, local});
    std::vector<Part>& parts = layout_it->second;
    if (new_layout) {
      std::vector<std::vector<HopStep>> steps(globals.size());
      std::vector<std::vector<int32_t>> partner_of(globals.size());  // per list
      parts.resize(globals.size());
      auto emit = [&](const Step& s) {
        const int32_t p = c.pattern_of[s.event];
        const int32_t l = local[static_cast<std::size_t>(p)];
        if (l < 0) return;
        const auto li = static_cast<std::size_t>(l);
        Part& part = parts[li];
        if (steps[li].empty()) {
          part.occurrences = in.occurrences[static_cast<std::size_t>(p)];
          partner_of[li].assign(matches.size(), -1);
        }
        int32_t& partner = partner_of[li][s.list];
        if (partner < 0) {
          partner = static_cast<int32_t>(part.lists.size());
          part.lists.push_back(s.list);
        }
        const Message& msg = c.events[s.event];
        const bool rpart = !s.send && msg.kind == Message::Kind::kSendrecv;
        steps[li].push_back({static_cast<uint32_t>(partner), s.send,
                             !s.send && msg.blocking && msg.kind == Message::Kind::kRecv,
                             rpart ? msg.rtag : msg.tag});
      };
      for (std::size_t i = 0; i < plan.steps.size(); ++i) {
        const int32_t pair = plan.pair_at[i];
        if (pair >= 0 && swapped[static_cast<std::size_t>(pair)]) {
          emit(plan.steps[i + 1]);
          emit(plan.steps[i]);
          ++i;
          continue;
        }
        emit(plan.steps[i]);
      }
      for (std::size_t l = 0; l < parts.size(); ++l)
        if (!steps[l].empty())
          parts[l].steps = std::make_shared<const std::vector<HopStep>>(std::move(steps[l]));
    }
    for (std::size_t l = 0; l < parts.size(); ++l) {
      const Part& part = parts[l];
      if (!part.steps) continue;
      GlobalPattern::Order o;
      o.rank = r;
      o.steps = part.steps;
      o.occurrences = part.occurrences;
      o.partners.reserve(part.lists.size());
      for (uint32_t list : part.lists)
        o.partners.push_back(
            static_cast<int32_t>(list < sends ? std::get<1>(keys[list]) : std::get<0>(keys[list])));
      out[static_cast<std::size_t>(globals[l])].order.push_back(std::move(o));
    }
  }
  sort_globals(out);

  // Coverage: ranks of one class whose units fall into the same global
  // patterns have the same events in one, several or none; each such set
  // is counted once. An event lies in the global pattern of its unit, or
  // of every per-process pattern whose occurrence covers it.
  std::map<std::pair<uint32_t, std::vector<int32_t>>, std::vector<int32_t>> alike;
  for (int32_t r = 0; r < world; ++r) {
    const ClassInfo& in = as.info(r);
    std::vector<int32_t> globals(in.units);
    for (std::size_t u = 0; u < in.units; ++u)
      globals[u] =
          u < in.present.size() && !in.present[u] ? -1 : global_of_unit(r, static_cast<int32_t>(u));
    alike[{class_of[static_cast<std::size_t>(r)], std::move(globals)}].push_back(r);
  }
  Result::Cover& cover = result.cover;
  std::map<std::pair<std::string, Symbol>, std::map<int32_t, std::size_t>> singles;
  for (const auto& [key, ranks] : alike) {
    const ClassEvents& c = classes[key.first];
    const ClassInfo& in = as.info(ranks.front());
    const std::vector<int32_t>& globals = key.second;
    const std::size_t n = c.events.size();
    std::vector<int32_t> first(n, -1);
    for (std::size_t k = 0; k < n; ++k)
      if (in.unit_of[k] >= 0) first[k] = globals[static_cast<std::size_t>(in.unit_of[k])];
    std::vector<bool> several(n, false);
    const RankPatterns& g = result.groups[c.group];
    for (std::size_t p = 0; p < g.patterns.size(); ++p) {
      const int32_t gp = globals[p];
      if (gp < 0) continue;
      const ProcessPattern& pat = g.patterns[p].pattern;
      for (std::size_t at : pat.positions)
        for (std::size_t k = at; k < at + pat.symbols.size() && k < n; ++k) {
          if (first[k] < 0) first[k] = gp;
          if (first[k] != gp) several[k] = true;
        }
    }
    std::map<std::pair<std::string, Symbol>, std::size_t> mine;
    std::size_t one = 0, many = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (several[k])
        ++many;
      else if (first[k] >= 0)
        ++one;
      else
        ++mine[{whole_rank ? std::string("(whole rank)") : names[c.contexts[k]], c.symbols[k]}];
    }
    cover.events += n * ranks.size();
    cover.in_one += one * ranks.size();
    cover.in_several += many * ranks.size();
    for (const auto& [what, count] : mine) {
      if (single_symbol) {
        for (int32_t r : ranks) singles[{what.first, single_symbol(r, what.second)}][r] += count;
        continue;
      }
      auto& per_rank = singles[what];
      for (int32_t r : ranks) per_rank[r] += count;
    }
  }
  for (const auto& [key, per_rank] : singles) {
    std::map<std::size_t, std::vector<int32_t>> by_count;
    for (const auto& [rank, count] : per_rank) by_count[count].push_back(rank);
    for (auto& [count, ranks] : by_count)
      cover.singles.push_back(
          {Ranklist::from_ranks(std::move(ranks)), key.first, key.second, count});
  }
}

}  // namespace tracefold::patterns::detail
