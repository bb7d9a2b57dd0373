#include "tracefold/timeline_io.hpp"

#include "block_file.hpp"

namespace tracefold {

using block_file::put;

namespace {

constexpr char kMagic[4] = {'T', 'F', 'T', 'L'};
// 3: each record names its thread. 2: round trips of the clock samples.
constexpr uint8_t kVersion = 3;
// End offset, end local time, end round trip, recorded, dropped, the
// count of thread numbers (the numbers themselves follow when there are).
constexpr uint64_t kTrailerBytes = 5 * 8 + 4;
// Where set_start_offset patches the header: after magic, version, rank,
// world size and base time.
constexpr long kStartClockAt = 4 + 1 + 4 + 4 + 8;

constexpr block_file::Format kBlocks{
    .raise = [](const std::string& message) { throw TimelineError(message); },
    .max_raw_bytes = kMaxTimelineBlockBytes,
    .min_record_bytes = 3,
    .records = "events",
    .cut_frame_ends = false,
    .varint_truncated = "corrupt record in a block",
    .varint_too_long = "corrupt record in a block"};

}  // namespace

void TimelineWriter::open(const std::string& path, int32_t rank, int32_t world_size,
                          int64_t base_ns, uint64_t max_bytes, std::size_t block_bytes) {
  std::vector<uint8_t> header = block_file::header(kMagic, kVersion, rank, world_size);
  put<int64_t>(header, base_ns);
  // The start clock sample is patched in by set_start_offset.
  put<int64_t>(header, 0);
  put<int64_t>(header, 0);
  put<int64_t>(header, -1);
  const std::string error =
      block_file::Writer(*this).open(path, header, max_bytes, kTrailerBytes, block_bytes);
  if (!error.empty()) throw TimelineError(error);
  last_exit_ = base_ns;
}

void TimelineWriter::set_start_offset(int64_t offset_ns, int64_t local_ns, int64_t round_trip_ns) {
  block_file::Writer out(*this);
  std::vector<uint8_t> sample;
  put<int64_t>(sample, offset_ns);
  put<int64_t>(sample, local_ns);
  put<int64_t>(sample, round_trip_ns);
  out.patch(kStartClockAt, sample);
}

void TimelineWriter::add(OpId op, int64_t enter_ns, int64_t exit_ns, int32_t thread) {
  block_file::Writer out(*this);
  if (!out.accepting()) {
    ++dropped_;
    return;
  }
  out.put_varint(op);
  // One byte for a process's first 128 threads, and single-threaded runs'
  // constant 0 all but vanishes in the block's compression.
  out.put_varint(static_cast<uint32_t>(thread));
  out.put_varint(block_file::zigzag(enter_ns - last_exit_));
  out.put_varint(block_file::zigzag(exit_ns - enter_ns));
  last_exit_ = exit_ns;
  ++recorded_;
  if (out.end_record()) flush();
}

void TimelineWriter::flush() {
  block_file::Writer out(*this);
  const uint32_t events = out.block_records();
  if (out.flush()) {
    recorded_ -= events;
    dropped_ += events;
  }
}

void TimelineWriter::close(int64_t end_offset_ns, int64_t end_local_ns, int64_t round_trip_ns,
                           const std::vector<int32_t>& thread_numbers) {
  if (!is_open()) return;
  flush();
  std::vector<uint8_t> trailer;
  put<int64_t>(trailer, end_offset_ns);
  put<int64_t>(trailer, end_local_ns);
  put<int64_t>(trailer, round_trip_ns);
  put<uint64_t>(trailer, recorded_);
  put<uint64_t>(trailer, dropped_);
  // Past the reserved trailer bytes by 4 a thread, only when threads were
  // renumbered (three or more).
  put<uint32_t>(trailer, static_cast<uint32_t>(thread_numbers.size()));
  for (int32_t t : thread_numbers) put<int32_t>(trailer, t);
  block_file::Writer(*this).close(trailer);
}

namespace {

[[noreturn]] void out_of_range(const std::string& source, const std::string& what) {
  throw TimelineError(source + ": " + what + " does not fit in 64-bit nanoseconds (corrupt file?)");
}

int64_t checked_add(int64_t a, int64_t b, const std::string& source, const char* what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) out_of_range(source, what);
  return r;
}

}  // namespace

