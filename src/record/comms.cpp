// Communicators, groups and reduction operations: their trace-wide ids.

#include "mpi_ids.hpp"
#include "recorder_impl.hpp"

#include <stdexcept>

#include "tracefold/rawlog.hpp"

namespace tracefold::record {

// World ranks of `g`'s members, in group order; frees `g`.
std::vector<int32_t> Recorder::world_ranks_of(MPI_Group g) {
  MPI_Group world;
  int n = 0;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_size(g, &n);
  std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(g, n, in.data(), world, out.data());
  PMPI_Group_free(&g);
  PMPI_Group_free(&world);
  return {out.begin(), out.end()};
}

std::vector<int32_t> Recorder::world_members(MPI_Comm c) {
  MPI_Group g;
  PMPI_Comm_group(c, &g);
  return world_ranks_of(g);
}

// World ranks of an intercommunicator's remote group.
std::vector<int32_t> Recorder::remote_world_members(MPI_Comm c) {
  MPI_Group g;
  PMPI_Comm_remote_group(c, &g);
  return world_ranks_of(g);
}

void Recorder::define_comm(int64_t id, MPI_Comm c) {
  CommGroup g;
  g.members = world_members(c);
  for (int32_t m : g.members)
    if (m < 0) throw std::runtime_error("communicator has members outside MPI_COMM_WORLD");
  if (!comms.group_of(id, rank)) {
    if (event_log.is_open()) event_log.add_comm(id, g);
    comms.define(id, g);
    if (rawlog.is_open()) rawlog << format_comm_line(id, g) << "\n";
  }
  comm_ids[c] = id;
  registry_changed();  // the handle may have named another communicator
}

namespace {
TRACEFOLD_STATIC_TLS constinit thread_local HandleCache<int64_t> tl_comm_ids;
TRACEFOLD_STATIC_TLS constinit thread_local HandleCache<int64_t> tl_op_ids;
}  // namespace

int64_t Recorder::comm_id(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return CommTable::kWorld;
  const uintptr_t h = HandleCache<int64_t>::bits(c);
  const uint64_t gen = registry_gen.load(std::memory_order_acquire);
  if (const int64_t* id = tl_comm_ids.find(h, gen)) return *id;
  std::lock_guard lock(mu);
  const int64_t id = registered_comm_id(c);
  tl_comm_ids.put(h, registry_gen.load(std::memory_order_relaxed), id);
  return id;
}

int64_t Recorder::registered_comm_id(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return CommTable::kWorld;
  auto it = comm_ids.find(c);
  if (it != comm_ids.end()) return it->second;
  // Not created through a wrapped call (e.g. MPI_COMM_SELF): name it by
  // its members so every holder agrees.
  auto members = world_members(c);
  uint64_t h = 1469598103934665603ull;
  for (int32_t m : members) h = (h ^ static_cast<uint64_t>(m)) * 1099511628211ull;
  const int64_t id = static_cast<int64_t>((h & 0x3FFFFFFFull) | (1ull << 31));
  define_comm(id, c);
  return id;
}

int64_t Recorder::op_id(MPI_Op o) {
  const uintptr_t h = HandleCache<int64_t>::bits(o);
  const uint64_t gen = registry_gen.load(std::memory_order_acquire);
  if (const int64_t* id = tl_op_ids.find(h, gen)) return *id;
  std::lock_guard lock(mu);
  const int64_t id = registered_op_id(o);
  tl_op_ids.put(h, registry_gen.load(std::memory_order_relaxed), id);
  return id;
}

int64_t Recorder::registered_op_id(MPI_Op o) {
  auto it = op_ids.find(o);
  if (it != op_ids.end()) return it->second;
  std::size_t n = 0;
  const MPI_Op* named = mpi_ids::named_ops(n);
  int64_t id = -1;
  for (std::size_t i = 0; i < n; ++i)
    if (named[i] == o) id = static_cast<int64_t>(i) + 1;
  if (id < 0) id = mpi_ids::kFirstUserOp + static_cast<int64_t>(op_ids.size());
  op_ids.emplace(o, id);
  return id;
}

// This rank's rank in communicator `id` (kAbsent: the world) and its
// size, for relative peers. A rank's group in an id never changes once
// defined, so the answer is cached in the stream.
std::pair<int32_t, int32_t> Recorder::find_position(ThreadStream& s, int64_t id) {
  // Entries never change: the last one found is kept (position_in).
  auto it = s.positions.find(id);
  if (it != s.positions.end()) {
    s.last_position_id = id;
    s.last_position = it->second;
    return it->second;
  }
  std::lock_guard lock(mu);  // the rank's communicators
  const CommGroup* g = comms.group_of(id, rank);
  if (!g)
    throw std::invalid_argument("communicator " + format_value(id) + " is not defined for rank " +
                                std::to_string(rank));
  const std::pair<int32_t, int32_t> pos{comms.rank_in(id, rank),
                                        static_cast<int32_t>(g->members.size())};
  s.positions.emplace(id, pos);
  return pos;
}

void Call::newcomm(MPI_Comm parent, MPI_Comm created) {
  Recorder& r = recorder();
  hold();
  try {
    // Every member of `parent` creates communicators from it in the same
    // order (MPI's collective rule), so (parent id, creation number) names
    // the new communicator identically on all of them. Ranks that get
    // MPI_COMM_NULL still count the creation, or their numbering drifts.
    int64_t pid = parent == MPI_COMM_NULL ? 0 : r.comm_id(parent);
    // Counted under the parent whatever the result, an intercommunicator
    // too: members of an intercommunicator that MPI_Comm_split or
    // MPI_Comm_create leaves without one count it here, and the others must
    // as well, or a later MPI_Intercomm_merge of the parent is numbered
    // differently on them.
    uint64_t seq = ++r.creations[pid];
    int inter = 0;
    if (created != MPI_COMM_NULL) PMPI_Comm_test_inter(created, &inter);
    std::vector<int32_t> pair;
    if (inter) {
      // The two groups of an intercommunicator come from different parents,
      // so (parent, creation number) would name it differently on each side.
      // Both sides know both groups without communicating: name it by the
      // pair (the group holding the lower world rank first) and by how many
      // intercommunicators joined this pair before.
      std::vector<int32_t> local = r.world_members(created),
                           remote = r.remote_world_members(created);
      if (!remote.empty() && (local.empty() || remote.front() < local.front()))
        std::swap(local, remote);
      pair = local;
      pair.push_back(-1);
      pair.insert(pair.end(), remote.begin(), remote.end());
      uint64_t ph = 1469598103934665603ull;
      for (int32_t m : pair)
        ph = (ph ^ static_cast<uint64_t>(static_cast<uint32_t>(m))) * 1099511628211ull;
      pid = static_cast<int64_t>(ph & 0x3FFFFFFFull) | (int64_t{1} << 40);
      seq = ++r.creations[pid];
    }
    if (created == MPI_COMM_NULL) {
      ev_.set(kNewcomm, kNull);
      return;
    }
    uint64_t h = 1469598103934665603ull;
    h = (h ^ static_cast<uint64_t>(pid)) * 1099511628211ull;
    h = (h ^ seq) * 1099511628211ull;
    const int64_t id = static_cast<int64_t>((h & 0x3FFFFFFFull) | 0x40000000ull);
    r.define_comm(id, created);
    ev_.set(kNewcomm, id);
  } catch (const std::exception& ex) {
    r.fail(ex.what());
  }
}

}  // namespace tracefold::record
