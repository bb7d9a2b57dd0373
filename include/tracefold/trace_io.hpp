// Reading and writing the trace file (format: docs/format.md).
//
// The text form is the reference: versioned, line-oriented, deterministic
// (equal traces give equal bytes). A file whose name ends in `.zst` is the
// same text compressed with zstd; readers detect compression by content.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tracefold/trace.hpp"

namespace tracefold {

/// A trace file is malformed. what() reads `SOURCE:LINE: expected ..., found ...`.
class TraceFormatError : public std::runtime_error {
 public:
  TraceFormatError(std::string source, std::size_t line, const std::string& message);
  const std::string& source() const { return source_; }
  std::size_t line() const { return line_; }

 private:
  std::string source_;
  std::size_t line_;
};

/// The text form of a trace, format version Trace::kFormatVersion: a
/// ranklist of all ranks of the world (node `ranks=`, communicator
/// `members`) or of the node (after `@` in its elastic values) is `*`.
std::string format_trace(const Trace& trace);
/// Parses the text form, versions 1 (no `*`) to Trace::kFormatVersion;
/// `source` names the input in error messages.
Trace parse_trace(std::string_view text, const std::string& source = "<trace>");

/// Writes atomically (temporary file + rename); zstd-compressed if the path
/// ends in `.zst`. Throws std::runtime_error naming the path on I/O failure.
void save_trace(const Trace& trace, const std::filesystem::path& path);
/// Reads a plain or zstd-compressed trace file.
Trace load_trace(const std::filesystem::path& path);

/// Reads a whole file (decompressing zstd content); throws naming the path.
std::string read_file_text(const std::filesystem::path& path);
/// zstd helpers (level 19 by default).
std::string zstd_compress(std::string_view data, int level = 19);
std::string zstd_decompress(std::string_view data, const std::string& source);
bool is_zstd(std::string_view data);

}  // namespace tracefold
