// The wildcard-resolution walk (passes_wildcards.cpp: the ranks' walk and
// what each call does; passes_wildcards_match.cpp: messages, matching,
// probes and the results). Internal to benchgen.
#pragma once

#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "passes_internal.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::passes::wild {

bool is_receive_like(OpFamily f);
// The source/tag fields a receive-like node names its sender by.
std::pair<FieldId, FieldId> source_fields(OpFamily f);
bool node_is_wild(const Node& n);

// Where the resolution of one wildcard call goes: execution `exec` of
// `node` on location `rank` (thread t of rank r is t * P + r), whose
// communicator position is me of size.
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
  int32_t owner = -1;  // the location that made it
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

// One location's walk: thread t of rank r is location t * P + r, so a
// trace without threads has one per rank.
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
  RecordedMatches recorded;
};

struct NodeVals {
  FieldId pf = 0, tf = 0;
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>>
      vals;  // per location: (rel peer, tag)
};

class Resolver {
 public:
  explicit Resolver(Trace& t) : t_(t), f_(pass_fields()), p_(t.world_size) {}

  WildcardReport run();

 private:
  // Every function below takes a location `r`: messages go to ranks (any
  // of a rank's threads may receive them), requests belong to the
  // location that made them.
  RankState& st(int32_t r) { return ranks_[static_cast<std::size_t>(r)]; }
  int32_t rank_of(int32_t r) const { return r % p_; }

  void wake(int32_t r) {
    RankState& s = st(r);
    if (s.finished || s.queued) return;
    s.queued = true;
    ready_.push_back(r);
  }

  // Every thread of `rank`: a message or a collective may unblock any.
  void wake_rank(int32_t rank) {
    for (std::size_t l = static_cast<std::size_t>(rank); l < ranks_.size();
         l += static_cast<std::size_t>(p_))
      wake(static_cast<int32_t>(l));
  }

  // the walk (passes_wildcards.cpp)
  // Runs location r until it blocks or ends.
  void step(int32_t r);
  bool unblocked(int32_t r);
  void collective(int32_t r, const Event& ev, bool nonblocking);
  std::vector<int64_t> linked(int32_t r, const Event& ev);
  void complete(int32_t r, const Event& ev, const OpTraits& t);
  void start(int32_t r, const Event& ev);
  void process(int32_t r);

  // messages and matching (passes_wildcards_match.cpp)
  Slot slot_for(int32_t r, const Event& ev, FieldId pf, FieldId tf, int32_t me, int32_t size);
  // The starts of one persistent wildcard receive share its node's one
  // source: they must all match the same sender and tag.
  void check_persistent(const Req& q, const Msg& m);
  void matched(Req& q, const Msg& m);
  void deliver(int32_t to, Msg m);
  void post(int32_t r, int64_t qi);
  // A receive's arguments, the recorded match applied where it has one.
  Req recv_req(int32_t r, const Event& ev, FieldId pf, FieldId tf, const Match* rec);
  void send(int32_t r, const Event& ev, bool sync, int64_t* req_out);
  // Blocking probes wait for a message in the inbox; consuming ones
  // (MPI_Mprobe) take it.
  bool try_probe(int32_t r);
  void succeeded_probe(int32_t r, std::size_t node, const Msg& m);
  void finish_probes();
  void resolve_self(const Slot& sl);

  // results (passes_wildcards_match.cpp)
  BlockedRank describe(int32_t r);
  // `where`: the blocked locations, in the order of `blocked`.
  [[noreturn]] void throw_deadlock(const std::vector<int32_t>& where,
                                   const std::vector<BlockedRank>& blocked);
  // Writes the resolved values back into the nodes' elastic fields.
  void rewrite();

  void resolve(const Slot& sl, int32_t from_in, int64_t tag) {
    auto& v = vals_[sl.node].vals[sl.rank][sl.exec];
    if (sl.any_src) v.first = relative(from_in, sl.me, sl.size);
    if (sl.any_tag) v.second = tag;
  }

  // Communicators are the rank's, whichever thread calls.
  const CommGroup* group(int64_t comm, int32_t r) { return t_.comms.group_of(comm, rank_of(r)); }
  int32_t rank_in(int64_t comm, int32_t r) const { return t_.comms.rank_in(comm, rank_of(r)); }

  int64_t new_req(Req q) {
    reqs_.push_back(std::move(q));
    return static_cast<int64_t>(reqs_.size() - 1);
  }

  void number(int32_t r, int64_t first, uint32_t count) {
    st(r).numbers.emplace_back(first, count);
  }

  bool accepts(const Req& q, const Msg& m) const {
    return q.comm == m.comm && (q.from < 0 || q.from == m.from) &&
           (q.tag == kAny || q.tag == m.tag);
  }

  void block_on(int32_t r, std::vector<int64_t> reqs) {
    st(r).wait = std::move(reqs);
    st(r).block = Block::kReqs;
  }

  Trace& t_;
  const PassFields& f_;
  const int32_t p_;  // ranks
  WildcardReport report_;
  std::map<std::size_t, NodeVals> vals_;
  std::vector<RankState> ranks_;
  std::deque<int32_t> ready_;
  std::vector<std::deque<Msg>> inbox_;        // per rank
  std::vector<std::vector<int64_t>> posted_;  // per rank, in the order posted
  // Per rank, (communicator, first member) -> collectives begun: a rank's
  // collectives on one communicator pair in order whichever thread calls.
  std::vector<std::map<std::pair<int64_t, int32_t>, uint64_t>> coll_seq_;
  std::vector<Req> reqs_;
  std::map<std::tuple<std::size_t, int32_t, std::size_t>, std::pair<int64_t, int64_t>> persistent_;
  std::map<CollKey, std::pair<int64_t, int64_t>> coll_;
  std::map<std::pair<int32_t, std::size_t>, std::vector<Slot>> failed_probes_;
  std::map<std::pair<int32_t, std::size_t>, std::pair<int64_t, int64_t>> last_probe_;
};

}  // namespace tracefold::passes::wild