ClockMap RankTimelineFile::clock() const {
  const ClockSample start{start_offset_ns, start_local_ns, start_round_trip_ns};
  if (!end_measured()) return ClockMap(start);
  return ClockMap(start, ClockSample{end_offset_ns, end_local_ns, end_round_trip_ns});
}

int64_t RankTimelineFile::to_global(int64_t local_ns) const {
  const std::optional<int64_t> t = clock().to_global(local_ns);
  if (!t) out_of_range(source, "a global time");
  return *t;
}

std::vector<TimelineRecord> RankTimelineFile::thread_records(int32_t thread) const {
  std::vector<TimelineRecord> out;
  for (const TimelineRecord& r : records)
    if (r.thread == thread) out.push_back(r);
  return out;
}

namespace {

// The trailer's thread numbers: records name threads by their first call,
// the trace by the order it writes them in (threads.cpp, canonical_order).
void renumber_threads(block_file::Reader& in, RankTimelineFile& f) {
  uint32_t n = 0;
  in.get(n, "trailer");
  if (n == 0) return;
  if (n > uint32_t(kMaxTimelineThread) + 1)
    in.fail("trailer names " + std::to_string(n) + " threads");
  std::vector<int32_t> number(n);
  for (int32_t& t : number) {
    in.get(t, "trailer");
    if (t < 0 || uint32_t(t) >= n) in.fail("trailer maps a thread to " + std::to_string(t));
  }
  for (TimelineRecord& r : f.records) {
    if (uint32_t(r.thread) >= n)
      in.fail("a record's thread " + std::to_string(r.thread) + " is not among the trailer's " +
              std::to_string(n));
    r.thread = number[std::size_t(r.thread)];
  }
}

}  // namespace

RankTimelineFile read_timeline_file(const std::string& path) {
  return parse_timeline(block_file::read(path, kBlocks), path);
}

RankTimelineFile parse_timeline(std::span<const uint8_t> data, const std::string& path) {
  block_file::Reader in(data, path, kBlocks);
  RankTimelineFile f;
  f.source = path;
  f.version = in.header(kMagic, "not a tracefold timeline file");
  if (f.version < 1 || f.version > kVersion)
    in.fail("timeline version " + std::to_string(f.version) + " (this tracefold reads 1 to 3)");
  int64_t base = 0;
  in.rank_and_world(f.rank, f.world_size);
  in.get(base, "header");
  in.get(f.start_offset_ns, "header");
  in.get(f.start_local_ns, "header");
  if (f.version >= 2) in.get(f.start_round_trip_ns, "header");
  int64_t last_exit = base;
  for (;;) {
    const block_file::Reader::Next next = in.next();
    if (next == block_file::Reader::Next::kEnd) break;
    if (next == block_file::Reader::Next::kTrailer) {
      in.get(f.end_offset_ns, "trailer");
      in.get(f.end_local_ns, "trailer");
      if (f.version >= 2) in.get(f.end_round_trip_ns, "trailer");
      uint64_t recorded = 0;
      in.get(recorded, "trailer");
      in.get(f.dropped, "trailer");
      f.has_trailer = true;
      if (recorded != f.records.size())
        in.fail("trailer says " + std::to_string(recorded) + " events, blocks hold " +
                std::to_string(f.records.size()));
      if (f.has_threads()) renumber_threads(in, f);
      break;
    }
    const uint32_t events = in.block_records();
    f.records.reserve(f.records.size() + events);
    for (uint32_t e = 0; e < events; ++e) {
      TimelineRecord r;
      const uint64_t op = in.varint();
      if (op >= OpTable::size())
        in.fail_block("record " + std::to_string(e) + " has operation " + std::to_string(op) +
                      ", not one of the " + std::to_string(OpTable::size()) + " known");
      r.op = static_cast<OpId>(op);
      if (f.has_threads()) {
        const uint64_t thread = in.varint();
        if (thread > uint64_t(kMaxTimelineThread))
          in.fail_block("record " + std::to_string(e) + " has thread " + std::to_string(thread));
        r.thread = static_cast<int32_t>(thread);
      }
      r.enter_ns = checked_add(last_exit, block_file::unzigzag(in.varint()), path, "an enter time");
      r.exit_ns = checked_add(r.enter_ns, block_file::unzigzag(in.varint()), path, "an exit time");
      last_exit = r.exit_ns;
      f.records.push_back(r);
    }
    in.end_block();
  }
  return f;
}

}  // namespace tracefold
