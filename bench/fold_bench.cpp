// Folding throughput of tracefold::Folder::append (events/s = items/s).
//
// Events are generated before the timed loop; each benchmark iteration folds
// the whole pre-generated stream into a fresh Folder. Counters (computed once,
// outside the timed loop) show how well the stream folded:
//   events      events per stream
//   top_level   top-level items left in the Folder (1 = everything folded)
//   trace_B     format_trace size of the folded single-rank trace
//   raw_B       raw-log size (sum of format_event_line lengths + newlines)
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::bench {
namespace {

void fold_stream(benchmark::State& state, const std::vector<Event>& events, std::size_t nsites) {
  // One untimed fold for the shape counters (and to warm caches/allocator).
  std::size_t top = 0, trace_bytes = 0, raw_bytes = 0;
  {
    Folder f(0);
    for (const Event& e : events) f.append(e);
    top = f.top_level_size();
    CommTable comms;
    comms.define_world(1024);
    const Trace t = f.finish(1024, make_sites(nsites), comms);
    trace_bytes = format_trace(t).size();
    for (const Event& e : events) raw_bytes += format_event_line(e).size() + 1;
    // Lossless check: rank 0's expansion must give back the stream (peers
    // are relative offsets; decoding for rank 0 leaves them unchanged).
    const std::vector<Event> back = expand_rank(t, 0);
    bool ok = back.size() == events.size();
    for (std::size_t i = 0; ok && i < back.size(); ++i) ok = back[i].same_call(events[i]);
    if (!ok) {
      state.SkipWithError("folded trace does not expand to the input stream");
      return;
    }
  }
  for (auto _ : state) {
    Folder f(0);
    for (const Event& e : events) f.append(e);
    benchmark::DoNotOptimize(f.top_level_size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(events.size()));
  state.counters["events"] = static_cast<double>(events.size());
  state.counters["top_level"] = static_cast<double>(top);
  state.counters["trace_B"] = static_cast<double>(trace_bytes);
  state.counters["raw_B"] = static_cast<double>(raw_bytes);
}

// (a) Regular 3-level nest: outer x 10 middle x 5 inner, 132 events per outer
// iteration. Arg = outer trip count (100 = 13,200 events; 10,000 = 1.32 M).
void BM_FoldRegular(benchmark::State& state) {
  const auto events = regular_nest(static_cast<int>(state.range(0)), 10, 5);
  fold_stream(state, events, kRegularSites);
}
BENCHMARK(BM_FoldRegular)->Arg(100)->Arg(10000)->Unit(benchmark::kMillisecond);

// (b) Irregular POP-like stepping: CG trip count varies per step, branches on
// step and iteration number. Arg = time steps (~400 events per step).
void BM_FoldPopLike(benchmark::State& state) {
  const auto events = pop_like(static_cast<int>(state.range(0)));
  fold_stream(state, events, kPopSites);
}
BENCHMARK(BM_FoldPopLike)->Arg(100)->Arg(2500)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tracefold::bench
