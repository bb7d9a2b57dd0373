// A trace as SMPI time-independent actions, one file per rank, written
// while walking each rank with RankIterator (docs/simulate.md lists the
// mapping of every operation).
#include <charconv>
#include <deque>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "tracefold/expand.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/simulate.hpp"

namespace fs = std::filesystem;

namespace tracefold {

namespace {

FieldId field(const char* name, FieldKind kind = FieldKind::kScalar) {
  return FieldTable::intern(name, kind);
}

struct Fields {
  FieldId peer = field("peer"), src = field("src"), rpeer = field("rpeer"), tag = field("tag"),
          mtag = field("mtag"), rtag = field("rtag"), count = field("count"),
          dsize = field("dsize"), rcount = field("rcount"), rdsize = field("rdsize"),
          comm = field("comm"), root = field("root"), index = field("index"),
          counts = field("counts", FieldKind::kList), rcounts = field("rcounts", FieldKind::kList),
          links = field("links", FieldKind::kList), indices = field("indices", FieldKind::kList);
};

// A request as SMPI's replay files it: by sender, receiver and tag.
struct Request {
  bool known = false;
  int64_t src = 0, dst = 0, tag = 0;
};

// Longest backward link followed; a completion linking further back than
// this is reported rather than guessed.
constexpr std::size_t kRequestHistory = 1 << 16;

class RankWriter {
 public:
  RankWriter(const Trace& trace, int32_t rank, const ActionOptions& options, const Fields& f,
             ActionSummary& summary, std::ostream& out)
      : trace_(trace), rank_(rank), opt_(options), f_(f), sum_(summary), out_(out) {}

  void run() {
    line() << "init";
    end();
    RankIterator it(trace_, rank_);
    Event ev;
    while (it.next(ev)) {
      node_ = it.current_node();
      emit(ev);
    }
    line() << "finalize";
    end();
    sum_.compute_seconds_max = std::max(sum_.compute_seconds_max, compute_ns_ * 1e-9);
  }

 private:
  std::ostream& line() {
    out_ << rank_ << ' ';
    return out_;
  }
  void end() {
    out_ << '\n';
    ++sum_.actions;
  }
  static std::string num(double v) {
    char buf[32];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    (void)ec;
    return std::string(buf, p);
  }

  void unsupported(const Event& ev, const std::string& reason) {
    Unsupported& u = sum_.unsupported[OpTable::name(ev.op)];
    if (u.calls++ == 0) {
      u.reason = reason;
      const auto node = node_ ? static_cast<std::size_t>(node_ - trace_.nodes.data()) : 0;
      u.first_at = "node #" + std::to_string(node) + ", rank " + std::to_string(rank_);
    }
  }

  int64_t get(const Event& ev, FieldId id, int64_t otherwise = 0) const {
    const int64_t v = ev.get(id);
    return v == kAbsent ? otherwise : v;
  }
  int64_t bytes(const Event& ev, FieldId count, FieldId dsize) const {
    return get(ev, count) * get(ev, dsize, 1);
  }
  std::vector<int64_t> byte_list(const Event& ev, FieldId counts, FieldId dsize) const {
    const FieldValue* fv = ev.find(counts);
    std::vector<int64_t> out(static_cast<std::size_t>(trace_.world_size), 0);
    if (fv)
      for (std::size_t i = 0; i < out.size() && i < fv->list.size(); ++i)
        out[i] = is_sentinel(fv->list[i]) ? 0 : fv->list[i] * get(ev, dsize, 1);
    return out;
  }

  // SMPI's replay runs every collective on MPI_COMM_WORLD; a communicator
  // with the world's members in the world's order is the same thing.
  bool on_world(const Event& ev) {
    const int64_t comm = ev.get(f_.comm);
    if (comm == kAbsent || comm == CommTable::kWorld) return true;
    auto [it, fresh] = world_like_.try_emplace(comm, false);
    if (fresh) {
      const CommGroup* g = trace_.comms.group_of(comm, rank_);
      it->second = g && g->members == MemberList::run(0, 1, trace_.world_size);
    }
    return it->second;
  }
  // World rank of a peer given in the event's communicator.
  int64_t world(const Event& ev, int64_t peer) const {
    const int64_t comm = ev.get(f_.comm);
    if (comm == kAbsent || comm == CommTable::kWorld) return peer;
    const CommGroup* g = trace_.comms.group_of(comm, rank_);
    if (!g || peer < 0 || peer >= static_cast<int64_t>(g->members.size()))
      throw SimulateError("rank " + std::to_string(rank_) + ": peer " + std::to_string(peer) +
                          " is not in communicator " + std::to_string(comm));
    return g->members[static_cast<std::size_t>(peer)];
  }

