// Hand-made timelines for the diagnosis's unit tests
// (diagnose_test.cpp, diagnose_rules_test.cpp).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "test_util.hpp"
#include "tracefold/diagnose.hpp"

namespace tracefold::testing {

constexpr int64_t kMs = 1000000;

struct DiagRun {
  Trace trace;
  DiagnoseInput in;
  explicit DiagRun(int32_t n) {
    trace.world_size = n;
    trace.comms.define_world(n);
    trace.sites = testing::make_sites(8);
    in.events.ranks.resize(std::size_t(n));
  }
  void add(int32_t r, const std::string& op, SiteId site, int64_t start, int64_t end,
           std::vector<std::pair<std::string, int64_t>> fields = {}) {
    testing::add_timed(in.events.ranks[std::size_t(r)], op, site, start, end, std::move(fields));
  }
  // MPI_Init on every rank, ending at 0.
  void init() {
    for (int32_t r = 0; r < trace.world_size; ++r) add(r, "MPI_Init", 7, -kMs, 0);
  }
  void finalize(int64_t at) {
    for (int32_t r = 0; r < trace.world_size; ++r) add(r, "MPI_Finalize", 7, at, at + kMs);
  }
  // Rank r computes work[r] from `from`, then all meet in an Allreduce at
  // site 1 that ends at `from + max(work) + 10 us`; returns that end.
  int64_t step(int64_t from, const std::vector<int64_t>& work) {
    int64_t mx = 0;
    for (int64_t w : work) mx = std::max(mx, w);
    const int64_t end = from + mx + 10000;
    for (int32_t r = 0; r < trace.world_size; ++r)
      add(r, "MPI_Allreduce", 1, from + work[std::size_t(r)], end,
          {{"comm", 0}, {"count", 1}, {"dsize", 8}});
    return end;
  }
  DiagnoseReport run(DiagnoseOptions o = {}) { return diagnose(trace, in, o); }
};

inline const Diagnosis* find(const DiagnoseReport& r, DiagnosisKind k) {
  for (const Diagnosis& d : r.diagnoses)
    if (d.kind == k) return &d;
  return nullptr;
}

}  // namespace tracefold::testing
