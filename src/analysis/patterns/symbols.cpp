#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "tracefold/expand.hpp"
#include "tracefold/patterns.hpp"

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
  const int32_t me = comms.rank_in(k.comm, rank);
  const CommGroup* g = comms.group_of(k.comm, rank);
  if (me < 0 || !g || g->members.size() == 0) return k;
  const auto size = static_cast<int64_t>(g->members.size());
  int64_t d = ((k.peer - me) % size + size) % size;
  if (d > size / 2) d -= size;
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

// Counts the events in one global pattern, in several and in none. An event
// lies in the global pattern of the per-process pattern whose occurrence
// covers it, or, outside patterns, in the one its messages reach; the
// occurrences of two patterns may overlap, and when those patterns ended in
// different global patterns the event is in several.
void cover_events(Result& result, const std::vector<RankEvents>& all,
                  const std::vector<std::vector<int32_t>>& global_of,
                  const std::vector<std::vector<Symbol>>& symbols,
                  const std::vector<std::vector<uint32_t>>& contexts,
                  const std::vector<std::size_t>& group_of, const std::vector<std::string>& names,
                  bool whole_rank) {
  std::map<std::pair<int32_t, int32_t>, int32_t> global_of_pattern;
  for (std::size_t g = 0; g < result.global.size(); ++g)
    for (const auto& key : result.global[g].patterns)
      global_of_pattern[key] = static_cast<int32_t>(g);
  // (context, symbol) -> rank -> events in no global pattern
  std::map<std::pair<std::string, Symbol>, std::map<int32_t, std::size_t>> singles;
  Result::Cover& c = result.cover;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const std::size_t n = all[r].events.size();
    c.events += n;
    std::vector<int32_t> first(global_of[r]);
    std::vector<bool> several(n, false);
    const RankPatterns& g = result.groups[group_of[r]];
    for (std::size_t p = 0; p < g.patterns.size(); ++p) {
      auto it = global_of_pattern.find({all[r].rank, static_cast<int32_t>(p)});
      if (it == global_of_pattern.end()) continue;
      const ProcessPattern& pat = g.patterns[p].pattern;
      for (std::size_t at : pat.positions)
        for (std::size_t k = at; k < at + pat.symbols.size() && k < n; ++k) {
          if (first[k] < 0) first[k] = it->second;
          if (first[k] != it->second) several[k] = true;
        }
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (several[k]) {
        ++c.in_several;
      } else if (first[k] >= 0) {
        ++c.in_one;
      } else {
        const std::string ctx = whole_rank ? "(whole rank)" : names[contexts[r][k]];
        ++singles[{ctx, symbols[r][k]}][all[r].rank];
      }
    }
  }
  for (const auto& [key, per_rank] : singles) {
    std::map<std::size_t, std::vector<int32_t>> by_count;
    for (const auto& [rank, count] : per_rank) by_count[count].push_back(rank);
    for (auto& [count, ranks] : by_count)
      c.singles.push_back({Ranklist::from_ranks(std::move(ranks)), key.first, key.second, count});
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
  // Ranks with equal symbol and context strings share one result.
  std::map<std::pair<std::vector<Symbol>, std::vector<uint32_t>>, std::size_t> seen;
  std::vector<RankEvents> all(static_cast<std::size_t>(trace.world_size));
  std::vector<std::size_t> group_of(all.size());
  // Each rank's symbols and contexts, for the singles of the coverage.
  std::vector<std::vector<Symbol>> rank_symbols(all.size());
  std::vector<std::vector<uint32_t>> rank_contexts(all.size());
  for (int32_t rank = 0; rank < trace.world_size; ++rank) {
    std::vector<Symbol> symbols;
    std::vector<uint32_t> contexts;
    RankEvents& mine = all[static_cast<std::size_t>(rank)];
    mine.rank = rank;
    RankIterator it(trace, rank);
    Event ev;
    while (it.next(ev)) {
      // The assembly matches by ranks, whatever the listing shows.
      const std::optional<SymbolKey> found = symbol_of(ev, rank, trace.comms, PeerMode::kAbsolute);
      if (!found) continue;
      const SymbolKey& abs = *found;
      symbols.push_back(result.alphabet.intern(
          options.peers == PeerMode::kRelative ? relative(abs, rank, trace.comms) : abs));
      contexts.push_back(context_id(ev.site));
      Message m;
      m.comm = abs.comm;
      m.tag = abs.tag;
      m.peer = abs.peer;
      fill_details(ev, m);
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
      mine.events.push_back(m);
    }
    auto [sit, fresh] = seen.try_emplace({symbols, contexts}, result.groups.size());
    group_of[static_cast<std::size_t>(rank)] = sit->second;
    rank_symbols[static_cast<std::size_t>(rank)] = symbols;
    rank_contexts[static_cast<std::size_t>(rank)] = contexts;
    if (!fresh) {
      result.groups[sit->second].ranks.insert(rank);
      continue;
    }
    RankPatterns g;
    g.ranks = Ranklist::single(rank);
    g.events = symbols.size();
    for (ProcessPattern& p : process_patterns(symbols, contexts)) {
      const std::size_t first = p.positions.front();
      std::string ctx = options.context == ContextMode::kNone ? std::string("(whole rank)")
                                                              : context_names[contexts[first]];
      g.patterns.push_back({std::move(p), std::move(ctx)});
    }
    result.groups.push_back(std::move(g));
  }
  for (std::size_t r = 0; r < all.size(); ++r) {
    const RankPatterns& g = result.groups[group_of[r]];
    all[r].pattern_of.assign(all[r].events.size(), -1);
    for (std::size_t p = 0; p < g.patterns.size(); ++p) {
      const ProcessPattern& pat = g.patterns[p].pattern;
      all[r].occurrences.push_back(pat.positions.size());
      for (std::size_t at : pat.positions)
        for (std::size_t k = at; k < at + pat.symbols.size(); ++k)
          if (all[r].pattern_of[k] < 0) all[r].pattern_of[k] = static_cast<int32_t>(p);
    }
  }
  std::vector<std::vector<int32_t>> global_of;
  result.global = assemble(all, &global_of);
  for (GlobalPattern& gp : result.global) gp.shape = classify(gp, trace.world_size);
  cover_events(result, all, global_of, rank_symbols, rank_contexts, group_of, context_names,
               options.context == ContextMode::kNone);
  return result;
}

}  // namespace tracefold::patterns
