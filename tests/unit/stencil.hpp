// Synthetic 2D 5-point stencil event streams for merge, size and I/O tests.
//
// P = side * side ranks on a row-major grid (rank = row * side + col). Each
// time step, for every existing neighbour in the order north, south, west,
// east, a rank posts MPI_Irecv then MPI_Isend to it (absolute peers, one call
// site per operation and direction), completes them with one MPI_Waitall
// whose `links` point back at the 2k request events, and ends the step with an
// MPI_Allreduce.
//
//  - kOpen:          non-periodic grid; boundary ranks skip missing neighbours,
//                    which gives 9 communication groups (4 corners, 4 edges,
//                    interior) for side >= 3.
//  - kPeriodicWorld: periodic grid, peers are world ranks. Relative encoding
//                    ((peer - me) mod P) makes north/south offsets uniform but
//                    the east/west wrap-around of the first and last column
//                    differ, so at most 3 groups remain.
//  - kPeriodicComms: periodic grid whose east/west traffic goes through a row
//                    communicator (comm 1, one group per row) and north/south
//                    traffic through a column communicator (comm 2), peers in
//                    those communicators' rank numbering: every rank has the
//                    same relative behaviour, so the grid is one group.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tracefold/event.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::testing {

enum class StencilKind { kOpen, kPeriodicWorld, kPeriodicComms };

struct Stencil {
  int32_t side = 4;
  int steps = 10;
  StencilKind kind = StencilKind::kOpen;
  bool timings = true;
  int64_t count = 64;  ///< elements per halo message

  int32_t size() const { return side * side; }

  // Call-site ids in stencil_sites().
  static constexpr SiteId kIrecvSite[4] = {0, 1, 2, 3};  // N S W E
  static constexpr SiteId kIsendSite[4] = {4, 5, 6, 7};
  static constexpr SiteId kWaitallSite = 8;
  static constexpr SiteId kAllreduceSite = 9;
  static constexpr int64_t kRowComm = 1;
  static constexpr int64_t kColComm = 2;

  /// The call sites: two frames each, identical on every rank.
  static SiteTable sites() {
    SiteTable t;
    for (uint64_t i = 0; i < 10; ++i)
      t.intern(CallSite{
          {Frame{"libstencil.so", 0x1000 + 0x40 * i}, Frame{"stencil", 0x400 + 0x10 * (i / 4)}}});
    return t;
  }

  /// Communicators rank `rank` belongs to (world, plus row/col for kPeriodicComms).
  CommTable comms_of(int32_t rank) const {
    CommTable c;
    c.define_world(size());
    if (kind == StencilKind::kPeriodicComms) {
      const int32_t row = rank / side, col = rank % side;
      CommGroup r, k;
      for (int32_t i = 0; i < side; ++i) r.members.push_back(row * side + i);
      for (int32_t i = 0; i < side; ++i) k.members.push_back(i * side + col);
      c.define(kRowComm, r);
      c.define(kColComm, k);
    }
    return c;
  }

  /// Neighbour `dir` (0 N, 1 S, 2 W, 3 E) of `rank`: {peer in comm, comm}, or
  /// peer -1 when it does not exist.
  std::pair<int32_t, int64_t> neighbour(int32_t rank, int dir) const {
    const int32_t row = rank / side, col = rank % side;
    int32_t r = row, c = col;
    switch (dir) {
      case 0:
        r = row - 1;
        break;
      case 1:
        r = row + 1;
        break;
      case 2:
        c = col - 1;
        break;
      default:
        c = col + 1;
        break;
    }
    if (kind == StencilKind::kOpen) {
      if (r < 0 || r >= side || c < 0 || c >= side) return {-1, 0};
      return {r * side + c, 0};
    }
    r = (r + side) % side;
    c = (c + side) % side;
    if (kind == StencilKind::kPeriodicWorld) return {r * side + c, 0};
    // Row communicator ranks are columns; column communicator ranks are rows.
    return dir < 2 ? std::pair<int32_t, int64_t>{r, kColComm}
                   : std::pair<int32_t, int64_t>{c, kRowComm};
  }

  static Event event(const char* op, SiteId site) {
    Event e;
    e.op = *OpTable::find(op);
    e.site = site;
    return e;
  }
  static void put(Event& e, const char* field, int64_t v) {
    e.set(FieldTable::intern(field, FieldKind::kScalar), v);
  }

