#include "tracefold/replay.hpp"

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "completion.hpp"
#include "datatypes.hpp"
#include "lossy.hpp"
#include "mpi_ids.hpp"
#include "replay_internal.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/wildcards.hpp"

namespace tracefold {

using namespace replay_detail;

void check_replayable(const Trace& trace) {
  const auto table = op_table();
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const Node& n = trace.nodes[i];
    if (n.key.op >= table.size() || !table[n.key.op].supported) {
      const std::string name = n.key.op < OpTable::size() ? OpTable::name(n.key.op) : "?";
      throw ReplayError("node #" + std::to_string(i) + ": replay cannot perform " + name +
                        " (ranks " + n.ranks.to_string() + ")");
    }
  }
}

std::string ReplaySummary::line() const {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(3);
  s << "replay: " << ranks << " ranks" << (probabilistic ? " (probabilistic)" : "") << ", wall "
    << wall_seconds << " s, " << calls << " MPI calls, " << bytes_sent << " bytes sent";
  return s.str();
}

// ------------------------------------------------------------------ the engine

namespace {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// A request made by a replayed call, with the buffers it uses until it
// completes (persistent requests keep them until freed).
struct RequestSlot {
  MPI_Request handle = MPI_REQUEST_NULL;
  std::vector<char> send;
  std::vector<char> recv;
  std::vector<int> counts, displs, rcounts, rdispls;
  std::vector<MPI_Datatype> types, rtypes;
  bool persistent = false;
  uint64_t send_bytes = 0;  // persistent sends: bytes each start sends
  // A persistent wildcard receive (deterministic mode): its arguments, so a
  // start can post a receive naming the source and tag it originally
  // matched, and the persistent request parked meanwhile.
  bool wild_persistent = false;
  int wild_count = 0, wild_src = 0, wild_tag = 0;
  MPI_Datatype wild_type = MPI_DATATYPE_NULL;
  MPI_Comm wild_comm = MPI_COMM_NULL;
  MPI_Request parked = MPI_REQUEST_NULL;
  uint64_t number = 0;  // request-event number that (re)activated it
  bool in_use = false;
};

struct CartInfo {
  std::vector<int> dims;
};

class Engine {
 public:
  Engine(const Trace& trace, const ReplayOptions& options, int32_t rank)
      : trace_(trace),
        opts_(options),
        rank_(rank),
        table_(op_table()),
        rng_(options.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(rank)) {
    f_.peer = field("peer");
    f_.rpeer = field("rpeer");
    f_.src = field("src");
    f_.tag = field("tag");
    f_.rtag = field("rtag");
    f_.mtag = field("mtag");
    f_.count = field("count");
    f_.dtype = field("dtype");
    f_.dsize = field("dsize");
    f_.rcount = field("rcount");
    f_.rdtype = field("rdtype");
    f_.rdsize = field("rdsize");
    f_.counts = field("counts", FieldKind::kList);
    f_.rcounts = field("rcounts", FieldKind::kList);
    f_.root = field("root");
    f_.redop = field("redop");
    f_.comm = FieldTable::comm();
    f_.newcomm = field("newcomm");
    f_.pcomm = field("pcomm");
    f_.rleader = field("rleader");
    f_.high = field("high");
    f_.color = field("color");
    f_.key = field("key");
    f_.ndims = field("ndims");
    f_.flag = field("flag");
    f_.index = field("index");
    f_.outcount = field("outcount");
    f_.indices = field("indices", FieldKind::kList);
    f_.links = FieldTable::links();
    comms_[CommTable::kWorld] = MPI_COMM_WORLD;
  }

  // Before MPI_Finalize (not in a destructor: MPI must still be running).
  void release_mpi_objects() {
    types_.release();
    for (auto& [id, op] : user_ops_) PMPI_Op_free(&op);
    user_ops_.clear();
  }

  // Resolves wildcard matches ahead of time (deterministic mode): the
  // matched source of a nonblocking wildcard receive is recorded on the call
  // that completed it, later in the sequence (src/mtag of Wait, Test,
  // Waitany, Testany; srcs/mtags of Waitall, Testall, Waitsome, Testsome).
  void prescan_wildcards() {
    RankIterator it(trace_, rank_);
    Event ev;
    uint64_t numbers = 0;
    // Request numbers of wildcard MPI_Irecvs: the positions the list forms'
    // entries belong to. Persistent receives are numbered by their starts,
    // which say nothing of wildcards; a completion mixing them in does not
    // line up and is left unresolved.
    std::vector<bool> wild_numbers(1, false);
    std::vector<bool> wild;
    while (it.next(ev)) {
      const OpInfo& info = table_[ev.op];
      if (OpTable::makes_request(ev.op)) {
        ++numbers;
        wild_numbers.push_back(is_wildcard_receive(ev) && info.kind != Kind::kRecvInit);
      }
      if (info.kind != Kind::kComplete) continue;
      const FieldValue* links = ev.find(f_.links);
      if (!links) continue;
      auto number_of = [&](int64_t d) -> uint64_t {
        if (is_sentinel(d) || d <= 0 || static_cast<uint64_t>(d) > numbers) return 0;
        return numbers - static_cast<uint64_t>(d) + 1;
      };
      wild.assign(links->list.size(), false);
      for (std::size_t k = 0; k < links->list.size(); ++k)
        wild[k] = wild_numbers[number_of(links->list[k])];
      // Wait/Test of a single request: its src/mtag apply whatever the
      // request was (a persistent wildcard receive is numbered by its start).
      if (links->list.size() == 1 && number_of(links->list[0]) != 0) wild[0] = true;
      const std::vector<WildcardMatch> matches = wildcard_matches(ev, wild);
      for (std::size_t k = 0; k < matches.size(); ++k) {
        if (matches[k].outcome != WildcardOutcome::kMatched) continue;
        matched_[number_of(links->list[k])] = {matches[k].src, matches[k].tag};
      }
    }
  }

  // Walks the rank's events; stops at MPI_Finalize (the caller finalizes).
  void run() {
    RankIterator it(trace_, rank_);
    Event ev;
    EventKey prev = kStartKey;
    last_exit_ns_ = now_ns();  // stands for the end of MPI_Init
    while (it.next(ev)) {
      const OpInfo& info = table_[ev.op];
      if (info.kind == Kind::kInit) {
        prev = ev.key();
        continue;  // MPI is already initialized by the caller
      }
      if (info.kind == Kind::kMarker) {
        compute(ev, it.current_node(), prev);
        prev = ev.key();
        continue;
      }
      compute(ev, it.current_node(), prev);
      prev = ev.key();
      if (info.kind == Kind::kFinalize) break;
      const uint64_t sent_before = bytes_sent_;
      node_ = it.current_node() ? it.current_node() - trace_.nodes.data() : -1;
      if (prob_) {
        lossy_->resolve(ev, it.current_node(), is_collective(info));
        est_ns_ += static_cast<double>(std::max<int64_t>(ev.compute_ns, 0));
        post_due();
        issue_probabilistic(ev, info);
        est_ns_ += static_cast<double>(std::max<int64_t>(ev.comm_ns, 0));
      } else {
        issue(ev, info);
      }
      last_exit_ns_ = now_ns();
      ++calls_;
      ++position_;
      auto& c = per_op_[ev.op];
      ++c.first;
      c.second += bytes_sent_ - sent_before;
    }
    if (prob_) finish_probabilistic();
  }

  /// Calls and bytes sent, indexed by operation id.
  const std::vector<std::pair<uint64_t, uint64_t>>& per_op() const { return per_op_; }

  // ------------------------------------------------------------ probabilistic replay
  //
  // Seed 000, 5.2.6: with destinations and sizes drawn from histograms, a
  // receiver cannot read its receives off its own trace. Every rank instead
  // issues everything but receives from its own context, and works out the
  // messages addressed to it by walking the other ranks' contexts (send
  // events only, making the same coordinated draws they make). Those
  // receives are posted in the order of the senders' estimated send times,
  // as this rank's own estimated time passes them; whenever this rank would
  // block, it posts further receives while it waits, so no rank can wait
  // for a receive that is never posted.
  void enable_probabilistic() {
    prob_ = true;
    lossy_ = std::make_unique<LossyResolver>(trace_, rank_, opts_.seed);
    plan_incoming();
  }

 private:
  struct Incoming {
    double est_ns = 0;
    int32_t sender = 0;  // world rank
    int64_t comm = 0;
    int source = 0;  // sender's rank in comm
    int tag = 0;
    int count = 0;
    int64_t dtype = kAbsent, dsize = kAbsent;
    uint64_t order = 0;  // tie-break: sender's order
  };
  struct Posted {
    MPI_Request handle = MPI_REQUEST_NULL;
    std::vector<char> buf;
  };

