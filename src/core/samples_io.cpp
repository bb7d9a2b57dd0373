#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tracefold/limits.hpp"
#include "tracefold/samples.hpp"

namespace tracefold {

namespace {

constexpr char kMagic[4] = {'T', 'F', 'S', 'M'};
constexpr uint8_t kVersion = 1;
constexpr uint32_t kTrailerMark = 0xFFFFFFFFu;
// Mark, taken, dropped, median, 99th percentile.
constexpr uint64_t kTrailerBytes = 4 + 4 * 8;
constexpr uint64_t kModule = 0, kContext = 1, kSample = 2;

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}
// Differences wrap like the unsigned arithmetic the reader undoes them with.
int64_t wrapping_diff(uint64_t a, uint64_t b) {
  return static_cast<int64_t>(a - b);
}

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

}  // namespace

SamplesWriter::~SamplesWriter() {
  if (file_) std::fclose(file_);
}

void SamplesWriter::write_raw(const void* data, std::size_t n) {
  if (!file_ || !error_.empty()) return;
  if (std::fwrite(data, 1, n, file_) != n) {
    error_ = path_ + ": write failed: " + std::strerror(errno);
    return;
  }
  written_ += n;
}

void SamplesWriter::open(const std::string& path, int32_t rank, int32_t world_size,
                         int64_t period_ns, SampleClock clock, uint64_t max_bytes,
                         std::size_t block_bytes) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw SamplesError(path + ": cannot create: " + std::strerror(errno));
  path_ = path;
  max_bytes_ = max_bytes;
  block_bytes_ = std::max<std::size_t>(block_bytes, 64);
  block_.reserve(block_bytes_ + 64);
  std::vector<uint8_t> header(std::begin(kMagic), std::end(kMagic));
  header.push_back(kVersion);
  put<int32_t>(header, rank);
  put<int32_t>(header, world_size);
  put<int64_t>(header, period_ns);
  header.push_back(static_cast<uint8_t>(clock));
  write_raw(header.data(), header.size());
}

