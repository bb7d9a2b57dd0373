// Reading and writing the trace file (format: docs/format.md).
//
// Two forms hold the same trace. The text form (format version 2, or 5 with
// a `pred=other` timing block) is the reference: line-oriented and readable;
// a file whose name ends in `.zst` is that text compressed with zstd. The
// compact form (format version 6, the default of save_trace; versions 3 to
// 5 are still read) is binary: varints, each
// name, module and frame once, histograms in columns, zstd on top. Both are
// deterministic (equal traces give equal bytes), and load_trace reads every
// form, telling them apart by content.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tracefold/trace.hpp"

namespace tracefold {

/// A trace file is malformed. what() reads `SOURCE:LINE: expected ..., found ...`
/// for the text form and `SOURCE: byte N: ...` or `SOURCE: body byte N: ...`
/// for the compact form.
class TraceFormatError : public std::runtime_error {
 public:
  /// A place in the compact form: a byte offset in the file, or with
  /// `in_body` one in the decompressed body (docs/format.md).
  struct AtByte {
    std::size_t offset;
    bool in_body = false;
  };
  TraceFormatError(std::string source, std::size_t line, const std::string& message);
  TraceFormatError(std::string source, AtByte at, const std::string& message);
  const std::string& source() const { return source_; }
  /// Line of the text form; 0 for the compact form.
  std::size_t line() const { return line_; }

 private:
  std::string source_;
  std::size_t line_ = 0;
};

/// How save_trace writes a trace.
enum class TraceEncoding {
  kCompact,  ///< format version 6, binary and compressed (the default)
  kText,     ///< format version 2 or 5, text (zstd-compressed if the name ends in `.zst`)
};

/// The text form of a trace, format version 2, or Trace::kFormatVersion
/// when it has a `pred=other` timing block: a
/// ranklist of all ranks of the world (node `ranks=`, communicator
/// `members`) or of the node (after `@` in its elastic values) is `*`.
std::string format_trace(const Trace& trace);
/// Parses the text form, versions 1 (no `*`), 2 and Trace::kFormatVersion;
/// `source` names the input in error messages.
Trace parse_trace(std::string_view text, const std::string& source = "<trace>");

/// The compact form, format version 6: a 5-byte header and one zstd frame
/// holding the body (encode_compact_body), compressed against the fixed
/// dictionary of version 6.
std::string encode_compact(const Trace& trace);
/// The compact form's body before compression (for measurements).
std::string encode_compact_body(const Trace& trace);
/// Inverse of encode_compact, for compact versions 3 to 5; errors name
/// `source` and the byte offset.
Trace decode_compact(std::string_view bytes, const std::string& source = "<trace>");
/// Whether `bytes` start with the compact form's magic number.
bool is_compact(std::string_view bytes);
/// Any form of a trace file: compact, text, or zstd-compressed text. Every
/// reader of trace files goes through this (load_trace).
Trace decode_trace(std::string_view bytes, const std::string& source);

/// Writes atomically (temporary file + rename), in the compact form or as
/// text; a path ending in `.zst` always gets zstd-compressed text. Returns
/// the bytes written (a device such as `/dev/null` has no file size to ask
/// for afterwards). Throws std::runtime_error naming the path on I/O
/// failure.
std::size_t save_trace(const Trace& trace, const std::filesystem::path& path,
                       TraceEncoding encoding = TraceEncoding::kCompact);
/// Reads a trace file in any form (decode_trace).
Trace load_trace(const std::filesystem::path& path);

/// Writes `bytes` so that a reader of `path` sees the old file or the whole
/// new one: a temporary file in the same directory, renamed into place. A
/// path that exists and is not a regular file (`/dev/null`, a FIFO,
/// `/dev/stdout`) is written in place instead: renaming over it would
/// replace the device, for every other process too. Throws
/// std::runtime_error naming the path.
void write_file_whole(const std::filesystem::path& path, std::string_view bytes);

/// Reads a whole file (decompressing zstd content); throws naming the path.
std::string read_file_text(const std::filesystem::path& path);
/// zstd helpers (level 19 by default).
std::string zstd_compress(std::string_view data, int level = 19);
std::string zstd_decompress(std::string_view data, const std::string& source);
bool is_zstd(std::string_view data);

}  // namespace tracefold
