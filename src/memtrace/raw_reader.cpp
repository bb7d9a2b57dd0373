#include "raw_reader.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "raw_format.h"

namespace tracefold::memtrace {
namespace {

// The format is little-endian whatever the host: decode byte by byte.
std::uint64_t le(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

// The same for one field of a record, a plain load on a little-endian host:
// records are decoded at tens of millions a second (memreplay).
template <class T>
T field(const unsigned char* p) {
  if constexpr (std::endian::native == std::endian::little) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  } else {
    return static_cast<T>(le(p, sizeof(T)));
  }
}

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what) {
  throw RawFormatError(file.string() + ": " + what);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_or_fail(const std::filesystem::path& file) {
  FilePtr f(std::fopen(file.c_str(), "rb"));
  if (!f) fail(file, std::string("cannot open: ") + std::strerror(errno));
  return f;
}

std::uint64_t size_of_file(const std::filesystem::path& file) {
  std::error_code ec;
  auto n = std::filesystem::file_size(file, ec);
  if (ec) fail(file, "cannot get its size: " + ec.message());
  return n;
}

// The 24-byte header shared by contexts.bin and modules.bin.
struct TableHeader {
  std::uint32_t version, record_size, count, reserved;
};

// A table of an older version (old_version, with its own record size) is
// accepted too when old_version is not 0.
TableHeader read_table_header(std::FILE* f, const std::filesystem::path& file, const char* magic,
                              std::uint32_t version, std::uint32_t record_size,
                              std::uint32_t old_version = 0, std::uint32_t old_record_size = 0) {
  unsigned char h[sizeof(TfmCtxHeader)];
  if (std::fread(h, 1, sizeof h, f) != sizeof h)
    fail(file, "shorter than its " + std::to_string(sizeof h) + "-byte header");
  if (std::memcmp(h, magic, 8) != 0) fail(file, "bad magic (not a tracefold-mem table)");
  TableHeader t{static_cast<std::uint32_t>(le(h + 8, 4)), static_cast<std::uint32_t>(le(h + 12, 4)),
                static_cast<std::uint32_t>(le(h + 16, 4)),
                static_cast<std::uint32_t>(le(h + 20, 4))};
  if (old_version != 0 && t.version == old_version) {
    version = old_version;
    record_size = old_record_size;
  }
  if (t.version != version)
    fail(file,
         "version " + std::to_string(t.version) + ", this reader knows " + std::to_string(version));
  if (t.record_size != record_size)
    fail(file, "record size " + std::to_string(t.record_size) + ", expected " +
                   std::to_string(record_size));
  return t;
}

constexpr std::size_t kChunkRecords = 1 << 14;
// Records mapped at a time: 3 MB of the file, so that a multi-gigabyte
// stream is never mapped whole and a replay of many threads' streams keeps
// little of each resident.
constexpr std::size_t kWindowRecords = 1 << 16;

}  // namespace

const char* addr_kind_name(AddrKind k) {
  switch (k) {
    case AddrKind::Static:
      return "static";
    case AddrKind::Stack:
      return "stack";
    case AddrKind::Heap:
      return "heap";
    case AddrKind::Other:
      break;
  }
  return "other";
}

RawStreamReader::RawStreamReader(const std::filesystem::path& file) : path_(file) {
  std::uint64_t size = size_of_file(file);
  f_ = std::fopen(file.c_str(), "rb");
  if (f_ == nullptr) fail(file, std::string("cannot open: ") + std::strerror(errno));
  unsigned char h[sizeof(TfmRawHeader)];
  if (std::fread(h, 1, sizeof h, f_) != sizeof h) {
    std::fclose(f_);
    f_ = nullptr;
    fail(file, "shorter than the " + std::to_string(sizeof h) + "-byte header (" +
                   std::to_string(size) + " bytes)");
  }
  auto close_and_fail = [&](const std::string& what) {
    std::fclose(f_);
    f_ = nullptr;
    fail(file, what);
  };
  if (std::memcmp(h, TFM_RAW_MAGIC, 8) != 0)
    close_and_fail("bad magic (not a tracefold-mem raw stream)");
  version_ = static_cast<std::uint32_t>(le(h + 8, 4));
  record_size_ = static_cast<std::uint32_t>(le(h + 12, 4));
  thread_ = static_cast<std::uint32_t>(le(h + 16, 4));
  pid_ = static_cast<std::uint32_t>(le(h + 20, 4));
  std::uint32_t want = version_ == 1 ? 24 : version_ == 2 ? sizeof(TfmRawRecord) : 0;
  if (want == 0)
    close_and_fail("version " + std::to_string(version_) + ", this reader knows 1 and " +
                   std::to_string(TFM_RAW_VERSION));
  if (record_size_ != want)
    close_and_fail("record size " + std::to_string(record_size_) + " in a version " +
                   std::to_string(version_) + " stream, expected " + std::to_string(want));
  std::uint64_t body = size - sizeof h;
  records_ = body / record_size_;
  tail_bytes_ = body % record_size_;
}

RawStreamReader::~RawStreamReader() {
  if (map_ != nullptr) ::munmap(map_, map_len_);
  if (f_ != nullptr) std::fclose(f_);
}

void RawStreamReader::refill() {
  buf_pos_ = 0;
  if (map_ != nullptr) {
    ::munmap(map_, map_len_);
    map_ = nullptr;
  }
  // The next window of whole records, mapped from the page below it; a
  // file that cannot be mapped (a pipe, a file system without mmap) is
  // read with fread instead. The file's length is checked first: touching
  // a mapped page past its end would be a SIGBUS, not an error message.
  const std::uint64_t at = sizeof(TfmRawHeader) + consumed_ * record_size_;
  const std::uint64_t want = std::min<std::uint64_t>(records_ - consumed_, kWindowRecords);
  struct stat st {};
  if (want > 0 && ::fstat(::fileno(f_), &st) == 0 &&
      static_cast<std::uint64_t>(st.st_size) >= at + want * record_size_) {
    static const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t lead = at % page;
    const std::size_t len = static_cast<std::size_t>(lead + want * record_size_);
    void* m = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, ::fileno(f_),
                     static_cast<off_t>(at - lead));
    if (m != MAP_FAILED) {
      map_ = m;
      map_len_ = len;
      data_ = static_cast<const unsigned char*>(m) + lead;
      buf_len_ = static_cast<std::size_t>(want * record_size_);
      return;
    }
  }
  if (buf_.empty()) buf_.resize(kChunkRecords * record_size_);
  if (std::fseek(f_, static_cast<long>(at), SEEK_SET) != 0)
    fail(path_, std::string("seek error: ") + std::strerror(errno));
  buf_len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
  data_ = buf_.data();
  if (std::ferror(f_)) fail(path_, std::string("read error: ") + std::strerror(errno));
}