void SamplesWriter::put_varint(uint64_t v) {
  while (v >= 0x80) {
    block_.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  block_.push_back(static_cast<uint8_t>(v));
}

void SamplesWriter::end_record() {
  ++block_records_;
  if (block_.size() >= block_bytes_) flush();
}

uint32_t SamplesWriter::add_module(const Module& m) {
  // Numbered even when not written: once over budget nothing later is, so
  // no written record refers to an unwritten one.
  const uint32_t id = modules_++;
  if (!file_ || over_budget_ || !error_.empty()) return id;
  std::string line = format_module_line(m);
  line.erase(0, 7);  // "module "
  put_varint(kModule);
  put_varint(line.size());
  block_.insert(block_.end(), line.begin(), line.end());
  end_record();
  return id;
}

uint32_t SamplesWriter::add_context(uint32_t parent, uint32_t module, uint64_t offset) {
  const uint32_t id = contexts_++;
  if (!file_ || over_budget_ || !error_.empty()) return id;
  put_varint(kContext);
  put_varint(parent);
  put_varint(module);
  put_varint(offset);
  end_record();
  return id;
}

void SamplesWriter::add_sample(const Sample& s) {
  if (!file_ || over_budget_ || !error_.empty()) {
    ++dropped_;
    return;
  }
  put_varint(kSample);
  put_varint(
      zigzag(wrapping_diff(static_cast<uint64_t>(s.time_ns), static_cast<uint64_t>(last_time_))));
  put_varint(s.context);
  put_varint(s.thread);
  put_varint(zigzag(wrapping_diff(s.mpi_event, last_event_)));
  put_varint(s.lca_depth);
  block_.push_back(s.in_mpi ? 1 : 0);
  last_time_ = s.time_ns;
  last_event_ = s.mpi_event;
  ++recorded_;
  ++block_samples_;
  end_record();
}

void SamplesWriter::flush() {
  if (!file_ || block_records_ == 0) return;
  packed_.resize(ZSTD_compressBound(block_.size()));
  const std::size_t n =
      ZSTD_compress(packed_.data(), packed_.size(), block_.data(), block_.size(), 3);
  if (ZSTD_isError(n)) {
    error_ = path_ + ": compression failed";
    return;
  }
  const uint64_t block_total = 12 + n;
  if (max_bytes_ && written_ + block_total + kTrailerBytes > max_bytes_) {
    over_budget_ = true;
    recorded_ -= block_samples_;
    dropped_ += block_samples_;
  } else {
    const uint32_t sizes[3] = {static_cast<uint32_t>(n), static_cast<uint32_t>(block_.size()),
                               block_records_};
    write_raw(sizes, sizeof sizes);
    write_raw(packed_.data(), n);
    // On disk before the process may die.
    if (std::fflush(file_) != 0 && error_.empty())
      error_ = path_ + ": write failed: " + std::strerror(errno);
  }
  block_.clear();
  block_records_ = 0;
  block_samples_ = 0;
}

void SamplesWriter::close(int64_t handler_median_ns, int64_t handler_p99_ns) {
  if (!file_) return;
  flush();
  std::vector<uint8_t> trailer;
  put<uint32_t>(trailer, kTrailerMark);
  put<uint64_t>(trailer, recorded_ + dropped_);
  put<uint64_t>(trailer, dropped_);
  put<int64_t>(trailer, handler_median_ns);
  put<int64_t>(trailer, handler_p99_ns);
  write_raw(trailer.data(), trailer.size());
  if (std::fflush(file_) != 0 && error_.empty())
    error_ = path_ + ": write failed: " + std::strerror(errno);
  if (std::fclose(file_) != 0 && error_.empty())
    error_ = path_ + ": close failed: " + std::strerror(errno);
  file_ = nullptr;
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

std::string samples_path(const std::string& timeline_dir, int32_t rank) {
  return timeline_dir + "/samples-" + std::to_string(rank) + ".tfs";
}

RankSamples read_samples_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SamplesError(path + ": cannot open");
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_samples(data, path);
}

RankSamples parse_samples(std::span<const uint8_t> data, const std::string& path) {
  std::size_t at = 0;
  auto fail = [&](std::size_t where, const std::string& msg) {
    throw SamplesError(path + ": byte " + std::to_string(where) + ": " + msg);
  };
  auto need = [&](std::size_t n, const char* what) {
    if (n > data.size() - at)
      throw SamplesError(path + ": truncated " + what + " at byte " + std::to_string(at));
  };
  auto get = [&]<typename T>(T& v, const char* what) {
    need(sizeof(T), what);
    std::memcpy(&v, data.data() + at, sizeof(T));
    at += sizeof(T);
  };
  need(5, "header");
  if (std::memcmp(data.data(), kMagic, 4) != 0)
    throw SamplesError(path + ": not a tracefold samples file (bad magic)");
  if (data[4] != kVersion)
    throw SamplesError(path + ": samples version " + std::to_string(data[4]) +
                       " (this tracefold reads 1)");
  at = 5;
  RankSamples f;
  f.source = path;
  f.contexts.emplace_back();  // the root
  std::vector<uint32_t> depths{0};
  get(f.rank, "header");
  get(f.world_size, "header");
  if (f.world_size <= 0 || f.world_size > kMaxWorldSize)
    fail(9, "world size " + std::to_string(f.world_size) + " is outside 1.." +
                std::to_string(kMaxWorldSize));
  if (f.rank < 0 || f.rank >= f.world_size)
    fail(5, "rank " + std::to_string(f.rank) + " is outside the world of " +
                std::to_string(f.world_size) + " ranks");
  get(f.period_ns, "header");
  if (f.period_ns <= 0) fail(13, "sampling period " + std::to_string(f.period_ns) + " ns");
  uint8_t clock = 0;
  get(clock, "header");
  if (clock > 1) fail(21, "clock " + std::to_string(clock) + " (0 wall, 1 processor time)");
  f.clock = static_cast<SampleClock>(clock);
  uint64_t last_time = 0, last_event = 0;
  std::vector<uint8_t> raw;
  while (at < data.size()) {
    const std::size_t block_at = at;
    uint32_t stored = 0;
    // A run that died mid-write may leave part of a block's frame.
    if (data.size() - at < 4) break;
    get(stored, "block");
    if (stored == kTrailerMark) {
      get(f.taken, "trailer");
      get(f.dropped, "trailer");
      get(f.handler_median_ns, "trailer");
      get(f.handler_p99_ns, "trailer");
      f.has_trailer = true;
      if (f.taken != f.samples.size() + f.dropped)
        throw SamplesError(path + ": trailer says " + std::to_string(f.taken) + " samples taken, " +
                           std::to_string(f.dropped) + " dropped, but the blocks hold " +
                           std::to_string(f.samples.size()));
      if (at != data.size()) fail(at, "bytes after the trailer");
      break;
    }
    if (data.size() - at < 8) break;
    uint32_t raw_size = 0, records = 0;
    get(raw_size, "block");
    get(records, "block");
    if (stored > data.size() - at) break;  // the partial last block of a run that died
    if (raw_size > kMaxSamplesBlockBytes)
      fail(block_at, "block of " + std::to_string(raw_size) + " bytes, more than the limit of " +
                         std::to_string(kMaxSamplesBlockBytes));
    const unsigned long long content = ZSTD_getFrameContentSize(data.data() + at, stored);
    if (content != raw_size)
      fail(block_at, "block header says " + std::to_string(raw_size) +
                         " bytes, its compressed frame does not hold that many");
    // Every record takes at least 2 bytes.
    if (records > raw_size / 2)
      fail(block_at, "block of " + std::to_string(raw_size) + " bytes cannot hold " +
                         std::to_string(records) + " records");
    raw.resize(raw_size);
    const std::size_t n = ZSTD_decompress(raw.data(), raw.size(), data.data() + at, stored);
    if (ZSTD_isError(n) || n != raw_size) fail(block_at, "corrupt block");
    at += stored;
    std::size_t p = 0;
    auto varint = [&]() -> uint64_t {
      uint64_t v = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (p >= raw.size()) fail(block_at, "truncated record in a block");
        const uint8_t b = raw[p++];
        v |= uint64_t{b & 0x7Fu} << shift;
        if (!(b & 0x80)) return v;
      }
      fail(block_at, "corrupt varint in a block");
      return 0;
    };
    for (uint32_t r = 0; r < records; ++r) {
      const std::string where = "record " + std::to_string(r) + " of the block: ";
      const uint64_t kind = varint();
      if (kind == kModule) {
        const uint64_t len = varint();
        if (len > raw.size() - p) fail(block_at, where + "module line longer than the block");
        const std::string_view text(reinterpret_cast<const char*>(raw.data() + p), len);
        p += len;
        std::string error;
        std::optional<Module> m = parse_module_line(text, error);
        if (!m) fail(block_at, where + "bad module line: " + error);
        f.modules.push_back(std::move(*m));
      } else if (kind == kContext) {
        SampleContext c;
        const uint64_t parent = varint(), module = varint();
        c.offset = varint();
        if (parent >= f.contexts.size())
          fail(block_at, where + "context " + std::to_string(f.contexts.size()) +
                             " refers to unknown parent " + std::to_string(parent));
        if (module >= f.modules.size())
          fail(block_at, where + "context " + std::to_string(f.contexts.size()) +
                             " refers to unknown module " + std::to_string(module) + " (" +
                             std::to_string(f.modules.size()) + " known)");
        c.parent = static_cast<uint32_t>(parent);
        c.module = static_cast<uint32_t>(module);
        f.contexts.push_back(c);
        depths.push_back(depths[c.parent] + 1);
      } else if (kind == kSample) {
        Sample s;
        last_time += static_cast<uint64_t>(unzigzag(varint()));
        s.time_ns = static_cast<int64_t>(last_time);
        const uint64_t context = varint();
        if (context >= f.contexts.size())
          fail(block_at, where + "sample refers to unknown context " + std::to_string(context));
        s.context = static_cast<uint32_t>(context);
        const uint64_t thread = varint();
        if (thread > UINT32_MAX) fail(block_at, where + "thread number out of range");
        s.thread = static_cast<uint32_t>(thread);
        last_event += static_cast<uint64_t>(unzigzag(varint()));
        s.mpi_event = last_event;
        const uint64_t lca = varint();
        if (lca > UINT16_MAX || lca > depths[s.context])
          fail(block_at, where + "LCA depth " + std::to_string(lca) + " deeper than the sample's " +
                             std::to_string(depths[s.context]) + " frames");
        s.lca_depth = static_cast<uint16_t>(lca);
        if (p >= raw.size()) fail(block_at, where + "truncated sample");
        const uint8_t flags = raw[p++];
        if (flags > 1) fail(block_at, where + "unknown sample flags " + std::to_string(flags));
        s.in_mpi = flags & 1;
        f.samples.push_back(s);
      } else {
        fail(block_at, where + "unknown record kind " + std::to_string(kind));
      }
    }
    if (p != raw.size()) fail(block_at, "block holds more bytes than its records");
  }
  return f;
}

void write_samples_file(const std::string& path, const RankSamples& s) {
  SamplesWriter w;
  w.open(path, s.rank, s.world_size, s.period_ns, s.clock, 0);
  for (const Module& m : s.modules) w.add_module(m);
  for (std::size_t c = 1; c < s.contexts.size(); ++c)
    w.add_context(s.contexts[c].parent, s.contexts[c].module, s.contexts[c].offset);
  for (const Sample& x : s.samples) w.add_sample(x);
  w.add_dropped(s.dropped);
  w.close(s.handler_median_ns, s.handler_p99_ns);
  if (!w.error().empty()) throw SamplesError(w.error());
}

}  // namespace tracefold
