// Wildcard resolution with deadlock detection (seed 000, 4.4.4).
//
// All ranks are walked together, each with its own RankIterator, in the
// order a run could take: a rank runs until it blocks, and a blocked rank
// is woken when what it waits for may have happened (a message delivered, a
// request completed, a collective complete). Instead of the seed's lists of
// traversal transfers, a deadlock is simply the state in which no rank can
// run and some have not finished: every such rank is reported. The walk
// costs one step per event plus one per wake-up.
//
// With threads, each thread's stream is walked as one more such walker (a
// location): MPI matches a message to a rank, whichever of its threads
// posted the receive, so inboxes and posted receives are the rank's, while
// requests and the recorded matches are the thread's.
#include <algorithm>
#include <optional>

#include "passes_wildcards.hpp"
#include "tracefold/trace_query.hpp"
#include "tracefold/wildcards.hpp"

namespace tracefold {

namespace passes::wild {

bool is_receive_like(OpFamily f) {
  return f == OpFamily::kRecv || f == OpFamily::kRecvInit || f == OpFamily::kProbe ||
         f == OpFamily::kMprobe || f == OpFamily::kSendrecv;
}

// The source/tag fields a receive-like node names its sender by.
std::pair<FieldId, FieldId> source_fields(OpFamily f) {
  const PassFields& pf = pass_fields();
  return f == OpFamily::kSendrecv ? std::pair{pf.rpeer, pf.rtag} : std::pair{pf.peer, pf.tag};
}

namespace {

bool elastic_has(const Elastic* el, int64_t v) {
  if (!el) return false;
  for (const ElasticEntry& e : el->entries())
    for (const ValueSeq::Run& r : e.values.runs())
      if (std::find(r.pattern.begin(), r.pattern.end(), v) != r.pattern.end()) return true;
  return false;
}

}  // namespace

bool node_is_wild(const Node& n) {
  const OpTraits& t = op_traits(n.key.op);
  if (!is_receive_like(t.family)) return false;
  auto [pf, tf] = source_fields(t.family);
  return elastic_has(n.field(pf), kAny) || elastic_has(n.field(tf), kAny);
}

WildcardReport Resolver::run() {
  for (std::size_t i = 0; i < t_.nodes.size(); ++i)
    if (node_is_wild(t_.nodes[i])) {
      auto [pf, tf] = source_fields(op_traits(t_.nodes[i].key.op).family);
      vals_[i] = NodeVals{pf, tf, {}};
    }
  if (vals_.empty()) return {};
  const int32_t n = t_.world_size * std::max(t_.threads, 1);
  ranks_.reserve(static_cast<std::size_t>(n));
  inbox_.resize(static_cast<std::size_t>(p_));
  posted_.resize(static_cast<std::size_t>(p_));
  coll_seq_.resize(static_cast<std::size_t>(p_));
  for (int32_t r = 0; r < n; ++r) {
    ranks_.emplace_back(t_, r);
    RankIterator pre(t_, r);
    ranks_.back().recorded = scan_recorded_matches([&](Event& e) { return pre.next(e); });
    wake(r);
  }
  while (!ready_.empty()) {
    const int32_t r = ready_.front();
    ready_.pop_front();
    ranks_[static_cast<std::size_t>(r)].queued = false;
    step(r);
  }
  std::vector<BlockedRank> blocked;
  std::vector<int32_t> where;
  for (int32_t r = 0; r < n; ++r)
    if (!ranks_[static_cast<std::size_t>(r)].finished) {
      blocked.push_back(describe(r));
      where.push_back(r);
    }
  if (!blocked.empty()) throw_deadlock(where, blocked);
  finish_probes();
  rewrite();
  report_.nodes = vals_.size();
  return report_;
}

// Runs rank r until it blocks or ends.
void Resolver::step(int32_t r) {
  RankState& s = st(r);
  while (!s.finished) {
    if (s.block != Block::kNone && !unblocked(r)) return;
    s.block = Block::kNone;
    if (!s.it.next(s.ev)) {
      s.finished = true;
      return;
    }
    s.node = static_cast<std::size_t>(s.it.current_node() - t_.nodes.data());
    process(r);
  }
}

bool Resolver::unblocked(int32_t r) {
  RankState& s = st(r);
  switch (s.block) {
    case Block::kReqs:
      return std::all_of(s.wait.begin(), s.wait.end(),
                         [&](int64_t q) { return reqs_[static_cast<std::size_t>(q)].done; });
    case Block::kProbe:
      return try_probe(r);
    case Block::kColl:
      return coll_[s.coll].first == coll_[s.coll].second;
    default:
      return true;
  }
}

void Resolver::collective(int32_t r, const Event& ev, bool nonblocking) {
  const int64_t comm = ev.get(f_.comm) == kAbsent ? CommTable::kWorld : ev.get(f_.comm);
  const CommGroup* g = group(comm, r);
  if (!g || g->members.empty()) return;
  RankState& s = st(r);
  const int32_t first = g->members.front();
  const CollKey key{comm, first, coll_seq_[static_cast<std::size_t>(rank_of(r))][{comm, first}]++};
  auto& [arrived, need] = coll_[key];
  need = static_cast<int64_t>(g->members.size());
  if (++arrived == need)
    for (int32_t m : g->members) wake_rank(m);
  if (nonblocking) return;
  s.coll = key;
  s.block = Block::kColl;
}

std::vector<int64_t> Resolver::linked(int32_t r, const Event& ev) {
  const FieldValue* links = ev.find(f_.links);
  std::vector<int64_t> out;
  if (!links) return out;
  RankState& s = st(r);
  // A link into another thread's requests counts back from where that
  // thread stood when the call completed them, which the walk, running
  // each thread as far as it can, does not know.
  const std::optional<FieldId> lthreads = FieldTable::find("lthreads");
  if (const FieldValue* lt = lthreads ? ev.find(*lthreads) : nullptr)
    for (int64_t m : lt->list)
      if (!is_sentinel(m))
        throw PassError(t_.location_name(r) + " at " + node_label(t_, s.node) +
                        ": completes requests thread " + std::to_string(m) +
                        " made; the wildcard traversal follows each thread's own requests only "
                        "(keep the wildcards)");
  std::map<uint64_t, uint32_t> taken;  // k-th link to one Startall: its k-th request
  for (int64_t d : links->list) {
    const uint64_t n = linked_number(d, s.numbers.size());
    if (n == 0) {
      out.push_back(-1);
      continue;
    }
    auto [first, count] = s.numbers[n - 1];
    uint32_t& k = taken[n];
    out.push_back(first < 0 ? -1 : first + std::min<int64_t>(k, count ? count - 1 : 0));
    ++k;
  }
  return out;
}

void Resolver::complete(int32_t r, const Event& ev, const OpTraits& t) {
  const std::vector<int64_t> reqs = linked(r, ev);
  std::vector<int64_t> need;
  auto all = [&] {
    for (int64_t q : reqs)
      if (q >= 0) need.push_back(q);
  };
  auto at = [&](int64_t i) {
    if (i >= 0 && static_cast<std::size_t>(i) < reqs.size() &&
        reqs[static_cast<std::size_t>(i)] >= 0)
      need.push_back(reqs[static_cast<std::size_t>(i)]);
  };
  const int64_t flag = ev.get(f_.flag);
  switch (t.variant) {
    case OpVariant::kWait:
    case OpVariant::kWaitall:
      all();
      break;
    case OpVariant::kTest:
    case OpVariant::kTestall:
      if (flag != 0) all();
      break;
    case OpVariant::kWaitany:
    case OpVariant::kTestany:
      if (flag != 0) at(ev.get(f_.index));
      break;
    case OpVariant::kWaitsome:
    case OpVariant::kTestsome:
      if (const FieldValue* ix = ev.find(f_.indices))
        for (int64_t i : ix->list) at(i);
      break;
    default:
      break;
  }
  // What the run saw complete has completed: wait for it.
  if (!need.empty()) block_on(r, std::move(need));
}

void Resolver::start(int32_t r, const Event& ev) {
  const std::vector<int64_t> inits = linked(r, ev);
  int64_t first = -1;
  uint32_t count = 0;
  for (int64_t ii : inits) {
    // A start links to the previous start of the same request, which
    // leads back to the init.
    if (ii >= 0 && !reqs_[static_cast<std::size_t>(ii)].init)
      ii = reqs_[static_cast<std::size_t>(ii)].origin;
    if (ii < 0 || !reqs_[static_cast<std::size_t>(ii)].init) continue;
    Req inst = reqs_[static_cast<std::size_t>(ii)];
    inst.init = false;
    inst.origin = ii;
    inst.from_init = !inst.init_send;
    inst.done = false;
    ++reqs_[static_cast<std::size_t>(ii)].started;
    const int64_t qi = new_req(inst);
    if (first < 0) first = qi;
    ++count;
    Req& q = reqs_[static_cast<std::size_t>(qi)];
    if (q.init_send) {
      q.done = !q.sync;
      if (q.to >= 0) {
        Msg m{rank_of(r), q.to_in, q.comm, q.tag, q.sync ? qi : -1, st(r).node};
        deliver(q.to, m);
      } else {
        q.done = true;
      }
    } else if (q.from == -2) {
      q.done = true;  // MPI_PROC_NULL
    } else {
      // Starts of one wildcard init share its slot; a recorded match
      // for this start narrows what it accepts.
      auto it = st(r).recorded.by_number.find(st(r).numbers.size() + 1);
      if (q.slot.valid() && inits.size() == 1 && it != st(r).recorded.by_number.end()) {
        if (q.slot.any_src && it->second.src != kAbsent && q.group)
          q.from = q.group->members[static_cast<std::size_t>(it->second.src)];
        if (q.slot.any_tag && it->second.tag != kAbsent) q.tag = it->second.tag;
        q.recorded = true;
      }
      post(r, qi);
    }
  }
  number(r, first, count);
}

void Resolver::process(int32_t r) {
  RankState& s = st(r);
  const Event& ev = s.ev;
  const OpTraits& t = op_traits(ev.op);
  const bool makes = OpTable::makes_request(ev.op);
  const std::size_t numbered = s.numbers.size();
  switch (t.family) {
    case OpFamily::kSend: {
      int64_t q = -1;
      send(r, ev, t.variant == OpVariant::kSynchronous, t.nonblocking ? &q : nullptr);
      if (t.nonblocking)
        number(r, q, 1);
      else if (t.variant == OpVariant::kSynchronous)
        block_on(r, {static_cast<int64_t>(reqs_.size() - 1)});
      break;
    }
    case OpFamily::kRecv: {
      const Match* rec = nullptr;
      const Match own{ev.get(f_.src), ev.get(f_.mtag)};
      if (t.nonblocking) {
        auto it = s.recorded.by_number.find(s.numbers.size() + 1);
        if (it != s.recorded.by_number.end()) rec = &it->second;
      } else {
        rec = &own;
      }
      const int64_t qi = new_req(recv_req(r, ev, f_.peer, f_.tag, rec));
      if (!reqs_[static_cast<std::size_t>(qi)].done) post(r, qi);
      if (t.nonblocking)
        number(r, qi, 1);
      else
        block_on(r, {qi});
      break;
    }
    case OpFamily::kSendrecv: {
      send(r, ev, false, nullptr);
      const Match own{ev.get(f_.src), ev.get(f_.mtag)};
      const int64_t qi = new_req(recv_req(r, ev, f_.rpeer, f_.rtag, &own));
      if (!reqs_[static_cast<std::size_t>(qi)].done) post(r, qi);
      block_on(r, {qi});
      break;
    }
    case OpFamily::kProbe:
    case OpFamily::kMprobe: {
      const Match own{ev.get(f_.src), ev.get(f_.mtag)};
      Req q = recv_req(r, ev, f_.peer, f_.tag, &own);
      if (q.done) break;  // MPI_PROC_NULL
      if (t.nonblocking && ev.get(f_.flag) == 0) {
        if (q.slot.valid()) failed_probes_[{r, s.node}].push_back(q.slot);
        break;
      }
      s.probe = new_req(q);
      s.probe_consumes = t.family == OpFamily::kMprobe;
      s.block = Block::kProbe;
      break;
    }
    case OpFamily::kSendInit: {
      Req q;
      q.owner = r;
      q.init = q.init_send = true;
      q.sync = t.variant == OpVariant::kSynchronous;
      q.comm = ev.get(f_.comm) == kAbsent ? CommTable::kWorld : ev.get(f_.comm);
      q.tag = ev.get(f_.tag);
      const CommGroup* g = group(q.comm, r);
      const int64_t peer = ev.get(f_.peer);
      if (g && !is_sentinel(peer) && peer >= 0 && peer < static_cast<int64_t>(g->members.size())) {
        q.to = g->members[static_cast<std::size_t>(peer)];
        q.to_in = rank_in(q.comm, r);
      }
      number(r, new_req(q), 1);
      break;
    }
    case OpFamily::kRecvInit: {
      Req q = recv_req(r, ev, f_.peer, f_.tag, nullptr);
      q.init = true;
      if (ev.get(f_.peer) == kNull) q.from = -2;
      q.node = s.node;
      number(r, new_req(q), 1);
      break;
    }
    case OpFamily::kStart:
      start(r, ev);
      break;
    case OpFamily::kComplete:
      complete(r, ev, t);
      break;
    case OpFamily::kCancel:
      for (int64_t qi : linked(r, ev)) {
        if (qi < 0) continue;
        Req& q = reqs_[static_cast<std::size_t>(qi)];
        auto& posted = posted_[static_cast<std::size_t>(rank_of(r))];
        auto it = std::find(posted.begin(), posted.end(), qi);
        if (it == posted.end()) continue;
        posted.erase(it);
        q.done = q.cancelled = true;
        if (q.slot.valid()) resolve_self(q.slot);
      }
      break;
    case OpFamily::kIntercommCreate:
    case OpFamily::kIntercommMerge:
    case OpFamily::kCommCreateGroup:
      break;  // not collective over one group of `comm`: nothing to wait for
    default:
      if (t.collective()) collective(r, ev, t.nonblocking);
      break;
  }
  // Every other request-making call (nonblocking collectives, RMA, I/O)
  // gets a request that is complete at once.
  if (makes && s.numbers.size() == numbered) {
    Req q;
    q.owner = r;
    q.done = true;
    number(r, new_req(q), 1);
  }
}

}  // namespace passes::wild

using passes::wild::node_is_wild;
using passes::wild::Resolver;

bool has_wildcards(const Trace& trace) {
  return std::any_of(trace.nodes.begin(), trace.nodes.end(), node_is_wild);
}

WildcardReport resolve_wildcards(Trace& trace) {
  if (!has_wildcards(trace)) return {};
  return Resolver(trace).run();
}

}  // namespace tracefold
