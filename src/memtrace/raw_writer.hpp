// Writer of the raw memory-reference log (raw_format.h), the inverse of
// raw_reader.hpp: `tracefold memreplay --raw-log DIR` regenerates a log that
// every reader of the tool's logs takes. Records are packed into a large
// block and written whole, so the cost per reference is a few stores.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "raw_format.h"
#include "raw_reader.hpp"

namespace tracefold::memtrace {

// DIR/thread-N.bin, version TFM_RAW_VERSION. Errors (open, write) throw
// RawFormatError naming the file.
class RawStreamWriter {
 public:
  RawStreamWriter(const std::filesystem::path& file, std::uint32_t thread, std::uint32_t pid);
  ~RawStreamWriter();
  RawStreamWriter(const RawStreamWriter&) = delete;
  RawStreamWriter& operator=(const RawStreamWriter&) = delete;

  void write(const MemRef* refs, std::size_t n);
  // Flushes and closes; the destructor does the same but cannot report.
  void close();
  std::uint64_t records() const { return records_; }

 private:
  void flush();

  std::filesystem::path path_;
  std::FILE* f_ = nullptr;
  std::vector<TfmRawRecord> buf_;
  std::size_t used_ = 0;
  std::uint64_t records_ = 0;
};

// DIR/modules.bin from read_modules()'s form, indexed by id (index 0, the
// placeholder, is not written).
void write_modules(const std::filesystem::path& file, const std::vector<Module>& modules);

}  // namespace tracefold::memtrace