  static bool is_collective(const OpInfo& info) {
    switch (info.kind) {
      case Kind::kBarrier:
      case Kind::kBcast:
      case Kind::kReduce:
      case Kind::kAllreduce:
      case Kind::kScan:
      case Kind::kExscan:
      case Kind::kGather:
      case Kind::kGatherv:
      case Kind::kScatter:
      case Kind::kScatterv:
      case Kind::kAllgather:
      case Kind::kAllgatherv:
      case Kind::kAlltoall:
      case Kind::kAlltoallv:
      case Kind::kAlltoallw:
      case Kind::kReduceScatter:
      case Kind::kReduceScatterBlock:
      case Kind::kCommDup:
      case Kind::kCommSplit:
      case Kind::kCommSplitType:
      case Kind::kCommCreate:
      case Kind::kCommCreateGroup:
      case Kind::kCartCreate:
      case Kind::kCartSub:
      case Kind::kIntercommCreate:
      case Kind::kIntercommMerge:
        return true;
      default:
        return false;
    }
  }

  void add_incoming(int32_t sender, const Event& ev, double est, uint64_t order) {
    const int64_t peer = ev.get(f_.peer);
    if (is_sentinel(peer)) return;
    const int64_t comm = ev.get(f_.comm) == kAbsent ? CommTable::kWorld : ev.get(f_.comm);
    const CommGroup* g = trace_.comms.group_of(comm, sender);
    if (!g || peer < 0 || peer >= static_cast<int64_t>(g->members.size())) return;
    if (g->members[static_cast<std::size_t>(peer)] != rank_) return;
    Incoming in;
    in.est_ns = est;
    in.sender = sender;
    in.comm = comm;
    in.source = trace_.comms.rank_in(comm, sender);
    in.tag = tag_arg(ev.get(f_.tag));
    in.count = count_of(ev, f_.count);
    in.dtype = ev.get(f_.dtype);
    in.dsize = ev.get(f_.dsize);
    in.order = order;
    incoming_.push_back(in);
  }

  void plan_incoming() {
    for (int32_t s = 0; s < trace_.world_size; ++s) {
      LossyResolver draws(trace_, s, opts_.seed);
      RankIterator it(trace_, s);
      Event ev;
      double t = 0;
      uint64_t numbers = 0, order = 0;
      std::unordered_map<uint64_t, std::vector<Event>> persistent;  // number -> send inits
      while (it.next(ev)) {
        const OpInfo& info = table_[ev.op];
        t += static_cast<double>(std::max<int64_t>(ev.compute_ns, 0));
        const bool send = info.kind == Kind::kSend || info.kind == Kind::kSendrecv;
        if (send || info.kind == Kind::kSendInit) draws.resolve(ev, it.current_node(), false);
        if (send) add_incoming(s, ev, t, order++);
        if (info.kind != Kind::kStart && OpTable::makes_request(ev.op)) {
          ++numbers;
          if (info.kind == Kind::kSendInit) persistent[numbers].push_back(ev);
        }
        if (info.kind == Kind::kStart) {
          std::vector<Event> started;
          std::unordered_map<uint64_t, std::size_t> seen;
          if (const FieldValue* links = ev.find(f_.links)) {
            for (int64_t d : links->list) {
              if (d <= 0 || static_cast<uint64_t>(d) > numbers) continue;
              const uint64_t n = numbers - static_cast<uint64_t>(d) + 1;
              auto p = persistent.find(n);
              const std::size_t k = seen[n]++;
              if (p == persistent.end() || k >= p->second.size()) continue;
              started.push_back(p->second[k]);
            }
          }
          ++numbers;
          for (const Event& init : started) add_incoming(s, init, t, order++);
          // A started persistent request is named by the start from now on.
          if (!started.empty()) persistent[numbers] = started;
        }
        t += static_cast<double>(std::max<int64_t>(ev.comm_ns, 0));
      }
    }
    std::stable_sort(incoming_.begin(), incoming_.end(),
                     [](const Incoming& a, const Incoming& b) { return a.est_ns < b.est_ns; });
    // MPI matches messages of one sender, tag and communicator in order:
    // post them in the sender's order whatever their estimated times.
    std::map<std::tuple<int32_t, int64_t, int>, std::vector<std::size_t>> streams;
    for (std::size_t i = 0; i < incoming_.size(); ++i)
      streams[{incoming_[i].sender, incoming_[i].comm, incoming_[i].tag}].push_back(i);
    std::vector<Incoming> ordered = incoming_;
    for (auto& [key, idx] : streams) {
      std::vector<Incoming> msgs;
      for (std::size_t i : idx) msgs.push_back(incoming_[i]);
      std::sort(msgs.begin(), msgs.end(),
                [](const Incoming& a, const Incoming& b) { return a.order < b.order; });
      for (std::size_t k = 0; k < idx.size(); ++k) {
        const double slot_time = incoming_[idx[k]].est_ns;
        ordered[idx[k]] = msgs[k];
        ordered[idx[k]].est_ns = slot_time;
      }
    }
    incoming_ = std::move(ordered);
  }

  // Posts the next planned receive if its communicator exists here yet.
  bool post_next() {
    if (next_incoming_ >= incoming_.size()) return false;
    const Incoming& in = incoming_[next_incoming_];
    auto c = comms_.find(in.comm);
    MPI_Comm comm = MPI_COMM_NULL;
    if (c != comms_.end())
      comm = c->second;
    else if (in.comm == CommTable::kWorld)
      comm = MPI_COMM_WORLD;
    if (comm == MPI_COMM_NULL) return false;  // made later by this rank
    Event shape;
    if (in.dtype != kAbsent) shape.set(f_.dtype, in.dtype);
    if (in.dsize != kAbsent) shape.set(f_.dsize, in.dsize);
    MPI_Datatype t = datatype_of(shape, f_.dtype, f_.dsize);
    posted_.emplace_back();
    Posted& p = posted_.back();
    p.buf.resize(std::max<std::size_t>(static_cast<std::size_t>(in.count) * extent_of(t), 1));
    PMPI_Irecv(p.buf.data(), in.count, t, in.source, in.tag, comm, &p.handle);
    ++next_incoming_;
    return true;
  }

  void post_due() {
    while (next_incoming_ < incoming_.size() && incoming_[next_incoming_].est_ns <= est_ns_)
      if (!post_next()) break;
    // Completed receives give their buffers back.
    while (!posted_.empty()) {
      int done = 0;
      PMPI_Test(&posted_.front().handle, &done, MPI_STATUS_IGNORE);
      if (!done) break;
      posted_.pop_front();
    }
  }

  void post_all_postable() {
    while (post_next()) {
    }
  }

  // Waits until every request in `handles` could complete, posting planned
  // receives while it waits (the sender this rank waits for may itself be
  // waiting for one of them).
  void progress_until_ready(const std::vector<MPI_Request>& handles, bool any = false) {
    uint64_t idle = 0;
    for (;;) {
      bool all = true, some = false, active = false;
      for (MPI_Request r : handles) {
        if (r == MPI_REQUEST_NULL) continue;
        active = true;
        int flag = 0;
        PMPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
        if (flag)
          some = true;
        else
          all = false;
      }
      if (!active || (any ? some : all)) return;
      if (++idle % 64 == 0) post_next();
    }
  }

  void finish_probabilistic() {
    post_all_postable();
    if (next_incoming_ < incoming_.size()) {
      const Incoming& in = incoming_[next_incoming_];
      throw ReplayError("rank " + std::to_string(rank_) + ": a message from rank " +
                        std::to_string(in.sender) + " is planned on communicator " +
                        std::to_string(in.comm) + ", which this rank never created");
    }
    for (Posted& p : posted_) PMPI_Wait(&p.handle, MPI_STATUS_IGNORE);
    posted_.clear();
  }

  void send_now(const Event& ev, int dest, int tag, MPI_Comm c) {
    MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
    const int count = count_of(ev, f_.count);
    int size = 0;
    PMPI_Type_size(t, &size);
    if (dest != MPI_PROC_NULL)
      bytes_sent_ += static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
    MPI_Request r;
    PMPI_Isend(scratch(send_buf_, static_cast<std::size_t>(count) * extent_of(t)), count, t, dest,
               tag, c, &r);
    progress_until_ready({r});
    PMPI_Wait(&r, MPI_STATUS_IGNORE);
  }

