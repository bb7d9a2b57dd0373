// find_process_patterns (patterns.hpp): the per-process step over classes
// of alike ranks, the global patterns assembled from them, their shapes,
// topologies, phases and compositions.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "classes_internal.hpp"
#include "tracefold/patterns.hpp"
#include "walk_internal.hpp"

namespace tracefold::patterns {

namespace {

// Whether symbol `s` is a message to or from a known partner (its tag may
// be a wildcard: a master's MPI_ANY_TAG receives from one worker are one
// call of its code).
bool is_message(const Alphabet& alphabet, Symbol s) {
  const SymbolKey& k = alphabet.at(s);
  return k.peer != kAbsent && !is_sentinel(k.peer);
}

// Per pattern of a rank, the pattern whose global pattern its events
// join: an earlier one of the same context that holds it or that it
// holds (an exchange made once, twice or three times a step: the exchange
// twice is the repeat, once where it is not inside that is another), or
// whose occurrences its own overlap (steps with and without a residual
// reduction), else itself. The repeat rule keeps such a shorter repeat for
// its occurrences outside the longer one, but it is the same
// communication: apart, they made two global patterns of one halo. So is
// a pattern that makes a message of an earlier one (the same symbol: the
// same partner, communicator and tag) in the same context: a multigrid's
// halo on the way down and on the way up are two repeats, split by the
// coarse solve between them, of the one exchange of give(). So, last, is
// a pattern of point-to-point messages whose occurrences interleave with
// an earlier one's on a communicator both use: they run in the same
// iterations of one loop. A multigrid whose polls take messages in an
// order that changes from cycle to cycle repeats only pieces of its
// V-cycle, and the coarse levels' pieces (other tags, other partners, on
// fewer ranks) made a global pattern of their own, an all-to-all of the
// coarse ranks, instead of part of the cycle's neighbourhood. Phases one
// after the other (all of one before any of the other) stay apart.
std::vector<int32_t> nested_into(const std::vector<RankPatterns::Entry>& ps,
                                 const Alphabet& alphabet) {
  auto inside = [](const std::vector<Symbol>& in, const std::vector<Symbol>& of) {
    return std::search(of.begin(), of.end(), in.begin(), in.end()) != of.end();
  };
  auto overlap = [](const ProcessPattern& a, const ProcessPattern& b) {
    std::size_t i = 0, j = 0;
    while (i < a.positions.size() && j < b.positions.size()) {
      const std::size_t x = a.positions[i], y = b.positions[j];
      if (x < y + b.symbols.size() && y < x + a.symbols.size()) return true;
      (x < y ? i : j)++;
    }
    return false;
  };
  auto shares_message = [&](const std::vector<Symbol>& a, const std::vector<Symbol>& b) {
    for (Symbol s : a)
      if (is_message(alphabet, s) && std::find(b.begin(), b.end(), s) != b.end()) return true;
    return false;
  };
  // The communicators of a pattern's messages; none if it holds anything
  // but messages to or from known partners (a collective joins by its own
  // rule, assemble_classes()).
  auto message_comms = [&](const std::vector<Symbol>& syms) {
    std::set<int64_t> comms;
    for (Symbol s : syms) {
      if (!is_message(alphabet, s)) return std::set<int64_t>{};
      comms.insert(alphabet.at(s).comm);
    }
    return comms;
  };
  auto interleave = [&](const ProcessPattern& a, const ProcessPattern& b) {
    if (a.positions.size() < 2 || b.positions.size() < 2) return false;
    const std::set<int64_t> ca = message_comms(a.symbols), cb = message_comms(b.symbols);
    if (std::none_of(ca.begin(), ca.end(), [&](int64_t c) { return cb.count(c) > 0; }))
      return false;
    // Each has an occurrence between two of the other's.
    auto between = [](const ProcessPattern& x, const ProcessPattern& y) {
      return std::any_of(x.positions.begin(), x.positions.end(), [&](std::size_t at) {
        return at > y.positions.front() && at < y.positions.back();
      });
    };
    return between(a, b) && between(b, a);
  };
  std::vector<int32_t> into(ps.size());
  for (std::size_t p = 0; p < ps.size(); ++p) {
    into[p] = static_cast<int32_t>(p);
    for (std::size_t q = 0; q < p; ++q) {
      const ProcessPattern &a = ps[p].pattern, &b = ps[q].pattern;
      if (ps[q].context == ps[p].context &&
          (inside(a.symbols, b.symbols) || inside(b.symbols, a.symbols) || overlap(a, b) ||
           shares_message(a.symbols, b.symbols) || interleave(a, b))) {
        into[p] = into[q];
        break;
      }
    }
  }
  return into;
}

// Each global pattern's collective operations, read off the symbols of its
// per-process patterns, once per (group, pattern).
void name_collectives(Result& result, std::size_t world) {
  std::vector<std::size_t> group_of(world, 0);
  for (std::size_t g = 0; g < result.groups.size(); ++g)
    result.groups[g].ranks.for_each([&](int32_t r) { group_of[static_cast<std::size_t>(r)] = g; });
  for (GlobalPattern& gp : result.global) {
    std::set<std::pair<std::size_t, int32_t>> seen;
    std::set<std::string> names;
    for (const auto& [rank, p] : gp.patterns) {
      const std::size_t g = group_of[static_cast<std::size_t>(rank)];
      if (!seen.emplace(g, p).second) continue;
      // Collectives are the symbols without a peer (the alphabet).
      for (Symbol s : result.groups[g].patterns[static_cast<std::size_t>(p)].pattern.symbols)
        if (const SymbolKey& k = result.alphabet.at(s); k.peer == kAbsent)
          names.insert(detail::family_name(k.family));
    }
    gp.collectives.assign(names.begin(), names.end());
  }
}

}  // namespace

Result find_process_patterns(const Trace& trace, const Options& options,
                             const std::function<std::string(SiteId)>& context_of) {
  Result result;
  detail::RankWalker walker(trace, options, context_of);
  const auto world = static_cast<std::size_t>(trace.world_size);
  std::vector<uint32_t> class_of;
  std::vector<detail::ClassEvents> classes = walker.classes(class_of);
  const Alphabet& walked = walker.walked;
  const std::vector<std::string>& context_names = walker.context_names;
  const bool absolute = options.peers == PeerMode::kAbsolute;
  // With --absolute the classes' symbols are numbered here, and the
  // ranks' own in result.alphabet (absolute_names()).
  Alphabet by_class;
  Alphabet& numbered = absolute ? by_class : result.alphabet;
  std::vector<Symbol> renumbered(walked.size(), 0);
  std::vector<bool> known(walked.size(), false);
  for (detail::ClassEvents& c : classes)
    for (Symbol& s : c.symbols) {
      if (!known[s]) {
        known[s] = true;
        renumbered[s] = numbered.intern(walked.at(s));
      }
      s = renumbered[s];
    }
  // Classes whose symbol and context strings are equal share one result
  // (its ranks listed together), in order of their first rank.
  std::map<std::pair<std::vector<Symbol>, std::vector<uint32_t>>, std::size_t> seen;
  std::vector<std::vector<int32_t>> joined;  // per group: nested_into() of its patterns
  std::vector<std::vector<int32_t>> group_ranks;
  for (detail::ClassEvents& c : classes) {
    auto [sit, fresh] = seen.try_emplace({c.symbols, c.contexts}, result.groups.size());
    c.group = sit->second;
    if (fresh) {
      RankPatterns g;
      g.events = c.symbols.size();
      for (ProcessPattern& p : process_patterns(c.symbols, c.contexts)) {
        p.loop = loop_of(p, c.loops);
        const std::size_t first = p.positions.front();
        std::string ctx = options.context == ContextMode::kNone ? std::string("(whole rank)")
                                                                : context_names[c.contexts[first]];
        g.patterns.push_back({std::move(p), std::move(ctx)});
      }
      result.groups.push_back(std::move(g));
      group_ranks.emplace_back();
    }
    c.loops = {};  // read by loop_of() above only
    auto& gr = group_ranks[c.group];
    gr.insert(gr.end(), c.ranks.begin(), c.ranks.end());
    const RankPatterns& g = result.groups[c.group];
    if (joined.size() <= c.group) joined.resize(c.group + 1);
    if (joined[c.group].size() != g.patterns.size())
      joined[c.group] = nested_into(g.patterns, numbered);
    c.pattern_of.assign(c.events.size(), -1);
    for (std::size_t p = 0; p < g.patterns.size(); ++p) {
      const ProcessPattern& pat = g.patterns[p].pattern;
      for (std::size_t at : pat.positions)
        for (std::size_t k = at; k < at + pat.symbols.size(); ++k)
          if (c.pattern_of[k] < 0) c.pattern_of[k] = joined[c.group][p];
    }
    // A single event that makes a message of a pattern of its context (the
    // same partner, communicator and tag) is part of that communication: a
    // master's exchange with a worker that got a task or two, which no
    // repeat of either rank holds.
    const bool whole = options.context == ContextMode::kNone;
    std::map<std::pair<uint32_t, Symbol>, int32_t> made;
    for (std::size_t p = 0; p < g.patterns.size(); ++p) {
      const ProcessPattern& pat = g.patterns[p].pattern;
      const uint32_t ctx = whole ? 0 : c.contexts[pat.positions.front()];
      for (Symbol s : pat.symbols)
        if (is_message(numbered, s)) made.try_emplace({ctx, s}, joined[c.group][p]);
    }
    if (!made.empty())
      for (std::size_t k = 0; k < c.events.size(); ++k) {
        if (c.pattern_of[k] >= 0) continue;
        auto it = made.find({whole ? 0 : c.contexts[k], c.symbols[k]});
        if (it != made.end()) c.pattern_of[k] = it->second;
      }
  }
  for (std::size_t g = 0; g < result.groups.size(); ++g)
    result.groups[g].ranks = Ranklist::from_ranks(std::move(group_ranks[g]));
  if (absolute) {
    detail::AbsoluteNames names(classes, class_of, by_class, result, trace.comms);
    detail::assemble_classes(classes, class_of, trace.comms, context_names,
                             options.context == ContextMode::kNone, result,
                             [&](int32_t rank, Symbol s) { return names.symbol(rank, s); });
    names.regroup(classes, class_of, result);
  } else {
    detail::assemble_classes(classes, class_of, trace.comms, context_names,
                             options.context == ContextMode::kNone, result);
  }
  name_collectives(result, world);
  const auto topologies = walker.hoods.add_edges(result, trace.comms, world, [&](int32_t r) {
    return classes[class_of[static_cast<std::size_t>(r)]].ranks.front();
  });
  std::vector<GlobalPattern> phases;
  for (std::size_t i = 0; i < result.global.size(); ++i) {
    std::vector<int64_t> on;
    for (const auto& [comm, kind] : topologies[i]) on.push_back(comm);
    std::vector<GlobalPattern> parts =
        detail::Neighbourhoods::by_topology(std::move(result.global[i]), on);
    for (std::size_t k = 0; k < parts.size(); ++k) {
      GlobalPattern& gp = parts[k];
      gp.shape = classify(gp, trace.world_size);
      // One part per communicator, or one pattern of them all.
      std::string kind;
      for (std::size_t t = 0; t < topologies[i].size(); ++t)
        if (parts.size() == 1 || t == k)
          kind += (kind.empty() ? "" : ", ") + topologies[i][t].second;
      if (!kind.empty()) gp.shape.params.emplace_back("topology", kind);
      for (GlobalPattern& part : split_phases(std::move(gp), trace.world_size))
        phases.push_back(std::move(part));
    }
  }
  result.global = std::move(phases);
  find_compositions(result);
  return result;
}

}  // namespace tracefold::patterns