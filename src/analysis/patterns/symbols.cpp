#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "classes_internal.hpp"
#include "neighbourhood.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/patterns.hpp"
#include "tracefold/timeline.hpp"

namespace tracefold::patterns {

namespace {

// The family's name: blocking and nonblocking members share it (an
// MPI_Isend is a send posted), as they share a symbol.
std::string family_name(OpFamily f) {
  switch (f) {
    case OpFamily::kSend:
      return "send";
    case OpFamily::kRecv:
      return "recv";
    case OpFamily::kSendrecv:
      return "sendrecv";
    case OpFamily::kMrecv:
      return "mrecv";
    case OpFamily::kStart:
      return "start";
    case OpFamily::kBarrier:
      return "barrier";
    case OpFamily::kBcast:
      return "bcast";
    case OpFamily::kReduce:
      return "reduce";
    case OpFamily::kAllreduce:
      return "allreduce";
    case OpFamily::kScan:
      return "scan";
    case OpFamily::kExscan:
      return "exscan";
    case OpFamily::kGather:
      return "gather";
    case OpFamily::kGatherv:
      return "gatherv";
    case OpFamily::kScatter:
      return "scatter";
    case OpFamily::kScatterv:
      return "scatterv";
    case OpFamily::kAllgather:
      return "allgather";
    case OpFamily::kAllgatherv:
      return "allgatherv";
    case OpFamily::kAlltoall:
      return "alltoall";
    case OpFamily::kAlltoallv:
      return "alltoallv";
    case OpFamily::kAlltoallw:
      return "alltoallw";
    case OpFamily::kReduceScatter:
      return "reduce_scatter";
    case OpFamily::kReduceScatterBlock:
      return "reduce_scatter_block";
    case OpFamily::kNeighborAllgather:
      return "neighbor_allgather";
    case OpFamily::kNeighborAllgatherv:
      return "neighbor_allgatherv";
    case OpFamily::kNeighborAlltoall:
      return "neighbor_alltoall";
    case OpFamily::kNeighborAlltoallv:
      return "neighbor_alltoallv";
    case OpFamily::kNeighborAlltoallw:
      return "neighbor_alltoallw";
    // Communicator set-up is collective too, and makes symbols of its own.
    case OpFamily::kCommDup:
      return "comm_dup";
    case OpFamily::kCommSplit:
      return "comm_split";
    case OpFamily::kCommSplitType:
      return "comm_split_type";
    case OpFamily::kCommCreate:
      return "comm_create";
    case OpFamily::kCommCreateGroup:
      return "comm_create_group";
    case OpFamily::kCommFree:
      return "comm_free";
    case OpFamily::kIntercommCreate:
      return "intercomm_create";
    case OpFamily::kIntercommMerge:
      return "intercomm_merge";
    case OpFamily::kCartCreate:
      return "cart_create";
    case OpFamily::kCartSub:
      return "cart_sub";
    case OpFamily::kGraphCreate:
      return "graph_create";
    default:
      return "op" + std::to_string(static_cast<int>(f));
  }
}

std::string value_text(int64_t v) {
  return format_value(v);
}

// `k` with its peer as the distance from `rank` in the communicator, the
// short way round (-1 rather than size - 1).
SymbolKey relative(SymbolKey k, int32_t rank, const CommTable& comms) {
  if (is_sentinel(k.peer) || k.peer == kAbsent) return k;
  const std::optional<detail::Place> at = detail::place_in(comms, k.comm, rank);
  if (!at) return k;
  int64_t d = detail::offset_of(*at, k.peer);
  if (d > at->size / 2) d -= at->size;
  k.peer = d;
  return k;
}

// What a shape needs beyond the symbol: the bytes sent, whether a
// receive blocks and was a wildcard, and a wildcard tag's matched tag
// (so a master's MPI_ANY_TAG returns still match their sends).
void fill_details(const Event& ev, Message& m) {
  static const FieldId count_f = *FieldTable::find("count");
  static const FieldId dsize_f = *FieldTable::find("dsize");
  static const FieldId mtag_f = *FieldTable::find("mtag");
  const OpTraits& t = op_traits(ev.op);
  const int64_t count = ev.get(count_f), dsize = ev.get(dsize_f);
  if (!is_sentinel(count) && !is_sentinel(dsize) && count > 0 && dsize > 0)
    m.bytes = static_cast<uint64_t>(count * dsize);
  m.blocking = !t.nonblocking;
  m.wildcard = ev.get(FieldTable::peer()) == kAny && ev.get(FieldTable::src()) != kAbsent;
  if (m.tag == kAny) {
    const int64_t mtag = ev.get(mtag_f);
    if (mtag != kAbsent && !is_sentinel(mtag)) m.tag = mtag;
  }
}

}  // namespace

Symbol Alphabet::intern(const SymbolKey& key) {
  auto [it, fresh] = index_.try_emplace(key, static_cast<Symbol>(keys_.size()));
  if (fresh) keys_.push_back(key);
  return it->second;
}

std::string Alphabet::describe(Symbol s, PeerMode mode) const {
  const SymbolKey& k = at(s);
  std::string out = family_name(k.family) + "(";
  if (k.peer != kAbsent) {
    if (mode == PeerMode::kRelative && !is_sentinel(k.peer))
      out += (k.peer >= 0 ? "+" : "") + std::to_string(k.peer);
    else
      out += value_text(k.peer);
    out += ", ";
  }
  out += "comm " + std::to_string(k.comm);
  if (k.tag != kAbsent) out += ", tag " + value_text(k.tag);
  return out + ")";
}

std::optional<SymbolKey> symbol_of(const Event& ev, int32_t rank, const CommTable& comms,
                                   PeerMode mode) {
  const OpTraits& t = op_traits(ev.op);
  SymbolKey k;
  k.family = t.family;
  static const FieldId comm_f = FieldTable::comm();
  static const FieldId tag_f = *FieldTable::find("tag");
  const int64_t comm = ev.get(comm_f);
  k.comm = comm == kAbsent ? CommTable::kWorld : comm;
  if (t.collective()) return k;
  switch (t.family) {
    case OpFamily::kSend:
    case OpFamily::kRecv:
    case OpFamily::kSendrecv:
    case OpFamily::kMrecv:
      break;
    default:
      return std::nullopt;  // completions, probes, persistent set-up, bookkeeping
  }
  int64_t peer = ev.get(FieldTable::peer());
  if (peer == kAny) {
    // A wildcard receive: the source it matched, when recorded.
    const int64_t src = ev.get(FieldTable::src());
    if (src != kAbsent) peer = src;
  }
  k.peer = peer;
  k.tag = ev.get(tag_f);
  return mode == PeerMode::kRelative ? relative(k, rank, comms) : k;
}

namespace {

// A class's events with peers as offsets from the rank's position in the
// communicator (detail::ClassEvents); false when a peer of `rank` does
// not lie in a group of its communicator, so the class cannot share them.
bool to_offsets(std::vector<Message>& events, int32_t rank, const CommTable& comms) {
  auto offset = [&](int64_t comm, int64_t& peer) {
    if (is_sentinel(peer) || peer == kAbsent) return true;
    const std::optional<detail::Place> at = detail::place_in(comms, comm, rank);
    const std::optional<int64_t> offset = at ? detail::stored_offset(*at, peer) : std::nullopt;
    if (offset) peer = *offset;
    return offset.has_value();
  };
  for (Message& m : events) {
    if (m.kind == Message::Kind::kOther) continue;
    if (!offset(m.comm, m.peer)) return false;
    if (m.kind == Message::Kind::kSendrecv && !offset(m.comm, m.rpeer)) return false;
  }
  return true;
}

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
// coarse solve between them, of the one exchange of give().
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
  std::vector<int32_t> into(ps.size());
  for (std::size_t p = 0; p < ps.size(); ++p) {
    into[p] = static_cast<int32_t>(p);
    for (std::size_t q = 0; q < p; ++q) {
      const ProcessPattern &a = ps[p].pattern, &b = ps[q].pattern;
      if (ps[q].context == ps[p].context &&
          (inside(a.symbols, b.symbols) || inside(b.symbols, a.symbols) || overlap(a, b) ||
           shares_message(a.symbols, b.symbols))) {
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
          names.insert(family_name(k.family));
    }
    gp.collectives.assign(names.begin(), names.end());
  }
}

// --absolute over classes of alike ranks: a class's symbols (relative, or
// absolute for a rank walked alone) named as each of its ranks sees them.
// Only the distinct symbols of a group are named per rank, in order of
// first use, so result.alphabet is numbered as a walk of every rank in
// order would number it.
class AbsoluteNames {
 public:
  AbsoluteNames(const std::vector<detail::ClassEvents>& classes,
                const std::vector<uint32_t>& class_of, const Alphabet& by_class, Result& result,
                const CommTable& comms)
      : distinct_(result.groups.size()),
        index_(result.groups.size()),
        of_rank_(class_of.size()),
        group_(class_of.size()) {
    for (std::size_t r = 0; r < class_of.size(); ++r) group_[r] = classes[class_of[r]].group;
    for (const detail::ClassEvents& c : classes) {
      std::map<Symbol, uint32_t>& index = index_[c.group];
      if (!index.empty()) continue;
      for (Symbol s : c.symbols)
        if (index.try_emplace(s, static_cast<uint32_t>(distinct_[c.group].size())).second)
          distinct_[c.group].push_back(s);
    }
    for (std::size_t r = 0; r < class_of.size(); ++r) {
      const detail::ClassEvents& c = classes[class_of[r]];
      for (Symbol s : distinct_[c.group]) {
        SymbolKey k = by_class.at(s);
        if (!c.absolute && !is_sentinel(k.peer) && k.peer != kAbsent)
          if (const std::optional<detail::Place> at =
                  detail::place_in(comms, k.comm, static_cast<int32_t>(r)))
            k.peer = detail::peer_at(*at, (k.peer % at->size + at->size) % at->size);
        of_rank_[r].push_back(result.alphabet.intern(k));
      }
    }
  }
  // Class symbol `s` as rank `rank` names it.
  Symbol symbol(int32_t rank, Symbol s) const {
    const auto r = static_cast<std::size_t>(rank);
    return of_rank_[r][index_[group_[r]].at(s)];
  }
  // Result::groups rebuilt from the class groups: ranks whose absolute
  // strings and contexts are equal, in order of their first rank. Equal
  // strings make equal patterns, in the same order, so the global
  // patterns' (rank, pattern) pairs stay valid.
  void regroup(const std::vector<detail::ClassEvents>& classes,
               const std::vector<uint32_t>& class_of, Result& result) {
    std::vector<RankPatterns> class_groups = std::move(result.groups);
    result.groups.clear();
    // A group's string up to renaming (each symbol by its first use) and
    // its contexts: two groups whose ranks read the same absolutely.
    std::vector<std::size_t> form(class_groups.size(), 0);
    std::map<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>, std::size_t> forms;
    std::vector<bool> seen(class_groups.size(), false);
    for (const detail::ClassEvents& c : classes) {
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

 private:
  std::vector<std::vector<Symbol>> distinct_;
  std::vector<std::map<Symbol, uint32_t>> index_;
  std::vector<std::vector<Symbol>> of_rank_;
  std::vector<std::size_t> group_;
};

}  // namespace

Result find_process_patterns(const Trace& trace, const Options& options,
                             const std::function<std::string(SiteId)>& context_of) {
  Result result;
  // Contexts are named once per call site.
  std::map<SiteId, uint32_t> site_context;
  std::vector<std::string> context_names;
  std::map<std::string, uint32_t> context_ids;
  auto context_id = [&](SiteId site) -> uint32_t {
    if (options.context == ContextMode::kNone) return 0;
    auto it = site_context.find(site);
    if (it != site_context.end()) return it->second;
    const std::string name = context_of(site);
    auto [cit, fresh] = context_ids.try_emplace(name, static_cast<uint32_t>(context_names.size()));
    if (fresh) context_names.push_back(name);
    site_context.emplace(site, cit->second);
    return cit->second;
  };
  // Symbols are numbered in order of first use by rank (walked renumbered
  // below), whatever order the ranks are walked in.
  Alphabet walked;
  // Absolute peers name ranks, so alike ranks have different symbols; but
  // one rank's absolute and relative symbols are equal where the other's
  // are, so the classes are worked on with relative symbols as by default,
  // and each rank's symbols named absolutely at the end (a walk of every
  // rank took 3.5 GiB at 16,384 ranks).
  const bool absolute = options.peers == PeerMode::kAbsolute;
  // The topologies communicators were created with, and the neighbourhood
  // collectives made on them: their messages are not in the trace.
  detail::Neighbourhoods hoods;
  // One rank's events: its symbols, their contexts and messages (peers
  // as ranks in the communicator: the assembly matches by ranks, whatever
  // the listing shows).
  auto walk = [&](int32_t rank, detail::ClassEvents& c) {
    // A posted wildcard receive learns its source only at its completion
    // (lu's halo: MPI_Irecv from MPI_ANY_SOURCE, completed by MPI_Wait):
    // core's request matching reads it there, so the receive's symbol and
    // message name the source as a blocking wildcard's do.
    std::vector<Event> evs;
    LoopPlaces places;
    {
      RankIterator it(trace, rank);
      Event ev;
      while (it.next(ev)) {
        evs.push_back(ev);
        places.note(it);
      }
    }
    c.loops.entries = std::move(places.entries);
    const RequestCompletions completed = find_completions(evs);
    // Wildcard receives posted one after another from one call site, with
    // one tag and communicator, take their messages in whatever order they
    // arrive: that order is the run's timing, not the program's pattern
    // (lu's receives from both upstream neighbours, a halo of
    // MPI_ANY_SOURCE receives). Each such run is put in the order of the
    // matched sources, so two runs of one program give one symbol string;
    // a stable sort keeps each sender's messages in the order MPI matched
    // them.
    std::size_t run_begin = 0;
    SiteId run_site = 0;
    auto close_run = [&] {
      const std::size_t end = c.events.size();
      if (end - run_begin < 2) return;
      std::vector<std::size_t> order(end - run_begin);
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = run_begin + k;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return c.events[a].peer < c.events[b].peer;
      });
      auto permute = [&](auto& v) {
        if (v.size() < end) return;
        std::vector<typename std::decay_t<decltype(v)>::value_type> part;
        part.reserve(order.size());
        for (std::size_t k : order) part.push_back(v[k]);
        std::copy(part.begin(), part.end(), v.begin() + static_cast<std::ptrdiff_t>(run_begin));
      };
      permute(c.events);
      permute(c.symbols);
      permute(c.absolute_symbols);
      permute(c.contexts);
      permute(c.loops.events);
    };
    for (std::size_t i = 0; i < evs.size(); ++i) {
      const Event& ev = evs[i];
      hoods.note(ev, rank, trace.comms);
      const std::optional<SymbolKey> found = symbol_of(ev, rank, trace.comms, PeerMode::kAbsolute);
      if (!found) continue;
      SymbolKey abs = *found;
      const int64_t src = completed.src[i], mtag = completed.mtag[i];
      const bool posted_wildcard = abs.family == OpFamily::kRecv && abs.peer == kAny &&
                                   op_traits(ev.op).nonblocking && src != kAbsent &&
                                   !is_sentinel(src);
      if (posted_wildcard) abs.peer = src;
      c.symbols.push_back(walked.intern(relative(abs, rank, trace.comms)));
      if (absolute) c.absolute_symbols.push_back(walked.intern(abs));
      c.contexts.push_back(context_id(ev.site));
      c.loops.events.push_back(places.events[i]);
      Message m;
      m.comm = abs.comm;
      m.tag = abs.tag;
      m.peer = abs.peer;
      fill_details(ev, m);
      if (posted_wildcard) m.wildcard = true;
      if (m.tag == kAny && mtag != kAbsent && !is_sentinel(mtag)) m.tag = mtag;
      if (abs.family == OpFamily::kSend) {
        m.kind = Message::Kind::kSend;
      } else if (abs.family == OpFamily::kRecv || abs.family == OpFamily::kMrecv) {
        m.kind = Message::Kind::kRecv;
      } else if (abs.family == OpFamily::kSendrecv) {
        static const FieldId rpeer_f = *FieldTable::find("rpeer");
        static const FieldId rtag_f = FieldTable::intern("rtag", FieldKind::kScalar);
        m.kind = Message::Kind::kSendrecv;
        m.rpeer = ev.get(rpeer_f);
        m.rtag = ev.get(rtag_f);
        // MPI_Sendrecv_replace and calls recorded without a receive tag
        // use the send's.
        if (m.rtag == kAbsent) m.rtag = m.tag;
        if (m.rpeer == kAbsent) m.rpeer = m.peer;
      }
      const bool joins = m.kind == Message::Kind::kRecv && m.wildcard;
      if (!joins || ev.site != run_site || c.events.size() == run_begin ||
          c.events.back().tag != m.tag || c.events.back().comm != m.comm ||
          c.events.back().blocking != m.blocking) {
        close_run();
        run_begin = c.events.size();
        run_site = joins ? ev.site : 0;
      }
      c.events.push_back(m);
      if (!joins) run_begin = c.events.size();
    }
    close_run();
  };
  // Ranks the folded trace cannot tell apart are walked once, through the
  // first of them, when their symbols are relative (absolute peers differ
  // from rank to rank). A class whose peers fall outside a communicator
  // group is walked rank by rank.
  const auto world = static_cast<std::size_t>(trace.world_size);
  std::vector<uint32_t> class_of = detail::rank_classes(trace);
  std::vector<std::vector<int32_t>> members;
  for (std::size_t r = 0; r < world; ++r) {
    if (class_of[r] >= members.size()) members.resize(class_of[r] + 1);
    members[class_of[r]].push_back(static_cast<int32_t>(r));
  }
  std::vector<detail::ClassEvents> classes;
  for (std::vector<int32_t>& ranks : members) {
    detail::ClassEvents c;
    walk(ranks.front(), c);
    c.absolute = ranks.size() == 1 || !to_offsets(c.events, ranks.front(), trace.comms);
    if (c.absolute && ranks.size() > 1) {
      for (int32_t r : ranks) {
        detail::ClassEvents one;
        one.ranks = {r};
        one.absolute = true;
        if (r == ranks.front()) {
          one.events = c.events;
          one.symbols = c.symbols;
          one.absolute_symbols = c.absolute_symbols;
          one.contexts = c.contexts;
          one.loops = c.loops;
        } else {
          walk(r, one);
        }
        classes.push_back(std::move(one));
      }
      continue;
    }
    c.ranks = std::move(ranks);
    classes.push_back(std::move(c));
  }
  // A rank walked alone is its own class: its absolute symbols are its
  // string (a peer outside its group has no exact relative name).
  for (detail::ClassEvents& c : classes) {
    if (c.absolute && absolute) c.symbols = std::move(c.absolute_symbols);
    c.absolute_symbols = {};
  }
  std::sort(classes.begin(), classes.end(),
            [](const auto& a, const auto& b) { return a.ranks.front() < b.ranks.front(); });
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (int32_t r : classes[k].ranks)
      class_of[static_cast<std::size_t>(r)] = static_cast<uint32_t>(k);
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
    AbsoluteNames names(classes, class_of, by_class, result, trace.comms);
    detail::assemble_classes(classes, class_of, trace.comms, context_names,
                             options.context == ContextMode::kNone, result,
                             [&](int32_t rank, Symbol s) { return names.symbol(rank, s); });
    names.regroup(classes, class_of, result);
  } else {
    detail::assemble_classes(classes, class_of, trace.comms, context_names,
                             options.context == ContextMode::kNone, result);
  }
  name_collectives(result, world);
  const auto topologies = hoods.add_edges(result, trace.comms, world, [&](int32_t r) {
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
