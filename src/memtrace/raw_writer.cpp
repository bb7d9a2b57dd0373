#include "raw_writer.hpp"

#include <cstring>
#include <string>

namespace tracefold::memtrace {
namespace {

// 1 MiB of 48-byte records: large enough that the write's system time is
// per block, not per reference.
constexpr std::size_t kBlockRecords = (1u << 20) / sizeof(TfmRawRecord);

std::FILE* open_or_throw(const std::filesystem::path& file) {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) throw RawFormatError(file.string() + ": cannot create: " + std::strerror(errno));
  return f;
}

void put(std::FILE* f, const std::filesystem::path& file, const void* p, std::size_t n) {
  if (n && std::fwrite(p, 1, n, f) != n)
    throw RawFormatError(file.string() + ": write failed: " + std::strerror(errno));
}

}  // namespace

RawStreamWriter::RawStreamWriter(const std::filesystem::path& file, std::uint32_t thread,
                                 std::uint32_t pid)
    : path_(file), f_(open_or_throw(file)), buf_(kBlockRecords) {
  // Unbuffered: whole blocks go straight to write(2) rather than through a
  // second copy in stdio's buffer.
  std::setvbuf(f_, nullptr, _IONBF, 0);
  TfmRawHeader h{};
  std::memcpy(h.magic, TFM_RAW_MAGIC, sizeof h.magic);
  h.version = TFM_RAW_VERSION;
  h.record_size = sizeof(TfmRawRecord);
  h.thread = thread;
  h.pid = pid;
  put(f_, path_, &h, sizeof h);
}

RawStreamWriter::~RawStreamWriter() {
  if (f_) std::fclose(f_);
}

void RawStreamWriter::write(const MemRef* refs, std::size_t n) {
  while (n > 0) {
    const std::size_t k = std::min(n, buf_.size() - used_);
    TfmRawRecord* r = buf_.data() + used_;
    for (std::size_t i = 0; i < k; i++) {
      const MemRef& m = refs[i];
      r[i] = TfmRawRecord{m.iaddr,
                          m.daddr,
                          m.context,
                          m.size,
                          m.index,
                          static_cast<std::uint8_t>((m.store ? TFM_RAW_STORE : 0u) |
                                                    unsigned(m.kind) << TFM_RAW_KIND_SHIFT),
                          m.region,
                          m.ordinal,
                          m.owner,
                          0,
                          m.offset};
    }
    used_ += k;
    records_ += k;
    refs += k;
    n -= k;
    if (used_ == buf_.size()) flush();
  }
}

void RawStreamWriter::flush() {
  put(f_, path_, buf_.data(), used_ * sizeof(TfmRawRecord));
  used_ = 0;
}

void RawStreamWriter::close() {
  if (!f_) return;
  flush();
  std::FILE* f = f_;
  f_ = nullptr;
  if (std::fclose(f) != 0)
    throw RawFormatError(path_.string() + ": close failed: " + std::strerror(errno));
}

void write_modules(const std::filesystem::path& file, const std::vector<Module>& modules) {
  std::FILE* f = open_or_throw(file);
  try {
    TfmCtxHeader h{};
    std::memcpy(h.magic, TFM_MOD_MAGIC, sizeof h.magic);
    h.version = TFM_MOD_VERSION;
    h.record_size = sizeof(TfmModRecord);
    // Ids must run 1..count: a gap (a folded trace naming only some
    // modules) becomes an unnamed module.
    h.count = modules.empty() ? 0 : static_cast<std::uint32_t>(modules.size() - 1);
    put(f, file, &h, sizeof h);
    for (std::uint32_t i = 1; i <= h.count; i++) {
      const Module& m = modules[i];
      const TfmModRecord r{i, static_cast<std::uint32_t>(m.name.size()), m.base, m.text_lo,
                           m.text_hi};
      put(f, file, &r, sizeof r);
      put(f, file, m.name.data(), m.name.size());
    }
  } catch (...) {
    std::fclose(f);
    throw;
  }
  if (std::fclose(f) != 0)
    throw RawFormatError(file.string() + ": close failed: " + std::strerror(errno));
}

}  // namespace tracefold::memtrace
