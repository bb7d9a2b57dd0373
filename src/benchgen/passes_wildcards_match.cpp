// Messages and matching of the wildcard-resolution walk: where a send
// goes, which posted receive or probe takes it, the source and tag each
// wildcard gets, and the walk's results (a deadlock report or the
// rewritten nodes). See passes_wildcards.cpp.
#include <algorithm>
#include <sstream>

#include "passes_wildcards.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold::passes::wild {

Slot Resolver::slot_for(int32_t r, const Event& ev, FieldId pf, FieldId tf, int32_t me,
                        int32_t size) {
  RankState& s = st(r);
  auto it = vals_.find(s.node);
  if (it == vals_.end()) return {};
  auto& v = it->second.vals[r];
  const int64_t peer = ev.get(pf), tag = ev.get(tf);
  v.emplace_back(relative(peer, me, size), tag);
  Slot sl{s.node, r, v.size() - 1, me, size, peer == kAny, tag == kAny};
  if (!sl.any_src && !sl.any_tag) return {};
  return sl;
}

// The starts of one persistent wildcard receive share its node's one
// source: they must all match the same sender and tag.
void Resolver::check_persistent(const Req& q, const Msg& m) {
  const auto key = std::tuple{q.slot.node, q.slot.rank, q.slot.exec};
  const std::pair<int64_t, int64_t> got{q.slot.any_src ? m.from_in : kAbsent,
                                        q.slot.any_tag ? m.tag : kAbsent};
  auto [it, fresh] = persistent_.emplace(key, got);
  if (fresh || it->second == got) return;
  auto text = [](const std::pair<int64_t, int64_t>& m) {
    std::string s = m.first != kAbsent ? "source " + format_value(m.first) : "";
    if (m.second != kAbsent) s += (s.empty() ? "tag " : " tag ") + format_value(m.second);
    return s;
  };
  throw PassError(node_label(t_, q.slot.node) + " on " + t_.location_name(q.slot.rank) +
                  ": its starts matched " + text(it->second) + " and " + text(got) +
                  "; one persistent receive cannot name both (keep the wildcards)");
}

void Resolver::matched(Req& q, const Msg& m) {
  q.done = true;
  if (q.slot.valid()) {
    if (q.from_init) check_persistent(q, m);
    resolve(q.slot, m.from_in, m.tag);
    ++(q.recorded ? report_.recorded : report_.chosen);
  }
  if (m.sync_req >= 0) {
    Req& s = reqs_[static_cast<std::size_t>(m.sync_req)];
    s.done = true;
    wake(s.owner);
  }
  wake(q.owner);
}

void Resolver::deliver(int32_t to, Msg m) {
  auto& posted = posted_[static_cast<std::size_t>(to)];
  for (auto it = posted.begin(); it != posted.end(); ++it) {
    Req& q = reqs_[static_cast<std::size_t>(*it)];
    if (!accepts(q, m)) continue;
    posted.erase(it);
    matched(q, m);
    return;
  }
  inbox_[static_cast<std::size_t>(to)].push_back(m);
  wake_rank(to);  // a probe of any of its threads may take it
}

void Resolver::post(int32_t r, int64_t qi) {
  Req& q = reqs_[static_cast<std::size_t>(qi)];
  auto& box = inbox_[static_cast<std::size_t>(rank_of(r))];
  for (auto it = box.begin(); it != box.end(); ++it) {
    if (!accepts(q, *it)) continue;
    const Msg m = *it;
    box.erase(it);
    matched(q, m);
    return;
  }
  posted_[static_cast<std::size_t>(rank_of(r))].push_back(qi);
}

