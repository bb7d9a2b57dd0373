// Trace files on disk: zstd framing, reading with the decompression bound,
// and writing through a temporary name (the text and compact forms are
// trace_io.cpp's and trace_compact*.cpp's).
#include <zstd.h>

#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tracefold/limits.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/trace_level.hpp"

namespace tracefold {

bool is_zstd(std::string_view data) {
  return data.size() >= 4 && static_cast<unsigned char>(data[0]) == 0x28 &&
         static_cast<unsigned char>(data[1]) == 0xB5 &&
         static_cast<unsigned char>(data[2]) == 0x2F && static_cast<unsigned char>(data[3]) == 0xFD;
}

std::string zstd_compress(std::string_view data, int level) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

std::string zstd_decompress(std::string_view data, const std::string& source) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  ZSTD_initDStream(ds);
  std::string out;
  std::string buf(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  size_t ret = 1;
  while (in.pos < in.size) {
    ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
    ret = ZSTD_decompressStream(ds, &ob, &in);
    if (ZSTD_isError(ret)) {
      ZSTD_freeDStream(ds);
      throw std::runtime_error(source + ": corrupt zstd data: " + ZSTD_getErrorName(ret));
    }
    out.append(buf.data(), ob.pos);
    if (out.size() > max_decompressed(data.size())) {
      ZSTD_freeDStream(ds);
      throw std::runtime_error(source + ": zstd data expands to more than " +
                               std::to_string(max_decompressed(data.size())) +
                               " bytes (1 MiB + 1024 times its size; corrupt, or a "
                               "decompression bomb)");
    }
    if (ob.pos == 0 && ret != 0 && in.pos == in.size) break;
  }
  ZSTD_freeDStream(ds);
  if (ret != 0) throw std::runtime_error(source + ": zstd data is truncated");
  return out;
}

namespace {
std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error(path.string() + ": read error");
  return std::move(ss).str();
}
}  // namespace

std::string read_file_text(const std::filesystem::path& path) {
  std::string data = read_file_bytes(path);
  if (is_zstd(data)) return zstd_decompress(data, path.string());
  return data;
}

Trace decode_trace(std::string_view bytes, const std::string& source) {
  if (is_compact(bytes)) return decode_compact(bytes, source);
  if (is_zstd(bytes)) return parse_trace(zstd_decompress(bytes, source), source);
  // Neither magic number and not text: say so, rather than quote binary
  // bytes as a bad header line.
  const auto c = bytes.empty() ? ' ' : static_cast<unsigned char>(bytes[0]);
  if (c >= 0x7f || (c < 0x20 && c != '\n' && c != '\r' && c != '\t'))
    throw TraceFormatError(source, TraceFormatError::AtByte{0},
                           "not a tracefold trace: it starts with neither 'tracefold-trace ' "
                           "(text form), 89 54 46 43 (compact form) nor zstd's 28 b5 2f fd");
  return parse_trace(bytes, source);
}

namespace {
// The reason of the last failed system call, or a plain word when the
// stream library did not leave one.
std::string errno_text() {
  return errno ? std::strerror(errno) : "I/O error";
}
}  // namespace

std::size_t save_trace(const Trace& trace, const std::filesystem::path& path,
                       TraceEncoding encoding, int compact_level) {
  return save_trace(trace, path, encoding, compact_level, DerivedFields::kSameRuns);
}

std::size_t save_trace(const Trace& trace, const std::filesystem::path& path,
                       TraceEncoding encoding, int compact_level, DerivedFields derived) {
  // A `.zst` name promises what `zstd -d` can read: compressed text.
  std::string text;
  if (path.extension() == ".zst") {
    text = zstd_compress(format_trace(trace));
  } else if (encoding == TraceEncoding::kCompact) {
    text = encode_compact(trace, compact_level, derived);
  } else {
    text = format_trace(trace);
  }
  write_file_whole(path, text);
  return text.size();
}

std::size_t save_trace(const Trace& trace, const std::filesystem::path& path,
                       TraceEncoding encoding) {
  return save_trace(trace, path, encoding, kCompactLevelBySize);
}

void write_file_whole(const std::filesystem::path& path, std::string_view bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  const bool in_place = !ec && std::filesystem::exists(status) &&
                        !std::filesystem::is_regular_file(status) &&
                        !std::filesystem::is_directory(status);
  const std::filesystem::path target =
      in_place ? path : std::filesystem::path(path.string() + ".tmp." + std::to_string(::getpid()));
  {
    errno = 0;
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    if (!out)
      throw std::runtime_error(target.string() + ": cannot open for writing: " + errno_text());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    // close() reports what a full disk refused to take, flush() alone not always.
    out.close();
    if (!out) {
      const std::string why = errno_text();
      if (!in_place) std::filesystem::remove(target, ec);
      throw std::runtime_error(target.string() + ": write failed: " + why);
    }
  }
  if (in_place) return;
  std::filesystem::rename(target, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(target, ec);
    throw std::runtime_error(path.string() + ": cannot rename into place: " + why);
  }
}

Trace load_trace(const std::filesystem::path& path) {
  return decode_trace(read_file_bytes(path), path.string());
}

}  // namespace tracefold
