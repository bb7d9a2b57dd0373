#include "block_file.hpp"

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "tracefold/limits.hpp"

namespace tracefold::block_file {

namespace {

[[noreturn]] void raise_always(Raise raise, const std::string& message) {
  raise(message);
  std::abort();  // not reached: raise throws
}

}  // namespace

std::vector<uint8_t> header(const char (&magic)[4], uint8_t version, int32_t rank,
                            int32_t world_size) {
  std::vector<uint8_t> out(std::begin(magic), std::end(magic));
  out.push_back(version);
  put<int32_t>(out, rank);
  put<int32_t>(out, world_size);
  return out;
}

void Writer::write_raw(const void* data, std::size_t n) {
  if (!f_.file_ || !f_.error_.empty()) return;
  const bool ok = std::fwrite(data, 1, n, f_.file_) == n;
  check(ok, "write failed");
  if (ok) f_.written_ += n;
}

void Writer::check(bool ok, const char* what) {
  if (!ok && f_.error_.empty()) f_.error_ = f_.path_ + ": " + what + ": " + std::strerror(errno);
}

void Writer::put_module(uint64_t kind, const Module& m) {
  std::string line = format_module_line(m);
  line.erase(0, 7);  // "module "
  put_varint(kind);
  put_varint(line.size());
  put_bytes(line);
}

std::string Writer::open(const std::string& path, std::span<const uint8_t> header,
                         uint64_t max_bytes, uint64_t trailer_bytes, std::size_t block_bytes) {
  f_.file_ = std::fopen(path.c_str(), "wb");
  if (!f_.file_) return path + ": cannot create: " + std::strerror(errno);
  f_.path_ = path;
  f_.max_bytes_ = max_bytes;
  f_.trailer_bytes_ = sizeof kTrailerMark + trailer_bytes;
  f_.block_bytes_ = std::max<std::size_t>(block_bytes, 64);
  // A block is written once it reaches its size, so it passes it by one
  // record at most.
  f_.block_.reserve(f_.block_bytes_ + 64);
  write_raw(header.data(), header.size());
  // On disk at once: a process killed before its first block (SIGKILL, the
  // OOM killer) still leaves a file that reads as empty, not as garbage.
  check(std::fflush(f_.file_) == 0, "write failed");
  return {};
}

void Writer::patch(long offset, std::span<const uint8_t> bytes) {
  if (!f_.file_) return;
  const long here = std::ftell(f_.file_);
  check(here >= 0 && std::fseek(f_.file_, offset, SEEK_SET) == 0 &&
            std::fwrite(bytes.data(), 1, bytes.size(), f_.file_) == bytes.size() &&
            std::fseek(f_.file_, here, SEEK_SET) == 0,
        "write failed");
}

bool Writer::flush() {
  if (!f_.file_ || f_.block_records_ == 0) return false;
  f_.packed_.resize(ZSTD_compressBound(f_.block_.size()));
  const std::size_t n =
      ZSTD_compress(f_.packed_.data(), f_.packed_.size(), f_.block_.data(), f_.block_.size(), 3);
  if (ZSTD_isError(n)) {
    f_.error_ = f_.path_ + ": compression failed";
    return false;
  }
  // The trailer must still fit once the budget is reached.
  const bool dropped = f_.max_bytes_ && f_.written_ + 12 + n + f_.trailer_bytes_ > f_.max_bytes_;
  if (dropped) {
    f_.over_budget_ = true;
  } else {
    const uint32_t sizes[3] = {static_cast<uint32_t>(n), static_cast<uint32_t>(f_.block_.size()),
                               f_.block_records_};
    write_raw(sizes, sizeof sizes);
    write_raw(f_.packed_.data(), n);
    // The block must be on disk (or its failure known) before the process may die.
    check(std::fflush(f_.file_) == 0, "write failed");
  }
  f_.block_.clear();
  f_.block_records_ = 0;
  return dropped;
}

void Writer::close(std::span<const uint8_t> trailer) {
  if (!f_.file_) return;
  std::vector<uint8_t> all;
  put<uint32_t>(all, kTrailerMark);
  all.insert(all.end(), trailer.begin(), trailer.end());
  write_raw(all.data(), all.size());
  check(std::fflush(f_.file_) == 0, "write failed");
  check(std::fclose(f_.file_) == 0, "close failed");
  f_.file_ = nullptr;
}

void Reader::fail(const std::string& message) const {
  raise_always(format_.raise, path_ + ": " + message);
}

void Reader::fail(std::size_t at, const std::string& message) const {
  fail("byte " + std::to_string(at) + ": " + message);
}

void Reader::need(std::size_t n, const char* what) const {
  if (n > data_.size() - at_)
    fail(std::string("truncated ") + what + " at byte " + std::to_string(at_));
}

uint8_t Reader::header(const char (&magic)[4], const char* not_ours) {
  need(5, "header");
  if (std::memcmp(data_.data(), magic, 4) != 0) fail(not_ours);
  at_ = 5;
  return data_[4];
}

void Reader::rank_and_world(int32_t& rank, int32_t& world_size) {
  get(rank, "header");
  get(world_size, "header");
  if (world_size <= 0 || world_size > kMaxWorldSize)
    fail(9, "world size " + std::to_string(world_size) + " is outside 1.." +
                std::to_string(kMaxWorldSize));
  if (rank < 0 || rank >= world_size)
    fail(5, "rank " + std::to_string(rank) + " is outside the world of " +
                std::to_string(world_size) + " ranks");
}

Reader::Next Reader::next() {
  if (at_ >= data_.size()) return Next::kEnd;
  block_at_ = at_;
  if (format_.cut_frame_ends && data_.size() - at_ < 4) return Next::kEnd;
  uint32_t stored = 0;
  get(stored, "block");
  if (stored == kTrailerMark) return Next::kTrailer;
  if (format_.cut_frame_ends && data_.size() - at_ < 8) return Next::kEnd;
  uint32_t raw_size = 0, records = 0;
  get(raw_size, "block");
  get(records, "block");
  // A run that died mid-write leaves a partial last block: stop before it.
  if (stored > data_.size() - at_) return Next::kEnd;
  // Sizes are checked before anything is allocated for them: a block never
  // exceeds the limit, its frame says how much it holds, and every record
  // takes a few bytes.
  if (raw_size > format_.max_raw_bytes)
    fail_block("block of " + std::to_string(raw_size) + " bytes, more than the limit of " +
               std::to_string(format_.max_raw_bytes));
  const unsigned long long content = ZSTD_getFrameContentSize(data_.data() + at_, stored);
  if (content != raw_size)
    fail_block("block header says " + std::to_string(raw_size) +
               " bytes, its compressed frame does not hold that many");
  if (records > raw_size / format_.min_record_bytes)
    fail_block("block of " + std::to_string(raw_size) + " bytes cannot hold " +
               std::to_string(records) + " " + format_.records);
  raw_.resize(raw_size);
  const std::size_t n = ZSTD_decompress(raw_.data(), raw_.size(), data_.data() + at_, stored);
  if (ZSTD_isError(n) || n != raw_size) fail_block("corrupt block");
  at_ += stored;
  p_ = 0;
  block_records_ = records;
  return Next::kBlock;
}

void Reader::end_block() const {
  if (p_ != raw_.size())
    fail_block(std::string("block holds more bytes than its ") + format_.records);
}

std::vector<uint8_t> read(const std::string& path, const Format& format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) raise_always(format.raise, path + ": cannot open");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace tracefold::block_file

namespace tracefold {

BlockFileWriter::~BlockFileWriter() {
  if (file_) std::fclose(file_);
}

}  // namespace tracefold
