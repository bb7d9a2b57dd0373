// Planned receives of a lossy benchmark (--lossy-ok) whose point-to-point
// peers or tags come from value histograms. Each rank draws its own order
// of such values, and a histogram shared by alike ranks does not even keep
// each rank's own count per destination: the receives a rank makes at its
// recorded receive calls (with drawn sources) need not meet the messages
// the others send it, and the program hangs. As probabilistic replay does
// (docs/replay.md), the receives come from the senders instead: the
// generator walks every rank with the draws its program makes, and each
// rank posts, before its first call, one receive per message addressed to
// it, in each sender's order, and waits for them before MPI_Finalize.
#include <algorithm>
#include <map>
#include <vector>

#include "gen.hpp"
#include "tracefold/expand.hpp"

namespace tracefold::benchgen {

namespace {

bool point_to_point(OpFamily f) {
  switch (f) {
    case OpFamily::kSend:
    case OpFamily::kRecv:
    case OpFamily::kSendrecv:
    case OpFamily::kSendInit:
    case OpFamily::kRecvInit:
    case OpFamily::kMprobe:
    case OpFamily::kMrecv:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool Gen::needs_planned_receives() const {
  if (t.lossy.empty() || !opt.lossy_ok) return false;
  for (const Node& n : t.nodes) {
    if (!point_to_point(op_traits(n.key.op).family)) continue;
    for (FieldId f : {peer, tag, rpeer, rtag})
      if (const Elastic* e = n.field(f))
        for (const ElasticEntry& en : e->entries())
          if (en.values.is_histogram()) return true;
  }
  return false;
}

void Gen::plan_receives() {
  planned_receives = needs_planned_receives();
  if (!planned_receives) return;
  if (threads) fail(0, "a lossy trace with threads and drawn peers cannot be planned");
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const OpFamily f = op_traits(t.nodes[i].key.op).family;
    if (f == OpFamily::kSendrecv || f == OpFamily::kSendInit || f == OpFamily::kRecvInit ||
        f == OpFamily::kMprobe || f == OpFamily::kMrecv)
      fail(i, OpTable::name(t.nodes[i].key.op) +
                  " in a lossy trace whose peers or tags are histograms: its receives cannot "
                  "be planned from the senders (refold without --histogram-threshold)");
  }
  struct Message {
    int64_t source, tag, bytes;
  };
  std::vector<std::vector<Message>> incoming(static_cast<std::size_t>(t.world_size));
  std::map<const ValueSeq*, std::vector<int64_t>> tables;  // drawn once per histogram
  // The value the program's k-th execution of node i on `rank` passes for
  // field f: a drawn table's k-th entry (Gen::elastic reads table[counter])
  // where the rank's values are a histogram, else the recorded one.
  auto value = [&](std::size_t i, FieldId f, int32_t rank, uint64_t k, int64_t recorded,
                   bool& drawn_value) {
    drawn_value = false;
    const Elastic* e = t.nodes[i].field(f);
    if (!e) return recorded;
    for (const ElasticEntry& en : e->entries()) {
      if (!en.ranks.contains(rank) || !en.values.is_histogram()) continue;
      auto [pos, fresh_table] = tables.try_emplace(&en.values);
      if (fresh_table) pos->second = drawn(i, FieldTable::name(f), en.values);
      const std::vector<int64_t>& table = pos->second;
      drawn_value = true;
      return table[k % table.size()];  // read cyclically, as Gen::elastic's tables are
    }
    return recorded;
  };
  for (int32_t s = 0; s < t.world_size; ++s) {
    std::vector<uint64_t> execs(t.nodes.size(), 0);
    RankIterator it(t, s);
    Event ev;
    while (it.next(ev)) {
      const std::size_t i = static_cast<std::size_t>(it.current_node() - t.nodes.data());
      const uint64_t k = execs[i]++;
      if (op_traits(ev.op).family != OpFamily::kSend) continue;
      const int64_t c = ev.get(comm);
      if (c != kAbsent && c != CommTable::kWorld)
        fail(i,
             "a send on another communicator than MPI_COMM_WORLD in a lossy trace whose "
             "peers or tags are histograms: its receives cannot be planned");
      bool d = false;
      int64_t to = value(i, peer, s, k, ev.get(peer), d);
      if (is_sentinel(to)) continue;
      if (d) to = (s + to) % t.world_size;  // tables hold offsets (peer_of)
      if (to < 0 || to >= t.world_size) fail(i, "peer out of range on rank " + std::to_string(s));
      const int64_t tg = value(i, tag, s, k, ev.get(tag), d);
      const int64_t n = value(i, count, s, k, ev.get(count), d);
      const int64_t size = value(i, dsize, s, k, ev.get(dsize), d);
      const int64_t bytes = std::max<int64_t>(n == kAbsent ? 0 : n, 0) *
                            std::max<int64_t>(size == kAbsent ? 1 : size, 1);
      incoming[static_cast<std::size_t>(to)].push_back({s, tg, bytes});
    }
  }
  std::vector<int64_t> flat;
  std::string at = "0";
  for (const auto& msgs : incoming) {
    for (const Message& m : msgs) flat.insert(flat.end(), {m.source, m.tag, m.bytes});
    at += ", " + std::to_string(flat.size() / 3);
  }
  if (flat.empty()) flat = {0, 0, 0};
  decls << "\n/* Receives planned from the senders' draws (lossy trace): per rank, from\n"
           "   planned_at[rank] to planned_at[rank + 1], each message's source, tag and\n"
           "   bytes, in each sender's order. */\n"
        << "static const long planned_at[" << t.world_size + 1 << "] = {" << at << "};\n"
        << "static const int planned_msgs[" << flat.size() << "] = {";
  for (std::size_t k = 0; k < flat.size(); ++k)
    decls << (k ? (k % 12 ? ", " : ",\n    ") : "") << flat[k];
  decls << "};\n"
        << R"(static MPI_Request *planned_reqs;
static void post_planned(void) {
  const long a = planned_at[rank], n = planned_at[rank + 1] - a;
  long bytes = 1;
  for (long k = 0; k < n; ++k) bytes += planned_msgs[3 * (a + k) + 2];
  char *buf = alloc_buffer(bytes);
  planned_reqs = malloc((size_t)(n > 0 ? n : 1) * sizeof(MPI_Request));
  for (long k = 0; k < n; ++k) {
    const int *m = planned_msgs + 3 * (a + k);
    PMPI_Irecv(buf, m[2], MPI_BYTE, m[0], m[1], MPI_COMM_WORLD, &planned_reqs[k]);
    buf += m[2];
  }
}
static void wait_planned(void) {
  PMPI_Waitall((int)(planned_at[rank + 1] - planned_at[rank]), planned_reqs, statuses_ignore);
}
)";
  setup << "  post_planned();\n";
}

}  // namespace tracefold::benchgen