bool RawStreamReader::next(MemRef& out) {
  if (consumed_ == records_) {
    if (tail_bytes_ != 0) {
      std::uint64_t at = sizeof(TfmRawHeader) + records_ * record_size_;
      fail(path_, "truncated record at offset " + std::to_string(at) + " (record " +
                      std::to_string(records_) + "): " + std::to_string(tail_bytes_) + " of " +
                      std::to_string(record_size_) + " bytes");
    }
    return false;
  }
  if (buf_len_ - buf_pos_ < record_size_) {
    // Only whole records are requested from a buffer of whole records, so a
    // short read here means the file changed under us.
    refill();
    if (buf_len_ < record_size_)
      fail(path_, "file shrank while reading at record " + std::to_string(consumed_));
  }
  const unsigned char* p = data_ + buf_pos_;
  std::uint64_t at = sizeof(TfmRawHeader) + consumed_ * record_size_;
  out.iaddr = field<std::uint64_t>(p);
  out.daddr = field<std::uint64_t>(p + 8);
  out.context = field<std::uint32_t>(p + 16);
  out.size = field<std::uint16_t>(p + 20);
  out.index = p[22];
  std::uint8_t flags = p[23];
  out.store = flags & TFM_RAW_STORE;
  if (version_ == 1) {
    if (flags & ~TFM_RAW_STORE)
      fail(path_,
           "record at offset " + std::to_string(at) + ": unknown flags " + std::to_string(flags));
    out.kind = AddrKind::Other;
    out.region = out.ordinal = out.owner = 0;
    out.offset = static_cast<std::int64_t>(out.daddr);
  } else {
    if (flags & ~(TFM_RAW_STORE | TFM_RAW_KIND_MASK))
      fail(path_,
           "record at offset " + std::to_string(at) + ": unknown flags " + std::to_string(flags));
    out.kind = static_cast<AddrKind>((flags & TFM_RAW_KIND_MASK) >> TFM_RAW_KIND_SHIFT);
    out.region = field<std::uint32_t>(p + 24);
    out.ordinal = field<std::uint32_t>(p + 28);
    out.owner = field<std::uint32_t>(p + 32);
    out.offset = field<std::int64_t>(p + 40);
  }
  if (out.size == 0) fail(path_, "record at offset " + std::to_string(at) + ": size 0");
  buf_pos_ += record_size_;
  consumed_++;
  return true;
}

