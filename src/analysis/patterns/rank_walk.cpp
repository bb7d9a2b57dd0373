// One rank's events as the per-process step reads them (RankWalker):
// symbols, contexts, messages and loop places, and the classes of alike
// ranks walked once.
#include <algorithm>
#include <optional>
#include <type_traits>

#include "tracefold/expand.hpp"
#include "tracefold/timeline.hpp"
#include "walk_internal.hpp"

namespace tracefold::patterns::detail {

namespace {

// A class's events with peers as offsets from the rank's position in the
// communicator (ClassEvents); false when a peer of `rank` does
// not lie in a group of its communicator, so the class cannot share them.
bool to_offsets(std::vector<Message>& events, int32_t rank, const CommTable& comms) {
  auto offset = [&](int64_t comm, int64_t& peer) {
    if (is_sentinel(peer) || peer == kAbsent) return true;
    const std::optional<Place> at = place_in(comms, comm, rank);
    const std::optional<int64_t> offset = at ? stored_offset(*at, peer) : std::nullopt;
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

}  // namespace

RankWalker::RankWalker(const Trace& trace, const Options& options,
                       const std::function<std::string(SiteId)>& context_of)
    : trace_(trace),
      options_(options),
      context_of_(context_of),
      absolute_(options.peers == PeerMode::kAbsolute) {}

// Contexts are named once per call site.
uint32_t RankWalker::context_id(SiteId site) {
  if (options_.context == ContextMode::kNone) return 0;
  auto it = site_context_.find(site);
  if (it != site_context_.end()) return it->second;
  const std::string name = context_of_(site);
  auto [cit, fresh] = context_ids_.try_emplace(name, static_cast<uint32_t>(context_names.size()));
  if (fresh) context_names.push_back(name);
  site_context_.emplace(site, cit->second);
  return cit->second;
}

// One rank's events: its symbols, their contexts and messages (peers as
// ranks in the communicator: the assembly matches by ranks, whatever the
// listing shows).
void RankWalker::walk(int32_t rank, ClassEvents& c) {
  // A posted wildcard receive learns its source only at its completion
  // (lu's halo: MPI_Irecv from MPI_ANY_SOURCE, completed by MPI_Wait):
  // core's request matching reads it there, so the receive's symbol and
  // message name the source as a blocking wildcard's do.
  std::vector<Event> evs;
  LoopPlaces places;
  {
    RankIterator it(trace_, rank);
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
    hoods.note(ev, rank, trace_.comms);
    const std::optional<SymbolKey> found = symbol_of(ev, rank, trace_.comms, PeerMode::kAbsolute);
    if (!found) continue;
    SymbolKey abs = *found;
    const int64_t src = completed.src[i], mtag = completed.mtag[i];
    const bool posted_wildcard = abs.family == OpFamily::kRecv && abs.peer == kAny &&
                                 op_traits(ev.op).nonblocking && src != kAbsent &&
                                 !is_sentinel(src);
    if (posted_wildcard) abs.peer = src;
    c.symbols.push_back(walked.intern(relative(abs, rank, trace_.comms)));
    if (absolute_) c.absolute_symbols.push_back(walked.intern(abs));
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
}

std::vector<ClassEvents> RankWalker::classes(std::vector<uint32_t>& class_of) {
  // Ranks the folded trace cannot tell apart are walked once, through the
  // first of them, when their symbols are relative (absolute peers differ
  // from rank to rank). A class whose peers fall outside a communicator
  // group is walked rank by rank.
  const auto world = static_cast<std::size_t>(trace_.world_size);
  class_of = rank_classes(trace_);
  std::vector<std::vector<int32_t>> members;
  for (std::size_t r = 0; r < world; ++r) {
    if (class_of[r] >= members.size()) members.resize(class_of[r] + 1);
    members[class_of[r]].push_back(static_cast<int32_t>(r));
  }
  std::vector<ClassEvents> classes;
  for (std::vector<int32_t>& ranks : members) {
    ClassEvents c;
    walk(ranks.front(), c);
    c.absolute = ranks.size() == 1 || !to_offsets(c.events, ranks.front(), trace_.comms);
    if (c.absolute && ranks.size() > 1) {
      for (int32_t r : ranks) {
        ClassEvents one;
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
  for (ClassEvents& c : classes) {
    if (c.absolute && absolute_) c.symbols = std::move(c.absolute_symbols);
    c.absolute_symbols = {};
  }
  std::sort(classes.begin(), classes.end(),
            [](const auto& a, const auto& b) { return a.ranks.front() < b.ranks.front(); });
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (int32_t r : classes[k].ranks)
      class_of[static_cast<std::size_t>(r)] = static_cast<uint32_t>(k);
  return classes;
}

}  // namespace tracefold::patterns::detail
