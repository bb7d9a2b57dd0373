// Collective operations, blocking and nonblocking.
#include "engine.hpp"

namespace tracefold::replay_detail {

void Engine::collective(const Event& ev, const OpInfo& info) {
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
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAlltoall: {
      const auto [sources, dests] = neighbour_counts(c);
      if (sources < 0) fail(ev, info.name + " on a communicator without a process topology");
      const bool all = info.kind == Kind::kNeighborAlltoall;
      const std::size_t out = all ? sz(dests) : 1;
      add_sent(sz(count) * sz(dests));
      char* s = scratch(sb, sz(count) * out * ext);
      char* r = scratch(rb, sz(rcount) * sz(sources) * rext);
      if (all)
        nb ? MPI_Ineighbor_alltoall(s, count, t, r, rcount, rt, c, req)
           : MPI_Neighbor_alltoall(s, count, t, r, rcount, rt, c);
      else
        nb ? MPI_Ineighbor_allgather(s, count, t, r, rcount, rt, c, req)
           : MPI_Neighbor_allgather(s, count, t, r, rcount, rt, c);
      break;
    }
    case Kind::kNeighborAllgatherv:
    case Kind::kNeighborAlltoallv:
    case Kind::kNeighborAlltoallw: {
      // One count per neighbour (the recorder reads the topology's
      // degrees); w moves its counts as bytes, like Alltoallw.
      const auto [sources, dests] = neighbour_counts(c);
      if (sources < 0) fail(ev, info.name + " on a communicator without a process topology");
      const bool gatherv = info.kind == Kind::kNeighborAllgatherv;
      const bool w = info.kind == Kind::kNeighborAlltoallw;
      rcounts = counts_of(ev, f_.rcounts);
      if (!gatherv) counts = counts_of(ev, f_.counts);
      if (rcounts.size() != sz(sources) || (!gatherv && counts.size() != sz(dests)))
        fail(ev, info.name + " without recorded counts for each of its " + std::to_string(sources) +
                     " sources and " + std::to_string(dests) + " destinations");
      const std::size_t rtotal = prefix(rcounts, rdispls);
      char* r = scratch(rb, rtotal * (w ? 1 : rext));
      if (gatherv) {
        add_sent(sz(count) * sz(dests));
        char* s = scratch(sb, sz(count) * ext);
        nb ? MPI_Ineighbor_allgatherv(s, count, t, r, rcounts.data(), rdispls.data(), rt, c, req)
           : MPI_Neighbor_allgatherv(s, count, t, r, rcounts.data(), rdispls.data(), rt, c);
        break;
      }
      const std::size_t stotal = prefix(counts, displs);
      char* s = scratch(sb, stotal * (w ? 1 : ext));
      if (!w) {
        add_sent(stotal);
        nb ? MPI_Ineighbor_alltoallv(s, counts.data(), displs.data(), t, r, rcounts.data(),
                                     rdispls.data(), rt, c, req)
           : MPI_Neighbor_alltoallv(s, counts.data(), displs.data(), t, r, rcounts.data(),
                                    rdispls.data(), rt, c);
        break;
      }
      bytes_sent_ += stotal;
      std::vector<MPI_Datatype> local_types;
      std::vector<MPI_Datatype>& types = slot ? slot->types : local_types;
      types.assign(std::max(sz(sources), sz(dests)), MPI_BYTE);
      // Byte displacements (MPI_Aint) for the w form.
      std::vector<MPI_Aint> local_sd, local_rd;
      std::vector<MPI_Aint>& sd = slot ? slot->aint_sdispls : local_sd;
      std::vector<MPI_Aint>& rd = slot ? slot->aint_rdispls : local_rd;
      sd.assign(displs.begin(), displs.end());
      rd.assign(rdispls.begin(), rdispls.end());
      nb ? MPI_Ineighbor_alltoallw(s, counts.data(), sd.data(), types.data(), r, rcounts.data(),
                                   rd.data(), types.data(), c, req)
         : MPI_Neighbor_alltoallw(s, counts.data(), sd.data(), types.data(), r, rcounts.data(),
                                  rd.data(), types.data(), c);
      break;
    }
    default:
      fail(ev, "replay does not perform this operation");
  }
  if (slot) made_request();
}

}  // namespace tracefold::replay_detail
