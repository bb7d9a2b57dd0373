#include "tracefold/timeline_io.hpp"

#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tracefold/limits.hpp"

namespace tracefold {

namespace {

constexpr char kMagic[4] = {'T', 'F', 'T', 'L'};
constexpr uint8_t kVersion = 2;
constexpr uint32_t kTrailerMark = 0xFFFFFFFFu;
// Mark, end offset, end local time, end round trip, recorded, dropped.
constexpr uint64_t kTrailerBytes = 4 + 5 * 8;

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

}  // namespace

TimelineWriter::~TimelineWriter() {
  if (file_) std::fclose(file_);
}

void TimelineWriter::write_raw(const void* data, std::size_t n) {
  if (!file_ || !error_.empty()) return;
  if (std::fwrite(data, 1, n, file_) != n) {
    error_ = path_ + ": write failed: " + std::strerror(errno);
    return;
  }
  written_ += n;
}

void TimelineWriter::open(const std::string& path, int32_t rank, int32_t world_size,
                          int64_t base_ns, uint64_t max_bytes, std::size_t block_bytes) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw TimelineError(path + ": cannot create: " + std::strerror(errno));
  path_ = path;
  max_bytes_ = max_bytes;
  block_bytes_ = std::max<std::size_t>(block_bytes, 64);
  block_.reserve(block_bytes_ + 32);
  last_exit_ = base_ns;
  std::vector<uint8_t> header(std::begin(kMagic), std::end(kMagic));
  header.push_back(kVersion);
  put<int32_t>(header, rank);
  put<int32_t>(header, world_size);
  put<int64_t>(header, base_ns);
  // The start clock sample is patched in by set_start_offset.
  put<int64_t>(header, 0);
  put<int64_t>(header, 0);
  put<int64_t>(header, -1);
  write_raw(header.data(), header.size());
}

void TimelineWriter::set_start_offset(int64_t offset_ns, int64_t local_ns, int64_t round_trip_ns) {
  if (!file_) return;
  const long here = std::ftell(file_);
  const bool ok = here >= 0 && std::fseek(file_, 4 + 1 + 4 + 4 + 8, SEEK_SET) == 0 &&
                  std::fwrite(&offset_ns, sizeof offset_ns, 1, file_) == 1 &&
                  std::fwrite(&local_ns, sizeof local_ns, 1, file_) == 1 &&
                  std::fwrite(&round_trip_ns, sizeof round_trip_ns, 1, file_) == 1 &&
                  std::fseek(file_, here, SEEK_SET) == 0;
  if (!ok && error_.empty()) error_ = path_ + ": write failed: " + std::strerror(errno);
}

void TimelineWriter::put_varint(uint64_t v) {
  while (v >= 0x80) {
    block_.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  block_.push_back(static_cast<uint8_t>(v));
}

void TimelineWriter::add(OpId op, int64_t enter_ns, int64_t exit_ns) {
  if (!file_ || over_budget_ || !error_.empty()) {
    ++dropped_;
    return;
  }
  put_varint(op);
  put_varint(zigzag(enter_ns - last_exit_));
  put_varint(zigzag(exit_ns - enter_ns));
  last_exit_ = exit_ns;
  ++block_events_;
  ++recorded_;
  if (block_.size() >= block_bytes_) flush();
}

void TimelineWriter::flush() {
  if (!file_ || block_events_ == 0) return;
  packed_.resize(ZSTD_compressBound(block_.size()));
  const std::size_t n =
      ZSTD_compress(packed_.data(), packed_.size(), block_.data(), block_.size(), 3);
  if (ZSTD_isError(n)) {
    error_ = path_ + ": compression failed";
    return;
  }
  const uint64_t block_total = 12 + n;
  // The trailer must still fit once the budget is reached.
  if (max_bytes_ && written_ + block_total + kTrailerBytes > max_bytes_) {
    over_budget_ = true;
    recorded_ -= block_events_;
    dropped_ += block_events_;
  } else {
    const uint32_t sizes[3] = {static_cast<uint32_t>(n), static_cast<uint32_t>(block_.size()),
                               block_events_};
    write_raw(sizes, sizeof sizes);
    write_raw(packed_.data(), n);
    // The block must be on disk (or its failure known) before the process may die.
    if (std::fflush(file_) != 0 && error_.empty())
      error_ = path_ + ": write failed: " + std::strerror(errno);
  }
  block_.clear();
  block_events_ = 0;
}

void TimelineWriter::close(int64_t end_offset_ns, int64_t end_local_ns, int64_t round_trip_ns) {
  if (!file_) return;
  flush();
  std::vector<uint8_t> trailer;
  put<uint32_t>(trailer, kTrailerMark);
  put<int64_t>(trailer, end_offset_ns);
  put<int64_t>(trailer, end_local_ns);
  put<int64_t>(trailer, round_trip_ns);
  put<uint64_t>(trailer, recorded_);
  put<uint64_t>(trailer, dropped_);
  write_raw(trailer.data(), trailer.size());
  if (std::fflush(file_) != 0 && error_.empty())
    error_ = path_ + ": write failed: " + std::strerror(errno);
  if (std::fclose(file_) != 0 && error_.empty())
    error_ = path_ + ": close failed: " + std::strerror(errno);
  file_ = nullptr;
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
  if (!has_trailer) return ClockMap(start);
  return ClockMap(start, ClockSample{end_offset_ns, end_local_ns, end_round_trip_ns});
}

int64_t RankTimelineFile::to_global(int64_t local_ns) const {
  const std::optional<int64_t> t = clock().to_global(local_ns);
  if (!t) out_of_range(source, "a global time");
  return *t;
}

RankTimelineFile read_timeline_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TimelineError(path + ": cannot open");
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_timeline(data, path);
}

