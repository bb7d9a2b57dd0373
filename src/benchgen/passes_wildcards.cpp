// Wildcard resolution with deadlock detection (seed 000, 4.4.4).
//
// All ranks are walked together, each with its own RankIterator, in the
// order a run could take: a rank runs until it blocks, and a blocked rank
// is woken when what it waits for may have happened (a message delivered, a
// request completed, a collective complete). Instead of the seed's lists of
// traversal transfers, a deadlock is simply the state in which no rank can
// run and some have not finished: every such rank is reported. The walk
// costs one step per event plus one per wake-up.
#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <tuple>

#include "passes_internal.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/wildcards.hpp"

namespace tracefold {

using namespace passes;

namespace {

bool is_receive_like(OpFamily f) {
  return f == OpFamily::kRecv || f == OpFamily::kRecvInit || f == OpFamily::kProbe ||
         f == OpFamily::kMprobe || f == OpFamily::kSendrecv;
}

// The source/tag fields a receive-like node names its sender by.
std::pair<FieldId, FieldId> source_fields(OpFamily f) {
  const PassFields& pf = pass_fields();
  return f == OpFamily::kSendrecv ? std::pair{pf.rpeer, pf.rtag} : std::pair{pf.peer, pf.tag};
}

bool elastic_has(const Elastic* el, int64_t v) {
  if (!el) return false;
  for (const ElasticEntry& e : el->entries())
    for (const ValueSeq::Run& r : e.values.runs())
      if (std::find(r.pattern.begin(), r.pattern.end(), v) != r.pattern.end()) return true;
  return false;
}

bool node_is_wild(const Node& n) {
  const OpTraits& t = op_traits(n.key.op);
  if (!is_receive_like(t.family)) return false;
  auto [pf, tf] = source_fields(t.family);
  return elastic_has(n.field(pf), kAny) || elastic_has(n.field(tf), kAny);
}

// Where the resolution of one wildcard call goes: execution `exec` of
// `node` on `rank`, whose communicator position is me of size.
struct Slot {
  std::size_t node = 0;
  int32_t rank = -1;
  std::size_t exec = 0;
  int32_t me = -1, size = 0;
  bool any_src = false, any_tag = false;
  bool valid() const { return rank >= 0; }
};

struct Msg {
  int32_t from = -1;     // world rank
  int32_t from_in = -1;  // rank in the communicator
  int64_t comm = 0;
  int64_t tag = 0;
  int64_t sync_req = -1;  // a synchronous send completes when matched
  std::size_t node = 0;
};

struct Req {
  int32_t owner = -1;
  bool done = false;
  bool recv = false;
  bool cancelled = false;
  // receive arguments (from: world rank, -1 = any)
  int64_t comm = 0;
  int32_t from = -1;
  int64_t tag = kAny;
  const CommGroup* group = nullptr;
  Slot slot;
  bool recorded = false;
  // persistent init: the template a start instantiates
  bool init = false, init_send = false, sync = false, from_init = false;
  int32_t to = -1, to_in = -1;
  std::size_t node = 0;
  uint64_t started = 0;  // starts so far (persistent inits)
  int64_t origin = -1;   // a started instance: its init
};

enum class Block : uint8_t { kNone, kReqs, kProbe, kColl };

struct CollKey {
  int64_t comm;
  int32_t first;
  uint64_t seq;
  auto operator<=>(const CollKey&) const = default;
};

struct RankState {
  explicit RankState(const Trace& t, int32_t r) : it(t, r) {}
  RankIterator it;
  Event ev;
  bool finished = false, queued = false;
  Block block = Block::kNone;
  std::size_t node = 0;
  std::vector<int64_t> wait;  // requests waited for
  int64_t probe = -1;         // the probe's stand-in request (its arguments)
  bool probe_consumes = false;
  CollKey coll{};
  std::vector<std::pair<int64_t, uint32_t>> numbers;  // request number -> (first req, count)
  std::map<std::pair<int64_t, int32_t>, uint64_t> coll_seq;
  RecordedMatches recorded;
};

struct NodeVals {
  FieldId pf = 0, tf = 0;
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> vals;  // per rank: (rel peer, tag)
};

class Resolver {
 public:
  explicit Resolver(Trace& t) : t_(t), f_(pass_fields()) {}

  WildcardReport run() {
    for (std::size_t i = 0; i < t_.nodes.size(); ++i)
      if (node_is_wild(t_.nodes[i])) {
        auto [pf, tf] = source_fields(op_traits(t_.nodes[i].key.op).family);
        vals_[i] = NodeVals{pf, tf, {}};
      }
    if (vals_.empty()) return {};
    const int32_t n = t_.world_size;
    ranks_.reserve(static_cast<std::size_t>(n));
    inbox_.resize(static_cast<std::size_t>(n));
    posted_.resize(static_cast<std::size_t>(n));
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
    for (int32_t r = 0; r < n; ++r)
      if (!ranks_[static_cast<std::size_t>(r)].finished) blocked.push_back(describe(r));
    if (!blocked.empty()) throw_deadlock(blocked);
    finish_probes();
    rewrite();
    report_.nodes = vals_.size();
    return report_;
  }