namespace {

// A record and a MemRef agree byte for byte but for bytes 23-39: the flags
// byte becomes `store` and `kind`, and region, ordinal and owner sit four
// bytes further on in a MemRef. On a little-endian host a record is so three
// block copies and two bytes from the flags, about half the instructions of
// loading field by field (folding and memreplay decode tens of millions of
// records a second).
constexpr bool kBlockDecode =
    std::endian::native == std::endian::little && sizeof(MemRef) == sizeof(TfmRawRecord) &&
    offsetof(MemRef, daddr) == 8 && offsetof(MemRef, context) == 16 &&
    offsetof(MemRef, size) == 20 && offsetof(MemRef, index) == 22 &&
    offsetof(MemRef, store) == 23 && offsetof(MemRef, kind) == 24 &&
    offsetof(MemRef, region) == 28 && offsetof(MemRef, ordinal) == 32 &&
    offsetof(MemRef, owner) == 36 && offsetof(MemRef, offset) == 40 &&
    offsetof(TfmRawRecord, region) == 24 && offsetof(TfmRawRecord, offset) == 40;

// One version 2 record whose flags were checked.
[[gnu::always_inline]] inline void decode_v2(const unsigned char* p, std::uint8_t flags,
                                             MemRef& m) {
  if constexpr (kBlockDecode) {
    auto* o = reinterpret_cast<unsigned char*>(&m);
    std::memcpy(o, p, 24);
    std::memcpy(o + 28, p + 24, 12);
    std::memcpy(o + 40, p + 40, 8);
  } else {
    m.iaddr = field<std::uint64_t>(p);
    m.daddr = field<std::uint64_t>(p + 8);
    m.context = field<std::uint32_t>(p + 16);
    m.size = field<std::uint16_t>(p + 20);
    m.index = p[22];
    m.region = field<std::uint32_t>(p + 24);
    m.ordinal = field<std::uint32_t>(p + 28);
    m.owner = field<std::uint32_t>(p + 32);
    m.offset = field<std::int64_t>(p + 40);
  }
  m.store = flags & TFM_RAW_STORE;
  m.kind = static_cast<AddrKind>((flags & TFM_RAW_KIND_MASK) >> TFM_RAW_KIND_SHIFT);
}

}  // namespace

std::size_t RawStreamReader::next_batch(MemRef* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    // Version 2 records already in the buffer are decoded here, in one
    // loop without a call per record (folding reads tens of millions a
    // second); refills, version 1 and anything to complain about go
    // through next().
    std::size_t fast = 0;
    if (version_ == 2) {
      fast = std::min<std::uint64_t>(
          {(buf_len_ - buf_pos_) / sizeof(TfmRawRecord), n - got, records_ - consumed_});
      const unsigned char* p = data_ + buf_pos_;
      std::size_t i = 0;
      for (; i < fast; i++, p += sizeof(TfmRawRecord)) {
        const std::uint8_t flags = p[23];
        const std::uint16_t size = field<std::uint16_t>(p + 20);
        if ((flags & ~(TFM_RAW_STORE | TFM_RAW_KIND_MASK)) != 0 || size == 0) break;
        decode_v2(p, flags, out[got + i]);
      }
      got += i;
      consumed_ += i;
      buf_pos_ += i * sizeof(TfmRawRecord);
      if (i > 0) continue;
    }
    if (got == n || !next(out[got])) break;
    got++;
  }
  return got;
}

