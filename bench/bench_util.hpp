// Synthetic event generators shared by the tracefold benchmarks.
//
// Everything here runs outside the timed regions: generators build complete
// event vectors up front so the benchmarks measure only folding / merging.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold::bench {

/// Field ids, interned once.
struct Fields {
  FieldId peer, tag, count, dsize, comm, req, links;
  static const Fields& get() {
    static const Fields f{
        FieldTable::intern("peer", FieldKind::kScalar),
        FieldTable::intern("tag", FieldKind::kScalar),
        FieldTable::intern("count", FieldKind::kScalar),
        FieldTable::intern("dsize", FieldKind::kScalar),
        FieldTable::intern("comm", FieldKind::kScalar),
        FieldTable::intern("req", FieldKind::kScalar),
        FieldTable::intern("links", FieldKind::kList),
    };
    return f;
  }
};

inline OpId op(const char* name) {
  return *OpTable::find(name);
}

/// Deterministic xorshift generator for timing jitter.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  /// base +- ~12.5 % jitter
  int64_t around(int64_t base) {
    const int64_t span = base / 4 + 1;
    return base - span / 2 + static_cast<int64_t>(next() % static_cast<uint64_t>(span));
  }
};

/// A site table with `n` distinct call sites app+0x10, app+0x20, ... (as in
/// tests/unit/test_util.hpp), so site ids 0..n-1 are valid.
inline SiteTable make_sites(std::size_t n) {
  SiteTable t;
  for (std::size_t i = 0; i < n; ++i) t.intern(CallSite{{Frame{"app", 0x10 * (i + 1)}}});
  return t;
}

/// Point-to-point event. `peer` is taken as given (callers pass either a
/// relative offset or an absolute rank to be encoded later).
inline Event p2p(OpId o, SiteId site, int64_t peer, int64_t tag, int64_t count, Rng& rng,
                 int64_t compute_ns, int64_t comm_ns) {
  const Fields& f = Fields::get();
  Event e;
  e.op = o;
  e.site = site;
  e.set(f.peer, peer);
  e.set(f.tag, tag);
  e.set(f.count, count);
  e.set(f.dsize, 8);
  e.set(f.comm, 0);
  e.compute_ns = rng.around(compute_ns);
  e.comm_ns = rng.around(comm_ns);
  return e;
}

inline Event collective(OpId o, SiteId site, int64_t count, Rng& rng, int64_t compute_ns,
                        int64_t comm_ns) {
  const Fields& f = Fields::get();
  Event e;
  e.op = o;
  e.site = site;
  if (count >= 0) {
    e.set(f.count, count);
    e.set(f.dsize, 8);
  }
  e.set(f.comm, 0);
  e.compute_ns = rng.around(compute_ns);
  e.comm_ns = rng.around(comm_ns);
  return e;
}

