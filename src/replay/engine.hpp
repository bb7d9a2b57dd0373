// The replay engine: one rank's walk through its events, issuing each as
// the MPI call it records. Its member functions live in one file per
// operation family (engine_p2p.cpp, engine_collectives.cpp, ...).
#pragma once

#include "tracefold/replay.hpp"

#include "gap_clock.hpp"

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
#include "shared_comms.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/wildcards.hpp"

namespace tracefold::replay_detail {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Busy-waits on the wall clock: the computation a replay stands in for
// keeps its core, which a sleep would give away.
inline void spin_until(int64_t until_ns) {
  while (now_ns() < until_ns) {
  }
}

// Below this much processor time left, a computation stops spinning: one
// more reading of the processor clock would cost about as much.
inline constexpr int64_t kCpuSpinSlackNs = 1000;
// Processor-time computations shorter than this spin on the wall clock: a
// rank is rarely descheduled within one, and two readings of the
// processor clock would be a large part of it.
inline constexpr int64_t kCpuClockMinNs = 50000;

inline int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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
  // MPI_Ineighbor_alltoallw's displacements are MPI_Aint.
  std::vector<MPI_Aint> aint_sdispls, aint_rdispls;
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
  // Replays location `thread` x P + `rank`. With `shared` (a trace with
  // threads), communicators made by another thread of the rank are awaited
  // from it, and those this thread makes are published there.
  Engine(const Trace& trace, const ReplayOptions& options, int32_t rank, int32_t thread = 0,
         SharedComms* shared = nullptr)
      : trace_(trace),
        opts_(options),
        rank_(rank),
        thread_(thread),
        location_(thread * trace.world_size + rank),
        shared_(shared),
        table_(op_table()),
        rng_(options.seed * 0x9E3779B97F4A7C15ull +
             static_cast<uint64_t>(thread * trace.world_size + rank)) {
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
    f_.dims = field("dims", FieldKind::kList);
    f_.periods = field("periods", FieldKind::kList);
    f_.gindex = field("gindex", FieldKind::kList);
    f_.gedges = field("gedges", FieldKind::kList);
    f_.gsrcs = field("gsrcs", FieldKind::kList);
    f_.gdsts = field("gdsts", FieldKind::kList);
    f_.flag = field("flag");
    f_.index = field("index");
    f_.outcount = field("outcount");
    f_.indices = field("indices", FieldKind::kList);
    f_.links = FieldTable::links();
    comms_[CommTable::kWorld] = MPI_COMM_WORLD;
  }

  // Before MPI_Finalize (not in a destructor: MPI must still be running).
  void release_mpi_objects();

  // Resolves wildcard matches ahead of time (deterministic mode): the
  // matched source of a nonblocking wildcard receive is recorded on the call
  // that completed it, later in the sequence (src/mtag of Wait, Test,
  // Waitany, Testany; srcs/mtags of Waitall, Testall, Waitsome, Testsome).
  void prescan_wildcards();

  // Walks the rank's events; stops at MPI_Finalize (the caller finalizes).
  void run();

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
  void enable_probabilistic();

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

  void add_incoming(int32_t sender, const Event& ev, double est, uint64_t order);

  void plan_incoming();

  // Posts the next planned receive if its communicator exists here yet.
  bool post_next();

  void post_due();

  void post_all_postable();

  // Waits until every request in `handles` could complete, posting planned
  // receives while it waits (the sender this rank waits for may itself be
  // waiting for one of them).
  void progress_until_ready(const std::vector<MPI_Request>& handles, bool any = false);

  void finish_probabilistic();

  void send_now(const Event& ev, int dest, int tag, MPI_Comm c);

  void issue_probabilistic(const Event& ev, const OpInfo& info);

 public:
  uint64_t calls() const { return calls_; }
  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  struct Fields {
    FieldId peer, rpeer, src, tag, rtag, mtag, count, dtype, dsize, rcount, rdtype, rdsize, counts,
        rcounts, root, redop, comm, newcomm, pcomm, rleader, high, color, key, ndims, flag, index,
        outcount, indices, links, dims, periods, gindex, gedges, gsrcs, gdsts;
  };

  static FieldId field(const char* name, FieldKind kind = FieldKind::kScalar) {
    return FieldTable::intern(name, kind);
  }

  // Where the replay cannot do what the trace recorded: said once per call,
  // and the replay goes on.
  void warn(const Event& ev, const std::string& what) const;

  [[noreturn]] void fail(const Event& ev, const std::string& what) const {
    throw ReplayError(who() + ", event " + std::to_string(position_) + " (" + OpTable::name(ev.op) +
                      "): " + what);
  }
  // "rank R", or "rank R thread T" in the replay of a trace with threads.
  std::string who() const {
    return "rank " + std::to_string(rank_) +
           (shared_ ? " thread " + std::to_string(thread_) : std::string());
  }

  bool scaled(const Event& ev) const;

  // ------------------------------------------------------------ computation