  /// Rank `rank`'s event stream with absolute peers.
  std::vector<Event> events(int32_t rank) const {
    std::vector<Event> out;
    out.reserve(static_cast<std::size_t>(steps) * 10);
    for (int step = 0; step < steps; ++step) {
      int64_t requests = 0;
      for (int dir = 0; dir < 4; ++dir) {
        auto [peer, comm] = neighbour(rank, dir);
        if (peer < 0) continue;
        const int opposite = dir ^ 1;
        for (int send = 0; send < 2; ++send) {
          Event e =
              event(send ? "MPI_Isend" : "MPI_Irecv", send ? kIsendSite[dir] : kIrecvSite[dir]);
          e.set(FieldTable::peer(), peer);
          put(e, "tag", send ? dir : opposite);
          put(e, "count", count);
          put(e, "dsize", 8);
          put(e, "comm", comm);
          stamp(e, rank, step, 10 * dir + send);
          out.push_back(std::move(e));
          ++requests;
        }
      }
      Event w = event("MPI_Waitall", kWaitallSite);
      put(w, "req", requests);
      std::vector<int64_t> links;
      for (int64_t i = requests; i >= 1; --i) links.push_back(i);
      w.set_list(FieldTable::links(), links);
      stamp(w, rank, step, 50);
      out.push_back(std::move(w));
      Event a = event("MPI_Allreduce", kAllreduceSite);
      put(a, "count", 1);
      put(a, "dsize", 8);
      put(a, "comm", 0);
      put(a, "redop", 3);
      stamp(a, rank, step, 60);
      out.push_back(std::move(a));
    }
    return out;
  }

  /// Deterministic, bounded timings.
  void stamp(Event& e, int32_t rank, int step, int salt) const {
    if (!timings) return;
    e.compute_ns = 1000 + 100 * salt + (rank * 7 + step * 13) % 97;
    e.comm_ns = 300 + (rank + step * 3 + salt) % 61;
  }

  /// Rank `rank`'s events folded into a single-rank trace.
  Trace fold_rank(int32_t rank, const FoldOptions& options = {}) const {
    const CommTable comms = comms_of(rank);
    Folder f(rank, options);
    for (Event e : events(rank)) {
      encode_relative(e, rank, comms);
      f.append(e);
    }
    return f.finish(size(), sites(), comms);
  }

  /// Every rank's single-rank trace, in rank order.
  std::vector<Trace> fold_all(const FoldOptions& options = {}) const {
    std::vector<Trace> out;
    out.reserve(static_cast<std::size_t>(size()));
    for (int32_t r = 0; r < size(); ++r) out.push_back(fold_rank(r, options));
    return out;
  }

  /// Rank `rank`'s raw log text (header, sites, communicators, events).
  std::string raw_log(int32_t rank) const {
    std::string s = "rank " + std::to_string(rank) + " size " + std::to_string(size()) + "\n";
    const SiteTable st = sites();
    for (SiteId i = 0; i < st.size(); ++i)
      s += "site " + std::to_string(i) + " " + SiteTable::format(st.at(i)) + "\n";
    const CommTable comms = comms_of(rank);
    for (const auto& [id, groups] : comms.all()) {
      if (id == CommTable::kWorld) continue;
      for (const CommGroup& g : groups) s += format_comm_line(id, g) + "\n";
    }
    for (const Event& e : events(rank)) s += format_event_line(e, timings) + "\n";
    return s;
  }
};

/// Calls f(node index, what, elastic) for every elastic value of the trace:
/// loop members/iterations, execution counts and fields.
template <class F>
void for_each_elastic(const Trace& t, F&& f) {
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    for (std::size_t l = 0; l < n.loops.size(); ++l) {
      f(i, "loop " + std::to_string(l) + " members", n.loops[l].members);
      f(i, "loop " + std::to_string(l) + " iters", n.loops[l].iters);
    }
    f(i, std::string("count"), n.count);
    for (const auto& [id, el] : n.fields) f(i, "field " + FieldTable::name(id), el);
  }
}

/// Rank `rank` of `trace` expands to exactly `expected`, whose site ids refer
/// to `expected_sites` (sites are compared by their frames, so renumbering by
/// merge/canonicalize_sites does not matter). Timings are not compared.
inline ::testing::AssertionResult expands_to(const Trace& trace, int32_t rank,
                                             const std::vector<Event>& expected,
                                             const SiteTable& expected_sites) {
  std::vector<Event> got;
  try {
    got = expand_rank(trace, rank);
  } catch (const std::exception& ex) {
    return ::testing::AssertionFailure() << "rank " << rank << ": expansion threw: " << ex.what();
  }
  const std::size_t n = std::min(got.size(), expected.size());
  for (std::size_t i = 0; i < n; ++i) {
    const Event& g = got[i];
    const Event& e = expected[i];
    if (g.op != e.op || trace.sites.at(g.site) != expected_sites.at(e.site) || g.fields != e.fields)
      return ::testing::AssertionFailure()
             << "rank " << rank << " event " << i << ": got '" << format_event_line(g) << "' ("
             << SiteTable::format(trace.sites.at(g.site)) << "), expected '" << format_event_line(e)
             << "' (" << SiteTable::format(expected_sites.at(e.site)) << ")";
  }
  if (got.size() != expected.size())
    return ::testing::AssertionFailure()
           << "rank " << rank << ": got " << got.size() << " events, expected " << expected.size();
  return ::testing::AssertionSuccess();
}

}  // namespace tracefold::testing