  void compute(int64_t ns) {
    if (ns <= 0) return;
    compute_ns_ += static_cast<double>(ns);
    // Multiplying before dividing keeps whole nanoseconds at 1 Gf/s whole.
    if (opt_.compute == ComputeAs::kFlops)
      line() << "compute " << num(static_cast<double>(ns) * opt_.host_speed / 1e9);
    else
      line() << "sleep " << num(static_cast<double>(ns) / 1e9);
    end();
  }

  void emit(const Event& ev) {
    compute(ev.compute_ns);
    const OpTraits& t = op_traits(ev.op);
    Request made;  // what this call adds to the request history, if anything
    switch (t.family) {
      // Nothing to simulate: local calls, and calls whose time is in the
      // surrounding ones (a blocking probe waits for the message the
      // receive after it waits for too).
      case OpFamily::kMarker:
      case OpFamily::kInit:
      case OpFamily::kFinalize:
      case OpFamily::kPcontrol:
      case OpFamily::kProbe:
      case OpFamily::kGroup:
      case OpFamily::kCartQuery:
      case OpFamily::kCommFree:
      case OpFamily::kTypeCreate:
      case OpFamily::kTypeCommit:
      case OpFamily::kTypeFree:
      case OpFamily::kTypeQuery:
        break;
      case OpFamily::kSend:
        made = send(ev, t);
        break;
      case OpFamily::kRecv:
        made = recv(ev, t);
        break;
      case OpFamily::kSendrecv:
        sendrecv(ev);
        break;
      case OpFamily::kComplete:
        complete(ev, t);
        break;
      case OpFamily::kCommDup:
      case OpFamily::kCommSplit:
      case OpFamily::kCommSplitType:
      case OpFamily::kCommCreate:
      case OpFamily::kCommCreateGroup:
      case OpFamily::kCartCreate:
      case OpFamily::kCartSub:
        if (t.nonblocking) {
          unsupported(ev, "SMPI's replay has no nonblocking communicator creation");
          break;
        }
        // SMPI's comm_split/comm_dup actions are no-ops: the communicator
        // only matters to the collectives run on it, checked there.
        line() << (t.family == OpFamily::kCommDup ? "comm_dup" : "comm_split");
        end();
        break;
      default:
        if (t.collective() && t.shape != CollectiveShape::kNeighbor)
          collective(ev, t);
        else
          unsupported(ev, std::string("SMPI's replay has no ") +
                              std::string(to_string(t.category)) + " actions");
    }
    if (OpTable::makes_request(ev.op)) {
      requests_.push_back(made);
      if (requests_.size() > kRequestHistory) requests_.pop_front();
    }
  }

  Request send(const Event& ev, const OpTraits& t) {
    const int64_t peer = ev.get(f_.peer);
    if (peer == kNull) return {};
    const int64_t dst = world(ev, peer), tag = get(ev, f_.tag);
    line() << (t.nonblocking ? "isend " : "send ") << dst << ' ' << tag << ' '
           << bytes(ev, f_.count, f_.dsize);
    end();
    return {true, rank_, dst, tag};
  }

  Request recv(const Event& ev, const OpTraits& t) {
    int64_t peer = ev.get(f_.peer), tag = get(ev, f_.tag);
    if (peer == kNull) return {};
    // A blocking wildcard receive knows what it matched; a nonblocking one
    // only learns it at completion, which SMPI's replay cannot wait on by
    // source.
    if (peer == kAny || tag == kAny) {
      if (t.nonblocking) {
        unsupported(ev, "a nonblocking wildcard receive (SMPI files requests by source and tag)");
        return {};
      }
      if (peer == kAny) peer = ev.get(f_.src);
      if (tag == kAny) tag = ev.get(f_.mtag);
      if (is_sentinel(peer) || is_sentinel(tag)) {
        unsupported(ev, "a wildcard receive without its matched source and tag");
        return {};
      }
    }
    const int64_t src = world(ev, peer);
    line() << (t.nonblocking ? "irecv " : "recv ") << src << ' ' << tag << ' '
           << bytes(ev, f_.count, f_.dsize);
    end();
    return {true, src, rank_, tag};
  }

