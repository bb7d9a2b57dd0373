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

// (c) A time step of Arg calls from Arg call sites (a 26-neighbour exchange
// written out per direction has ~120), 100,000 events in all: the loop is
// found however long its body; events/s should not fall with the body.
std::vector<Event> long_body(int body, int events) {
  std::vector<Event> out;
  out.reserve(static_cast<std::size_t>(events));
  for (int i = 0; i < events; ++i) {
    const int c = i % body;
    Event e;
    e.op = *OpTable::find(c % 2 ? "MPI_Isend" : "MPI_Irecv");
    e.site = static_cast<SiteId>(c);
    e.fields.push_back(FieldValue{FieldTable::peer(), c % 26, {}});
    e.fields.push_back(FieldValue{*FieldTable::find("tag"), c, {}});
    out.push_back(std::move(e));
  }
  return out;
}
void BM_FoldLongBody(benchmark::State& state) {
  const int body = static_cast<int>(state.range(0));
  fold_stream(state, long_body(body, 100'000), static_cast<std::size_t>(body));
}
BENCHMARK(BM_FoldLongBody)->Arg(10)->Arg(120)->Arg(1000)->Unit(benchmark::kMillisecond);

// (d) Worst case for the search: calls that never repeat as a stretch
// (pseudo-random call sites out of Arg), 20,000 events. Every event looks
// back for a repeat; the cost per event is bounded by the candidate cap
// and the window, not by how many items are left unfolded.
std::vector<Event> no_repeats(int sites, int events) {
  std::vector<Event> out;
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < events; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    Event e;
    e.op = *OpTable::find("MPI_Send");
    e.site = static_cast<SiteId>(x % static_cast<uint64_t>(sites));
    e.fields.push_back(FieldValue{FieldTable::peer(), static_cast<int64_t>(x >> 40) % 8, {}});
    out.push_back(std::move(e));
  }
  return out;
}
void BM_FoldNoRepeats(benchmark::State& state) {
  const int sites = static_cast<int>(state.range(0));
  fold_stream(state, no_repeats(sites, 20'000), static_cast<std::size_t>(sites));
}
BENCHMARK(BM_FoldNoRepeats)->Arg(16)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tracefold::bench