RankTimelineFile parse_timeline(std::span<const uint8_t> data, const std::string& path) {
  std::size_t at = 0;
  auto fail = [&](std::size_t where, const std::string& msg) {
    throw TimelineError(path + ": byte " + std::to_string(where) + ": " + msg);
  };
  auto need = [&](std::size_t n, const char* what) {
    if (n > data.size() - at)
      throw TimelineError(path + ": truncated " + what + " at byte " + std::to_string(at));
  };
  auto get = [&]<typename T>(T& v, const char* what) {
    need(sizeof(T), what);
    std::memcpy(&v, data.data() + at, sizeof(T));
    at += sizeof(T);
  };
  need(5, "header");
  if (std::memcmp(data.data(), kMagic, 4) != 0)
    throw TimelineError(path + ": not a tracefold timeline file");
  if (data[4] != 1 && data[4] != kVersion)
    throw TimelineError(path + ": timeline version " + std::to_string(data[4]) +
                        " (this tracefold reads 1 and 2)");
  at = 5;
  RankTimelineFile f;
  f.source = path;
  f.version = data[4];
  int64_t base = 0;
  get(f.rank, "header");
  get(f.world_size, "header");
  if (f.world_size <= 0 || f.world_size > kMaxWorldSize)
    fail(9, "world size " + std::to_string(f.world_size) + " is outside 1.." +
                std::to_string(kMaxWorldSize));
  if (f.rank < 0 || f.rank >= f.world_size)
    fail(5, "rank " + std::to_string(f.rank) + " is outside the world of " +
                std::to_string(f.world_size) + " ranks");
  get(base, "header");
  get(f.start_offset_ns, "header");
  get(f.start_local_ns, "header");
  if (f.version >= 2) get(f.start_round_trip_ns, "header");
  int64_t last_exit = base;
  std::vector<uint8_t> raw;
  while (at < data.size()) {
    const std::size_t block_at = at;
    uint32_t stored = 0;
    get(stored, "block");
    if (stored == kTrailerMark) {
      get(f.end_offset_ns, "trailer");
      get(f.end_local_ns, "trailer");
      if (f.version >= 2) get(f.end_round_trip_ns, "trailer");
      uint64_t recorded = 0;
      get(recorded, "trailer");
      get(f.dropped, "trailer");
      f.has_trailer = true;
      if (recorded != f.records.size())
        throw TimelineError(path + ": trailer says " + std::to_string(recorded) +
                            " events, blocks hold " + std::to_string(f.records.size()));
      break;
    }
    uint32_t raw_size = 0, events = 0;
    get(raw_size, "block");
    get(events, "block");
    // A run that died mid-write leaves a partial last block: stop before it.
    if (stored > data.size() - at) break;
    // Sizes are checked before anything is allocated for them: a block
    // never exceeds the limit, its frame says how much it holds, and every
    // record takes at least 3 bytes.
    if (raw_size > kMaxTimelineBlockBytes)
      fail(block_at, "block of " + std::to_string(raw_size) + " bytes, more than the limit of " +
                         std::to_string(kMaxTimelineBlockBytes));
    const unsigned long long content = ZSTD_getFrameContentSize(data.data() + at, stored);
    if (content != raw_size)
      fail(block_at, "block header says " + std::to_string(raw_size) +
                         " bytes, its compressed frame does not hold that many");
    if (events > raw_size / 3)
      fail(block_at, "block of " + std::to_string(raw_size) + " bytes cannot hold " +
                         std::to_string(events) + " events");
    raw.resize(raw_size);
    const std::size_t n = ZSTD_decompress(raw.data(), raw.size(), data.data() + at, stored);
    if (ZSTD_isError(n) || n != raw_size) fail(block_at, "corrupt block");
    at += stored;
    std::size_t p = 0;
    auto varint = [&]() -> uint64_t {
      uint64_t v = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (p >= raw.size()) fail(block_at, "corrupt record in a block");
        const uint8_t b = raw[p++];
        v |= uint64_t{b & 0x7Fu} << shift;
        if (!(b & 0x80)) return v;
      }
      throw TimelineError(path + ": byte " + std::to_string(block_at) +
                          ": corrupt record in a block");
    };
    f.records.reserve(f.records.size() + events);
    for (uint32_t e = 0; e < events; ++e) {
      TimelineRecord r;
      const uint64_t op = varint();
      if (op >= OpTable::size())
        fail(block_at, "record " + std::to_string(e) + " has operation " + std::to_string(op) +
                           ", not one of the " + std::to_string(OpTable::size()) + " known");
      r.op = static_cast<OpId>(op);
      r.enter_ns = checked_add(last_exit, unzigzag(varint()), path, "an enter time");
      r.exit_ns = checked_add(r.enter_ns, unzigzag(varint()), path, "an exit time");
      last_exit = r.exit_ns;
      f.records.push_back(r);
    }
    if (p != raw.size()) fail(block_at, "block holds more bytes than its events");
  }
  return f;
}

}  // namespace tracefold
