#include "rawlog_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tracefold::record {

void RawLogFile::open(const std::string& path, std::string who) {
  close();
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error("cannot create raw log " + path + ": " + std::strerror(errno));
  path_ = path;
  who_ = std::move(who);
  buf_.reserve(kBuffer + 4096);
  on_disk_ = line_end_ = lines_kept_ = 0;
  failed_errno_ = 0;
}

void RawLogFile::flush() {
  if (fd_ < 0 || failed_errno_ != 0 || buf_.empty()) return;
  std::size_t done = 0;
  while (done < buf_.size()) {
    const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      account(done);
      fail(err);
      return;
    }
    done += static_cast<std::size_t>(n);
  }
  account(done);
}

// The first `good` bytes of the buffer reached the file.
void RawLogFile::account(uint64_t good) {
  for (uint64_t i = 0; i < good; ++i)
    if (buf_[i] == '\n') {
      line_end_ = on_disk_ + i + 1;
      ++lines_kept_;
    }
  on_disk_ += good;
  buf_.clear();
}

// Stops taking lines and cuts the file back to its last whole line.
void RawLogFile::fail(int err) {
  failed_errno_ = err;
  // Shrinking needs no space, so this works on a full disk too.
  const bool cut = ::ftruncate(fd_, static_cast<off_t>(line_end_)) == 0;
  std::fprintf(stderr,
               "tracefold: %s: raw log %s is incomplete: %s; it keeps the first %llu lines%s, "
               "the rest of this rank's events are not logged\n",
               who_.c_str(), path_.c_str(), std::strerror(err),
               static_cast<unsigned long long>(lines_kept_),
               cut ? "" : " (and a cut line: shortening the file failed too)");
}

void RawLogFile::close() {
  if (fd_ < 0) return;
  flush();
  // Some file systems (NFS) report a full disk only when the file is closed.
  if (::close(fd_) != 0 && failed_errno_ == 0 && errno != EINTR) {
    failed_errno_ = errno;
    std::fprintf(stderr, "tracefold: %s: raw log %s is incomplete: closing it failed: %s\n",
                 who_.c_str(), path_.c_str(), std::strerror(failed_errno_));
  }
  fd_ = -1;
}

}  // namespace tracefold::record