  void issue_probabilistic(const Event& ev, const OpInfo& info) {
    switch (info.kind) {
      case Kind::kRecv:
      case Kind::kRecvInit:
        // Posted from the plan instead; a request-making receive still
        // takes its number so later links resolve.
        if (info.nonblocking) ++request_events_;
        return;
      case Kind::kProbe:
      case Kind::kMprobe:
      case Kind::kMrecv:
        if (info.kind == Kind::kMrecv && info.nonblocking) ++request_events_;
        return;
      case Kind::kSend:
        if (!info.nonblocking) {
          send_now(ev, rank_arg(ev.get(f_.peer)), tag_arg(ev.get(f_.tag)), comm_of(ev, f_.comm));
          return;
        }
        return point_send(ev, info);
      case Kind::kSendrecv:
        send_now(ev, rank_arg(ev.get(f_.peer)), tag_arg(ev.get(f_.tag)), comm_of(ev, f_.comm));
        return;
      case Kind::kComplete: {
        const Variant v = info.variant;
        if (v == Variant::kWait || v == Variant::kWaitall || v == Variant::kWaitany ||
            v == Variant::kWaitsome) {
          auto slots = linked(ev);
          std::vector<MPI_Request> handles;
          for (std::ptrdiff_t i : slots)
            if (i >= 0) handles.push_back(slots_[static_cast<std::size_t>(i)].handle);
          progress_until_ready(handles, v == Variant::kWaitany || v == Variant::kWaitsome);
        }
        return complete(ev);
      }
      default:
        if (is_collective(info) && !info.nonblocking) post_all_postable();
        return issue(ev, info);
    }
  }

 public:
  uint64_t calls() const { return calls_; }
  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  struct Fields {
    FieldId peer, rpeer, src, tag, rtag, mtag, count, dtype, dsize, rcount, rdtype, rdsize, counts,
        rcounts, root, redop, comm, newcomm, pcomm, rleader, high, color, key, ndims, flag, index,
        outcount, indices, links;
  };

  static FieldId field(const char* name, FieldKind kind = FieldKind::kScalar) {
    return FieldTable::intern(name, kind);
  }

  // Where the replay cannot do what the trace recorded: said once per call,
  // and the replay goes on.
  void warn(const Event& ev, const std::string& what) const {
    std::fprintf(stderr,
                 "tracefold replay: warning: rank %d, node #%td, event %" PRIu64 " (%s): %s\n",
                 rank_, node_, position_, OpTable::name(ev.op).c_str(), what.c_str());
  }

  [[noreturn]] void fail(const Event& ev, const std::string& what) const {
    throw ReplayError("rank " + std::to_string(rank_) + ", event " + std::to_string(position_) +
                      " (" + OpTable::name(ev.op) + "): " + what);
  }

  bool scaled(const Event& ev) const {
    return opts_.scale_sites.empty() || opts_.scale_sites.count(ev.site) != 0;
  }

  // ------------------------------------------------------------ computation

  void compute(const Event& ev, const Node* node, EventKey prev) {
    if (opts_.compute == ComputeMode::kNone) return;
    int64_t ns = ev.compute_ns;
    if (opts_.timing == TimingMode::kSample && node) {
      const Timing* t = node->timing_after(prev);
      if (t && !t->compute.empty()) ns = sample(t->compute);
    }
    if (ns <= 0) return;
    if (scaled(ev)) ns = std::llround(static_cast<double>(ns) * opts_.compute_scale);
    if (ns <= 0) return;
    // The gap runs from the end of the previous call, as it was recorded:
    // the replayer's own walk to this event is part of it, not added to it.
    const int64_t until = (last_exit_ns_ > 0 ? last_exit_ns_ : now_ns()) + ns;
    if (opts_.compute == ComputeMode::kSleep) {
      const int64_t left = until - now_ns();
      if (left <= 0) return;
      timespec ts{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
      while (nanosleep(&ts, &ts) != 0) {
      }
      return;
    }
    while (now_ns() < until) {
    }
  }

  int64_t sample(const Histogram& h) {
    std::uniform_int_distribution<uint64_t> pick(0, h.count() - 1);
    uint64_t k = pick(rng_);
    for (const Histogram::Bin& b : h.bins()) {
      if (k >= b.count) {
        k -= b.count;
        continue;
      }
      return Histogram::draw_within(b, std::uniform_real_distribution<double>(0.0, 1.0)(rng_));
    }
    return std::llround(h.mean());
  }

  // ------------------------------------------------------------ arguments

  MPI_Comm comm_of(const Event& ev, FieldId f) {
    const int64_t id = ev.get(f);
    if (id == kAbsent) return MPI_COMM_WORLD;
    if (id == kNull) return MPI_COMM_NULL;
    auto it = comms_.find(id);
    if (it != comms_.end()) return it->second;
    // Communicators the program did not create through a recorded call:
    // only those that exist in every MPI program can be named.
    const CommGroup* g = trace_.comms.group_of(id, rank_);
    if (g && g->members.size() == 1 && g->members[0] == rank_) return comms_[id] = MPI_COMM_SELF;
    if (g && static_cast<int32_t>(g->members.size()) == trace_.world_size) {
      bool identity = true;
      for (std::size_t i = 0; i < g->members.size(); ++i)
        identity = identity && g->members[i] == static_cast<int32_t>(i);
      if (identity) return comms_[id] = MPI_COMM_WORLD;
    }
    fail(ev,
         "communicator " + std::to_string(id) +
             " was not created by a recorded call and is neither MPI_COMM_WORLD nor MPI_COMM_SELF");
  }

  MPI_Datatype datatype_of(const Event& ev, FieldId id_field, FieldId size_field) {
    return types_.type_of(ev, id_field, size_field);
  }

  MPI_Op redop_of(const Event& ev) {
    const int64_t id = ev.get(f_.redop);
    if (id == kAbsent) return MPI_SUM;
    std::size_t n = 0;
    const MPI_Op* named = mpi_ids::named_ops(n);
    if (id >= 1 && static_cast<std::size_t>(id) <= n) return named[id - 1];
    auto it = user_ops_.find(id);
    if (it != user_ops_.end()) return it->second;
    MPI_Op op;
    PMPI_Op_create(
        [](void*, void*, int*, MPI_Datatype*) {
          // Payloads are random: a user reduction only has to take as long
          // as moving the data, not compute anything.
        },
        1, &op);
    user_ops_.emplace(id, op);
    return op;
  }

  int count_of(const Event& ev, FieldId f) {
    const int64_t c = ev.get(f);
    if (c == kAbsent || c < 0) return 0;
    if (opts_.message_scale != 1.0 && scaled(ev))
      return static_cast<int>(std::llround(static_cast<double>(c) * opts_.message_scale));
    return static_cast<int>(c);
  }

  std::vector<int> counts_of(const Event& ev, FieldId f) {
    std::vector<int> out;
    if (const FieldValue* v = ev.find(f)) {
      out.reserve(v->list.size());
      for (int64_t c : v->list) {
        int64_t x = c < 0 ? 0 : c;
        if (opts_.message_scale != 1.0 && scaled(ev))
          x = std::llround(static_cast<double>(x) * opts_.message_scale);
        out.push_back(static_cast<int>(x));
      }
    }
    return out;
  }

  static std::size_t extent_of(MPI_Datatype t) {
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(t, &lb, &extent);
    MPI_Aint true_lb = 0, true_extent = 0;
    PMPI_Type_get_true_extent(t, &true_lb, &true_extent);
    return static_cast<std::size_t>(std::max<MPI_Aint>({extent, true_extent, 1}));
  }

  static int rank_arg(int64_t v) {
    if (v == kAny) return MPI_ANY_SOURCE;
    if (v == kNull) return MPI_PROC_NULL;
    if (v == kAbsent) return MPI_PROC_NULL;
    return static_cast<int>(v);
  }
  static int tag_arg(int64_t v) {
    if (v == kAny) return MPI_ANY_TAG;
    if (v == kAbsent) return 0;
    return static_cast<int>(v);
  }

  static int comm_size(MPI_Comm c) {
    int n = 0;
    if (c != MPI_COMM_NULL) PMPI_Comm_size(c, &n);
    return n;
  }
  static int comm_rank(MPI_Comm c) {
    int r = 0;
    if (c != MPI_COMM_NULL) PMPI_Comm_rank(c, &r);
    return r;
  }

  void fill(std::vector<char>& buf, std::size_t bytes) {
    if (buf.size() >= bytes) return;
    const std::size_t old = buf.size();
    buf.resize(bytes);
    // Random payload, written once per buffer growth: message contents do
    // not matter, only that they are not all zero pages.
    for (std::size_t i = old; i < bytes; i += 64) buf[i] = static_cast<char>(rng_());
  }

  char* scratch(std::vector<char>& buf, std::size_t bytes) {
    fill(buf, std::max<std::size_t>(bytes, 1));
    return buf.data();
  }

  // ------------------------------------------------------------ requests

  RequestSlot& new_slot() {
    std::size_t i;
    if (!free_slots_.empty()) {
      i = free_slots_.back();
      free_slots_.pop_back();
    } else {
      i = slots_.size();
      slots_.emplace_back();
    }
    RequestSlot& s = slots_[i];
    s.in_use = true;
    s.handle = MPI_REQUEST_NULL;
    s.persistent = false;
    s.send_bytes = 0;
    s.wild_persistent = false;
    s.parked = MPI_REQUEST_NULL;
    current_slot_ = i;
    return s;
  }

  // After a request-making call: numbers it the way the recorder does.
  void made_request() {
    RequestSlot& s = slots_[current_slot_];
    if (s.handle == MPI_REQUEST_NULL) {
      release(current_slot_);
      return;
    }
    s.number = ++request_events_;
    by_number_[s.number].push_back(current_slot_);
  }

  void release(std::size_t i) {
    RequestSlot& s = slots_[i];
    if (!s.in_use) return;
    forget_number(i);
    s.in_use = false;
    s.handle = MPI_REQUEST_NULL;
    free_slots_.push_back(i);
  }

  void forget_number(std::size_t slot) {
    auto it = by_number_.find(slots_[slot].number);
    if (it == by_number_.end()) return;
    auto& group = it->second;
    group.erase(std::remove(group.begin(), group.end(), slot), group.end());
    if (group.empty()) by_number_.erase(it);
  }

  // Slots named by a completion call's links (backward distances). Requests
  // started by one MPI_Startall share a number, so repeats of a distance
  // name the group's requests in order.
  // The result lives in a buffer reused by the next call.
  const std::vector<std::ptrdiff_t>& linked(const Event& ev) {
    std::vector<std::ptrdiff_t>& out = linked_scratch_;
    out.clear();
    const FieldValue* links = ev.find(f_.links);
    if (!links) return out;
    out.reserve(links->list.size());
    // How often each number was named already (completions name few).
    std::vector<std::pair<uint64_t, std::size_t>>& seen = seen_scratch_;
    seen.clear();
    for (int64_t d : links->list) {
      if (d <= 0 || static_cast<uint64_t>(d) > request_events_) {
        out.push_back(-1);
        continue;
      }
      const uint64_t number = request_events_ - static_cast<uint64_t>(d) + 1;
      auto it = by_number_.find(number);
      auto s =
          std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == number; });
      if (s == seen.end()) s = seen.insert(seen.end(), {number, 0});
      const std::size_t k = s->second++;
      if (it == by_number_.end() || k >= it->second.size()) {
        out.push_back(-1);
        continue;
      }
      out.push_back(static_cast<std::ptrdiff_t>(it->second[k]));
    }
    return out;
  }

