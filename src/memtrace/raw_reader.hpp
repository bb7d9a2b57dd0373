// Reader of the raw memory-reference log written by the tracefold-mem
// Valgrind tool (--raw-log=DIR): DIR/thread-N.bin per thread, contexts.bin
// and modules.bin. The layout is defined once, in raw_format.h; this side
// checks every header and length and reports bad input by file and byte
// offset rather than returning garbage.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracefold::memtrace {

// Truncated, corrupt or unexpected input; what() names the file and, for a
// record, the byte offset where it starts.
class RawFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a data address was normalised against (raw format version 2;
// version 1 streams read as Other with offset = daddr).
enum class AddrKind : std::uint8_t { Other = 0, Static = 1, Stack = 2, Heap = 3 };

const char* addr_kind_name(AddrKind k);

// One access as recorded. The normalised address is (kind, region, ordinal,
// owner, offset); see raw_format.h for what each field means per kind.
struct MemRef {
  std::uint64_t iaddr = 0;
  std::uint64_t daddr = 0;
  std::uint32_t context = 0;
  std::uint16_t size = 0;
  std::uint8_t index = 0;
  bool store = false;
  AddrKind kind = AddrKind::Other;
  std::uint32_t region = 0;
  std::uint32_t ordinal = 0;
  std::uint32_t owner = 0;
  std::int64_t offset = 0;

  bool operator==(const MemRef&) const = default;
  // Same access site, size, direction and normalised address: what two
  // runs (or two threads, owner aside) must agree on.
  bool same_normalised(const MemRef& o) const {
    return iaddr == o.iaddr && index == o.index && size == o.size && store == o.store &&
           kind == o.kind && region == o.region && ordinal == o.ordinal && offset == o.offset;
  }
};

// Streams one thread-N.bin in fixed-size chunks, so a multi-gigabyte
// stream never has to fit in memory.
class RawStreamReader {
 public:
  explicit RawStreamReader(const std::filesystem::path& file);
  ~RawStreamReader();
  RawStreamReader(const RawStreamReader&) = delete;
  RawStreamReader& operator=(const RawStreamReader&) = delete;

  std::uint32_t version() const { return version_; }
  std::uint32_t thread() const { return thread_; }
  std::uint32_t pid() const { return pid_; }
  std::uint64_t records() const { return records_; }  // from the file's length
  const std::filesystem::path& path() const { return path_; }

  // The next record, or false at the end of the file. Throws RawFormatError
  // on a partial record at the end.
  bool next(MemRef& out);
  // Up to n records into out; fewer only at the end of the file (0 there).
  std::size_t next_batch(MemRef* out, std::size_t n);

 private:
  void refill();

  std::filesystem::path path_;
  std::FILE* f_ = nullptr;
  std::uint32_t version_ = 0, record_size_ = 0, thread_ = 0, pid_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t tail_bytes_ = 0;  // bytes after the last whole record
  std::uint64_t consumed_ = 0;    // records returned so far
  // The records at hand: buf_ filled by fread, or a window of the file
  // mapped read-only (map_, map_len_ bytes), which spares the kernel copying
  // every byte (reading a log by fread was half of memreplay's time).
  std::vector<unsigned char> buf_;
  const unsigned char* data_ = nullptr;
  void* map_ = nullptr;
  std::size_t map_len_ = 0;
  std::size_t buf_pos_ = 0, buf_len_ = 0;
};

struct RawStream {
  std::uint32_t thread = 0;
  std::uint32_t pid = 0;
  std::uint32_t version = 0;
  std::vector<MemRef> refs;
};

RawStream read_raw_stream(const std::filesystem::path& file);

// A call-path context: its parent and the call instruction entering it.
struct Context {
  std::uint32_t id = 0;
  std::uint32_t parent = 0;
  std::uint64_t call_site = 0;
};

// contexts.bin, indexed by id: result[0] is the root (id 0).
std::vector<Context> read_contexts(const std::filesystem::path& file);

// The call sites from the root down to context `id` (empty for the root).
std::vector<std::uint64_t> call_path(const std::vector<Context>& contexts, std::uint32_t id);

struct Module {
  std::uint32_t id = 0;
  std::uint64_t base = 0;
  std::string name;
  // Its executable mappings, [text_lo, text_hi); both 0 when it has none or
  // the log predates them (modules.bin version 1).
  std::uint64_t text_lo = 0, text_hi = 0;
  bool has_text() const { return text_lo < text_hi; }
};

// modules.bin, indexed by id: result[0] is an unnamed placeholder.
std::vector<Module> read_modules(const std::filesystem::path& file);

// A whole --raw-log directory: thread-0.bin .. thread-(T-1).bin (no gaps),
// and contexts.bin / modules.bin when present (empty vectors otherwise).
struct RawLog {
  std::vector<RawStream> threads;
  std::vector<Context> contexts;
  std::vector<Module> modules;
};

RawLog read_raw_log(const std::filesystem::path& dir);

// The thread-N.bin files of `dir`, by N; throws when numbers are missing.
std::vector<std::filesystem::path> raw_stream_files(const std::filesystem::path& dir);

}  // namespace tracefold::memtrace
