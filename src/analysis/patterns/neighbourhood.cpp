// Neighbourhood collectives as messages along their communicator's
// topology. The recorder keeps what each topology was created with (dims
// and periods, a graph's index and edges, a distributed graph's
// destinations as offsets: docs/recording.md), so whom a call sends to
// is known without the MPI library: a halo written as
// MPI_Neighbor_alltoall on a Cartesian communicator gets the edges and
// bytes a point-to-point halo has, and the same fits name it.

#include "neighbourhood.hpp"

#include <algorithm>
#include <set>

#include "classes_internal.hpp"

namespace tracefold::patterns::detail {

namespace {

bool neighbourhood(OpFamily f) {
  switch (f) {
    case OpFamily::kNeighborAllgather:
    case OpFamily::kNeighborAllgatherv:
    case OpFamily::kNeighborAlltoall:
    case OpFamily::kNeighborAlltoallv:
    case OpFamily::kNeighborAlltoallw:
      return true;
    default:
      return false;
  }
}

const std::vector<int64_t>* list_of(const Event& ev, FieldId f) {
  const FieldValue* v = ev.find(f);
  return v ? &v->list : nullptr;
}

}  // namespace

void Neighbourhoods::note(const Event& ev, int32_t rank, const CommTable& comms) {
  static const FieldId newcomm_f = FieldTable::intern("newcomm", FieldKind::kScalar);
  static const FieldId dims_f = FieldTable::intern("dims", FieldKind::kList);
  static const FieldId periods_f = FieldTable::intern("periods", FieldKind::kList);
  static const FieldId gindex_f = FieldTable::intern("gindex", FieldKind::kList);
  static const FieldId gedges_f = FieldTable::intern("gedges", FieldKind::kList);
  static const FieldId gdsts_f = FieldTable::intern("gdsts", FieldKind::kList);
  static const FieldId count_f = FieldTable::intern("count", FieldKind::kScalar);
  static const FieldId dsize_f = FieldTable::intern("dsize", FieldKind::kScalar);
  static const FieldId counts_f = FieldTable::intern("counts", FieldKind::kList);
  const OpFamily family = op_traits(ev.op).family;
  if (family == OpFamily::kCartSub) {
    note_cart_sub(ev.get(FieldTable::comm()), ev.get(newcomm_f), rank, comms);
    return;
  }
  if (family == OpFamily::kCartCreate || family == OpFamily::kGraphCreate) {
    const int64_t id = ev.get(newcomm_f);
    if (id == kAbsent || is_sentinel(id)) return;  // MPI_COMM_NULL: not in the grid
    Topology t;
    if (const auto* dims = list_of(ev, dims_f)) {
      t.dims = *dims;
      if (const auto* periods = list_of(ev, periods_f)) t.periods = *periods;
      t.periods.resize(t.dims.size(), 0);
    } else if (const auto* index = list_of(ev, gindex_f); index && list_of(ev, gedges_f)) {
      t.kind = Topology::Kind::kGraph;
      t.index = *index;
      t.edges = *list_of(ev, gedges_f);
    } else if (const auto* dsts = list_of(ev, gdsts_f)) {
      t.kind = Topology::Kind::kDistGraph;
      Topology& known = topologies_.try_emplace(id, t).first->second;
      known.destinations[rank] = *dsts;
      return;
    } else {
      return;  // a recorder older than the edges
    }
    topologies_.try_emplace(id, std::move(t));
    return;
  }
  if (!neighbourhood(family)) return;
  const int64_t comm = ev.get(FieldTable::comm());
  const auto topology = topologies_.find(comm);
  const std::optional<Place> at = place_in(comms, comm, rank);
  if (topology == topologies_.end() || !at) return;
  const std::size_t n = destinations(topology->second, rank, at->me, at->size).size();
  Use& use = uses_[{rank, comm}];
  use.bytes.resize(n, 0);
  ++use.calls;
  const int64_t count = ev.get(count_f), dsize = ev.get(dsize_f);
  const bool sized = !is_sentinel(dsize) && dsize > 0;
  const std::vector<int64_t>* counts = list_of(ev, counts_f);
  for (std::size_t i = 0; i < n; ++i) {
    // The v forms give a count per destination; the w forms' types are
    // not sized here.
    int64_t c = count;
    if (family == OpFamily::kNeighborAlltoallw) c = 0;
    if (family == OpFamily::kNeighborAlltoallv || family == OpFamily::kNeighborAllgatherv)
      c = counts && i < counts->size() ? (*counts)[i] : 0;
    if (sized && !is_sentinel(c) && c > 0) use.bytes[i] += static_cast<uint64_t>(c * dsize);
  }
}

void Neighbourhoods::note_cart_sub(int64_t parent, int64_t id, int32_t rank,
                                   const CommTable& comms) {
  if (id == kAbsent || is_sentinel(id) || topologies_.count(id)) return;
  const auto p = topologies_.find(parent);
  if (p == topologies_.end() || p->second.kind != Topology::Kind::kCartesian) return;
  const Topology& grid = p->second;
  const CommGroup* sub = comms.group_of(id, rank);
  if (!sub || sub->members.empty()) return;
  // The recorder keeps no remain_dims (docs/recording.md); the sub-grid's
  // members tell them: a kept dimension is one their coordinates in the
  // parent grid differ along. A kept dimension of extent 1 is not seen,
  // and it has no neighbours other than the rank itself or none.
  auto coords = [&](int32_t world_rank) {
    std::vector<int64_t> c(grid.dims.size(), 0);
    int64_t rest = comms.rank_in(parent, world_rank);
    for (std::size_t d = grid.dims.size(); d-- > 0;) {
      if (grid.dims[d] <= 0) return std::vector<int64_t>{};
      c[d] = rest % grid.dims[d];
      rest /= grid.dims[d];
    }
    return c;
  };
  const std::vector<int64_t> first = coords(sub->members[0]);
  if (first.empty() || comms.rank_in(parent, sub->members[0]) < 0) return;
  std::vector<bool> kept(grid.dims.size(), false);
  for (std::size_t i = 1; i < sub->members.size(); ++i) {
    if (comms.rank_in(parent, sub->members[i]) < 0) return;
    const std::vector<int64_t> c = coords(sub->members[i]);
    for (std::size_t d = 0; d < c.size(); ++d) kept[d] = kept[d] || c[d] != first[d];
  }
  Topology t;
  for (std::size_t d = 0; d < grid.dims.size(); ++d)
    if (kept[d]) {
      t.dims.push_back(grid.dims[d]);
      t.periods.push_back(grid.periods[d]);
    }
  int64_t cells = 1;
  for (int64_t n : t.dims) cells *= n;
  if (cells != static_cast<int64_t>(sub->members.size())) return;  // not a sub-grid
  topologies_.emplace(id, std::move(t));
}

std::vector<int64_t> Neighbourhoods::destinations(const Topology& t, int32_t walked, int64_t me,
                                                  int64_t size) {
  std::vector<int64_t> out;
  switch (t.kind) {
    case Topology::Kind::kCartesian: {
      // Row-major, the last dimension fastest, as MPI_Cart_create numbers.
      std::vector<int64_t> coords(t.dims.size(), 0);
      int64_t rest = me;
      for (std::size_t d = t.dims.size(); d-- > 0;) {
        if (t.dims[d] <= 0) return {};
        coords[d] = rest % t.dims[d];
        rest /= t.dims[d];
      }
      for (std::size_t d = 0; d < t.dims.size(); ++d)
        for (int step : {-1, +1}) {
          std::vector<int64_t> at = coords;
          at[d] += step;
          if (at[d] < 0 || at[d] >= t.dims[d]) {
            if (!t.periods[d]) {
              out.push_back(-1);
              continue;
            }
            at[d] = (at[d] + t.dims[d]) % t.dims[d];
          }
          int64_t r = 0;
          for (std::size_t k = 0; k < at.size(); ++k) r = r * t.dims[k] + at[k];
          out.push_back(r);
        }
      break;
    }
    case Topology::Kind::kGraph: {
      if (me < 0 || static_cast<std::size_t>(me) >= t.index.size()) return {};
      const int64_t from = me == 0 ? 0 : t.index[static_cast<std::size_t>(me) - 1];
      for (int64_t e = from; e < t.index[static_cast<std::size_t>(me)]; ++e)
        if (e >= 0 && static_cast<std::size_t>(e) < t.edges.size())
          out.push_back(t.edges[static_cast<std::size_t>(e)]);
      break;
    }
    case Topology::Kind::kDistGraph: {
      const auto it = t.destinations.find(walked);
      if (it == t.destinations.end() || size <= 0) return {};
      for (int64_t offset : it->second) out.push_back(((me + offset) % size + size) % size);
      break;
    }
  }
  return out;
}

std::vector<std::vector<std::pair<int64_t, std::string>>> Neighbourhoods::add_edges(
    Result& result, const CommTable& comms, std::size_t world,
    const std::function<int32_t(int32_t)>& walked_as) const {
  std::vector<std::vector<std::pair<int64_t, std::string>>> kinds(result.global.size());
  if (uses_.empty()) return kinds;
  std::vector<std::size_t> group_of(world, 0);
  for (std::size_t g = 0; g < result.groups.size(); ++g)
    result.groups[g].ranks.for_each([&](int32_t r) { group_of[static_cast<std::size_t>(r)] = g; });
  for (std::size_t gi = 0; gi < result.global.size(); ++gi) {
    GlobalPattern& gp = result.global[gi];
    std::set<int64_t> used;
    std::set<std::pair<std::size_t, int32_t>> seen;
    std::vector<int32_t> ranks;
    for (const auto& [rank, p] : gp.patterns) {
      if (ranks.empty() || ranks.back() != rank) ranks.push_back(rank);
      const std::size_t g = group_of[static_cast<std::size_t>(rank)];
      if (!seen.emplace(g, p).second) continue;
      for (Symbol s : result.groups[g].patterns[static_cast<std::size_t>(p)].pattern.symbols)
        if (const SymbolKey& k = result.alphabet.at(s); neighbourhood(k.family))
          used.insert(k.comm);
    }
    // Each communicator's calls go along its own topology: the channels
    // carry the communicator, so calls on several keep their edges apart
    // (by_topology() splits them).
    bool added = false;
    for (const int64_t comm : used) {
      const auto topology = topologies_.find(comm);
      if (topology == topologies_.end()) continue;
      std::map<std::pair<int32_t, int32_t>, Channel> sent;
      for (int32_t r : ranks) {
        const std::optional<Place> at = place_in(comms, comm, r);
        const CommGroup* group = comms.group_of(comm, r);
        const int32_t walked = walked_as(r);
        const auto use = uses_.find({walked, comm});
        if (!at || !group || use == uses_.end()) continue;
        const std::vector<int64_t> to = destinations(topology->second, walked, at->me, at->size);
        for (std::size_t i = 0; i < to.size(); ++i) {
          if (to[i] < 0 || to[i] >= at->size) continue;  // MPI_PROC_NULL
          const int32_t peer = group->members[static_cast<std::size_t>(to[i])];
          if (peer == r) continue;  // a periodic axis of 1 or 2: the rank itself
          Channel& c =
              sent.try_emplace({r, peer}, Channel{r, peer, comm, kAbsent, 0, 0, 0}).first->second;
          c.messages += use->second.calls;
          c.bytes += i < use->second.bytes.size() ? use->second.bytes[i] : 0;
        }
      }
      if (sent.empty()) continue;
      added = true;
      for (const auto& [edge, c] : sent) {
        gp.edges.push_back(edge);
        gp.channels.push_back(c);
        gp.messages += c.messages;
      }
      switch (topology->second.kind) {
        case Topology::Kind::kCartesian:
          kinds[gi].emplace_back(comm, "cartesian");
          break;
        case Topology::Kind::kGraph:
          kinds[gi].emplace_back(comm, "graph");
          break;
        case Topology::Kind::kDistGraph:
          kinds[gi].emplace_back(comm, "distributed graph");
          break;
      }
    }
    if (!added) continue;
    std::sort(gp.edges.begin(), gp.edges.end());
    gp.edges.erase(std::unique(gp.edges.begin(), gp.edges.end()), gp.edges.end());
    std::sort(gp.channels.begin(), gp.channels.end());
  }
  return kinds;
}

std::vector<GlobalPattern> Neighbourhoods::by_topology(GlobalPattern g,
                                                       const std::vector<int64_t>& comms) {
  std::vector<GlobalPattern> out;
  auto mine = [&](int64_t comm) {
    return std::find(comms.begin(), comms.end(), comm) != comms.end();
  };
  const bool only_topologies =
      g.channel_classes.empty() && std::all_of(g.channels.begin(), g.channels.end(),
                                               [&](const Channel& c) { return mine(c.comm); });
  if (comms.size() < 2 || !only_topologies) {
    out.push_back(std::move(g));
    return out;
  }
  for (const int64_t comm : comms) {
    GlobalPattern part;
    part.patterns = g.patterns;
    part.collectives = g.collectives;
    part.loose_events = g.loose_events;
    for (const Channel& c : g.channels)
      if (c.comm == comm) {
        part.channels.push_back(c);
        part.edges.emplace_back(c.from, c.to);
        part.messages += c.messages;
      }
    std::sort(part.edges.begin(), part.edges.end());
    part.edges.erase(std::unique(part.edges.begin(), part.edges.end()), part.edges.end());
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace tracefold::patterns::detail
