// One event stream per thread that calls MPI (docs/recording.md "Threads"):
// numbering the threads, swapping a thread's stream in when it records, and
// the rank's local trace with every thread's stream in it.

#include <algorithm>
#include <numeric>

#include "recorder_impl.hpp"

#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"

// Present when the program uses OpenMP: asked for a thread's OpenMP number.
extern "C" __attribute__((weak)) int omp_get_thread_num(void);
extern "C" __attribute__((weak)) int omp_get_level(void);

namespace tracefold::record {

TRACEFOLD_STATIC_TLS constinit thread_local int tl_stream = -1;

void Recorder::swap_stream(ThreadStream& s) {
  using std::swap;
  swap(folder, s.folder);
  swap(unfolded, s.unfolded);
  swap(unfolded_n, s.unfolded_n);
  swap(unfolded_has_lists, s.unfolded_has_lists);
  swap(unfolded_list_entries, s.unfolded_list_entries);
  swap(unfolded_repeats, s.unfolded_repeats);
  swap(unfolded_repeat_n, s.unfolded_repeat_n);
  swap(slow_repeats, s.slow_repeats);
  swap(repeats_folded, s.repeats_folded);
  swap(request_events, s.request_events);
  swap(requests, s.requests);
  swap(last_exit_ns, s.last_exit_ns);
}

void Recorder::activate_stream(int t) {
  if (t == active_stream) return;
  // The husk in the new stream's slot goes to the old one's, with its state.
  swap_stream(*streams[static_cast<std::size_t>(t)]);
  std::swap(streams[static_cast<std::size_t>(t)], streams[static_cast<std::size_t>(active_stream)]);
  active_stream = t;
  // An armed poll belongs to the stream that armed it (poll_counted).
  queue_seq.store(queue_seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void Recorder::switch_stream() {
  if (streams.empty()) return;  // not started: nothing is recorded
  if (tl_stream < 0) {
    auto s = std::make_unique<ThreadStream>();
    const int t = static_cast<int>(streams.size());
    try {
      if (!sample_only) s->folder.emplace(t * size + rank, fold_options);
      s->unfolded.resize(fold_batch);
      s->unfolded_has_lists.resize(fold_batch);
      s->unfolded_repeats.resize(fold_batch);
    } catch (const std::exception& ex) {
      fail(std::string("a new thread's stream: ") + ex.what());
      return;
    }
    // Its computation before its first call is not known: counted from now.
    s->last_exit_ns = now_ns();
    streams.push_back(std::move(s));
    int omp = -1;
    if (omp_get_level && omp_get_thread_num && omp_get_level() > 0) omp = omp_get_thread_num();
    stream_omp.push_back(omp);
    tl_stream = t;
  }
  activate_stream(tl_stream);
}

namespace {

// Moves a one-thread trace (every ranklist is its one location) to
// location `to`.
void relocate(Trace& t, int32_t to) {
  const Ranklist here = Ranklist::range(to, 1);
  auto move = [&](Elastic& e) {
    for (auto& en : e.entries()) en.ranks = here;
  };
  auto move_histogram = [&](Histogram& h) {
    if (h.count() == 0) return;
    Histogram::Parts p = h.parts();
    if (p.min_rank >= 0) p.min_rank = to;
    if (p.max_rank >= 0) p.max_rank = to;
    h = Histogram::from_parts(std::move(p));
  };
  for (Node& n : t.nodes) {
    n.ranks = here;
    for (auto& l : n.loops) {
      move(l.members);
      move(l.iters);
    }
    move(n.count);
    for (auto& [f, el] : n.fields) move(el);
    for (Timing& tm : n.timings) {
      move_histogram(tm.compute);
      move_histogram(tm.comm);
      for (auto& [name, h] : tm.stats) move_histogram(h);
    }
  }
}

// The order threads 1.. are written in: by OpenMP number where they have
// one, then by what they recorded (the byte form of their stream without
// its times), then by their first call. Two runs whose threads raced to
// their first call then still give the same trace.
std::vector<int> canonical_order(const std::vector<Trace>& parts, const std::vector<int>& omp) {
  std::vector<int> order(parts.size());
  std::iota(order.begin(), order.end(), 0);
  if (parts.size() <= 2) return order;
  std::vector<std::string> shape(parts.size());
  for (std::size_t t = 1; t < parts.size(); ++t) {
    Trace bare = parts[t];
    drop_timing(bare);
    // Locations differ by thread number: compared as if all were one.
    relocate(bare, 0);
    shape[t] = format_trace(bare);
  }
  std::stable_sort(order.begin() + 1, order.end(), [&](int a, int b) {
    const int oa = omp[static_cast<std::size_t>(a)], ob = omp[static_cast<std::size_t>(b)];
    if ((oa < 0) != (ob < 0)) return oa >= 0;
    if (oa != ob) return oa < ob;
    return shape[static_cast<std::size_t>(a)] < shape[static_cast<std::size_t>(b)];
  });
  return order;
}

}  // namespace

Trace Recorder::local_trace() {
  if (streams.size() <= 1) return stream_trace();
  std::vector<Trace> parts(streams.size());
  for (std::size_t t = 0; t < streams.size(); ++t) {
    activate_stream(static_cast<int>(t));
    parts[t] = stream_trace();
  }
  const std::vector<int> order = canonical_order(parts, stream_omp);
  if (rawlog.is_open()) {
    // The raw log numbered threads by their first call; the trace by `order`.
    rawlog << "thread-order";
    for (int t : order) rawlog << " " << t;
    rawlog << "\n";
  }
  Trace merged;
  bool first = true;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto from = static_cast<std::size_t>(order[k]);
    Trace part = std::move(parts[from]);
    // Thread `from` is written as thread k: its location moves by whole worlds.
    if (from != k) relocate(part, static_cast<int32_t>(k) * size + rank);
    part.threads = static_cast<int32_t>(streams.size());
    if (stream_omp[from] >= 0)
      part.omp = Elastic::of(ValueSeq::repeated(stream_omp[from], 1),
                             static_cast<int32_t>(k) * size + rank);
    merged = first ? std::move(part) : merge_traces(merged, part);
    first = false;
  }
  return merged;
}

}  // namespace tracefold::record
