// Inter-process merge of 1,024 per-rank folded traces (tracefold::reduce_traces).
//
// Workload: a 2D 5-point stencil on a 32 x 32 rank grid, non-periodic (edge
// and corner ranks have 2 or 3 neighbours and skip the missing calls), 100
// time steps. Per rank:
//   MPI_Init
//   100 x { Irecv per neighbour (N S W E, one call site each),
//           Isend per neighbour, Waitall(req=n, links=...), Allreduce(1) }
//   MPI_Finalize
// Each rank's events are relative-encoded (encode_relative) and folded with a
// Folder (untimed setup), then BM_Merge1024 times reduce_traces on a fresh
// copy of the 1,024 traces (the copy is untimed).
//
// Counters:
//   trace_B      format_trace size of the merged trace
//   trace_zst_B  the same, zstd level 19 (save_trace of a .zst path)
//   raw_B        sum over ranks of the raw log (format_event_line + '\n')
//   raw_timed_B  the same with compute_ns/comm_ns (what the trace's timing
//                histograms summarize)
//   ranks_B      sum of the 1,024 single-rank folded traces (format_trace)
//   nodes        nodes in the merged trace
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::bench {
namespace {

constexpr int32_t kPx = 32, kPy = 32, kRanks = kPx * kPy, kSteps = 100;

enum : SiteId {
  kSiteInit = 0,
  kSiteIrecv = 1,
  kSiteIsend = 5,
  kSiteWait = 9,
  kSiteAllreduce = 10,
  kSiteFinalize = 11,
  kStencilSites = 12
};

// Absolute-peer events of one rank (as a recorder / raw log would have them).
std::vector<Event> stencil_rank(int32_t r) {
  Rng rng(static_cast<uint64_t>(r) + 11);
  const int32_t row = r / kPx, col = r % kPx;
  // N S W E; -1 = no neighbour (non-periodic boundary).
  const int32_t nbr[4] = {row > 0 ? r - kPx : -1, row < kPy - 1 ? r + kPx : -1,
                          col > 0 ? r - 1 : -1, col < kPx - 1 ? r + 1 : -1};
  int nn = 0;
  for (int32_t x : nbr) nn += x >= 0;
  const OpId irecv = op("MPI_Irecv"), isend = op("MPI_Isend"), allreduce = op("MPI_Allreduce");
  std::vector<Event> ev;
  ev.reserve(2 + static_cast<std::size_t>(kSteps) * (2 * nn + 2));
  Event init;
  init.op = op("MPI_Init");
  init.site = kSiteInit;
  init.comm_ns = rng.around(1'000'000);
  ev.push_back(init);
  for (int s = 0; s < kSteps; ++s) {
    for (int d = 0; d < 4; ++d)
      if (nbr[d] >= 0) ev.push_back(p2p(irecv, kSiteIrecv + d, nbr[d], d ^ 1, 64, rng, 2'000, 400));
    for (int d = 0; d < 4; ++d)
      if (nbr[d] >= 0) ev.push_back(p2p(isend, kSiteIsend + d, nbr[d], d, 64, rng, 300, 600));
    ev.push_back(waitall(kSiteWait, 2 * nn, rng));
    ev.push_back(collective(allreduce, kSiteAllreduce, 1, rng, 80'000, 12'000));
  }
  Event fin;
  fin.op = op("MPI_Finalize");
  fin.site = kSiteFinalize;
  fin.compute_ns = rng.around(5'000);
  fin.comm_ns = rng.around(200'000);
  ev.push_back(fin);
  return ev;
}

struct Workload {
  SiteTable sites = make_sites(kStencilSites);
  CommTable comms;
  std::vector<std::vector<Event>> events;  // relative-encoded, per rank
  std::vector<Trace> traces;               // folded, per rank
  std::size_t total_events = 0, raw_bytes = 0, raw_timed_bytes = 0, ranks_bytes = 0;

  Workload() {
    comms.define_world(kRanks);
    events.reserve(kRanks);
    traces.reserve(kRanks);
    for (int32_t r = 0; r < kRanks; ++r) {
      std::vector<Event> ev = stencil_rank(r);
      for (Event& e : ev) {
        raw_bytes += format_event_line(e).size() + 1;
        raw_timed_bytes += format_event_line(e, true).size() + 1;
        encode_relative(e, r, comms);
      }
      total_events += ev.size();
      Folder f(r);
      for (const Event& e : ev) f.append(e);
      traces.push_back(f.finish(kRanks, sites, comms));
      ranks_bytes += format_trace(traces.back()).size();
      events.push_back(std::move(ev));
    }
  }
  static const Workload& get() {
    static const Workload w;
    return w;
  }
};

void BM_Merge1024(benchmark::State& state) {
  const Workload& w = Workload::get();
  std::size_t trace_bytes = 0, zst_bytes = 0, nodes = 0;
  {
    Trace merged = reduce_traces(w.traces);
    const std::string text = format_trace(merged);
    trace_bytes = text.size();
    zst_bytes = zstd_compress(text).size();
    nodes = merged.nodes.size();
    // Lossless check on corner, edge and interior ranks (absolute peers).
    for (int32_t r : {0, 1, 31, 32, 33, 500, 992, 1023}) {
      const std::vector<Event> want = stencil_rank(r), got = expand_rank(merged, r);
      bool ok = want.size() == got.size();
      for (std::size_t i = 0; ok && i < got.size(); ++i) ok = got[i].same_call(want[i]);
      if (!ok) {
        state.SkipWithError(
            ("merged trace does not expand to rank " + std::to_string(r) + "'s events").c_str());
        return;
      }
    }
  }
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Trace> copy = w.traces;
    state.ResumeTiming();
    Trace merged = reduce_traces(std::move(copy));
    benchmark::DoNotOptimize(merged.nodes.data());
    state.PauseTiming();
    { Trace drop = std::move(merged); }  // destruction untimed
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(w.total_events));
  state.counters["ranks"] = kRanks;
  state.counters["events"] = static_cast<double>(w.total_events);
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["trace_B"] = static_cast<double>(trace_bytes);
  state.counters["trace_zst_B"] = static_cast<double>(zst_bytes);
  state.counters["ranks_B"] = static_cast<double>(w.ranks_bytes);
  state.counters["raw_B"] = static_cast<double>(w.raw_bytes);
  state.counters["raw_timed_B"] = static_cast<double>(w.raw_timed_bytes);
}
BENCHMARK(BM_Merge1024)->Unit(benchmark::kMillisecond);

// For context: folding all 1,024 ranks (the untimed setup of BM_Merge1024).
void BM_FoldStencil1024(benchmark::State& state) {
  const Workload& w = Workload::get();
  for (auto _ : state) {
    for (int32_t r = 0; r < kRanks; ++r) {
      Folder f(r);
      for (const Event& e : w.events[static_cast<std::size_t>(r)]) f.append(e);
      benchmark::DoNotOptimize(f.top_level_size());
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(w.total_events));
}
BENCHMARK(BM_FoldStencil1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tracefold::bench