  void after_completion(const std::vector<std::ptrdiff_t>& slots,
                        const std::vector<MPI_Request>& handles) {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] < 0) continue;
      RequestSlot& s = slots_[static_cast<std::size_t>(slots[i])];
      s.handle = handles[i];
      if (s.handle == MPI_REQUEST_NULL && s.parked != MPI_REQUEST_NULL) {
        // The receive standing in for a start of a persistent wildcard
        // receive is done: the persistent request is the slot's again.
        s.handle = s.parked;
        s.parked = MPI_REQUEST_NULL;
        continue;
      }
      if (s.handle == MPI_REQUEST_NULL) release(static_cast<std::size_t>(slots[i]));
    }
  }

  // Waits (without completing) until request `i` could complete, so the
  // recorded call that found it complete finds it complete again.
  static void await_ready(MPI_Request r) {
    if (r == MPI_REQUEST_NULL) return;
    int flag = 0;
    while (!flag) PMPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  }

  void complete(const Event& ev) {
    const auto& slots = linked(ev);
    std::vector<MPI_Request>& handles = handles_scratch_;
    handles.assign(slots.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i] >= 0) handles[i] = slots_[static_cast<std::size_t>(slots[i])].handle;
    const int n = static_cast<int>(handles.size());
    const Variant v = table_[ev.op].variant;
    if (v == Variant::kWait) {
      if (n != 1) fail(ev, "MPI_Wait without exactly one request link");
      MPI_Wait(handles.data(), status_like(ev));
    } else if (v == Variant::kWaitall) {
      MPI_Waitall(n, handles.data(), MPI_STATUSES_IGNORE);
    } else {
      if (v == Variant::kTest && n != 1) fail(ev, "MPI_Test without exactly one request link");
      complete_as_recorded(ev, v, handles);
    }
    after_completion(slots, handles);
  }

  // Test*, Waitany, Waitsome: the call completes what the original's did
  // and nothing else (completion.hpp), whatever has arrived by now.
  void complete_as_recorded(const Event& ev, Variant v, std::vector<MPI_Request>& handles) {
    const int64_t flag = ev.get(f_.flag), index = ev.get(f_.index), outcount = ev.get(f_.outcount);
    Outcome& want = outcome_scratch_;
    want.found = flag == 1 || v == Variant::kWaitany || v == Variant::kWaitsome ||
                 (v == Variant::kTestsome && outcount > 0);
    want.index = index == kAbsent || index < 0 ? -1 : static_cast<int>(index);
    want.outcount = outcount == kAbsent || outcount < 0 ? -1 : static_cast<int>(outcount);
    const FieldValue* idx = ev.find(f_.indices);
    want.has_indices = idx != nullptr;
    want.indices.clear();
    if (idx)
      for (int64_t k : idx->list) want.indices.push_back(static_cast<int>(k));
    // Before a test that found requests complete: wait (without
    // completing) until they could, so the forced outcome is a true one.
    if (v == Variant::kTest && want.found) await_ready(handles[0]);
    if (v == Variant::kTestall && want.found)
      for (MPI_Request r : handles) await_ready(r);
    const bool recorded = (v == Variant::kTest || v == Variant::kTestall) ? flag != kAbsent
                          : v == Variant::kTestany ? flag != kAbsent && index != kAbsent
                          : v == Variant::kWaitany ? index != kAbsent
                                                   : outcount != kAbsent;
    if (prob_ || !recorded) {
      // Probabilistic replay's planned receives are not the trace's requests.
      issue_completion(v, handles, status_like(ev), indices_scratch_);
      return;
    }
    const CompletionResult r =
        force_completion(v, handles, want, status_like(ev), indices_scratch_);
    if (!r.problem.empty()) warn(ev, r.problem);
  }

  // ------------------------------------------------------------ issuing

  void issue(const Event& ev, const OpInfo& info) {
    switch (info.kind) {
      case Kind::kAbort: {
        std::fprintf(stderr, "tracefold replay: rank %d: the trace calls MPI_Abort here\n", rank_);
        MPI_Abort(comm_of(ev, f_.comm), 1);
        return;
      }
      case Kind::kPcontrol:
        MPI_Pcontrol(0);
        return;
      case Kind::kSend:
      case Kind::kSendInit:
        return point_send(ev, info);
      case Kind::kRecv:
      case Kind::kRecvInit:
        return point_recv(ev, info);
      case Kind::kSendrecv:
        return sendrecv(ev, info);
      case Kind::kProbe:
        return probe(ev, info);
      case Kind::kMprobe:
        return mprobe(ev, info);
      case Kind::kMrecv:
        return mrecv(ev, info);
      case Kind::kStart:
        return start(ev, info);
      case Kind::kRequestFree:
      case Kind::kCancel: {
        auto slots = linked(ev);
        std::vector<MPI_Request> handles(slots.size(), MPI_REQUEST_NULL);
        for (std::size_t i = 0; i < slots.size(); ++i)
          if (slots[i] >= 0) handles[i] = slots_[static_cast<std::size_t>(slots[i])].handle;
        if (handles.size() != 1) fail(ev, "expected one request link");
        if (prob_ && slots[0] < 0) return;  // a planned receive's request: not ours
        if (info.kind == Kind::kCancel) {
          MPI_Cancel(handles.data());
        } else {
          // A start of a persistent wildcard receive may stand in as a
          // plain receive: the persistent request goes too.
          RequestSlot* slot = slots[0] >= 0 ? &slots_[static_cast<std::size_t>(slots[0])] : nullptr;
          if (slot && slot->parked != MPI_REQUEST_NULL) MPI_Request_free(&slot->parked);
          MPI_Request_free(handles.data());
        }
        after_completion(slots, handles);
        return;
      }
      case Kind::kComplete:
        return complete(ev);
      case Kind::kCommDup:
      case Kind::kCommSplit:
      case Kind::kCommSplitType:
      case Kind::kCommCreate:
      case Kind::kCommCreateGroup:
      case Kind::kCartCreate:
      case Kind::kCartSub:
      case Kind::kIntercommCreate:
      case Kind::kIntercommMerge:
        return create_comm(ev, info);
      case Kind::kCommFree: {
        const int64_t id = ev.get(f_.comm);
        MPI_Comm c = comm_of(ev, f_.comm);
        if (c == MPI_COMM_WORLD || c == MPI_COMM_SELF || c == MPI_COMM_NULL)
          fail(ev, "frees a predefined communicator");
        MPI_Comm_free(&c);
        comms_.erase(id);
        carts_.erase(id);
        return;
      }
      case Kind::kCartQuery:
        return cart_query(ev, info);
      case Kind::kTypeCreate:
      case Kind::kTypeCommit:
      case Kind::kTypeFree:
      case Kind::kTypeQuery: {
        const std::string problem = types_.replay(ev, info.name);
        if (!problem.empty()) warn(ev, problem);
        return;
      }
      default:
        return collective(ev, info);
    }
  }

  void point_send(const Event& ev, const OpInfo& info) {
    MPI_Comm c = comm_of(ev, f_.comm);
    MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
    const int count = count_of(ev, f_.count);
    const int dest = rank_arg(ev.get(f_.peer));
    const int tag = tag_arg(ev.get(f_.tag));
    const std::size_t bytes = static_cast<std::size_t>(count) * extent_of(t);
    int size = 0;
    PMPI_Type_size(t, &size);
    if (dest != MPI_PROC_NULL && info.kind == Kind::kSend)
      bytes_sent_ += static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
    if (!info.nonblocking) {
      char* buf = scratch(send_buf_, bytes);
      switch (info.variant) {
        case Variant::kBuffered:
          MPI_Bsend(buf, count, t, dest, tag, c);
          break;
        case Variant::kSynchronous:
          MPI_Ssend(buf, count, t, dest, tag, c);
          break;
        case Variant::kReady:
          MPI_Rsend(buf, count, t, dest, tag, c);
          break;
        default:
          MPI_Send(buf, count, t, dest, tag, c);
      }
      return;
    }
    RequestSlot& s = new_slot();
    char* buf = scratch(s.send, bytes);
    if (info.kind == Kind::kSend) {
      switch (info.variant) {
        case Variant::kBuffered:
          MPI_Ibsend(buf, count, t, dest, tag, c, &s.handle);
          break;
        case Variant::kSynchronous:
          MPI_Issend(buf, count, t, dest, tag, c, &s.handle);
          break;
        case Variant::kReady:
          MPI_Irsend(buf, count, t, dest, tag, c, &s.handle);
          break;
        default:
          MPI_Isend(buf, count, t, dest, tag, c, &s.handle);
      }
    } else {
      s.persistent = true;
      // Counted at each MPI_Start, when the message goes out.
      s.send_bytes =
          dest == MPI_PROC_NULL ? 0 : static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
      switch (info.variant) {
        case Variant::kBuffered:
          MPI_Bsend_init(buf, count, t, dest, tag, c, &s.handle);
          break;
        case Variant::kSynchronous:
          MPI_Ssend_init(buf, count, t, dest, tag, c, &s.handle);
          break;
        case Variant::kReady:
          MPI_Rsend_init(buf, count, t, dest, tag, c, &s.handle);
          break;
        default:
          MPI_Send_init(buf, count, t, dest, tag, c, &s.handle);
      }
    }
    made_request();
  }

  // The recorder notes a wildcard's match only when the call had a status;
  // ask for one exactly when the original call did, so both traces agree.
  MPI_Status* status_like(const Event& ev) {
    return ev.get(f_.src) != kAbsent || ev.get(f_.mtag) != kAbsent ? &status_ : MPI_STATUS_IGNORE;
  }

  std::pair<int, int> source_and_tag(const Event& ev, FieldId peer_field, FieldId tag_field) {
    int src = rank_arg(ev.get(peer_field));
    int tag = tag_arg(ev.get(tag_field));
    if (opts_.deterministic) {
      if (src == MPI_ANY_SOURCE && ev.get(f_.src) != kAbsent) src = rank_arg(ev.get(f_.src));
      if (tag == MPI_ANY_TAG && ev.get(f_.mtag) != kAbsent) tag = tag_arg(ev.get(f_.mtag));
    }
    return {src, tag};
  }

  void point_recv(const Event& ev, const OpInfo& info) {
    MPI_Comm c = comm_of(ev, f_.comm);
    MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
    const int count = count_of(ev, f_.count);
    auto [src, tag] = source_and_tag(ev, f_.peer, f_.tag);
    const std::size_t bytes = static_cast<std::size_t>(count) * extent_of(t);
    if (!info.nonblocking) {
      MPI_Recv(scratch(recv_buf_, bytes), count, t, src, tag, c, status_like(ev));
      return;
    }
    RequestSlot& s = new_slot();
    char* buf = scratch(s.recv, bytes);
    if (opts_.deterministic && (src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)) {
      // The match is on the completion, later: look it up by the number
      // this request is about to get.
      auto it = matched_.find(request_events_ + 1);
      if (it != matched_.end()) {
        if (src == MPI_ANY_SOURCE && it->second.first != kAbsent) src = rank_arg(it->second.first);
        if (tag == MPI_ANY_TAG && it->second.second != kAbsent) tag = tag_arg(it->second.second);
      }
    }
    if (info.kind == Kind::kRecvInit) {
      s.persistent = true;
      if (opts_.deterministic && (src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)) {
        s.wild_persistent = true;
        s.wild_count = count;
        s.wild_src = src;
        s.wild_tag = tag;
        s.wild_type = t;
        s.wild_comm = c;
      }
      MPI_Recv_init(buf, count, t, src, tag, c, &s.handle);
    } else {
      MPI_Irecv(buf, count, t, src, tag, c, &s.handle);
    }
    made_request();
  }

  void sendrecv(const Event& ev, const OpInfo& info) {
    MPI_Comm c = comm_of(ev, f_.comm);
    MPI_Datatype st = datatype_of(ev, f_.dtype, f_.dsize);
    const int scount = count_of(ev, f_.count);
    const int dest = rank_arg(ev.get(f_.peer));
    const int stag = tag_arg(ev.get(f_.tag));
    auto [src, rtag] = source_and_tag(ev, f_.rpeer, f_.rtag);
    int size = 0;
    PMPI_Type_size(st, &size);
    if (dest != MPI_PROC_NULL)
      bytes_sent_ += static_cast<uint64_t>(scount) * static_cast<uint64_t>(size);
    if (info.name == "MPI_Sendrecv_replace") {
      MPI_Sendrecv_replace(scratch(recv_buf_, static_cast<std::size_t>(scount) * extent_of(st)),
                           scount, st, dest, stag, src, rtag, c, status_like(ev));
      return;
    }
    MPI_Datatype rt = datatype_of(ev, f_.rdtype, f_.rdsize);
    const int rcount = count_of(ev, f_.rcount);
    char* sbuf = scratch(send_buf_, static_cast<std::size_t>(scount) * extent_of(st));
    char* rbuf = scratch(recv_buf_, static_cast<std::size_t>(rcount) * extent_of(rt));
    MPI_Sendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, src, rtag, c, status_like(ev));
  }

  void probe(const Event& ev, const OpInfo& info) {
    MPI_Comm c = comm_of(ev, f_.comm);
    auto [src, tag] = source_and_tag(ev, f_.peer, f_.tag);
    if (!info.nonblocking) {
      MPI_Probe(src, tag, c, status_like(ev));
      return;
    }
    int flag = 0;
    const std::string problem =
        force_iprobe(src, tag, c, ev.get(f_.flag) == 1, status_like(ev), nullptr, &flag);
    if (!problem.empty()) warn(ev, problem);
  }

  void mprobe(const Event& ev, const OpInfo& info) {
    MPI_Comm c = comm_of(ev, f_.comm);
    auto [src, tag] = source_and_tag(ev, f_.peer, f_.tag);
    MPI_Message m = MPI_MESSAGE_NULL;
    if (!info.nonblocking) {
      MPI_Mprobe(src, tag, c, &m, status_like(ev));
    } else {
      int flag = 0;
      const std::string problem =
          force_iprobe(src, tag, c, ev.get(f_.flag) == 1, status_like(ev), &m, &flag);
      if (!problem.empty()) warn(ev, problem);
      if (!flag) return;
    }
    messages_.push_back(m);
  }

  void mrecv(const Event& ev, const OpInfo& info) {
    if (messages_.empty()) fail(ev, "receives a probed message, but no MPI_Mprobe found one");
    MPI_Message m = messages_.front();
    messages_.pop_front();
    MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
    const int count = count_of(ev, f_.count);
    const std::size_t bytes = static_cast<std::size_t>(count) * extent_of(t);
    if (!info.nonblocking) {
      MPI_Mrecv(scratch(recv_buf_, bytes), count, t, &m, status_like(ev));
      return;
    }
    RequestSlot& s = new_slot();
    MPI_Imrecv(scratch(s.recv, bytes), count, t, &m, &s.handle);
    made_request();
  }

  void start(const Event& ev, const OpInfo& info) {
    auto slots = linked(ev);
    // Probabilistic replay posts receives from its plan, not from the
    // trace: their persistent requests do not exist here.
    if (prob_) slots.erase(std::remove(slots.begin(), slots.end(), -1), slots.end());
    std::vector<MPI_Request> handles(slots.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] < 0) fail(ev, "starts a request the trace never created");
      handles[i] = slots_[static_cast<std::size_t>(slots[i])].handle;
      bytes_sent_ += slots_[static_cast<std::size_t>(slots[i])].send_bytes;
    }
    if (info.name == "MPI_Start") {
      if (handles.size() > 1 || (handles.empty() && !prob_))
        fail(ev, "MPI_Start without exactly one request link");
      RequestSlot* wild = handles.empty() ? nullptr : &slots_[static_cast<std::size_t>(slots[0])];
      auto match =
          wild && wild->wild_persistent ? matched_.find(request_events_ + 1) : matched_.end();
      if (match != matched_.end()) {
        // A persistent request cannot change its source from one start to
        // the next: this start posts a plain receive of the same arguments
        // naming what the original matched (its completion said so), and
        // the persistent request waits until that receive completes.
        int src = wild->wild_src, tag = wild->wild_tag;
        if (src == MPI_ANY_SOURCE && match->second.first != kAbsent)
          src = rank_arg(match->second.first);
        if (tag == MPI_ANY_TAG && match->second.second != kAbsent)
          tag = tag_arg(match->second.second);
        wild->parked = wild->handle;
        MPI_Irecv(wild->recv.data(), wild->wild_count, wild->wild_type, src, tag, wild->wild_comm,
                  &wild->handle);
      } else if (!handles.empty()) {
        MPI_Start(handles.data());
      }
    } else {
      MPI_Startall(static_cast<int>(handles.size()), handles.data());
    }
    const uint64_t number = ++request_events_;
    for (std::ptrdiff_t i : slots) {
      forget_number(static_cast<std::size_t>(i));
      slots_[static_cast<std::size_t>(i)].number = number;
      by_number_[number].push_back(static_cast<std::size_t>(i));
    }
  }

  // ------------------------------------------------------------ collectives

  void collective(const Event& ev, const OpInfo& info) {
    MPI_Comm c = comm_of(ev, f_.comm);
    const int n = std::max(comm_size(c), 1);
    const int me = comm_rank(c);
    RequestSlot* slot = info.nonblocking ? &new_slot() : nullptr;
    std::vector<char>& sb = slot ? slot->send : send_buf_;
    std::vector<char>& rb = slot ? slot->recv : recv_buf_;
    MPI_Request* req = slot ? &slot->handle : nullptr;
    const int root = ev.get(f_.root) == kAbsent ? 0 : static_cast<int>(ev.get(f_.root));
    MPI_Datatype t = datatype_of(ev, f_.dtype, f_.dsize);
    MPI_Datatype rt = ev.get(f_.rdtype) == kAbsent ? t : datatype_of(ev, f_.rdtype, f_.rdsize);
    const int count = count_of(ev, f_.count), rcount = count_of(ev, f_.rcount);
    const std::size_t ext = extent_of(t), rext = extent_of(rt);
    int tsize = 0;
    PMPI_Type_size(t, &tsize);
    const auto sz = [](int k) { return static_cast<std::size_t>(std::max(k, 0)); };
    auto add_sent = [&](uint64_t elements) {
      bytes_sent_ += elements * static_cast<uint64_t>(tsize);
    };
    auto prefix = [](const std::vector<int>& counts, std::vector<int>& displs) {
      displs.assign(counts.size(), 0);
      int at = 0;
      for (std::size_t i = 0; i < counts.size(); ++i) {
        displs[i] = at;
        at += counts[i];
      }
      return static_cast<std::size_t>(at);
    };
    std::vector<int> local_counts, local_displs, local_rcounts, local_rdispls;
    std::vector<int>& counts = slot ? slot->counts : local_counts;
    std::vector<int>& displs = slot ? slot->displs : local_displs;
    std::vector<int>& rcounts = slot ? slot->rcounts : local_rcounts;
    std::vector<int>& rdispls = slot ? slot->rdispls : local_rdispls;
    const bool nb = info.nonblocking;
    switch (info.kind) {
      case Kind::kBarrier:
        nb ? MPI_Ibarrier(c, req) : MPI_Barrier(c);
        break;
      case Kind::kBcast: {
        if (me == root) add_sent(sz(count));
        char* b = scratch(sb, sz(count) * ext);
        nb ? MPI_Ibcast(b, count, t, root, c, req) : MPI_Bcast(b, count, t, root, c);
        break;
      }
      case Kind::kReduce:
      case Kind::kAllreduce:
      case Kind::kScan:
      case Kind::kExscan: {
        add_sent(sz(count));
        MPI_Op op = redop_of(ev);
        char* s = scratch(sb, sz(count) * ext);
        char* r = scratch(rb, sz(count) * ext);
        if (info.kind == Kind::kReduce)
          nb ? MPI_Ireduce(s, r, count, t, op, root, c, req)
             : MPI_Reduce(s, r, count, t, op, root, c);
        else if (info.kind == Kind::kAllreduce)
          nb ? MPI_Iallreduce(s, r, count, t, op, c, req) : MPI_Allreduce(s, r, count, t, op, c);
        else if (info.kind == Kind::kScan)
          nb ? MPI_Iscan(s, r, count, t, op, c, req) : MPI_Scan(s, r, count, t, op, c);
        else
          nb ? MPI_Iexscan(s, r, count, t, op, c, req) : MPI_Exscan(s, r, count, t, op, c);
        break;
      }
      case Kind::kReduceScatter: {
        MPI_Op op = redop_of(ev);
        rcounts = counts_of(ev, f_.rcounts);
        rcounts.resize(sz(n), 0);
        std::size_t total = 0;
        for (int k : rcounts) total += sz(k);
        add_sent(total);
        char* s = scratch(sb, total * ext);
        char* r = scratch(rb, sz(rcounts[sz(me)]) * ext);
        nb ? MPI_Ireduce_scatter(s, r, rcounts.data(), t, op, c, req)
           : MPI_Reduce_scatter(s, r, rcounts.data(), t, op, c);
        break;
      }
      case Kind::kReduceScatterBlock: {
        MPI_Op op = redop_of(ev);
        add_sent(sz(count) * sz(n));
        char* s = scratch(sb, sz(count) * sz(n) * ext);
        char* r = scratch(rb, sz(count) * ext);
        nb ? MPI_Ireduce_scatter_block(s, r, count, t, op, c, req)
           : MPI_Reduce_scatter_block(s, r, count, t, op, c);
        break;
      }
      case Kind::kGather:
      case Kind::kAllgather:
      case Kind::kAlltoall: {
        const std::size_t per = info.kind == Kind::kAlltoall ? sz(n) : 1;
        add_sent(sz(count) * per);
        char* s = scratch(sb, sz(count) * per * ext);
        char* r = scratch(rb, sz(rcount) * sz(n) * rext);
        if (info.kind == Kind::kGather)
          nb ? MPI_Igather(s, count, t, r, rcount, rt, root, c, req)
             : MPI_Gather(s, count, t, r, rcount, rt, root, c);
        else if (info.kind == Kind::kAllgather)
          nb ? MPI_Iallgather(s, count, t, r, rcount, rt, c, req)
             : MPI_Allgather(s, count, t, r, rcount, rt, c);
        else
          nb ? MPI_Ialltoall(s, count, t, r, rcount, rt, c, req)
             : MPI_Alltoall(s, count, t, r, rcount, rt, c);
        break;
      }
      case Kind::kScatter: {
        if (me == root) add_sent(sz(count) * sz(n));
        char* s = scratch(sb, sz(count) * sz(n) * ext);
        char* r = scratch(rb, sz(rcount) * rext);
        nb ? MPI_Iscatter(s, count, t, r, rcount, rt, root, c, req)
           : MPI_Scatter(s, count, t, r, rcount, rt, root, c);
        break;
      }
      case Kind::kGatherv:
      case Kind::kAllgatherv: {
        rcounts = counts_of(ev, f_.rcounts);
        const bool have = rcounts.size() == sz(n);
        if (!have) rcounts.assign(sz(n), 0);
        const std::size_t total = prefix(rcounts, rdispls);
        add_sent(sz(count));
        char* s = scratch(sb, sz(count) * ext);
        char* r = scratch(rb, total * rext);
        if (info.kind == Kind::kGatherv) {
          const int* rc = have ? rcounts.data() : nullptr;
          const int* rd = have ? rdispls.data() : nullptr;
          nb ? MPI_Igatherv(s, count, t, r, rc, rd, rt, root, c, req)
             : MPI_Gatherv(s, count, t, r, rc, rd, rt, root, c);
        } else {
          if (!have) fail(ev, "MPI_Allgatherv without recorded receive counts");
          nb ? MPI_Iallgatherv(s, count, t, r, rcounts.data(), rdispls.data(), rt, c, req)
             : MPI_Allgatherv(s, count, t, r, rcounts.data(), rdispls.data(), rt, c);
        }
        break;
      }
      case Kind::kScatterv: {
        counts = counts_of(ev, f_.counts);
        const bool have = counts.size() == sz(n);
        if (!have) counts.assign(sz(n), 0);
        const std::size_t total = prefix(counts, displs);
        if (me == root) add_sent(total);
        char* s = scratch(sb, total * ext);
        char* r = scratch(rb, sz(rcount) * rext);
        const int* sc = have ? counts.data() : nullptr;
        const int* sd = have ? displs.data() : nullptr;
        nb ? MPI_Iscatterv(s, sc, sd, t, r, rcount, rt, root, c, req)
           : MPI_Scatterv(s, sc, sd, t, r, rcount, rt, root, c);
        break;
      }
      case Kind::kAlltoallv:
      case Kind::kAlltoallw: {
        // Alltoallw records no datatypes: its counts are moved as bytes.
        const bool w = info.kind == Kind::kAlltoallw;
        counts = counts_of(ev, f_.counts);
        rcounts = counts_of(ev, f_.rcounts);
        if (counts.size() != sz(n) || rcounts.size() != sz(n))
          fail(ev, info.name + " without recorded count vectors of the communicator's size");
        const std::size_t stotal = prefix(counts, displs), rtotal = prefix(rcounts, rdispls);
        char* s = scratch(sb, stotal * (w ? 1 : ext));
        char* r = scratch(rb, rtotal * (w ? 1 : rext));
        if (!w) {
          add_sent(stotal);
          nb ? MPI_Ialltoallv(s, counts.data(), displs.data(), t, r, rcounts.data(), rdispls.data(),
                              rt, c, req)
             : MPI_Alltoallv(s, counts.data(), displs.data(), t, r, rcounts.data(), rdispls.data(),
                             rt, c);
          break;
        }
        bytes_sent_ += stotal;
        std::vector<MPI_Datatype> local_types;
        std::vector<MPI_Datatype>& types = slot ? slot->types : local_types;
        types.assign(sz(n), MPI_BYTE);
        nb ? MPI_Ialltoallw(s, counts.data(), displs.data(), types.data(), r, rcounts.data(),
                            rdispls.data(), types.data(), c, req)
           : MPI_Alltoallw(s, counts.data(), displs.data(), types.data(), r, rcounts.data(),
                           rdispls.data(), types.data(), c);
        break;
      }
      default:
        fail(ev, "replay does not perform this operation");
    }
    if (slot) made_request();
  }

  // ------------------------------------------------------------ communicators

  const std::vector<int32_t>* members_of(int64_t id) const {
    const CommGroup* g = trace_.comms.group_of(id, rank_);
    return g ? &g->members : nullptr;
  }

  // The recorded members, in their recorded order, as a group (built with
  // PMPI: group calls are not part of the trace).
  static MPI_Group group_of_members(const std::vector<int32_t>& world_members) {
    MPI_Group world, sub;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    std::vector<int> ranks(world_members.begin(), world_members.end());
    PMPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &sub);
    PMPI_Group_free(&world);
    return sub;
  }

  void create_comm(const Event& ev, const OpInfo& info) {
    MPI_Comm parent = comm_of(ev, f_.comm);
    const int64_t id = ev.get(f_.newcomm);
    MPI_Comm created = MPI_COMM_NULL;
    switch (info.kind) {
      case Kind::kCommDup:
        if (info.name == "MPI_Comm_dup_with_info")
          MPI_Comm_dup_with_info(parent, MPI_INFO_NULL, &created);
        else
          MPI_Comm_dup(parent, &created);
        break;
      case Kind::kCommSplit:
      case Kind::kCommSplitType: {
        int64_t color = ev.get(f_.color), key = ev.get(f_.key);
        const int c =
            color == kUndefined || color == kAbsent ? MPI_UNDEFINED : static_cast<int>(color);
        const int k = key == kAbsent ? 0 : static_cast<int>(key);
        if (info.kind == Kind::kCommSplit)
          MPI_Comm_split(parent, c, k, &created);
        else
          MPI_Comm_split_type(parent, c, k, MPI_INFO_NULL, &created);
        break;
      }
      case Kind::kCommCreate:
      case Kind::kCommCreateGroup: {
        MPI_Group g = MPI_GROUP_EMPTY;
        if (id != kNull && id != kAbsent) {
          const auto* m = members_of(id);
          if (!m)
            fail(ev,
                 "communicator " + std::to_string(id) + " has no recorded members for this rank");
          g = group_of_members(*m);
        }
        if (info.kind == Kind::kCommCreate) {
          MPI_Comm_create(parent, g, &created);
        } else {
          const int64_t tag = ev.get(f_.tag);
          MPI_Comm_create_group(parent, g, tag == kAbsent ? 0 : static_cast<int>(tag), &created);
        }
        if (g != MPI_GROUP_EMPTY) PMPI_Group_free(&g);
        break;
      }
      case Kind::kCartCreate: {
        const int64_t nd = ev.get(f_.ndims);
        const int ndims = nd == kAbsent || nd < 1 ? 1 : static_cast<int>(nd);
        // Dimensions are not recorded: the members of the new communicator
        // give its size, MPI_Dims_create a shape (what most codes use).
        int size = comm_size(parent);
        if (id != kNull && id != kAbsent) {
          if (const auto* m = members_of(id)) size = static_cast<int>(m->size());
        } else if (auto all = trace_.comms.all().find(id);
                   all != trace_.comms.all().end() && !all->second.empty()) {
          size = static_cast<int>(all->second.front().members.size());
        }
        std::vector<int> dims(static_cast<std::size_t>(ndims), 0), periods(dims.size(), 0);
        PMPI_Dims_create(size, ndims, dims.data());
        MPI_Cart_create(parent, ndims, dims.data(), periods.data(), 0, &created);
        if (id != kNull && id != kAbsent) carts_[id].dims = dims;
        break;
      }
      case Kind::kCartSub: {
        const int64_t pid = ev.get(f_.comm);
        auto cart = carts_.find(pid);
        if (cart == carts_.end())
          fail(ev, "MPI_Cart_sub of a communicator that is not a replayed cartesian one");
        const auto& dims = cart->second.dims;
        const auto* want = id == kNull || id == kAbsent ? nullptr : members_of(id);
        // remain_dims is not recorded: pick the one whose sub-grid holds
        // exactly the recorded members.
        std::vector<int> remain(dims.size(), 0);
        bool found = false;
        const int me = comm_rank(parent);
        std::vector<int> my(dims.size());
        PMPI_Cart_coords(parent, me, static_cast<int>(dims.size()), my.data());
        for (uint32_t mask = 0; mask < (1u << dims.size()) && !found; ++mask) {
          std::vector<int32_t> members;
          const int n = comm_size(parent);
          for (int r = 0; r < n; ++r) {
            std::vector<int> co(dims.size());
            PMPI_Cart_coords(parent, r, static_cast<int>(dims.size()), co.data());
            bool same = true;
            for (std::size_t d = 0; d < dims.size(); ++d)
              if (!(mask & (1u << d)) && co[d] != my[d]) same = false;
            if (same) members.push_back(world_rank_of(parent, r));
          }
          if (want && members == *want) {
            for (std::size_t d = 0; d < dims.size(); ++d) remain[d] = (mask >> d) & 1u;
            found = true;
          }
        }
        if (!found)
          fail(ev, "no sub-grid of the replayed cartesian communicator has the recorded members");
        MPI_Cart_sub(parent, remain.data(), &created);
        std::vector<int> sub_dims;
        for (std::size_t d = 0; d < dims.size(); ++d)
          if (remain[d]) sub_dims.push_back(dims[d]);
        if (!sub_dims.empty()) carts_[id].dims = sub_dims;
        break;
      }
      case Kind::kIntercommCreate: {
        // Traces from before the peer communicator and the leaders were
        // recorded cannot say whom to join.
        const int64_t lleader = ev.get(f_.root), rleader = ev.get(f_.rleader);
        if (lleader == kAbsent || rleader == kAbsent || ev.get(f_.pcomm) == kAbsent)
          fail(ev,
               "the trace does not record MPI_Intercomm_create's leaders (recorded by an older "
               "tracefold)");
        MPI_Comm peer = comm_of(ev, f_.pcomm);
        const int64_t tag = ev.get(f_.tag);
        MPI_Intercomm_create(parent, static_cast<int>(lleader), peer, static_cast<int>(rleader),
                             tag == kAbsent ? 0 : static_cast<int>(tag), &created);
        break;
      }
      case Kind::kIntercommMerge: {
        const int64_t high = ev.get(f_.high);
        if (high == kAbsent)
          fail(ev,
               "the trace does not record MPI_Intercomm_merge's high flag (recorded by an older "
               "tracefold)");
        MPI_Intercomm_merge(parent, high != 0, &created);
        break;
      }
      default:
        fail(ev, "not a communicator constructor");
    }
    if (id == kAbsent || id == kNull) {
      if (created != MPI_COMM_NULL)
        fail(ev, "the recorded call made no communicator here, the replayed one did");
      return;
    }
    if (created == MPI_COMM_NULL)
      fail(ev, "the replayed call made no communicator, the recorded one did");
    comms_[id] = created;
  }

  int world_rank_of(MPI_Comm c, int r) {
    MPI_Group g, world;
    PMPI_Comm_group(c, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    int out = -1;
    PMPI_Group_translate_ranks(g, 1, &r, world, &out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&world);
    return out;
  }

  void cart_query(const Event& ev, const OpInfo& info) {
    MPI_Comm c = comm_of(ev, f_.comm);
    auto cart = carts_.find(ev.get(f_.comm));
    const int nd = cart == carts_.end() ? 1 : static_cast<int>(cart->second.dims.size());
    if (info.name == "MPI_Cart_shift") {
      int s = 0, d = 0;
      MPI_Cart_shift(c, 0, 1, &s, &d);
    } else if (info.name == "MPI_Cart_coords") {
      std::vector<int> co(static_cast<std::size_t>(nd));
      MPI_Cart_coords(c, comm_rank(c), nd, co.data());
    } else {
      std::vector<int> co(static_cast<std::size_t>(nd), 0);
      int r = 0;
      MPI_Cart_rank(c, co.data(), &r);
    }
  }

  const Trace& trace_;
  const ReplayOptions& opts_;
  int32_t rank_;
  std::vector<OpInfo> table_;
  Fields f_{};
  std::mt19937_64 rng_;
  uint64_t calls_ = 0;
  uint64_t bytes_sent_ = 0;
  uint64_t position_ = 0;
  std::vector<char> send_buf_, recv_buf_;
  std::deque<RequestSlot> slots_;
  std::vector<std::size_t> free_slots_;
  std::size_t current_slot_ = 0;
  std::unordered_map<uint64_t, std::vector<std::size_t>> by_number_;
  uint64_t request_events_ = 0;
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> matched_;
  std::unordered_map<int64_t, MPI_Comm> comms_;
  std::unordered_map<int64_t, CartInfo> carts_;
  TypeReplay types_;
  std::unordered_map<int64_t, MPI_Op> user_ops_;
  std::deque<MPI_Message> messages_;
  MPI_Status status_{};
  std::vector<std::pair<uint64_t, uint64_t>> per_op_ =
      std::vector<std::pair<uint64_t, uint64_t>>(OpTable::size());
  std::vector<std::pair<uint64_t, std::size_t>> seen_scratch_;
  std::vector<std::ptrdiff_t> linked_scratch_;
  std::vector<MPI_Request> handles_scratch_;
  std::vector<int> indices_scratch_;
  Outcome outcome_scratch_;
  std::ptrdiff_t node_ = -1;  // the node of the event being issued
  bool prob_ = false;
  int64_t last_exit_ns_ = 0;  // end of the last replayed MPI call (0: none yet)
  std::unique_ptr<LossyResolver> lossy_;
  double est_ns_ = 0;
  std::vector<Incoming> incoming_;
  std::size_t next_incoming_ = 0;
  std::deque<Posted> posted_;
};

}  // namespace

