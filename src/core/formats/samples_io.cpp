#include "tracefold/samples.hpp"

#include <map>
#include <set>

#include "block_file.hpp"
#include "tracefold/timeline_io.hpp"

namespace tracefold {

using block_file::put;

namespace {

constexpr char kMagic[4] = {'T', 'F', 'S', 'M'};
// 3: thread records and the trailer's thread numbers. 2: period records.
constexpr uint8_t kVersion = 3;
// Taken, dropped, median, 99th percentile, the count of thread numbers (the
// numbers themselves follow, 4 bytes a thread that called MPI).
constexpr uint64_t kTrailerBytes = 4 * 8 + 4;
constexpr uint64_t kModule = 0, kContext = 1, kSample = 2, kPeriod = 3, kThread = 4;

constexpr block_file::Format kBlocks{
    .raise = [](const std::string& message) { throw SamplesError(message); },
    .max_raw_bytes = kMaxSamplesBlockBytes,
    .min_record_bytes = 2,
    .records = "records",
    .cut_frame_ends = true,
    .varint_truncated = "truncated record in a block",
    .varint_too_long = "corrupt varint in a block"};

// Differences wrap like the unsigned arithmetic the reader undoes them with.
int64_t wrapping_diff(uint64_t a, uint64_t b) {
  return static_cast<int64_t>(a - b);
}

}  // namespace

void SamplesWriter::open(const std::string& path, int32_t rank, int32_t world_size,
                         int64_t period_ns, SampleClock clock, uint64_t max_bytes,
                         std::size_t block_bytes) {
  std::vector<uint8_t> header = block_file::header(kMagic, kVersion, rank, world_size);
  put<int64_t>(header, period_ns);
  header.push_back(static_cast<uint8_t>(clock));
  const std::string error =
      block_file::Writer(*this).open(path, header, max_bytes, kTrailerBytes, block_bytes);
  if (!error.empty()) throw SamplesError(error);
}

void SamplesWriter::end_record() {
  block_file::Writer out(*this);
  if (out.end_record()) flush();
}

uint32_t SamplesWriter::add_module(const Module& m) {
  block_file::Writer out(*this);
  // Numbered even when not written: once over budget nothing later is, so
  // no written record refers to an unwritten one.
  const uint32_t id = modules_++;
  if (!out.accepting()) return id;
  out.put_module(kModule, m);
  end_record();
  return id;
}

uint32_t SamplesWriter::add_context(uint32_t parent, uint32_t module, uint64_t offset) {
  block_file::Writer out(*this);
  const uint32_t id = contexts_++;
  if (!out.accepting()) return id;
  out.put_varint(kContext);
  out.put_varint(parent);
  out.put_varint(module);
  out.put_varint(offset);
  end_record();
  return id;
}

void SamplesWriter::add_sample(const Sample& s) {
  block_file::Writer out(*this);
  if (!out.accepting()) {
    ++dropped_;
    return;
  }
  out.put_varint(kSample);
  out.put_varint(block_file::zigzag(
      wrapping_diff(static_cast<uint64_t>(s.time_ns), static_cast<uint64_t>(last_time_))));
  out.put_varint(s.context);
  out.put_varint(s.thread);
  out.put_varint(block_file::zigzag(wrapping_diff(s.mpi_event, last_event_)));
  out.put_varint(s.lca_depth);
  out.put_byte(s.in_mpi ? 1 : 0);
  last_time_ = s.time_ns;
  last_event_ = s.mpi_event;
  ++recorded_;
  ++block_samples_;
  end_record();
}

void SamplesWriter::add_period(uint32_t thread, int64_t time_ns, int64_t period_ns) {
  block_file::Writer out(*this);
  if (!out.accepting()) return;
  out.put_varint(kPeriod);
  out.put_varint(thread);
  // Against the previous sample's time, which it does not move: the next
  // sample's difference stays the one add_sample writes.
  out.put_varint(block_file::zigzag(
      wrapping_diff(static_cast<uint64_t>(time_ns), static_cast<uint64_t>(last_time_))));
  out.put_varint(static_cast<uint64_t>(period_ns));
  end_record();
}

void SamplesWriter::add_thread(uint32_t thread, uint32_t stream) {
  block_file::Writer out(*this);
  if (!out.accepting()) return;
  out.put_varint(kThread);
  out.put_varint(thread);
  out.put_varint(stream);
  end_record();
}

void SamplesWriter::flush() {
  block_file::Writer out(*this);
  if (out.flush()) {
    recorded_ -= block_samples_;
    dropped_ += block_samples_;
  }
  // A block kept after a failure still holds its samples.
  if (out.block_records() == 0) block_samples_ = 0;
}

void SamplesWriter::close(int64_t handler_median_ns, int64_t handler_p99_ns,
                          const std::vector<int32_t>& trace_threads) {
  if (!is_open()) return;
  flush();
  std::vector<uint8_t> trailer;
  put<uint64_t>(trailer, recorded_ + dropped_);
  put<uint64_t>(trailer, dropped_);
  put<int64_t>(trailer, handler_median_ns);
  put<int64_t>(trailer, handler_p99_ns);
  put<uint32_t>(trailer, static_cast<uint32_t>(trace_threads.size()));
  for (int32_t t : trace_threads) put<int32_t>(trailer, t);
  block_file::Writer(*this).close(trailer);
}

std::vector<uint32_t> RankSamples::path(uint32_t context) const {
  std::vector<uint32_t> out;
  // Parents always precede their children (the reader checks), so this ends.
  while (context != 0 && context < contexts.size()) {
    out.push_back(context);
    context = contexts[context].parent;
  }
  return {out.rbegin(), out.rend()};
}

std::size_t RankSamples::depth(uint32_t context) const {
  std::size_t d = 0;
  while (context != 0 && context < contexts.size()) {
    ++d;
    context = contexts[context].parent;
  }
  return d;
}

int64_t RankSamples::period_at(uint32_t thread, int64_t time_ns) const {
  int64_t p = period_ns;
  for (const SamplePeriod& c : periods)
    if (c.thread == thread && c.time_ns <= time_ns) p = c.period_ns;
  return p;
}

int32_t RankSamples::location(uint32_t thread) const {
  if (thread >= (threads_named ? trace_threads : 1u)) return -1;
  return static_cast<int32_t>(thread) * world_size + rank;
}

std::string samples_path(const std::string& timeline_dir, int32_t rank) {
  return timeline_dir + "/samples-" + std::to_string(rank) + ".tfs";
}

namespace {

// The trailer's stream -> trace thread numbers: a permutation that keeps
// thread 0 (canonical_order in src/record/threads.cpp).
void read_thread_numbers(block_file::Reader& in, std::vector<int32_t>& numbers) {
  uint32_t n = 0;
  in.get(n, "trailer");
  if (n == 0 || n > uint32_t(kMaxTimelineThread) + 1)
    in.fail("trailer names " + std::to_string(n) + " threads that called MPI");
  numbers.resize(n);
  std::vector<bool> taken(n);
  for (int32_t& t : numbers) {
    in.get(t, "trailer");
    if (t < 0 || uint32_t(t) >= n || taken[std::size_t(t)])
      in.fail("trailer maps a thread to " + std::to_string(t) + " of " + std::to_string(n));
    taken[std::size_t(t)] = true;
  }
  if (numbers[0] != 0) in.fail("trailer moves thread 0 (the MPI_Init thread)");
}

// Samples and periods name the sampler's threads; from here on they name the
// trace's (Sample::thread). The sampler's thread 0 started on the MPI_Init
// thread, stream 0, whether or not its record made it into the file.
void name_threads(block_file::Reader& in, RankSamples& f, std::map<uint32_t, uint32_t>& stream_of,
                  const std::vector<int32_t>& numbers) {
  stream_of.emplace(0, 0);
  uint32_t streams = static_cast<uint32_t>(numbers.size());
  std::set<uint32_t> seen;
  for (const auto& [thread, stream] : stream_of) {
    if (!numbers.empty() && stream >= numbers.size())
      in.fail("thread " + std::to_string(thread) + " is stream " + std::to_string(stream) +
              ", but the trailer names " + std::to_string(numbers.size()) + " streams");
    if (!seen.insert(stream).second) in.fail("two threads are stream " + std::to_string(stream));
    if (numbers.empty()) streams = std::max(streams, stream + 1);
  }
  f.trace_threads = streams;
  std::set<uint32_t> others;  // sampler threads that never called MPI
  for (const Sample& s : f.samples)
    if (!stream_of.count(s.thread)) others.insert(s.thread);
  for (const SamplePeriod& p : f.periods)
    if (!stream_of.count(p.thread)) others.insert(p.thread);
  std::map<uint32_t, uint32_t> number;
  for (const auto& [thread, stream] : stream_of)
    number[thread] = numbers.empty() ? stream : uint32_t(numbers[stream]);
  uint32_t next = streams;
  for (uint32_t t : others) number[t] = next++;
  for (Sample& s : f.samples) s.thread = number[s.thread];
  for (SamplePeriod& p : f.periods) p.thread = number[p.thread];
}

}  // namespace

RankSamples read_samples_file(const std::string& path) {
  return parse_samples(block_file::read(path, kBlocks), path);
}

RankSamples parse_samples(std::span<const uint8_t> data, const std::string& path) {
  block_file::Reader in(data, path, kBlocks);
  const uint8_t version = in.header(kMagic, "not a tracefold samples file (bad magic)");
  if (version < 1 || version > kVersion)
    in.fail("samples version " + std::to_string(version) + " (this tracefold reads 1 to 3)");
  RankSamples f;
  f.source = path;
  f.contexts.emplace_back();  // the root
  std::vector<uint32_t> depths{0};
  in.rank_and_world(f.rank, f.world_size);
  in.get(f.period_ns, "header");
  if (f.period_ns <= 0) in.fail(13, "sampling period " + std::to_string(f.period_ns) + " ns");
  uint8_t clock = 0;
  in.get(clock, "header");
  if (clock > 1) in.fail(21, "clock " + std::to_string(clock) + " (0 wall, 1 processor time)");
  f.clock = static_cast<SampleClock>(clock);
  f.threads_named = version >= 3;
  uint64_t last_time = 0, last_event = 0;
  std::map<uint32_t, uint32_t> stream_of;  // sampler thread -> stream (thread records)
  std::vector<int32_t> numbers;            // the trailer's: stream -> the trace's thread
  for (;;) {
    const block_file::Reader::Next next = in.next();
    if (next == block_file::Reader::Next::kEnd) break;
    if (next == block_file::Reader::Next::kTrailer) {
      in.get(f.taken, "trailer");
      in.get(f.dropped, "trailer");
      in.get(f.handler_median_ns, "trailer");
      in.get(f.handler_p99_ns, "trailer");
      f.has_trailer = true;
      if (version >= 3) read_thread_numbers(in, numbers);
      if (f.taken != f.samples.size() + f.dropped)
        in.fail("trailer says " + std::to_string(f.taken) + " samples taken, " +
                std::to_string(f.dropped) + " dropped, but the blocks hold " +
                std::to_string(f.samples.size()));
      if (!in.at_end()) in.fail(in.at(), "bytes after the trailer");
      break;
    }
    const uint32_t records = in.block_records();
    for (uint32_t r = 0; r < records; ++r) {
      const std::string where = "record " + std::to_string(r) + " of the block: ";
      const uint64_t kind = in.varint();
      if (kind == kModule) {
        const uint64_t len = in.varint();
        if (len > in.left()) in.fail_block(where + "module line longer than the block");
        const std::string_view text(reinterpret_cast<const char*>(in.take(len)), len);
        std::string error;
        std::optional<Module> m = parse_module_line(text, error);
        if (!m) in.fail_block(where + "bad module line: " + error);
        f.modules.push_back(std::move(*m));
      } else if (kind == kContext) {
        SampleContext c;
        const uint64_t parent = in.varint(), module = in.varint();
        c.offset = in.varint();
        if (parent >= f.contexts.size())
          in.fail_block(where + "context " + std::to_string(f.contexts.size()) +
                        " refers to unknown parent " + std::to_string(parent));
        if (module >= f.modules.size())
          in.fail_block(where + "context " + std::to_string(f.contexts.size()) +
                        " refers to unknown module " + std::to_string(module) + " (" +
                        std::to_string(f.modules.size()) + " known)");
        c.parent = static_cast<uint32_t>(parent);
        c.module = static_cast<uint32_t>(module);
        f.contexts.push_back(c);
        depths.push_back(depths[c.parent] + 1);
      } else if (kind == kSample) {
        Sample s;
        last_time += static_cast<uint64_t>(block_file::unzigzag(in.varint()));
        s.time_ns = static_cast<int64_t>(last_time);
        const uint64_t context = in.varint();
        if (context >= f.contexts.size())
          in.fail_block(where + "sample refers to unknown context " + std::to_string(context));
        s.context = static_cast<uint32_t>(context);
        const uint64_t thread = in.varint();
        if (thread > UINT32_MAX) in.fail_block(where + "thread number out of range");
        s.thread = static_cast<uint32_t>(thread);
        last_event += static_cast<uint64_t>(block_file::unzigzag(in.varint()));
        s.mpi_event = last_event;
        const uint64_t lca = in.varint();
        if (lca > UINT16_MAX || lca > depths[s.context])
          in.fail_block(where + "LCA depth " + std::to_string(lca) + " deeper than the sample's " +
                        std::to_string(depths[s.context]) + " frames");
        s.lca_depth = static_cast<uint16_t>(lca);
        if (in.left() == 0) in.fail_block(where + "truncated sample");
        const uint8_t flags = *in.take(1);
        if (flags > 1) in.fail_block(where + "unknown sample flags " + std::to_string(flags));
        s.in_mpi = flags & 1;
        f.samples.push_back(s);
      } else if (kind == kPeriod && version >= 2) {
        SamplePeriod p;
        const uint64_t thread = in.varint();
        if (thread > UINT32_MAX) in.fail_block(where + "thread number out of range");
        p.thread = static_cast<uint32_t>(thread);
        p.time_ns = static_cast<int64_t>(last_time +
                                         static_cast<uint64_t>(block_file::unzigzag(in.varint())));
        const uint64_t period = in.varint();
        if (period == 0 || period > uint64_t(INT64_MAX))
          in.fail_block(where + "sampling period " + std::to_string(period) + " ns");
        p.period_ns = static_cast<int64_t>(period);
        f.periods.push_back(p);
      } else if (kind == kThread && version >= 3) {
        const uint64_t thread = in.varint(), stream = in.varint();
        if (thread > UINT32_MAX || stream > uint64_t(kMaxTimelineThread))
          in.fail_block(where + "thread " + std::to_string(thread) + " is stream " +
                        std::to_string(stream) + ": out of range");
        if (!stream_of.emplace(uint32_t(thread), uint32_t(stream)).second)
          in.fail_block(where + "a second thread record for thread " + std::to_string(thread));
      } else {
        in.fail_block(where + "unknown record kind " + std::to_string(kind));
      }
    }
    in.end_block();
  }
  if (f.threads_named) name_threads(in, f, stream_of, numbers);
  return f;
}

void write_samples_file(const std::string& path, const RankSamples& s) {
  SamplesWriter w;
  w.open(path, s.rank, s.world_size, s.period_ns, s.clock, 0);
  for (const Module& m : s.modules) w.add_module(m);
  for (std::size_t c = 1; c < s.contexts.size(); ++c)
    w.add_context(s.contexts[c].parent, s.contexts[c].module, s.contexts[c].offset);
  // Each change goes before the first sample it covers (file order is time
  // order per thread).
  std::size_t next = 0;
  for (const Sample& x : s.samples) {
    for (; next < s.periods.size() && s.periods[next].time_ns <= x.time_ns; ++next)
      w.add_period(s.periods[next].thread, s.periods[next].time_ns, s.periods[next].period_ns);
    w.add_sample(x);
  }
  for (; next < s.periods.size(); ++next)
    w.add_period(s.periods[next].thread, s.periods[next].time_ns, s.periods[next].period_ns);
  // Threads below trace_threads keep their numbers (each its own stream);
  // the others, written with no thread record, are numbered after them
  // again on reading.
  std::vector<int32_t> numbers(std::max<uint32_t>(s.trace_threads, 1));
  for (uint32_t t = 0; t < numbers.size(); ++t) {
    numbers[t] = static_cast<int32_t>(t);
    if (t > 0) w.add_thread(t, t);
  }
  w.add_dropped(s.dropped);
  w.close(s.handler_median_ns, s.handler_p99_ns, numbers);
  if (!w.error().empty()) throw SamplesError(w.error());
}

}  // namespace tracefold