  void sendrecv(const Event& ev) {
    const int64_t dst = ev.get(f_.peer);
    int64_t src = ev.get(f_.rpeer);
    if (src == kAny) src = ev.get(f_.src);
    if (src == kAbsent || src == kAny) {
      unsupported(ev, "a send-receive without its matched source");
      return;
    }
    // SMPI's sendRecv sends and receives with tag 0 and needs both
    // datatypes (6 is SMPI's id of MPI_BYTE); when one side is
    // MPI_PROC_NULL only the other remains.
    if (dst != kNull && src != kNull) {
      line() << "sendRecv " << bytes(ev, f_.count, f_.dsize) << ' ' << world(ev, dst) << ' '
             << bytes(ev, f_.rcount, f_.rdsize) << ' ' << world(ev, src) << " 6 6";
      end();
    } else if (dst != kNull) {
      line() << "send " << world(ev, dst) << ' ' << get(ev, f_.tag) << ' '
             << bytes(ev, f_.count, f_.dsize);
      end();
    } else if (src != kNull) {
      line() << "recv " << world(ev, src) << ' ' << get(ev, f_.rtag) << ' '
             << bytes(ev, f_.rcount, f_.rdsize);
      end();
    }
  }

  // One wait (or test) per linked request: SMPI's own waitall waits for
  // every request the rank has pending, not only those the call named.
  void complete(const Event& ev, const OpTraits& t) {
    const FieldValue* links = ev.find(f_.links);
    if (!links) return;
    std::vector<std::size_t> which;
    const bool waits = t.variant == OpVariant::kWait || t.variant == OpVariant::kWaitall ||
                       t.variant == OpVariant::kWaitany || t.variant == OpVariant::kWaitsome;
    if (t.variant == OpVariant::kWaitany) {
      const int64_t index = ev.get(f_.index);
      if (index < 0 || index >= static_cast<int64_t>(links->list.size())) {
        unsupported(ev, "MPI_Waitany without a recorded index");
        return;
      }
      which.push_back(static_cast<std::size_t>(index));
    } else if (t.variant == OpVariant::kWaitsome) {
      const FieldValue* idx = ev.find(f_.indices);
      if (!idx) {
        unsupported(ev, "MPI_Waitsome without recorded indices");
        return;
      }
      for (int64_t i : idx->list)
        if (i >= 0 && i < static_cast<int64_t>(links->list.size()))
          which.push_back(static_cast<std::size_t>(i));
    } else {
      for (std::size_t i = 0; i < links->list.size(); ++i) which.push_back(i);
    }
    for (std::size_t i : which) {
      const int64_t d = links->list[i];
      if (is_sentinel(d) || d <= 0) continue;  // MPI_REQUEST_NULL
      if (static_cast<std::size_t>(d) > requests_.size()) {
        unsupported(ev, "a completion linked to a request too far back");
        continue;
      }
      const Request& r = requests_[requests_.size() - static_cast<std::size_t>(d)];
      if (!r.known) continue;  // made by a call reported as unsupported, or to PROC_NULL
      line() << (waits ? "wait " : "test ") << r.src << ' ' << r.dst << ' ' << r.tag;
      end();
    }
  }