// ------------------------------------------------------------------ driver

namespace {

bool uses_bsend(const Trace& t) {
  for (const Node& n : t.nodes) {
    const std::string& name = OpTable::name(n.key.op);
    if (name == "MPI_Bsend" || name == "MPI_Ibsend" || name == "MPI_Bsend_init") return true;
  }
  return false;
}

// Every rank reaches the same verdict; rank 0 says it once.
int refuse(int rank, const std::string& what) {
  if (rank == 0) std::fprintf(stderr, "tracefold replay: error: %s\n", what.c_str());
  PMPI_Finalize();
  return 2;
}

}  // namespace

int run_replay(const std::string& trace_path, const ReplayOptions& options, int* argc,
               char*** argv) {
  // The trace decides which MPI_Init variant to call, so it is read first.
  Trace trace;
  std::string load_error;
  try {
    trace = load_trace(trace_path);
    check_replayable(trace);
    preflight_check(trace, options);
  } catch (const std::exception& ex) {
    load_error = ex.what();
  }
  bool init_thread = false;
  if (load_error.empty() && trace.world_size > 0) {
    try {
      RankIterator first(trace, 0);
      Event ev;
      if (first.next(ev)) init_thread = OpTable::name(ev.op) == "MPI_Init_thread";
    } catch (const std::exception& ex) {
      load_error = ex.what();
    }
  }
  if (init_thread) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
  } else {
    MPI_Init(argc, argv);
  }
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!load_error.empty()) return refuse(rank, load_error);
  if (size != trace.world_size)
    return refuse(rank, trace_path + " was recorded with " + std::to_string(trace.world_size) +
                            " ranks; run the replay with mpirun -np " +
                            std::to_string(trace.world_size) + " (this run has " +
                            std::to_string(size) + ")");
  // Only value histograms lose what replay needs (which message went where);
  // other lossy options (approximate call sites) replay exactly.
  const bool probabilistic =
      options.probabilistic.value_or(trace.lossy.find("histogram") != std::string::npos);

  MPI_Comm control;  // private: the replay's own coordination is not traced
  PMPI_Comm_dup(MPI_COMM_WORLD, &control);
  std::vector<char> bsend_buffer;
  if (uses_bsend(trace)) {
    bsend_buffer.resize(64u << 20);
    PMPI_Buffer_attach(bsend_buffer.data(), static_cast<int>(bsend_buffer.size()));
  }

  Engine engine(trace, options, rank);
  int failed = 0;
  std::string error;
  PMPI_Barrier(control);
  const double t0 = PMPI_Wtime();
  try {
    if (probabilistic)
      engine.enable_probabilistic();
    else if (options.deterministic)
      engine.prescan_wildcards();
    engine.run();
    engine.release_mpi_objects();
  } catch (const std::exception& ex) {
    failed = 1;
    error = ex.what();
  }
  const double elapsed = PMPI_Wtime() - t0;
  if (failed) {
    // Other ranks may be blocked in a call this rank will never make.
    std::fprintf(stderr, "tracefold replay: error: %s\n", error.c_str());
    PMPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
  double wall = 0;
  unsigned long long mine[2] = {engine.calls(), engine.bytes_sent()}, total[2] = {0, 0};
  PMPI_Reduce(&elapsed, &wall, 1, MPI_DOUBLE, MPI_MAX, 0, control);
  PMPI_Reduce(mine, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, control);
  if (!bsend_buffer.empty()) {
    void* b = nullptr;
    int s = 0;
    PMPI_Buffer_detach(&b, &s);
  }
  if (options.counts_file) {
    // rank op calls bytes: what each rank issued, for checks against a trace.
    std::string mine_text;
    const auto& per_op = engine.per_op();
    for (std::size_t op = 0; op < per_op.size(); ++op) {
      if (per_op[op].first == 0) continue;
      mine_text += std::to_string(rank) + " " + OpTable::name(static_cast<OpId>(op)) + " " +
                   std::to_string(per_op[op].first) + " " + std::to_string(per_op[op].second) +
                   "\n";
    }
    int len = static_cast<int>(mine_text.size());
    std::vector<int> lens(static_cast<std::size_t>(size)), displs(lens.size());
    PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, control);
    std::string all;
    if (rank == 0) {
      int at = 0;
      for (std::size_t i = 0; i < lens.size(); ++i) {
        displs[i] = at;
        at += lens[i];
      }
      all.resize(static_cast<std::size_t>(at));
    }
    PMPI_Gatherv(mine_text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                 0, control);
    if (rank == 0) {
      std::FILE* f = std::fopen(options.counts_file->c_str(), "w");
      if (!f || std::fwrite(all.data(), 1, all.size(), f) != all.size())
        std::fprintf(stderr, "tracefold replay: error: cannot write %s\n",
                     options.counts_file->c_str());
      if (f) std::fclose(f);
    }
  }
  PMPI_Comm_free(&control);
  if (rank == 0) {
    ReplaySummary sum;
    sum.ranks = size;
    sum.wall_seconds = wall;
    sum.calls = total[0];
    sum.bytes_sent = total[1];
    sum.probabilistic = probabilistic;
    std::string line = sum.line();
    if (options.compare_time && *options.compare_time > 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, ", original %.3f s, error %.1f%%", *options.compare_time,
                    100.0 * std::fabs(wall - *options.compare_time) / *options.compare_time);
      line += buf;
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}

}  // namespace tracefold