// A receive's arguments, the recorded match applied where it has one.
Req Resolver::recv_req(int32_t r, const Event& ev, FieldId pf, FieldId tf, const Match* rec) {
  Req q;
  q.owner = r;
  q.recv = true;
  q.comm = ev.get(f_.comm) == kAbsent ? CommTable::kWorld : ev.get(f_.comm);
  q.group = group(q.comm, r);
  const int32_t me = rank_in(q.comm, r);
  const int32_t size = q.group ? static_cast<int32_t>(q.group->members.size()) : 0;
  q.slot = slot_for(r, ev, pf, tf, me, size);
  int64_t from = ev.get(pf), tag = ev.get(tf);
  if (rec && q.slot.valid()) {
    if (from == kAny && rec->src != kAbsent) from = rec->src, q.recorded = true;
    if (tag == kAny && rec->tag != kAbsent) tag = rec->tag, q.recorded = true;
  }
  q.tag = tag;
  if (from == kNull) {
    q.done = true;
  } else if (from != kAny) {
    if (!q.group || from < 0 || from >= static_cast<int64_t>(q.group->members.size()))
      throw PassError(t_.location_name(r) + " at " + node_label(t_, st(r).node) + ": source " +
                      std::to_string(from) + " is not in communicator " + std::to_string(q.comm));
    q.from = q.group->members[static_cast<std::size_t>(from)];
  }
  return q;
}

void Resolver::send(int32_t r, const Event& ev, bool sync, int64_t* req_out) {
  const int64_t comm = ev.get(f_.comm) == kAbsent ? CommTable::kWorld : ev.get(f_.comm);
  const int64_t peer = ev.get(f_.peer);
  int64_t sreq = -1;
  if (req_out || sync) {
    Req q;
    q.owner = r;
    q.done = !sync || peer == kNull;
    sreq = new_req(q);
    if (req_out) *req_out = sreq;
  }
  if (peer == kNull || is_sentinel(peer)) return;
  const CommGroup* g = group(comm, r);
  if (!g || peer < 0 || peer >= static_cast<int64_t>(g->members.size()))
    throw PassError(t_.location_name(r) + " at " + node_label(t_, st(r).node) + ": destination " +
                    std::to_string(peer) + " is not in communicator " + std::to_string(comm));
  Msg m;
  m.from = rank_of(r);
  m.from_in = rank_in(comm, r);
  m.comm = comm;
  m.tag = ev.get(f_.tag);
  m.sync_req = sync ? sreq : -1;
  m.node = st(r).node;
  deliver(g->members[static_cast<std::size_t>(peer)], m);
}

// Blocking probes wait for a message in the inbox; consuming ones
// (MPI_Mprobe) take it.
bool Resolver::try_probe(int32_t r) {
  RankState& s = st(r);
  Req& q = reqs_[static_cast<std::size_t>(s.probe)];
  auto& box = inbox_[static_cast<std::size_t>(rank_of(r))];
  for (auto it = box.begin(); it != box.end(); ++it) {
    if (!accepts(q, *it)) continue;
    const Msg m = *it;
    if (s.probe_consumes) {
      box.erase(it);
      matched(q, m);
    } else if (q.slot.valid()) {
      // A probe leaves the message (and a synchronous sender) waiting.
      resolve(q.slot, m.from_in, m.tag);
      ++(q.recorded ? report_.recorded : report_.chosen);
    }
    succeeded_probe(r, s.node, m);
    return true;
  }
  return false;
}

void Resolver::succeeded_probe(int32_t r, std::size_t node, const Msg& m) {
  auto key = std::pair{r, node};
  last_probe_[key] = {m.from_in, m.tag};
  auto it = failed_probes_.find(key);
  if (it == failed_probes_.end()) return;
  for (const Slot& sl : it->second) resolve(sl, m.from_in, m.tag);
  failed_probes_.erase(it);
}

void Resolver::finish_probes() {
  for (auto& [key, slots] : failed_probes_) {
    auto last = last_probe_.find(key);
    for (const Slot& sl : slots) {
      if (last != last_probe_.end())
        resolve(sl, static_cast<int32_t>(last->second.first), last->second.second);
      else
        resolve_self(sl);
    }
  }
}

void Resolver::resolve_self(const Slot& sl) {
  auto& v = vals_[sl.node].vals[sl.rank][sl.exec];
  if (sl.any_src) v.first = relative(sl.me, sl.me, sl.size);
  // A tag nobody matched: keep the wildcard's meaning as far as a named
  // tag can (0 is valid for every MPI).
  if (sl.any_tag) v.second = 0;
}

