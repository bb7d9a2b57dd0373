// What TimelineWriter (timeline_io.hpp) and SamplesWriter (samples.hpp)
// have in common: each writes a file of compressed blocks within a byte
// budget. Only the state is here, so that the checks made on every record
// stay inline; the code that writes the file is internal to the core
// (src/core/block_file.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tracefold {

namespace block_file {
class Writer;
}

class BlockFileWriter {
 public:
  bool is_open() const { return file_ != nullptr; }
  uint64_t bytes_written() const { return written_; }
  /// True once the byte budget was reached (the caller warns once).
  bool over_budget() const { return over_budget_; }
  /// Why writing stopped; "" while it goes on.
  const std::string& error() const { return error_; }

 protected:
  BlockFileWriter() = default;
  ~BlockFileWriter();
  BlockFileWriter(const BlockFileWriter&) = delete;
  BlockFileWriter& operator=(const BlockFileWriter&) = delete;

 private:
  friend class block_file::Writer;

  std::FILE* file_ = nullptr;
  std::string path_;
  std::vector<uint8_t> block_;
  std::vector<uint8_t> packed_;
  std::size_t block_bytes_ = 1 << 16;
  uint32_t block_records_ = 0;
  uint64_t max_bytes_ = 0;
  uint64_t trailer_bytes_ = 0;
  uint64_t written_ = 0;
  bool over_budget_ = false;
  std::string error_;
};

}  // namespace tracefold