  void collective(const Event& ev, const OpTraits& t) {
    if (t.nonblocking) {
      unsupported(ev, "SMPI's replay has no nonblocking collectives");
      return;
    }
    if (!on_world(ev)) {
      unsupported(ev,
                  "a collective on a communicator other than MPI_COMM_WORLD (SMPI's replay runs "
                  "every collective on MPI_COMM_WORLD)");
      return;
    }
    const int64_t send = bytes(ev, f_.count, f_.dsize);
    const int64_t recv = ev.get(f_.rcount) == kAbsent ? send : bytes(ev, f_.rcount, f_.rdsize);
    const int64_t root = get(ev, f_.root);
    auto list = [&](const std::vector<int64_t>& v) {
      for (int64_t x : v) out_ << ' ' << x;
    };
    switch (t.family) {
      case OpFamily::kBarrier:
        line() << "barrier";
        break;
      case OpFamily::kBcast:
        line() << "bcast " << send << ' ' << root;
        break;
      case OpFamily::kReduce:
        line() << "reduce " << send << " 0 " << root;
        break;
      case OpFamily::kAllreduce:
        line() << "allreduce " << send << " 0";
        break;
      case OpFamily::kScan:
        line() << "scan " << send << " 0";
        break;
      case OpFamily::kExscan:
        line() << "exscan " << send << " 0";
        break;
      case OpFamily::kAlltoall:
        line() << "alltoall " << send << ' ' << recv;
        break;
      case OpFamily::kGather:
        line() << "gather " << send << ' ' << recv << ' ' << root;
        break;
      case OpFamily::kAllgather:
        line() << "allgather " << send << ' ' << recv;
        break;
      case OpFamily::kScatter:
        line() << "scatter " << send << ' ' << recv << ' ' << root;
        break;
      case OpFamily::kGatherv:
        line() << "gatherv " << send;
        list(byte_list(ev, f_.rcounts, f_.rdsize));
        out_ << ' ' << root;
        break;
      case OpFamily::kAllgatherv:
        line() << "allgatherv " << send;
        list(byte_list(ev, f_.rcounts, f_.rdsize));
        break;
      case OpFamily::kScatterv:
        line() << "scatterv";
        list(byte_list(ev, f_.counts, f_.dsize));
        out_ << ' ' << recv << ' ' << root;
        break;
      case OpFamily::kAlltoallv: {
        const auto s = byte_list(ev, f_.counts, f_.dsize), r = byte_list(ev, f_.rcounts, f_.rdsize);
        int64_t ssum = 0, rsum = 0;
        for (int64_t x : s) ssum += x;
        for (int64_t x : r) rsum += x;
        line() << "alltoallv " << ssum;
        list(s);
        out_ << ' ' << rsum;
        list(r);
        break;
      }
      case OpFamily::kReduceScatter:
        line() << "reducescatter";
        list(byte_list(ev, f_.rcounts, f_.dsize));
        out_ << " 0";
        break;
      case OpFamily::kReduceScatterBlock:
        line() << "reducescatter";
        list(std::vector<int64_t>(static_cast<std::size_t>(trace_.world_size), send));
        out_ << " 0";
        break;
      default:
        unsupported(ev, "SMPI's replay has no such collective");
        return;
    }
    end();
  }

  const Trace& trace_;
  const int32_t rank_;
  const ActionOptions& opt_;
  const Fields& f_;
  ActionSummary& sum_;
  std::ostream& out_;
  const Node* node_ = nullptr;
  std::deque<Request> requests_;
  std::unordered_map<int64_t, bool> world_like_;
  double compute_ns_ = 0;
};

}  // namespace

ActionSummary write_smpi_actions(const Trace& trace, const std::string& dir,
                                 const ActionOptions& options) {
  if (trace.world_size <= 0) throw SimulateError("the trace has no ranks");
  if (!(options.host_speed > 0)) throw SimulateError("the host speed must be positive");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw SimulateError(dir + ": cannot create: " + ec.message());
  const Fields f;
  ActionSummary summary;
  const fs::path base = fs::absolute(dir);
  std::ofstream list(base / "actions.list");
  if (!list) throw SimulateError((base / "actions.list").string() + ": cannot write");
  for (int32_t r = 0; r < trace.world_size; ++r) {
    const fs::path p = base / ("rank-" + std::to_string(r) + ".act");
    std::ofstream out(p);
    if (!out) throw SimulateError(p.string() + ": cannot write");
    RankWriter(trace, r, options, f, summary, out).run();
    out.close();
    if (!out) throw SimulateError(p.string() + ": write failed");
    summary.bytes += fs::file_size(p);
    list << p.string() << '\n';
  }
  list.close();
  if (!summary.unsupported.empty() && !options.skip_unsupported) {
    std::string msg = "SMPI's replay cannot perform these operations of the trace:";
    for (const auto& [op, u] : summary.unsupported)
      msg += "\n  " + op + ": " + u.reason + " (" + std::to_string(u.calls) + " calls, first at " +
             u.first_at + ")";
    msg += "\n(--skip-unsupported simulates the rest without them)";
    throw SimulateError(msg);
  }
  return summary;
}

}  // namespace tracefold
