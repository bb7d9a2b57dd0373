// Communicator management and Cartesian topologies.
#include "engine.hpp"

namespace tracefold::replay_detail {

const MemberList* Engine::members_of(int64_t id) const {
  const CommGroup* g = trace_.comms.group_of(id, rank_);
  return g ? &g->members : nullptr;
}

MPI_Group Engine::group_of_members(const MemberList& world_members) {
  MPI_Group world, sub;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(world_members.begin(), world_members.end());
  PMPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &sub);
  PMPI_Group_free(&world);
  return sub;
}

void Engine::create_comm(const Event& ev, const OpInfo& info) {
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
          fail(ev, "communicator " + std::to_string(id) + " has no recorded members for this rank");
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
      std::vector<int> dims(static_cast<std::size_t>(ndims), 0), periods(dims.size(), 0);
      const FieldValue* rec_dims = ev.find(f_.dims);
      const FieldValue* rec_periods = ev.find(f_.periods);
      if (rec_dims && rec_dims->list.size() == dims.size()) {
        for (std::size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int>(rec_dims->list[i]);
        if (rec_periods && rec_periods->list.size() == dims.size())
          for (std::size_t i = 0; i < dims.size(); ++i)
            periods[i] = rec_periods->list[i] != 0 ? 1 : 0;
      } else {
        // Traces written before dims were recorded: the members of the new
        // communicator give its size, MPI_Dims_create a shape (what most
        // codes use), and the grid is taken as not periodic.
        int size = comm_size(parent);
        if (id != kNull && id != kAbsent) {
          if (const auto* m = members_of(id)) size = static_cast<int>(m->size());
        } else if (auto all = trace_.comms.all().find(id);
                   all != trace_.comms.all().end() && !all->second.empty()) {
          size = static_cast<int>(all->second.front().members.size());
        }
        PMPI_Dims_create(size, ndims, dims.data());
      }
      MPI_Cart_create(parent, ndims, dims.data(), periods.data(), 0, &created);
      if (id != kNull && id != kAbsent) carts_[id].dims = dims;
      break;
    }
    case Kind::kGraphCreate:
      created = create_graph(ev, info, parent);
      break;
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
  if (shared_) {
    const auto cart = carts_.find(id);
    shared_->publish(id, created, cart == carts_.end() ? nullptr : &cart->second.dims);
  }
}

MPI_Comm Engine::shared_comm(const Event& ev, int64_t id) {
  if (*shared_->creator(id) == thread_)
    fail(ev, "communicator " + std::to_string(id) +
                 " is used before this thread's own call that creates it");
  std::vector<int> dims;
  MPI_Comm c = shared_->await(id, &dims);
  if (!dims.empty()) carts_[id].dims = std::move(dims);
  return comms_[id] = c;
}

int Engine::world_rank_of(MPI_Comm c, int r) {
  MPI_Group g, world;
  PMPI_Comm_group(c, &g);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int out = -1;
  PMPI_Group_translate_ranks(g, 1, &r, world, &out);
  PMPI_Group_free(&g);
  PMPI_Group_free(&world);
  return out;
}

void Engine::cart_query(const Event& ev, const OpInfo& info) {
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

// The recorded arguments, with reorder off so every rank keeps its rank
// and the recorded peers stay right. Weights are not recorded: the graph is
// made unweighted, which only hints the MPI library's placement.
MPI_Comm Engine::create_graph(const Event& ev, const OpInfo& info, MPI_Comm parent) {
  MPI_Comm created = MPI_COMM_NULL;
  const auto ints = [&](FieldId f) {
    std::vector<int> out;
    if (const FieldValue* v = ev.find(f))
      for (int64_t x : v->list) out.push_back(static_cast<int>(x));
    return out;
  };
  if (info.name == "MPI_Graph_create") {
    const std::vector<int> index = ints(f_.gindex), edges = ints(f_.gedges);
    if (!ev.find(f_.gindex) || !ev.find(f_.gedges))
      fail(ev, "MPI_Graph_create without recorded index and edges (a trace older than them)");
    MPI_Graph_create(parent, static_cast<int>(index.size()), index.data(), edges.data(), 0,
                     &created);
    return created;
  }
  if (info.name == "MPI_Dist_graph_create_adjacent") {
    if (!ev.find(f_.gsrcs) || !ev.find(f_.gdsts))
      fail(ev,
           "MPI_Dist_graph_create_adjacent without recorded sources and destinations (a trace "
           "older than them)");
    // Recorded as offsets from this rank in the parent communicator.
    const int me = comm_rank(parent), n = std::max(comm_size(parent), 1);
    auto absolute = [&](std::vector<int> v) {
      for (int& r : v)
        if (r >= 0) r = (me + r) % n;
      return v;
    };
    const std::vector<int> srcs = absolute(ints(f_.gsrcs)), dsts = absolute(ints(f_.gdsts));
    MPI_Dist_graph_create_adjacent(parent, static_cast<int>(srcs.size()), srcs.data(),
                                   MPI_UNWEIGHTED, static_cast<int>(dsts.size()), dsts.data(),
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &created);
    return created;
  }
  fail(ev, info.name + " is not replayed: its per-rank edge lists are not recorded");
}

// How many neighbours a neighbourhood collective on `c` reads from and
// writes to, from the communicator's own topology.
std::pair<int, int> Engine::neighbour_counts(MPI_Comm c) {
  int kind = MPI_UNDEFINED;
  PMPI_Topo_test(c, &kind);
  if (kind == MPI_CART) {
    int nd = 0;
    PMPI_Cartdim_get(c, &nd);
    return {2 * nd, 2 * nd};
  }
  if (kind == MPI_GRAPH) {
    int n = 0;
    PMPI_Graph_neighbors_count(c, comm_rank(c), &n);
    return {n, n};
  }
  if (kind == MPI_DIST_GRAPH) {
    int in = 0, out = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(c, &in, &out, &weighted);
    return {in, out};
  }
  return {-1, -1};
}

}  // namespace tracefold::replay_detail
