// One MPI call per node (gen.hpp), chosen by the operation's family
// (op_class.hpp): the arguments come from the node's fields, buffers from
// the node's own allocation, requests from the request ring.
#include <algorithm>
#include <cstdlib>

#include "gen.hpp"

namespace tracefold::benchgen {

namespace {

// The longest list a list field of node `n` holds and its largest element
// (lists are stored as length, then values); zeros when absent.
struct ListExtent {
  int64_t longest = 0;
  int64_t largest = 0;
};

ListExtent list_extent(const Node& n, FieldId f) {
  ListExtent x;
  const Elastic* e = n.field(f);
  if (!e) return x;
  for (const ElasticEntry& en : e->entries()) {
    for (auto c = en.values.cursor(); !c.done();) {
      const int64_t len = c.next();
      if (len == kAbsent || len < 0) continue;
      x.longest = std::max(x.longest, len);
      for (int64_t k = 0; k < len && !c.done(); ++k) {
        const int64_t v = c.next();
        if (!is_sentinel(v)) x.largest = std::max(x.largest, v);
      }
    }
  }
  return x;
}

int64_t max_list_len(const Node& n, FieldId f) {
  return list_extent(n, f).longest;
}
int64_t max_list_value(const Node& n, FieldId f) {
  return list_extent(n, f).largest;
}

bool gathers(OpFamily f) {
  switch (f) {
    case OpFamily::kGather:
    case OpFamily::kScatter:
    case OpFamily::kAllgather:
    case OpFamily::kAlltoall:
    case OpFamily::kNeighborAllgather:
    case OpFamily::kNeighborAlltoall:
    case OpFamily::kReduceScatterBlock:
      return true;
    default:
      return false;
  }
}

int64_t ceil_div(int64_t a, int64_t b) {
  return b > 0 ? (a + b - 1) / b : a;
}

}  // namespace

int64_t Gen::lossy_p2p_bytes() {
  if (p2p_bytes < 0) {
    p2p_bytes = 0;
    for (std::size_t j = 0; j < t.nodes.size(); ++j) {
      const OpFamily f = op_traits(t.nodes[j].key.op).family;
      if (f == OpFamily::kSend || f == OpFamily::kSendInit || f == OpFamily::kSendrecv)
        p2p_bytes = std::max(
            p2p_bytes, max_of(j, count, false) * std::max<int64_t>(max_of(j, dsize, false), 1));
    }
  }
  return p2p_bytes;
}

void Gen::call(std::size_t i, const Ranklist& universe, const std::string& counter) {
  const Node& n = t.nodes[i];
  const std::string& op = OpTable::name(n.key.op);
  const OpTraits& tr = op_traits(n.key.op);
  const Ranklist U = [&] {
    Ranklist u;
    universe.for_each([&](int32_t r) {
      if (n.ranks.contains(r)) u.insert(r);
    });
    return u;
  }();
  // Datatype calls and communicators made from groups first: nothing below
  // may declare tables they do not read.
  if (call_types(i, U, counter)) return;
  const std::string name = site_name(i);
  std::string C = scalar(i, comm, Kind::kComm, U, counter);
  if (C.empty()) C = "MPI_COMM_WORLD";
  auto S = [&](FieldId f, Kind k, const std::string& otherwise) {
    std::string v = scalar(i, f, k, U, counter, C);
    return v.empty() ? otherwise : v;
  };
  auto emit = [&](const std::string& s) { body << line() << s << "\n"; };
  // A lossy benchmark draws each side's counts in an order of its own, so
  // a receive could meet a larger message than the count drawn for it.
  // Each receive count is then the largest one it can match: the largest
  // point-to-point send of the trace, or the largest count the members of
  // the collective send (in the receive's datatype).
  const bool lossy = !t.lossy.empty();
  int64_t lossy_items = 0;
  auto cap_of = [&](int64_t bytes, FieldId size_field) {
    lossy_items =
        std::max(lossy_items, ceil_div(bytes, std::max<int64_t>(max_of(i, size_field, false), 1)));
    return std::to_string(lossy_items);
  };
  auto sent_bytes = [&](bool list) {
    return (list ? max_list_value(n, counts) : max_of(i, count, false)) *
           std::max<int64_t>(max_of(i, dsize, false), 1);
  };

  // A send and a receive buffer per node (shared by blocking calls), at the
  // largest size any of its calls needs.
  std::string sbuf, rbuf;
  auto buffers = [&] {
    const int64_t elem = std::max<int64_t>({max_of(i, dsize, false), max_of(i, rdsize, false), 1});
    int64_t items = std::max<int64_t>({max_of(i, count, false), max_of(i, rcount, false),
                                       max_of(i, counts, true), max_of(i, rcounts, true), 1});
    // Raised counts of a lossy v-collective: one per member.
    if (lossy_items > 0)
      items = std::max(items, lossy_items * (tr.family == OpFamily::kGatherv ||
                                                     tr.family == OpFamily::kAllgatherv ||
                                                     tr.family == OpFamily::kNeighborAllgatherv
                                                 ? t.world_size
                                                 : 1));
    if (gathers(tr.family)) items *= t.world_size;
    // A derived type's extent may exceed its size (a struct's alignment).
    const bool derived = max_of(i, dtype, false) >= kFirstDerivedType ||
                         max_of(i, rdtype, false) >= kFirstDerivedType;
    const int64_t bytes = derived ? 2 * items * elem + 64 : items * elem;
    // A nonblocking or persistent call owns its buffers until completed or
    // freed; a blocking one only while it runs.
    const bool shared =
        !tr.nonblocking && tr.family != OpFamily::kSendInit && tr.family != OpFamily::kRecvInit;
    sbuf = shared ? std::string("send_buf") : fresh(name + "_sbuf");
    rbuf = shared ? std::string("recv_buf") : fresh(name + "_rbuf");
    // Declared by leaf() once the call is written, if it names them: a send
    // needs no receive buffer.
    pending_buffers.emplace_back(sbuf, bytes);
    pending_buffers.emplace_back(rbuf, bytes);
  };
  const std::string cnt = S(count, Kind::kInt, "0");
  auto dt = [&](FieldId f) { return S(f, Kind::kDtype, "MPI_BYTE"); };
  const std::string req =
      tr.nonblocking && OpTable::makes_request(n.key.op) ? ", new_request()" : "";
  const std::string new_comm = [&] {
    if (!n.field(newcomm)) return std::string("&scratch_comm");
    const std::string id = S(newcomm, Kind::kInt, "TF_NULL");
    const std::string var = [&] {
      for (const auto& [cid, cname] : comm_names)
        if (id == std::to_string(cid)) return cname;
      return std::string();
    }();
    return var.empty() ? "comm_ref(" + id + ")" : "&" + var;
  }();
  // The requests a completion or start names: a table of backward
  // distances (links), taken from the ring and given back after the call.
  auto take = [&](const std::string& use, const std::string& after = "") {
    const int64_t width = std::max<int64_t>(max_list_len(n, links), 1);
    const std::string lk = list(i, links, U);
    emit("{");
    ++depth;
    if (lk.empty()) {
      emit("MPI_Request r[1] = {MPI_REQUEST_NULL};");
      emit("const int nr = 1;");
    } else if (const std::string lt = threads ? list(i, list_field("lthreads"), U) : "";
               !lt.empty()) {
      // Some of the requests another thread made (threads.cpp).
      emit("const int *lk = " + lk + ", nr = list_len(lk); const int *lt = " + lt +
           "; MPI_Request r[" + std::to_string(width) +
           "]; long base[THREADS]; take_foreign(lk, lt, nr, r, base);");
      emit(use + " give_foreign(lk, lt, nr, r, base);");
      if (!after.empty()) emit(after);
      --depth;
      emit("}");
      return;
    } else {
      // Three statements on a line: an irregular trace's benchmark has one
      // such block per completion node.
      emit("const int *lk = " + lk + ", nr = list_len(lk); MPI_Request r[" + std::to_string(width) +
           "]; take_requests(lk, nr, r);");
    }
    emit(lk.empty() ? use : use + " give_requests(lk, nr, r);");
    if (!after.empty()) emit(after);
    --depth;
    emit("}");
  };

  switch (tr.family) {
    case OpFamily::kMarker:
      return;
    case OpFamily::kInit:
      return;  // main's first call (MPI_Init or MPI_Init_thread, as recorded)
    case OpFamily::kFinalize:
      // The other threads' calls all come before MPI_Finalize.
      if (threads) emit("join_threads();");
      if (planned_receives) emit("wait_planned();");
      emit("report_times();");
      emit(op + "();");
      return;
    case OpFamily::kPcontrol:
      emit(op + "(" + S(FieldTable::intern("level", FieldKind::kScalar), Kind::kInt, "0") + ");");
      return;
    case OpFamily::kSend:
    case OpFamily::kSendInit:
      buffers();
      emit(op + "(" + sbuf + ", " + cnt + ", " + dt(dtype) + ", " +
           S(peer, Kind::kPeer, "MPI_PROC_NULL") + ", " + S(tag, Kind::kTag, "0") + ", " + C + req +
           ");");
      return;
    case OpFamily::kRecv:
      if (planned_receives) {
        // Its message is received by post_planned()'s receives; a request
        // made here is null, so its completion has nothing to wait for.
        emit("/* " + op + ": planned (lossy) */" + (req.empty() ? "" : " new_request();"));
        return;
      }
      [[fallthrough]];
    case OpFamily::kRecvInit: {
      const std::string rcnt = lossy ? cap_of(lossy_p2p_bytes(), dsize) : cnt;
      buffers();
      emit(op + "(" + rbuf + ", " + rcnt + ", " + dt(dtype) + ", " +
           S(peer, Kind::kPeer, "MPI_ANY_SOURCE") + ", " + S(tag, Kind::kTag, "MPI_ANY_TAG") +
           ", " + C + (req.empty() ? ", MPI_STATUS_IGNORE" : req) + ");");
      return;
    }
    case OpFamily::kSendrecv: {
      const std::string rcnt = lossy && op == "MPI_Sendrecv" ? cap_of(lossy_p2p_bytes(), rdsize)
                                                             : S(rcount, Kind::kInt, "0");
      buffers();
      if (op == "MPI_Sendrecv")
        emit(op + "(" + sbuf + ", " + cnt + ", " + dt(dtype) + ", " +
             S(peer, Kind::kPeer, "MPI_PROC_NULL") + ", " + S(tag, Kind::kTag, "0") + ", " + rbuf +
             ", " + rcnt + ", " + dt(rdtype) + ", " + S(rpeer, Kind::kPeer, "MPI_PROC_NULL") +
             ", " + S(rtag, Kind::kTag, "0") + ", " + C + ", MPI_STATUS_IGNORE);");
      else
        emit(op + "(" + rbuf + ", " + cnt + ", " + dt(dtype) + ", " +
             S(peer, Kind::kPeer, "MPI_PROC_NULL") + ", " + S(tag, Kind::kTag, "0") + ", " +
             S(rpeer, Kind::kPeer, "MPI_PROC_NULL") + ", " + S(rtag, Kind::kTag, "0") + ", " + C +
             ", MPI_STATUS_IGNORE);");
      return;
    }
    case OpFamily::kProbe:
      // A blocking probe would wait for a message the planned receives
      // have taken already.
      if (planned_receives && !tr.nonblocking) {
        emit("/* " + op + ": planned receives (lossy) */");
        return;
      }
      emit(op + "(" + S(peer, Kind::kPeer, "MPI_ANY_SOURCE") + ", " +
           S(tag, Kind::kTag, "MPI_ANY_TAG") + ", " + C + (tr.nonblocking ? ", &flag" : "") +
           ", MPI_STATUS_IGNORE);");
      return;
    case OpFamily::kMprobe:
      emit(op + "(" + S(peer, Kind::kPeer, "MPI_ANY_SOURCE") + ", " +
           S(tag, Kind::kTag, "MPI_ANY_TAG") + ", " + C + (tr.nonblocking ? ", &flag" : "") +
           ", &message, MPI_STATUS_IGNORE);");
      return;
    case OpFamily::kMrecv: {
      const std::string rcnt = lossy ? cap_of(lossy_p2p_bytes(), dsize) : cnt;
      buffers();
      emit(op + "(" + rbuf + ", " + rcnt + ", " + dt(dtype) + ", &message" +
           (req.empty() ? ", MPI_STATUS_IGNORE" : req) + ");");
      return;
    }
    case OpFamily::kStart:
      // A start is itself a request-making call: the started requests get
      // a new ring row.
      take(op == "MPI_Start" ? "MPI_Start(&r[0]);" : "MPI_Startall(nr, r);",
           op == "MPI_Start" ? "push_requests(r, 1);" : "push_requests(r, nr);");
      return;
    case OpFamily::kRequestFree:
    case OpFamily::kCancel:
      take(op + "(&r[0]);");
      return;
    case OpFamily::kComplete:
      switch (tr.variant) {
        case OpVariant::kWait:
          take("MPI_Wait(&r[0], MPI_STATUS_IGNORE);");
          return;
        case OpVariant::kWaitall:
          take("MPI_Waitall(nr, r, statuses_ignore);");
          return;
        case OpVariant::kWaitany:
          take("MPI_Waitany(nr, r, &which, MPI_STATUS_IGNORE);");
          return;
        case OpVariant::kWaitsome:
          take("MPI_Waitsome(nr, r, &outcount, indices, statuses_ignore);");
          return;
        case OpVariant::kTest:
          take("MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);");
          return;
        case OpVariant::kTestall:
          take("MPI_Testall(nr, r, &flag, statuses_ignore);");
          return;
        case OpVariant::kTestany:
          take("MPI_Testany(nr, r, &which, &flag, MPI_STATUS_IGNORE);");
          return;
        case OpVariant::kTestsome:
          take("MPI_Testsome(nr, r, &outcount, indices, statuses_ignore);");
          return;
        default:
          break;
      }
      break;
    case OpFamily::kBarrier:
      emit(op + "(" + C + req + ");");
      return;
    case OpFamily::kBcast:
      buffers();
      emit(op + "(" + rbuf + ", " + cnt + ", " + dt(dtype) + ", " + S(root, Kind::kInt, "0") +
           ", " + C + req + ");");
      return;
    case OpFamily::kReduce:
      buffers();
      emit(op + "(" + sbuf + ", " + rbuf + ", " + cnt + ", " + dt(dtype) + ", " +
           S(redop, Kind::kRedop, "MPI_SUM") + ", " + S(root, Kind::kInt, "0") + ", " + C + req +
           ");");
      return;
    case OpFamily::kAllreduce:
    case OpFamily::kScan:
    case OpFamily::kExscan:
    case OpFamily::kReduceScatterBlock:
      buffers();
      emit(op + "(" + sbuf + ", " + rbuf + ", " + cnt + ", " + dt(dtype) + ", " +
           S(redop, Kind::kRedop, "MPI_SUM") + ", " + C + req + ");");
      return;
    case OpFamily::kGather:
    case OpFamily::kScatter: {
      const std::string rcnt =
          lossy && has(i, rcount) ? cap_of(sent_bytes(false), rdsize) : S(rcount, Kind::kInt, "0");
      buffers();
      emit(op + "(" + sbuf + ", " + cnt + ", " + dt(dtype) + ", " + rbuf + ", " + rcnt + ", " +
           dt(rdtype) + ", " + S(root, Kind::kInt, "0") + ", " + C + req + ");");
      return;
    }
    case OpFamily::kAllgather:
    case OpFamily::kAlltoall:
    case OpFamily::kNeighborAllgather:
    case OpFamily::kNeighborAlltoall: {
      const std::string rcnt =
          lossy ? cap_of(sent_bytes(false), rdsize) : S(rcount, Kind::kInt, "0");
      buffers();
      emit(op + "(" + sbuf + ", " + cnt + ", " + dt(dtype) + ", " + rbuf + ", " + rcnt + ", " +
           dt(rdtype) + ", " + C + req + ");");
      return;
    }
    case OpFamily::kGatherv:
    case OpFamily::kAllgatherv:
    case OpFamily::kNeighborAllgatherv: {
      if (lossy) cap_of(sent_bytes(false), rdsize);
      buffers();
      std::string rc = list(i, rcounts, U);
      emit("{");
      ++depth;
      // A rank group without the list (MPI_Gatherv's non-roots) passes
      // NULL, as the program did: the recorder reads what it is given.
      const bool rooted = tr.family == OpFamily::kGatherv;
      if (lossy && !rc.empty())
        rc = "counts_at_least(" + rc + ", " + std::to_string(lossy_items) + ")";
      emit("const int *rc = " + (rc.empty() ? std::string(rooted ? "NULL" : "zeros") : rc) + ";");
      emit(op + "(" + sbuf + ", " + cnt + ", " + dt(dtype) + ", " + rbuf +
           ", rc, displs_of(rc, 0), " + dt(rdtype) +
           (tr.family == OpFamily::kGatherv ? ", " + S(root, Kind::kInt, "0") : "") + ", " + C +
           req + ");");
      --depth;
      emit("}");
      return;
    }
    case OpFamily::kScatterv: {
      const std::string rcnt =
          lossy ? cap_of(sent_bytes(true), rdsize) : S(rcount, Kind::kInt, "0");
      buffers();
      std::string sc = list(i, counts, U);
      emit("{");
      ++depth;
      emit("const int *sc = " + (sc.empty() ? std::string("NULL") : sc) + ";");
      emit(op + "(" + sbuf + ", sc, displs_of(sc, 0), " + dt(dtype) + ", " + rbuf + ", " + rcnt +
           ", " + dt(rdtype) + ", " + S(root, Kind::kInt, "0") + ", " + C + req + ");");
      --depth;
      emit("}");
      return;
    }
    case OpFamily::kAlltoallv:
    case OpFamily::kAlltoallw:
    case OpFamily::kNeighborAlltoallv:
    case OpFamily::kNeighborAlltoallw: {
      buffers();
      std::string sc = list(i, counts, U), rc = list(i, rcounts, U);
      emit("{");
      ++depth;
      emit("const int *sc = " + (sc.empty() ? std::string("zeros") : sc) + ";");
      emit("const int *rc = " + (rc.empty() ? std::string("zeros") : rc) + ";");
      // w forms: the trace records no datatypes, so counts are bytes.
      if (tr.family == OpFamily::kAlltoallv || tr.family == OpFamily::kNeighborAlltoallv)
        emit(op + "(" + sbuf + ", sc, displs_of(sc, 0), " + dt(dtype) + ", " + rbuf +
             ", rc, displs_of(rc, 1), " + dt(rdtype) + ", " + C + req + ");");
      else if (tr.family == OpFamily::kAlltoallw)
        emit(op + "(" + sbuf + ", sc, displs_of(sc, 0), bytes_types(size_of(" + C + ")), " + rbuf +
             ", rc, displs_of(rc, 1), bytes_types(size_of(" + C + ")), " + C + req + ");");
      else
        emit(op + "(" + sbuf +
             ", sc, aint_displs_of(sc, 0), bytes_types(list_len(sc) + list_len(rc)), " + rbuf +
             ", rc, aint_displs_of(rc, 1), bytes_types(list_len(sc) + list_len(rc)), " + C + req +
             ");");
      --depth;
      emit("}");
      return;
    }
    case OpFamily::kReduceScatter: {
      buffers();
      std::string rc = list(i, rcounts, U);
      emit(op + "(" + sbuf + ", " + rbuf + ", " + (rc.empty() ? std::string("zeros") : rc) + ", " +
           dt(dtype) + ", " + S(redop, Kind::kRedop, "MPI_SUM") + ", " + C + req + ");");
      return;
    }
    case OpFamily::kCommDup:
      if (op == "MPI_Comm_dup_with_info")
        emit(op + "(" + C + ", MPI_INFO_NULL, " + new_comm + ");");
      else
        emit(op + "(" + C + ", " + new_comm + req + ");");
      return;
    case OpFamily::kCommSplit:
      emit(op + "(" + C + ", " + S(color, Kind::kInt, "MPI_UNDEFINED") + ", " +
           S(key, Kind::kInt, "0") + ", " + new_comm + ");");
      return;
    case OpFamily::kCommSplitType:
      emit(op + "(" + C + ", " + S(color, Kind::kInt, "MPI_UNDEFINED") + ", " +
           S(key, Kind::kInt, "0") + ", MPI_INFO_NULL, " + new_comm + ");");
      return;
    case OpFamily::kCommFree: {
      // The freed communicator is the call's `comm`.
      const std::string id = S(comm, Kind::kInt, "TF_NULL");
      const std::string var = comm_var(std::atoll(id.c_str()));
      emit(op + "(" +
           (var.empty() || var == "MPI_COMM_WORLD" ? "comm_ref(" + id + ")" : "&" + var) + ");");
      return;
    }
    case OpFamily::kCartCreate: {
      const std::string nd = S(ndims, Kind::kInt, "2");
      const std::string d = list(i, list_field("dims"), U), p = list(i, list_field("periods"), U);
      emit("cart_create(" + C + ", " + nd + ", " + (d.empty() ? "NULL" : d) + ", " +
           (p.empty() ? "NULL" : p) + ", " + new_comm + ");");
      return;
    }
    case OpFamily::kGraphCreate: {
      // The recorded edges; reorder off, so the recorded peers stay right.
      if (OpTable::name(n.key.op) == "MPI_Graph_create") {
        const std::string gi = list(i, list_field("gindex"), U),
                          ge = list(i, list_field("gedges"), U);
        if (gi.empty() || ge.empty())
          fail(i, "the trace does not record this graph's index and edges (an older recorder)");
        emit("{");
        ++depth;
        emit("const int *gi = " + gi + ", *ge = " + ge + ";");
        emit("MPI_Graph_create(" + C + ", list_len(gi), gi, ge, 0, " + new_comm + ");");
        --depth;
        emit("}");
        return;
      }
      if (OpTable::name(n.key.op) == "MPI_Dist_graph_create_adjacent") {
        const std::string gs = list(i, list_field("gsrcs"), U),
                          gd = list(i, list_field("gdsts"), U);
        if (gs.empty() || gd.empty())
          fail(i, "the trace does not record this graph's neighbours (an older recorder)");
        emit("dist_graph_create(" + C + ", " + gs + ", " + gd + ", " + new_comm + ");");
        return;
      }
      fail(i,
           "the trace holds the neighbours MPI_Dist_graph_create gave each rank, not the edges "
           "each passed (MPI orders the neighbours by them), so the graph and its neighbourhood "
           "collectives cannot be made again as recorded");
    }
    case OpFamily::kCartSub: {
      // remain_dims is not recorded: the program tries the masks and keeps
      // the one that makes the recorded groups.
      const Elastic* e = n.field(newcomm);
      int64_t id = kAbsent;
      if (e)
        for (const ElasticEntry& en : e->entries())
          for (auto c = en.values.cursor(); !c.done();) {
            const int64_t v = c.next();
            if (is_sentinel(v)) continue;
            if (id != kAbsent && v != id)
              fail(i, "one MPI_Cart_sub call makes several communicators");
            id = v;
          }
      auto groups = t.comms.all().find(id);
      if (id == kAbsent || groups == t.comms.all().end())
        fail(i, "the communicator it makes is not in the trace");
      const std::string table = fresh(name + "_groups");
      decls << "static const int " << table << "[] = {" << groups->second.size();
      for (const CommGroup& g : groups->second) {
        decls << ", " << g.members.size();
        for (int32_t m : g.members) decls << ", " << m;
      }
      decls << "};\n";
      emit("cart_sub(" + C + ", " + table + ", " + new_comm + ");");
      return;
    }
    case OpFamily::kCartQuery:
      if (op == "MPI_Cart_shift")
        emit("{ int lo, hi; MPI_Cart_shift(" + C + ", 0, 1, &lo, &hi); }");
      else if (op == "MPI_Cart_coords")
        emit("{ int co[16]; MPI_Cart_coords(" + C + ", rank_in(" + C + "), 16, co); }");
      else
        emit("{ int co[16] = {0}, r; MPI_Cart_rank(" + C + ", co, &r); }");
      return;
    case OpFamily::kIntercommCreate:
      emit(op + "(" + C + ", " + S(root, Kind::kInt, "0") + ", " +
           S(pcomm, Kind::kComm, "MPI_COMM_WORLD") + ", " + S(rleader, Kind::kInt, "0") + ", " +
           S(tag, Kind::kTag, "0") + ", " + new_comm + ");");
      return;
    case OpFamily::kIntercommMerge:
      emit(op + "(" + C + ", " + S(high, Kind::kInt, "0") + ", " + new_comm + ");");
      return;
    default:
      break;
  }
  fail(i, "the benchmark generator cannot express this operation");
}

}  // namespace tracefold::benchgen