BlockedRank Resolver::describe(int32_t r) {
  RankState& s = st(r);
  BlockedRank b{rank_of(r), s.node, OpTable::name(s.ev.op), ""};
  auto recv_text = [&](const Req& q) {
    std::string w = "a message from ";
    w += q.from < 0 ? "any rank" : "rank " + std::to_string(q.from);
    w += " with tag " + (q.tag == kAny ? std::string("any") : std::to_string(q.tag));
    return w + " on communicator " + std::to_string(q.comm);
  };
  switch (s.block) {
    case Block::kReqs: {
      std::string w;
      for (int64_t qi : s.wait) {
        const Req& q = reqs_[static_cast<std::size_t>(qi)];
        if (q.done) continue;
        if (!w.empty()) w += "; ";
        w += q.recv ? recv_text(q) : "its send to be received";
      }
      b.waiting = w;
      break;
    }
    case Block::kProbe:
      b.waiting = recv_text(reqs_[static_cast<std::size_t>(s.probe)]) + " to probe";
      break;
    case Block::kColl:
      b.waiting = "the other members of communicator " + std::to_string(s.coll.comm) +
                  " to reach collective #" + std::to_string(s.coll.seq);
      break;
    default:
      b.waiting = "nothing (unfinished)";
  }
  return b;
}

void Resolver::throw_deadlock(const std::vector<int32_t>& where,
                              const std::vector<BlockedRank>& blocked) {
  std::ostringstream os;
  os << "deadlock: the traversal blocks with " << blocked.size() << " of " << ranks_.size()
     << (t_.threads > 1 ? " threads (rank, thread)" : " ranks") << " unfinished";
  for (std::size_t i = 0; i < blocked.size(); ++i)
    os << "\n  " << t_.location_name(where[i]) << " at " << node_label(t_, blocked[i].node)
       << " waits for " << blocked[i].waiting;
  std::size_t shown = 0;
  for (std::size_t to = 0; to < inbox_.size(); ++to)
    for (const Msg& m : inbox_[to]) {
      if (shown++ == 8) break;
      os << "\n  unreceived: rank " << m.from << " -> rank " << to << " (" << node_label(t_, m.node)
         << ", tag " << m.tag << ", communicator " << m.comm << ")";
    }
  os << "\n  (the wildcard sources this trace records or the traversal chose lead here: "
        "the program can deadlock)";
  throw DeadlockError(os.str(), blocked);
}

// Writes the resolved values back into the nodes' elastic fields.
void Resolver::rewrite() {
  for (auto& [ni, nv] : vals_) {
    Node& node = t_.nodes[ni];
    for (FieldId fid : {nv.pf, nv.tf}) {
      Elastic* el = node.field(fid);
      if (!el) continue;
      // Ranks with the same values share one entry.
      std::map<std::vector<int64_t>, std::vector<int32_t>> groups;
      node.ranks.for_each([&](int32_t r) {
        std::vector<int64_t> seq;
        if (auto it = nv.vals.find(r); it != nv.vals.end())
          for (auto& pt : it->second) seq.push_back(fid == nv.pf ? pt.first : pt.second);
        else if (!el->for_rank(r))
          return;
        groups[std::move(seq)].push_back(r);
      });
      Elastic out;
      for (auto& [seq, ranks] : groups) {
        ValueSeq values;
        for (int64_t v : seq) values.push_back(v);
        out.entries().push_back({std::move(values), Ranklist::from_ranks(std::move(ranks))});
      }
      out.sort_entries();
      *el = std::move(out);
    }
  }
  const PassFields& f = f_;
  for (Node& n : t_.nodes)
    std::erase_if(n.fields, [&](const auto& p) {
      return p.first == f.src || p.first == f.mtag || p.first == f.srcs || p.first == f.mtags;
    });
}

}  // namespace tracefold::passes::wild
