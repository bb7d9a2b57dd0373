// One event stream per thread that calls MPI (docs/recording.md "Threads"):
// numbering the threads, making a thread's stream at its first call, and
// the rank's local trace with every thread's stream in it.

#include <algorithm>
#include <numeric>

#include "recorder_impl.hpp"
#include "sampler.hpp"

#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"

// Present when the program uses OpenMP: asked for a thread's OpenMP number.
extern "C" __attribute__((weak)) int omp_get_thread_num(void);
extern "C" __attribute__((weak)) int omp_get_level(void);

namespace tracefold::record {

TRACEFOLD_STATIC_TLS constinit thread_local ThreadStream* tl_stream = nullptr;

std::unique_ptr<ThreadStream> Recorder::make_stream(int t) {
  auto s = std::make_unique<ThreadStream>();
  s->number = t;
  if (!sample_only) s->folder.emplace(t * size + rank, fold_options);
  s->unfolded.resize(fold_batch);
  s->unfolded_has_lists.resize(fold_batch);
  s->unfolded_comm.resize(fold_batch);
  s->unfolded_repeats.resize(fold_batch);
  s->fast_repeat_limit = fast_repeat_limit;
  return s;
}

// The one place a thread's calls take the lock on the way: its first.
ThreadStream& Recorder::new_stream() {
  std::lock_guard lock(mu);
  if (ThreadStream* s = tl_stream) return *s;  // a signal handler's call made it meanwhile
  const int t = static_cast<int>(streams.size());
  std::unique_ptr<ThreadStream> s;
  try {
    s = make_stream(t);
  } catch (const std::exception& ex) {
    fail(std::string("a new thread's stream: ") + ex.what());
    // Somewhere to write that nobody reads: recording is off.
    s = std::make_unique<ThreadStream>();
    s->number = t;
  }
  // Its computation before its first call is not known: counted from now.
  s->last_exit_ns = now_ns();
  int omp = -1;
  if (omp_get_level && omp_get_thread_num && omp_get_level() > 0) omp = omp_get_thread_num();
  stream_omp.push_back(omp);
  if (t == 1 && thread_order) share_thread_order(*this, *streams[0]);
  streams.push_back(std::move(s));
  tl_stream = streams.back().get();
  if (sampling) sampler_note_stream(t);
  return *tl_stream;
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

// `lthreads` (the threads that made the requests a call completed, see
// Call::requests_in) names threads by their first call: renamed to the
// trace's numbers, `number[t]` for thread t.
void renumber_link_threads(Trace& t, const std::vector<int>& number) {
  const std::optional<FieldId> f = FieldTable::find("lthreads");
  if (!f) return;
  for (Node& n : t.nodes)
    for (auto& [id, el] : n.fields) {
      if (id != *f) continue;
      for (auto& en : el.entries()) {
        // A list field's values are each execution's length, then its elements.
        const std::vector<int64_t> v = en.values.to_vector();
        ValueSeq renamed;
        for (std::size_t i = 0; i < v.size();) {
          const auto len = static_cast<std::size_t>(std::max<int64_t>(0, v[i]));
          renamed.push_back(v[i++]);
          for (std::size_t e = 0; e < len && i < v.size(); ++e, ++i)
            renamed.push_back(v[i] >= 0 && static_cast<std::size_t>(v[i]) < number.size()
                                  ? number[static_cast<std::size_t>(v[i])]
                                  : v[i]);
        }
        en.values = std::move(renamed);
      }
    }
}

}  // namespace

void Recorder::order_threads() {
  if (threads_ordered) return;
  threads_ordered = true;
  ordered_parts.assign(streams.size(), Trace{});
  for (std::size_t t = 0; t < streams.size(); ++t) ordered_parts[t] = stream_trace(*streams[t]);
  written_order = canonical_order(ordered_parts, stream_omp);
}

std::vector<int32_t> Recorder::timeline_threads() {
  // Two threads keep their first-call order (canonical_order): the
  // streams need not be folded here for that. A --sample-only run writes
  // no trace to number them by.
  if (streams.size() <= 2 || sample_only) return {};
  order_threads();
  if (std::is_sorted(written_order.begin(), written_order.end())) return {};
  std::vector<int32_t> number(written_order.size());
  for (std::size_t k = 0; k < written_order.size(); ++k)
    number[static_cast<std::size_t>(written_order[k])] = static_cast<int32_t>(k);
  return number;
}

Trace Recorder::local_trace() {
  if (streams.size() <= 1) {
    if (streams.empty()) {
      ThreadStream none;  // not started: an empty trace
      return stream_trace(none);
    }
    return stream_trace(*streams[0]);
  }
  order_threads();
  std::vector<Trace> parts = std::move(ordered_parts);
  const std::vector<int> order = std::move(written_order);
  threads_ordered = false;
  if (rawlog.is_open()) {
    // The raw log numbered threads by their first call; the trace by `order`.
    rawlog << "thread-order";
    for (int t : order) rawlog << " " << t;
    rawlog << "\n";
  }
  std::vector<int> number(order.size());
  for (std::size_t k = 0; k < order.size(); ++k)
    number[static_cast<std::size_t>(order[k])] = static_cast<int>(k);
  Trace merged;
  bool first = true;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto from = static_cast<std::size_t>(order[k]);
    Trace part = std::move(parts[from]);
    // Thread `from` is written as thread k: its location moves by whole worlds.
    if (from != k) relocate(part, static_cast<int32_t>(k) * size + rank);
    if (!std::is_sorted(order.begin(), order.end())) renumber_link_threads(part, number);
    part.threads = static_cast<int32_t>(streams.size());
    if (stream_omp[from] >= 0)
      part.omp = Elastic::of(ValueSeq::repeated(stream_omp[from], 1),
                             static_cast<int32_t>(k) * size + rank);
    merged = first ? std::move(part) : merge_traces(std::move(merged), std::move(part));
    first = false;
  }
  return merged;
}

}  // namespace tracefold::record