 private:
  RankState& st(int32_t r) { return ranks_[static_cast<std::size_t>(r)]; }

  void wake(int32_t r) {
    RankState& s = st(r);
    if (s.finished || s.queued) return;
    s.queued = true;
    ready_.push_back(r);
  }

  // Runs rank r until it blocks or ends.
  void step(int32_t r) {
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

  bool unblocked(int32_t r) {
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

  Slot slot_for(int32_t r, const Event& ev, FieldId pf, FieldId tf, int32_t me, int32_t size) {
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

  void resolve(const Slot& sl, int32_t from_in, int64_t tag) {
    auto& v = vals_[sl.node].vals[sl.rank][sl.exec];
    if (sl.any_src) v.first = relative(from_in, sl.me, sl.size);
    if (sl.any_tag) v.second = tag;
  }

  const CommGroup* group(int64_t comm, int32_t r) { return t_.comms.group_of(comm, r); }

  int64_t new_req(Req q) {
    reqs_.push_back(std::move(q));
    return static_cast<int64_t>(reqs_.size() - 1);
  }

  void number(int32_t r, int64_t first, uint32_t count) {
    st(r).numbers.emplace_back(first, count);
  }

  // The starts of one persistent wildcard receive share its node's one
  // source: they must all match the same sender and tag.
  void check_persistent(const Req& q, const Msg& m) {
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
    throw PassError("node " + std::to_string(q.slot.node) + " (MPI_Recv_init) on rank " +
                    std::to_string(q.slot.rank) + ": its starts matched " + text(it->second) +
                    " and " + text(got) +
                    "; one persistent receive cannot name both (keep the wildcards)");
  }

  bool accepts(const Req& q, const Msg& m) const {
    return q.comm == m.comm && (q.from < 0 || q.from == m.from) &&
           (q.tag == kAny || q.tag == m.tag);
  }

  void matched(Req& q, const Msg& m) {
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

  void deliver(int32_t to, Msg m) {
    auto& posted = posted_[static_cast<std::size_t>(to)];
    for (auto it = posted.begin(); it != posted.end(); ++it) {
      Req& q = reqs_[static_cast<std::size_t>(*it)];
      if (!accepts(q, m)) continue;
      posted.erase(it);
      matched(q, m);
      return;
    }
    inbox_[static_cast<std::size_t>(to)].push_back(m);
    wake(to);
  }

  void post(int32_t r, int64_t qi) {
    Req& q = reqs_[static_cast<std::size_t>(qi)];
    auto& box = inbox_[static_cast<std::size_t>(r)];
    for (auto it = box.begin(); it != box.end(); ++it) {
      if (!accepts(q, *it)) continue;
      const Msg m = *it;
      box.erase(it);
      matched(q, m);
      return;
    }
    posted_[static_cast<std::size_t>(r)].push_back(qi);
  }

  // A receive's arguments, the recorded match applied where it has one.
  Req recv_req(int32_t r, const Event& ev, FieldId pf, FieldId tf, const Match* rec) {
    Req q;
    q.owner = r;
    q.recv = true;
    q.comm = ev.get(f_.comm) == kAbsent ? CommTable::kWorld : ev.get(f_.comm);
    q.group = group(q.comm, r);
    const int32_t me = t_.comms.rank_in(q.comm, r);
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
        throw PassError("rank " + std::to_string(r) + " at node " + std::to_string(st(r).node) +
                        ": source " + std::to_string(from) + " is not in communicator " +
                        std::to_string(q.comm));
      q.from = q.group->members[static_cast<std::size_t>(from)];
    }
    return q;
  }

  void send(int32_t r, const Event& ev, bool sync, int64_t* req_out) {
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
      throw PassError("rank " + std::to_string(r) + " at node " + std::to_string(st(r).node) +
                      ": destination " + std::to_string(peer) + " is not in communicator " +
                      std::to_string(comm));
    Msg m;
    m.from = r;
    m.from_in = t_.comms.rank_in(comm, r);
    m.comm = comm;
    m.tag = ev.get(f_.tag);
    m.sync_req = sync ? sreq : -1;
    m.node = st(r).node;
    deliver(g->members[static_cast<std::size_t>(peer)], m);
  }

  void block_on(int32_t r, std::vector<int64_t> reqs) {
    st(r).wait = std::move(reqs);
    st(r).block = Block::kReqs;
  }

  // Blocking probes wait for a message in the inbox; consuming ones
  // (MPI_Mprobe) take it.
  bool try_probe(int32_t r) {
    RankState& s = st(r);
    Req& q = reqs_[static_cast<std::size_t>(s.probe)];
    auto& box = inbox_[static_cast<std::size_t>(r)];
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

  void succeeded_probe(int32_t r, std::size_t node, const Msg& m) {
    auto key = std::pair{r, node};
    last_probe_[key] = {m.from_in, m.tag};
    auto it = failed_probes_.find(key);
    if (it == failed_probes_.end()) return;
    for (const Slot& sl : it->second) resolve(sl, m.from_in, m.tag);
    failed_probes_.erase(it);
  }

  void finish_probes() {
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

  void resolve_self(const Slot& sl) {
    auto& v = vals_[sl.node].vals[sl.rank][sl.exec];
    if (sl.any_src) v.first = relative(sl.me, sl.me, sl.size);
    // A tag nobody matched: keep the wildcard's meaning as far as a named
    // tag can (0 is valid for every MPI).
    if (sl.any_tag) v.second = 0;
  }

  void collective(int32_t r, const Event& ev, bool nonblocking) {
    const int64_t comm = ev.get(f_.comm) == kAbsent ? CommTable::kWorld : ev.get(f_.comm);
    const CommGroup* g = group(comm, r);
    if (!g || g->members.empty()) return;
    RankState& s = st(r);
    const int32_t first = g->members.front();
    const CollKey key{comm, first, s.coll_seq[{comm, first}]++};
    auto& [arrived, need] = coll_[key];
    need = static_cast<int64_t>(g->members.size());
    if (++arrived == need)
      for (int32_t m : g->members) wake(m);
    if (nonblocking) return;
    s.coll = key;
    s.block = Block::kColl;
  }

  std::vector<int64_t> linked(int32_t r, const Event& ev) {
    const FieldValue* links = ev.find(f_.links);
    std::vector<int64_t> out;
    if (!links) return out;
    RankState& s = st(r);
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

  void complete(int32_t r, const Event& ev, const OpTraits& t) {
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

  void start(int32_t r, const Event& ev) {
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
          Msg m{r, q.to_in, q.comm, q.tag, q.sync ? qi : -1, st(r).node};
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

  void process(int32_t r) {
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
        if (g && !is_sentinel(peer) && peer >= 0 &&
            peer < static_cast<int64_t>(g->members.size())) {
          q.to = g->members[static_cast<std::size_t>(peer)];
          q.to_in = t_.comms.rank_in(q.comm, r);
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
          auto& posted = posted_[static_cast<std::size_t>(r)];
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

  BlockedRank describe(int32_t r) {
    RankState& s = st(r);
    BlockedRank b{r, s.node, OpTable::name(s.ev.op), ""};
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

  [[noreturn]] void throw_deadlock(const std::vector<BlockedRank>& blocked) {
    std::ostringstream os;
    os << "deadlock: the traversal blocks with " << blocked.size() << " of " << t_.world_size
       << " ranks unfinished";
    for (const BlockedRank& b : blocked)
      os << "\n  rank " << b.rank << " at node " << b.node << " (" << b.op << ") waits for "
         << b.waiting;
    std::size_t shown = 0;
    for (std::size_t to = 0; to < inbox_.size(); ++to)
      for (const Msg& m : inbox_[to]) {
        if (shown++ == 8) break;
        os << "\n  unreceived: rank " << m.from << " -> rank " << to << " (node " << m.node
           << ", tag " << m.tag << ", communicator " << m.comm << ")";
      }
    os << "\n  (the wildcard sources this trace records or the traversal chose lead here: "
          "the program can deadlock)";
    throw DeadlockError(os.str(), blocked);
  }

  // Writes the resolved values back into the nodes' elastic fields.
  void rewrite() {
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

  Trace& t_;
  const PassFields& f_;
  WildcardReport report_;
  std::map<std::size_t, NodeVals> vals_;
  std::vector<RankState> ranks_;
  std::deque<int32_t> ready_;
  std::vector<std::deque<Msg>> inbox_;
  std::vector<std::vector<int64_t>> posted_;
  std::vector<Req> reqs_;
  std::map<std::tuple<std::size_t, int32_t, std::size_t>, std::pair<int64_t, int64_t>> persistent_;
  std::map<CollKey, std::pair<int64_t, int64_t>> coll_;
  std::map<std::pair<int32_t, std::size_t>, std::vector<Slot>> failed_probes_;
  std::map<std::pair<int32_t, std::size_t>, std::pair<int64_t, int64_t>> last_probe_;
};

}  // namespace

bool has_wildcards(const Trace& trace) {
  return std::any_of(trace.nodes.begin(), trace.nodes.end(), node_is_wild);
}

WildcardReport resolve_wildcards(Trace& trace) {
  if (!has_wildcards(trace)) return {};
  return Resolver(trace).run();
}

}  // namespace tracefold
