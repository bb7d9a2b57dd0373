// Call-path sampling, outside the handler: the threads' rings into the
// samples file, under the recorder's lock (docs/sampling.md).
#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "recorder_impl.hpp"
#include "sampler.hpp"
#include "sampler_impl.hpp"

namespace tracefold::record {

namespace sampling {
namespace {

// Module and offset of `a` (a PC, or a return address minus one).
std::pair<uint32_t, uint64_t> place_of(Recorder& r, Sampler& s, uintptr_t a) {
  if (auto it = s.places.find(a); it != s.places.end()) return it->second;
  if (s.places.size() > (1u << 20)) s.places.clear();  // a bound, not a cache policy
  Dl_info info;
  std::string name = "?";
  uintptr_t base = 0;
  if (dladdr(reinterpret_cast<void*>(a), &info) && info.dli_fbase) {
    base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    const std::string path = info.dli_fname ? info.dli_fname : "?";
    name = path.substr(path.find_last_of('/') + 1);
    for (char& c : name)
      if (c == ' ') c = '_';
  }
  auto id = s.module_ids.find(name);
  if (id == s.module_ids.end()) {
    Module m;
    m.name = name;
    if (name != "?") {
      r.note_module(name, base);  // the recorder's table: path, build-id, ELF base
      m = r.modules.at(name);
    }
    id = s.module_ids.emplace(name, s.writer.add_module(m)).first;
  }
  const std::pair<uint32_t, uint64_t> place{id->second, a - base};
  s.places.emplace(a, place);
  return place;
}

// The file learns a thread's new period before its first sample at it.
void note_period(Sampler& s, ThreadState& st, int64_t time_ns, int64_t period_ns) {
  if (period_ns == st.written_period_ns) return;
  s.writer.add_period(st.thread, time_ns, period_ns);
  st.written_period_ns = period_ns;
}

// The event that was next at `t` (raw clock): the first whose call had
// not ended then, as far as the history goes. From `read`, the event the
// handler read: back over events that ended after `t` (a copy's due time
// lies before its handler ran), and forward over events that had ended by
// `t` but were timestamped after the handler read (another thread's call
// ended, then that thread was off its core before its timestamp).
uint64_t event_at(const Sampler& s, uint64_t read, int64_t t) {
  const uint64_t oldest = s.timed > kTimedHistory ? s.timed - kTimedHistory : 0;
  uint64_t e = std::min(read, s.timed);
  while (e > oldest && s.timed_at[(e - 1) % kTimedHistory] > t) --e;
  if (e >= oldest)
    while (e < s.timed && s.timed_at[e % kTimedHistory] <= t) ++e;
  return e;
}

// A frame-ring slot: its copies (ticks missed off the core) and its sample.
void write_frames(Recorder& r, Sampler& s, ThreadState& st, const RawSample& raw) {
  uint32_t ctx = 0;
  for (int i = raw.n - 1; i >= 0; --i) {
    // Callers' addresses are return addresses: step back into the call.
    const uintptr_t a = i == 0 ? raw.ip[0] : raw.ip[i] - 1;
    const auto [module, offset] = place_of(r, s, a);
    const CtxKey key{ctx, module, offset};
    auto it = s.contexts.find(key);
    if (it == s.contexts.end())
      it = s.contexts.emplace(key, s.writer.add_context(ctx, module, offset)).first;
    ctx = it->second;
  }
  note_period(s, st, r.skewed(raw.first_ns), raw.period_ns);
  Sample out;
  out.context = ctx;
  out.thread = st.thread;
  for (uint32_t k = 0; k <= raw.copies; ++k) {
    const int64_t t = k < raw.copies ? raw.first_ns + int64_t{k} * raw.period_ns : raw.time_ns;
    out.time_ns = r.skewed(t);
    // Other threads' calls may have ended while this one was off its core,
    // or before their timestamps.
    out.mpi_event = event_at(s, raw.mpi_event, t);
    // The first one is compared with the previous sample; nothing moved
    // between the others.
    out.lca_depth = k == 0 ? raw.lca : raw.copy_lca;
    s.writer.add_sample(out);
  }
}

// An MPI-ring slot: samples inside the call, but for copies that fell due
// before the call was entered.
void write_in_mpi(Recorder& r, Sampler& s, ThreadState& st, const MpiSample& m) {
  note_period(s, st, r.skewed(m.first_ns), m.period_ns);
  Sample x;
  x.thread = st.thread;
  for (uint32_t k = 0; k <= m.copies; ++k) {
    const int64_t t = k < m.copies ? m.first_ns + int64_t{k} * m.period_ns : m.time_ns;
    x.time_ns = r.skewed(t);
    x.in_mpi = k >= m.outside;
    x.mpi_event = x.in_mpi ? m.mpi_event : event_at(s, m.mpi_event, t);
    s.writer.add_sample(x);
  }
}

// Once the thread has a stream: which one, before its next samples.
void note_stream(Sampler& s, ThreadState& st) {
  if (st.stream_written) return;
  const int32_t stream = st.stream.load(std::memory_order_acquire);
  if (stream < 0) return;
  s.writer.add_thread(st.thread, static_cast<uint32_t>(stream));
  st.stream_written = true;
}

// -1 when nothing was measured.
int64_t percentile(const std::array<uint64_t, kCostBuckets + 1>& h, double q) {
  uint64_t total = 0;
  for (uint64_t c : h) total += c;
  if (total == 0) return -1;
  const auto want = static_cast<uint64_t>(q * static_cast<double>(total - 1));
  uint64_t seen = 0;
  for (int b = 0; b <= kCostBuckets; ++b) {
    seen += h[static_cast<std::size_t>(b)];
    if (seen > want) return cost_of_bucket(b);
  }
  return cost_of_bucket(kCostBuckets);
}

}  // namespace
}  // namespace sampling

using namespace sampling;

void sampler_note_timed_at(uint64_t index, int64_t exit_ns) {
  Sampler& s = sampler();
  // The call's exit, not now: a call is timestamped some time after it
  // ended (its call site, the fold of a full queue, or the thread off its
  // core in between), and other threads' samples of that time must name
  // the next event, as the timeline has the call ended. Kept in order for
  // event_at, where calls of several threads are timestamped out of order.
  const int64_t prev =
      index > 0 && s.timed == index ? s.timed_at[(index - 1) % kTimedHistory] : INT64_MIN;
  s.timed_at[index % kTimedHistory] = std::max(exit_ns, prev);
  s.timed = index + 1;
}

void drain_samples(Recorder& r) {
  Sampler& s = sampler();
  std::lock_guard lock(s.threads_mu);
  for (std::size_t i = 0; i < s.threads.size();) {
    ThreadState* st = s.threads[i];
    const bool exited = st->exited.load(std::memory_order_acquire);
    // The two rings are merged by time. A handler publishes its samples
    // later than every earlier handler's, and their times are later too:
    // so if no sample entered the frame ring between reading its head and
    // the MPI ring's, every sample left for the next drain is later than
    // every one taken now, and the file stays in time order per thread.
    uint64_t h, mh;
    do {
      h = st->head.load(std::memory_order_acquire);
      mh = st->mpi_head.load(std::memory_order_acquire);
    } while (st->head.load(std::memory_order_acquire) != h);
    uint64_t t = st->tail.load(std::memory_order_relaxed);
    uint64_t mt = st->mpi_tail.load(std::memory_order_relaxed);
    if (s.writer.is_open()) note_stream(s, *st);
    while (t < h || mt < mh) {
      const RawSample* raw = t < h ? &st->ring[t & (kRingSlots - 1)] : nullptr;
      const MpiSample* in_mpi = mt < mh ? &st->mpi_ring[mt & (kMpiSlots - 1)] : nullptr;
      if (raw && in_mpi && in_mpi->first_ns < raw->first_ns) raw = nullptr;
      if (s.writer.is_open()) {
        try {
          if (raw)
            write_frames(r, s, *st, *raw);
          else
            write_in_mpi(r, s, *st, *in_mpi);
        } catch (const std::exception&) {
          // Out of memory in the tables: the program goes on.
          s.writer.add_dropped(1 + (raw ? raw->copies : in_mpi->copies));
        }
      }
      (raw ? t : mt)++;
      ++g_samples_consumed;
    }
    st->tail.store(t, std::memory_order_release);
    st->mpi_tail.store(mt, std::memory_order_release);
    if (!exited) {
      ++i;
      continue;
    }
    // Its handler can run no more: keep its counts, give its pages back.
    s.gone_dropped += st->dropped.load();
    for (int b = 0; b <= kCostBuckets; ++b)
      s.gone_cost[static_cast<std::size_t>(b)] += st->cost[b].load(std::memory_order_relaxed);
    munmap(st, sizeof(ThreadState));
    s.threads.erase(s.threads.begin() + static_cast<std::ptrdiff_t>(i));
  }
  if (s.writer.over_budget() && !s.warned_budget) {
    s.warned_budget = true;
    std::fprintf(stderr,
                 "tracefold: rank %d: samples size bound reached (%llu bytes); later samples are "
                 "counted, not kept: raise the bound with `tracefold record --timeline-max "
                 "BYTES` (TRACEFOLD_TIMELINE_MAX)\n",
                 r.rank, static_cast<unsigned long long>(r.timeline_max));
  }
}

void stop_sampler(Recorder& r) {
  Sampler& s = sampler();
  if (!s.on.exchange(false)) return;
  {
    std::lock_guard lock(s.threads_mu);
    for (ThreadState* st : s.threads)
      if (st->timer_live.exchange(false)) timer_delete(st->timer);
  }
  drain_samples(r);
  // Live threads' states stay mapped: a handler may still be running on one.
  std::array<uint64_t, kCostBuckets + 1> cost = s.gone_cost;
  uint64_t dropped = s.gone_dropped;
  {
    std::lock_guard lock(s.threads_mu);
    for (ThreadState* st : s.threads) {
      dropped += st->dropped.load();
      for (int b = 0; b <= kCostBuckets; ++b)
        cost[static_cast<std::size_t>(b)] += st->cost[b].load(std::memory_order_relaxed);
    }
  }
  s.writer.add_dropped(dropped);
  // The trace's number of each stream, as the timeline's trailer gives them.
  std::vector<int32_t> numbers = r.timeline_threads();
  if (numbers.empty()) {
    numbers.resize(std::max<std::size_t>(r.streams.size(), 1));
    for (std::size_t t = 0; t < numbers.size(); ++t) numbers[t] = static_cast<int32_t>(t);
  }
  s.writer.close(percentile(cost, 0.5), percentile(cost, 0.99), numbers);
  if (!s.writer.error().empty())
    std::fprintf(stderr, "tracefold: rank %d: samples: %s\n", r.rank, s.writer.error().c_str());
  if (s.timer_failures)
    std::fprintf(stderr, "tracefold: rank %d: samples: %u threads got no timer\n", r.rank,
                 s.timer_failures);
}

}  // namespace tracefold::record
