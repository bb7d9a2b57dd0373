// The partners of one class of ranks of the per-level model
// (level_classes.cpp), call by call, as coordinate offsets.
//
// On a periodic grid every rank of a class has the same offsets once the
// wrap-around is taken out, so one rank gives them. On a grid with edges
// (neighbours beyond an edge are MPI_PROC_NULL) the ranks of a class make
// the same calls, but the first and last busy ones along a dimension have
// MPI_PROC_NULL where the others have a partner, and which busy rank is the
// last depends on the level's stride. No single rank need have every
// partner (at 4 ranks a side and a stride of 2, rank 0 has none below and
// rank 2 none above), so each call's offset is taken from whichever ranks
// of the class have a partner there, and every rank is checked against
// it: its partner is the rank at that offset, or MPI_PROC_NULL exactly
// when the offset leaves the grid.
#include <sstream>

#include "internal.hpp"
#include "tracefold/expand.hpp"

namespace tracefold::extrap::detail {

namespace {

// Rank r's peers in node order (its peer fields in field order, their
// calls in order): sentinels as they are, partners as absolute ranks.
std::vector<int64_t> peers_of(const Trace& t, int32_t r, const std::string& name) {
  std::vector<int64_t> out;
  for (const Node& n : t.nodes) {
    if (!n.ranks.contains(r)) continue;
    for (const auto& [field, e] : n.fields) {
      if (FieldTable::role(field) != FieldRole::kPeer) continue;
      if (FieldTable::kind(field) == FieldKind::kList)
        throw ExtrapError(name + ": lists of peers (field " + FieldTable::name(field) +
                          ") are not read as offsets");
      const ValueSeq* seq = e.for_rank(r);
      if (seq == nullptr) continue;
      for (int64_t v : seq->to_vector()) out.push_back(is_sentinel(v) ? v : (r + v) % t.world_size);
    }
  }
  return out;
}

std::string offset_text(const std::vector<int64_t>& off) {
  std::ostringstream s;
  for (std::size_t d = 0; d < off.size(); ++d)
    s << (d ? " " : "") << "xyz"[d < 3 ? d : 0] << (off[d] >= 0 ? "+" : "") << off[d];
  return s.str();
}

std::string peer_text(int64_t v) {
  return v == kNull ? "MPI_PROC_NULL" : "rank " + std::to_string(v);
}

// The offsets of peer `q` from `r`, packed into one number for comparing
// ranks' calls (sentinels stay themselves).
int64_t packed_offset(const Topology& t, int64_t r, int64_t q) {
  const auto a = t.coords(r), b = t.coords(q);
  int64_t code = 0, w = 1;
  for (std::size_t d = 0; d < a.size(); ++d) {
    code += (ring_offset(b[d] - a[d], t.sizes[d]) + t.sizes[d]) * w;
    w *= 2 * t.sizes[d] + 1;
  }
  return code;
}

}  // namespace

int64_t ring_offset(int64_t v, int64_t s) {
  v = ((v % s) + s) % s;
  return 2 * v > s ? v - s : v;
}

std::optional<int64_t> open_partner(const Topology& t, const std::vector<int64_t>& c,
                                    const std::vector<int64_t>& off) {
  int64_t r = 0, w = 1;
  for (std::size_t d = 0; d < c.size(); ++d) {
    const int64_t x = c[d] + off[d];
    if (x < 0 || x >= t.sizes[d]) return std::nullopt;
    r += x * w;
    w *= t.sizes[d];
  }
  return r;
}

// Rank r's calls with peers as offsets, flattened: the class check. On a
// grid with edges (`open`) partners and MPI_PROC_NULL are left out: which
// of them a call has depends on the rank's place (class_partners checks it).
std::vector<int64_t> class_signature(const Trace& trace, const Topology& t, int32_t r, bool open) {
  std::vector<int64_t> out;
  RankIterator it(trace, r);
  for (Event ev; it.next(ev);) {
    out.push_back(it.current_node() - trace.nodes.data());
    for (const FieldValue& fv : ev.fields) {
      const bool peer = FieldTable::role(fv.field) == FieldRole::kPeer;
      out.push_back(fv.field);
      auto put = [&](int64_t v) {
        const bool partner = peer && v != kAbsent && !is_sentinel(v);
        if (open && (partner || (peer && v == kNull)))
          out.push_back(kNull);
        else
          out.push_back(partner ? packed_offset(t, r, v) : v);
      };
      put(fv.scalar);
      for (int64_t v : fv.list) put(v);
    }
  }
  return out;
}

std::vector<PeerSlot> class_partners(const Trace& t, const Topology& topo,
                                     const std::vector<int32_t>& members, bool open,
                                     const std::string& name, std::size_t depth) {
  const int32_t rep = members.at(0);
  const auto rc = topo.coords(rep);
  std::vector<PeerSlot> slots;
  const std::vector<int64_t> mine = peers_of(t, rep, name);
  if (!open) {
    for (int64_t v : mine) {
      PeerSlot s{v, std::vector<int64_t>(rc.size(), 0)};
      if (!is_sentinel(v)) {
        s.sentinel = 0;
        const auto qc = topo.coords(v);
        for (std::size_t d = 0; d < rc.size(); ++d)
          s.offset[d] = ring_offset(qc[d] - rc[d], topo.sizes[d]);
      }
      slots.push_back(std::move(s));
    }
    return slots;
  }
  const std::string cls = "busy on the same " + std::to_string(depth) + " coarse level(s)";
  std::vector<std::vector<int64_t>> all;
  all.reserve(members.size());
  for (int32_t r : members) {
    all.push_back(peers_of(t, r, name));
    if (all.back().size() != mine.size())
      throw ExtrapError(name + ": ranks " + std::to_string(rep) + " and " + std::to_string(r) +
                        ", " + cls + ", make " + std::to_string(mine.size()) + " and " +
                        std::to_string(all.back().size()) + " calls with partners");
  }
  // Each call's offset from the first rank that has a partner there.
  std::vector<int32_t> from(mine.size(), -1);
  slots.assign(mine.size(), PeerSlot{kNull, std::vector<int64_t>(rc.size(), 0)});
  for (std::size_t m = 0; m < members.size(); ++m) {
    const auto c = topo.coords(members[m]);
    for (std::size_t j = 0; j < mine.size(); ++j) {
      const int64_t v = all[m][j];
      if (v == kNull) continue;
      if (is_sentinel(v)) {
        slots[j].sentinel = v;
        continue;
      }
      const auto qc = topo.coords(v);
      std::vector<int64_t> off(c.size());
      for (std::size_t d = 0; d < c.size(); ++d) off[d] = qc[d] - c[d];
      if (from[j] < 0) {
        from[j] = members[m];
        slots[j] = PeerSlot{0, std::move(off)};
      } else if (off != slots[j].offset) {
        throw ExtrapError(name + ": ranks " + std::to_string(from[j]) + " and " +
                          std::to_string(members[m]) + ", " + cls + " on the " + topo.to_string() +
                          " grid, have their partners of call " + std::to_string(j + 1) +
                          " at different offsets (" + offset_text(slots[j].offset) + " and " +
                          offset_text(off) + "): the class's partners follow no fixed step");
      }
    }
  }
  // Every rank: the partner at the class's offset, MPI_PROC_NULL beyond an edge.
  for (std::size_t m = 0; m < members.size(); ++m) {
    const auto c = topo.coords(members[m]);
    for (std::size_t j = 0; j < mine.size(); ++j) {
      if (from[j] < 0) continue;
      const auto q = open_partner(topo, c, slots[j].offset);
      const int64_t want = q ? *q : kNull;
      if (all[m][j] != want)
        throw ExtrapError(name + ": rank " + std::to_string(members[m]) + ", " + cls + " on the " +
                          topo.to_string() + " grid, has " + peer_text(all[m][j]) +
                          " as the partner of call " + std::to_string(j + 1) + " where rank " +
                          std::to_string(from[j]) + "'s offset (" + offset_text(slots[j].offset) +
                          ") gives " + peer_text(want) +
                          ": partners are the rank at the class's offset, or MPI_PROC_NULL "
                          "beyond an edge of the grid, in the model of a grid with edges");
    }
  }
  return slots;
}

}  // namespace tracefold::extrap::detail