RawStream read_raw_stream(const std::filesystem::path& file) {
  RawStreamReader r(file);
  RawStream s;
  s.thread = r.thread();
  s.pid = r.pid();
  s.version = r.version();
  s.refs.reserve(r.records());
  MemRef m;
  while (r.next(m)) s.refs.push_back(m);
  return s;
}

std::vector<Context> read_contexts(const std::filesystem::path& file) {
  auto f = open_or_fail(file);
  std::uint64_t size = size_of_file(file);
  auto h = read_table_header(f.get(), file, TFM_CTX_MAGIC, TFM_CTX_VERSION, sizeof(TfmCtxRecord));
  std::uint64_t want = sizeof(TfmCtxHeader) + std::uint64_t{h.count} * sizeof(TfmCtxRecord);
  if (size != want)
    fail(file, "header says " + std::to_string(h.count) + " contexts (" + std::to_string(want) +
                   " bytes), the file has " + std::to_string(size) + " bytes");
  std::vector<Context> out(std::size_t{h.count} + 1);
  for (std::uint32_t i = 1; i <= h.count; i++) {
    unsigned char r[sizeof(TfmCtxRecord)];
    std::uint64_t at = sizeof(TfmCtxHeader) + std::uint64_t{i - 1} * sizeof r;
    if (std::fread(r, 1, sizeof r, f.get()) != sizeof r)
      fail(file, "truncated context record at offset " + std::to_string(at));
    Context c{static_cast<std::uint32_t>(le(r, 4)), static_cast<std::uint32_t>(le(r + 4, 4)),
              le(r + 8, 8)};
    if (c.id != i)
      fail(file, "context record at offset " + std::to_string(at) + " has id " +
                     std::to_string(c.id) + ", expected " + std::to_string(i));
    // Parents are interned before their children, so a parent id is always
    // smaller: anything else would make call_path loop.
    if (c.parent >= c.id)
      fail(file, "context " + std::to_string(c.id) + " (offset " + std::to_string(at) +
                     ") has parent " + std::to_string(c.parent) + ", not an earlier context");
    out[i] = c;
  }
  return out;
}

