// The block-file mechanism timelines (timeline_io.cpp) and samples
// (samples_io.cpp) share: a header, zstd-compressed blocks of records each
// framed by u32 stored size, u32 raw size, u32 records, and a trailer after
// the mark 0xFFFFFFFF (docs/format.md). One copy of it, so that a fix to
// the byte budget or to a reader check reaches both formats; what differs
// is their header, records, trailer, and the few checks and words of
// errors in Format. Internal to src/core.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracefold/block_file_writer.hpp"
#include "tracefold/modules.hpp"

namespace tracefold::block_file {

inline constexpr uint32_t kTrailerMark = 0xFFFFFFFFu;

inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

/// The start of every header: magic, version, rank, world size.
std::vector<uint8_t> header(const char (&magic)[4], uint8_t version, int32_t rank,
                            int32_t world_size);

/// Writes a BlockFileWriter's file. A handle made where needed: the state
/// stays in the public BlockFileWriter, where the checks on every record
/// are inline. Never throws after open(): the traced program must go on,
/// so failures are kept in error() and writing stops.
class Writer {
 public:
  explicit Writer(BlockFileWriter& file) : f_(file) {}

  /// Creates `path` and writes `header`; "" or why the file could not be
  /// created. `trailer_bytes` (after the mark) stay free within `max_bytes`.
  std::string open(const std::string& path, std::span<const uint8_t> header, uint64_t max_bytes,
                   uint64_t trailer_bytes, std::size_t block_bytes);
  /// False once closed, over the budget or failed: records are dropped.
  bool accepting() const { return f_.file_ && !f_.over_budget_ && f_.error_.empty(); }
  /// Overwrites header bytes at `offset`, for what is known only later.
  void patch(long offset, std::span<const uint8_t> bytes);

  void put_varint(uint64_t v) {
    while (v >= 0x80) {
      f_.block_.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    f_.block_.push_back(static_cast<uint8_t>(v));
  }
  void put_byte(uint8_t b) { f_.block_.push_back(b); }
  void put_bytes(std::string_view s) { f_.block_.insert(f_.block_.end(), s.begin(), s.end()); }
  /// A module as the record `kind`: the module line of the trace format
  /// without its keyword, length first (samples and event logs declare
  /// modules alike).
  void put_module(uint64_t kind, const Module& m);
  /// True when the block is full. The owner flushes then, as it alone knows
  /// what to count as dropped if the block does not fit the budget.
  bool end_record() {
    ++f_.block_records_;
    return f_.block_.size() >= f_.block_bytes_;
  }
  uint32_t block_records() const { return f_.block_records_; }
  /// Writes the current block; true when it would have passed the budget
  /// and was dropped (so is everything after it).
  [[nodiscard]] bool flush();
  /// Writes the trailer mark and `trailer`, closes the file.
  void close(std::span<const uint8_t> trailer);

 private:
  void write_raw(const void* data, std::size_t n);
  void check(bool ok, const char* what);

  BlockFileWriter& f_;
};

/// Must throw. (Function pointers cannot say [[noreturn]].)
using Raise = void (*)(const std::string& message);

/// How a format's blocks are checked, and the words of its errors.
struct Format {
  Raise raise;  ///< throws the format's exception
  uint32_t max_raw_bytes;
  /// The fewest bytes a record takes: bounds the records a block claims.
  uint32_t min_record_bytes;
  const char* records;  ///< what the records are called
  /// Whether a frame cut short ends the file like a cut block does,
  /// rather than being an error.
  bool cut_frame_ends;
  const char* varint_truncated;
  const char* varint_too_long;
};

/// Reads a block file from memory. Every error names the file and, where
/// it has one, the byte.
class Reader {
 public:
  Reader(std::span<const uint8_t> data, const std::string& path, const Format& format)
      : data_(data), path_(path), format_(format) {}

  /// Checks the magic (else fails with `not_ours`), returns the version.
  uint8_t header(const char (&magic)[4], const char* not_ours);
  /// Reads and checks the rank and world size of the header.
  void rank_and_world(int32_t& rank, int32_t& world_size);

  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail(std::size_t at, const std::string& message) const;
  template <typename T>
  void get(T& v, const char* what) {
    need(sizeof(T), what);
    std::memcpy(&v, data_.data() + at_, sizeof(T));
    at_ += sizeof(T);
  }
  std::size_t at() const { return at_; }
  bool at_end() const { return at_ == data_.size(); }

  enum class Next { kEnd, kBlock, kTrailer };
  /// Moves to the next block and decompresses it, or to the trailer (after
  /// its mark), or stops at the end or before a block cut short.
  Next next();
  uint32_t block_records() const { return block_records_; }
  [[noreturn]] void fail_block(const std::string& message) const { fail(block_at_, message); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= raw_.size()) fail_block(format_.varint_truncated);
      const uint8_t b = raw_[p_++];
      v |= uint64_t{b & 0x7Fu} << shift;
      if (!(b & 0x80)) return v;
    }
    fail_block(format_.varint_too_long);
  }
  std::size_t left() const { return raw_.size() - p_; }
  /// `n` bytes of the block; the caller checked left().
  const uint8_t* take(std::size_t n) {
    p_ += n;
    return raw_.data() + p_ - n;
  }
  /// Fails if the block's records did not use all its bytes.
  void end_block() const;

 private:
  void need(std::size_t n, const char* what) const;

  std::span<const uint8_t> data_;
  const std::string& path_;
  Format format_;
  std::size_t at_ = 0;
  std::size_t block_at_ = 0;
  uint32_t block_records_ = 0;
  std::vector<uint8_t> raw_;
  std::size_t p_ = 0;
};

/// The whole file; fails with "PATH: cannot open".
std::vector<uint8_t> read(const std::string& path, const Format& format);

}  // namespace tracefold::block_file
