// The raw log's output file (TRACEFOLD_RAWLOG): buffered, and honest about a
// full disk. std::ofstream would keep whatever part of a line the disk took
// and say nothing; this writer notes the first failure with its errno,
// cuts the file back to its last whole line and takes nothing more.
#pragma once

#include <charconv>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace tracefold::record {

class RawLogFile {
 public:
  RawLogFile() = default;
  ~RawLogFile() { close(); }
  RawLogFile(const RawLogFile&) = delete;
  RawLogFile& operator=(const RawLogFile&) = delete;

  /// Creates `path`; throws std::runtime_error with the errno text if it
  /// cannot. `who` starts the message printed when a write fails.
  void open(const std::string& path, std::string who);
  bool is_open() const { return fd_ >= 0; }
  /// False once a write failed (as a stream's state would be).
  explicit operator bool() const { return is_open() && failed_errno_ == 0; }

  RawLogFile& operator<<(std::string_view s) {
    if (fd_ >= 0 && failed_errno_ == 0) {
      buf_.append(s);
      if (buf_.size() >= kBuffer) flush();
    }
    return *this;
  }
  RawLogFile& operator<<(char c) { return *this << std::string_view(&c, 1); }
  template <std::integral T>
  RawLogFile& operator<<(T v) {
    char digits[24];
    auto r = std::to_chars(digits, digits + sizeof digits, v);
    return *this << std::string_view(digits, static_cast<std::size_t>(r.ptr - digits));
  }

  /// Writes the buffer out. On failure, see the class comment.
  void flush();
  /// Flushes and closes; a failing close counts as a failed write.
  void close();

  const std::string& path() const { return path_; }
  /// 0 while every write succeeded, else the first failure's errno.
  int failed_errno() const { return failed_errno_; }
  /// Whole lines in the file (all of them unless a write failed).
  uint64_t lines_kept() const { return lines_kept_; }

 private:
  static constexpr std::size_t kBuffer = 1 << 16;
  void account(uint64_t good_bytes);
  void fail(int err);

  int fd_ = -1;
  std::string path_, who_, buf_;
  uint64_t on_disk_ = 0;     // bytes written so far
  uint64_t line_end_ = 0;    // file offset just after the last newline on disk
  uint64_t lines_kept_ = 0;  // newlines up to line_end_
  int failed_errno_ = 0;
};

}  // namespace tracefold::record