inline Event waitall(SiteId site, int64_t nreq, Rng& rng) {
  const Fields& f = Fields::get();
  Event e;
  e.op = op("MPI_Waitall");
  e.site = site;
  e.set(f.req, nreq);
  std::vector<int64_t> links;
  for (int64_t k = nreq; k >= 1; --k) links.push_back(k);
  e.set_list(f.links, std::move(links));
  e.compute_ns = rng.around(2'000);
  e.comm_ns = rng.around(15'000);
  return e;
}

// ------------------------------------------------------------------ regular

/// Regular 3-level loop nest; peers are already relative offsets.
///   outer x `outer`:  Allreduce
///     middle x `middle`: Irecv(-1) Isend(+1)
///       inner x `inner`: Send(+2) Recv(-2)
///     Waitall(2)
///   Barrier
/// = outer * (2 + middle * (3 + 2 * inner)) events.
inline std::vector<Event> regular_nest(int outer, int middle, int inner, int32_t world = 1024) {
  Rng rng(1);
  const OpId allreduce = op("MPI_Allreduce"), irecv = op("MPI_Irecv"), isend = op("MPI_Isend"),
             send = op("MPI_Send"), recv = op("MPI_Recv"), barrier = op("MPI_Barrier");
  std::vector<Event> ev;
  ev.reserve(static_cast<std::size_t>(outer) * (2 + middle * (3 + 2 * inner)));
  for (int o = 0; o < outer; ++o) {
    ev.push_back(collective(allreduce, 0, 1, rng, 50'000, 8'000));
    for (int m = 0; m < middle; ++m) {
      ev.push_back(p2p(irecv, 1, world - 1, 10, 1024, rng, 1'000, 500));
      ev.push_back(p2p(isend, 2, 1, 10, 1024, rng, 300, 700));
      for (int i = 0; i < inner; ++i) {
        ev.push_back(p2p(send, 3, 2, 20, 64, rng, 4'000, 1'500));
        ev.push_back(p2p(recv, 4, world - 2, 20, 64, rng, 200, 2'500));
      }
      ev.push_back(waitall(5, 2, rng));
    }
    ev.push_back(collective(barrier, 6, -1, rng, 10'000, 20'000));
  }
  return ev;
}

// ---------------------------------------------------------------- POP-like

/// Irregular, POP-like time stepping (peers relative, 2D decomposition of a
/// `px`-wide rank grid in a `world`-rank communicator):
///   per step:
///     baroclinic: 2 x halo update (Irecv x4, Isend x4, Waitall(8))
///     if step % 4 == 0: diagnostics Allreduce (count=3)   -- branch
///     barotropic CG solver, iterations vary per step (28..47):
///       halo update (Irecv x4, Isend x4, Waitall(8)), global-sum Allreduce(count=1)
///       every 10th CG iteration: convergence-check Allreduce (count=2) -- branch
///     if step % 25 == 24: Gather of a history record (count varies)        -- branch
///     Barrier
inline std::vector<Event> pop_like(int steps, int32_t world = 1024, int32_t px = 32) {
  Rng rng(7);
  const OpId allreduce = op("MPI_Allreduce"), irecv = op("MPI_Irecv"), isend = op("MPI_Isend"),
             gather = op("MPI_Gather"), barrier = op("MPI_Barrier");
  const int64_t nbr[4] = {world - px, px, world - 1, 1};  // N S W E (relative)
  std::vector<Event> ev;
  auto halo = [&](SiteId base, int64_t count) {
    for (int d = 0; d < 4; ++d)
      ev.push_back(
          p2p(irecv, base + static_cast<SiteId>(d), nbr[d], 100 + (d ^ 1), count, rng, 500, 300));
    for (int d = 0; d < 4; ++d)
      ev.push_back(
          p2p(isend, base + 4 + static_cast<SiteId>(d), nbr[d], 100 + d, count, rng, 800, 400));
    ev.push_back(waitall(base + 8, 8, rng));
  };
  for (int s = 0; s < steps; ++s) {
    halo(0, 60 * 40);  // sites 0..8
    halo(9, 60);       // sites 9..17
    if (s % 4 == 0) ev.push_back(collective(allreduce, 18, 3, rng, 30'000, 9'000));
    const int cg_iters = 28 + static_cast<int>((static_cast<uint64_t>(s) * 2654435761u) % 20);
    for (int k = 0; k < cg_iters; ++k) {
      halo(19, 60);  // sites 19..27
      ev.push_back(collective(allreduce, 28, 1, rng, 15'000, 6'000));
      if (k % 10 == 9) ev.push_back(collective(allreduce, 29, 2, rng, 1'000, 6'000));
    }
    if (s % 25 == 24) ev.push_back(collective(gather, 30, 1000 + s % 3, rng, 5'000, 90'000));
    ev.push_back(collective(barrier, 31, -1, rng, 2'000, 10'000));
  }
  return ev;
}

constexpr std::size_t kPopSites = 32;
constexpr std::size_t kRegularSites = 7;

}  // namespace tracefold::bench