  void compute(const Event& ev, const Node* node, EventKey prev);
  // Spins for the event's compute_cpu statistic; false when it has none.
  bool compute_cpu(const Event& ev, const Node* node, EventKey prev);
  // Wall time left of a gap of `ns` from the end of the last call (GapClock).
  int64_t gap_left(int64_t ns);

  int64_t sample(const Histogram& h);

  // ------------------------------------------------------------ arguments

  // MPI_Graph_create / MPI_Dist_graph_create_adjacent from their recorded
  // arguments.
  MPI_Comm create_graph(const Event& ev, const OpInfo& info, MPI_Comm parent);
  // (sources, destinations) of a neighbourhood collective on `c`; -1 if `c`
  // has no topology.
  static std::pair<int, int> neighbour_counts(MPI_Comm c);
  MPI_Comm comm_of(const Event& ev, FieldId f);

  MPI_Datatype datatype_of(const Event& ev, FieldId id_field, FieldId size_field);

  MPI_Op redop_of(const Event& ev);

  int count_of(const Event& ev, FieldId f);

  std::vector<int> counts_of(const Event& ev, FieldId f);

  static std::size_t extent_of(MPI_Datatype t);

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

  void fill(std::vector<char>& buf, std::size_t bytes);

  char* scratch(std::vector<char>& buf, std::size_t bytes) {
    fill(buf, std::max<std::size_t>(bytes, 1));
    return buf.data();
  }

  // ------------------------------------------------------------ requests

  RequestSlot& new_slot();

  // After a request-making call: numbers it the way the recorder does.
  void made_request();

  void release(std::size_t i);

  void forget_number(std::size_t slot);

  // Slots named by a completion call's links (backward distances). Requests
  // started by one MPI_Startall share a number, so repeats of a distance
  // name the group's requests in order.
  // The result lives in a buffer reused by the next call.
  const std::vector<std::ptrdiff_t>& linked(const Event& ev);

  void after_completion(const std::vector<std::ptrdiff_t>& slots,
                        const std::vector<MPI_Request>& handles);

  // Waits (without completing) until request `i` could complete, so the
  // recorded call that found it complete finds it complete again.
  static void await_ready(MPI_Request r) {
    if (r == MPI_REQUEST_NULL) return;
    int flag = 0;
    while (!flag) PMPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  }

  void complete(const Event& ev);

  // Test*, Waitany, Waitsome: the call completes what the original's did
  // and nothing else (completion.hpp), whatever has arrived by now.
  void complete_as_recorded(const Event& ev, Variant v, std::vector<MPI_Request>& handles);

  // ------------------------------------------------------------ issuing

  void issue(const Event& ev, const OpInfo& info);
  // issue() in the rank-wide order of point-to-point calls across threads
  // the trace notes (SharedComms::ordered).
  void ordered_issue(const Event& ev, const OpInfo& info);

  void point_send(const Event& ev, const OpInfo& info);

  // The recorder notes a wildcard's match only when the call had a status;
  // ask for one exactly when the original call did, so both traces agree.
  MPI_Status* status_like(const Event& ev) {
    return ev.get(f_.src) != kAbsent || ev.get(f_.mtag) != kAbsent ? &status_ : MPI_STATUS_IGNORE;
  }

  std::pair<int, int> source_and_tag(const Event& ev, FieldId peer_field, FieldId tag_field);

  void point_recv(const Event& ev, const OpInfo& info);

  void sendrecv(const Event& ev, const OpInfo& info);

  void probe(const Event& ev, const OpInfo& info);

  void mprobe(const Event& ev, const OpInfo& info);

  void mrecv(const Event& ev, const OpInfo& info);

  void start(const Event& ev, const OpInfo& info);

  // ------------------------------------------------------------ collectives

  void collective(const Event& ev, const OpInfo& info);

  // ------------------------------------------------------------ communicators

  const MemberList* members_of(int64_t id) const;

  // The recorded members, in their recorded order, as a group (built with
  // PMPI: group calls are not part of the trace).
  static MPI_Group group_of_members(const MemberList& world_members);

  void create_comm(const Event& ev, const OpInfo& info);

  int world_rank_of(MPI_Comm c, int r);

  void cart_query(const Event& ev, const OpInfo& info);

  // A communicator another thread of the rank makes (threaded traces).
  MPI_Comm shared_comm(const Event& ev, int64_t id);

  const Trace& trace_;
  const ReplayOptions& opts_;
  int32_t rank_;
  int32_t thread_;
  int32_t location_;
  SharedComms* shared_;
  // Per key: this thread's next place in the rank's calls on it.
  std::map<OrderKey, uint64_t> order_next_;
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
  GapClock gaps_;             // what the walk overran of short gaps, owed by later ones
  std::unique_ptr<LossyResolver> lossy_;
  double est_ns_ = 0;
  std::vector<Incoming> incoming_;
  std::size_t next_incoming_ = 0;
  std::deque<Posted> posted_;
};

}  // namespace tracefold::replay_detail