std::vector<std::uint64_t> call_path(const std::vector<Context>& contexts, std::uint32_t id) {
  std::vector<std::uint64_t> path;
  if (id == TFM_CTX_OVERFLOW) return path;
  if (id >= contexts.size())
    throw RawFormatError("context " + std::to_string(id) + " is not in contexts.bin (" +
                         std::to_string(contexts.size() - 1) + " contexts)");
  while (id != 0) {
    path.push_back(contexts[id].call_site);
    id = contexts[id].parent;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<Module> read_modules(const std::filesystem::path& file) {
  auto f = open_or_fail(file);
  std::uint64_t size = size_of_file(file);
  // Version 1 records end before the text extent.
  constexpr std::uint32_t kV1Record = 16;
  auto h = read_table_header(f.get(), file, TFM_MOD_MAGIC, TFM_MOD_VERSION, sizeof(TfmModRecord), 1,
                             kV1Record);
  const std::uint32_t rsize = h.record_size;
  // Names vary in length, but each module takes at least its record: a
  // count the file cannot hold is refused before anything is sized by it.
  const std::uint64_t least = sizeof(TfmCtxHeader) + std::uint64_t{h.count} * rsize;
  if (size < least)
    fail(file, "header says " + std::to_string(h.count) + " modules (at least " +
                   std::to_string(least) + " bytes), the file has " + std::to_string(size) +
                   " bytes");
  std::vector<Module> out(std::size_t{h.count} + 1);
  std::uint64_t at = sizeof(TfmCtxHeader);
  for (std::uint32_t i = 1; i <= h.count; i++) {
    unsigned char r[sizeof(TfmModRecord)] = {};
    if (std::fread(r, 1, rsize, f.get()) != rsize)
      fail(file, "truncated module record at offset " + std::to_string(at) + " (module " +
                     std::to_string(i) + " of " + std::to_string(h.count) + ")");
    Module m;
    m.id = static_cast<std::uint32_t>(le(r, 4));
    auto len = static_cast<std::uint32_t>(le(r + 4, 4));
    m.base = le(r + 8, 8);
    m.text_lo = le(r + 16, 8);
    m.text_hi = le(r + 24, 8);
    if (m.id != i)
      fail(file, "module record at offset " + std::to_string(at) + " has id " +
                     std::to_string(m.id) + ", expected " + std::to_string(i));
    if (len > size - at - rsize)
      fail(file, "module " + std::to_string(i) + " (offset " + std::to_string(at) + ") has a " +
                     std::to_string(len) + "-byte name past the end of the file");
    m.name.resize(len);
    if (len > 0 && std::fread(m.name.data(), 1, len, f.get()) != len)
      fail(file, "truncated module name at offset " + std::to_string(at + rsize));
    at += rsize + len;
    out[i] = std::move(m);
  }
  if (at != size)
    fail(file, std::to_string(size - at) + " bytes after the last module (offset " +
                   std::to_string(at) + ")");
  return out;
}

std::vector<std::filesystem::path> raw_stream_files(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) fail(dir, "not a directory");
  std::map<std::uint64_t, std::filesystem::path> found;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("thread-", 0) != 0 || name.size() <= 11 ||
        name.compare(name.size() - 4, 4, ".bin") != 0)
      continue;
    std::string digits = name.substr(7, name.size() - 11);
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    found[std::stoull(digits)] = e.path();
  }
  if (found.empty()) fail(dir, "no thread-N.bin streams (not a --raw-log directory?)");
  std::vector<std::filesystem::path> out;
  for (const auto& [n, p] : found) {
    if (n != out.size())
      fail(dir, "thread-" + std::to_string(out.size()) + ".bin is missing (thread-" +
                    std::to_string(n) + ".bin exists)");
    out.push_back(p);
  }
  return out;
}

RawLog read_raw_log(const std::filesystem::path& dir) {
  RawLog log;
  for (const auto& p : raw_stream_files(dir)) {
    log.threads.push_back(read_raw_stream(p));
    if (log.threads.back().thread != log.threads.size() - 1)
      fail(p, "header says thread " + std::to_string(log.threads.back().thread));
  }
  std::error_code ec;
  if (std::filesystem::exists(dir / "contexts.bin", ec))
    log.contexts = read_contexts(dir / "contexts.bin");
  if (std::filesystem::exists(dir / "modules.bin", ec))
    log.modules = read_modules(dir / "modules.bin");
  auto check_ids = [&](const RawStream& s) {
    for (std::size_t i = 0; i < s.refs.size(); i++) {
      const MemRef& m = s.refs[i];
      std::uint64_t at = sizeof(TfmRawHeader) + i * (s.version == 1 ? 24 : sizeof(TfmRawRecord));
      auto where = [&] {
        return (dir / ("thread-" + std::to_string(s.thread) + ".bin")).string() +
               ": record at offset " + std::to_string(at) + ": ";
      };
      if (!log.contexts.empty() && m.context != TFM_CTX_OVERFLOW &&
          m.context >= log.contexts.size())
        throw RawFormatError(where() + "context " + std::to_string(m.context) +
                             " is not in contexts.bin");
      if (m.kind == AddrKind::Static && !log.modules.empty() &&
          (m.region == 0 || m.region >= log.modules.size()))
        throw RawFormatError(where() + "module " + std::to_string(m.region) +
                             " is not in modules.bin");
    }
  };
  for (const auto& s : log.threads) check_ids(s);
  return log;
}

}  // namespace tracefold::memtrace
