// Progress of long work on stderr: shown only when stderr is a terminal,
// and only once the work has taken more than about two seconds, so short
// runs, pipes and logs see nothing.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace tracefold::cli {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  /// `what`: the work, e.g. "merging traces"; `total`: steps (0: unknown).
  Progress(std::string what, std::size_t total)
      : what_(std::move(what)), total_(total), start_(Clock::now()), on_(isatty(2) == 1) {}
  ~Progress() { done(); }

  /// `step` steps of `total` are done.
  void update(std::size_t step) {
    if (!on_) return;
    const auto now = Clock::now();
    if (now - start_ < std::chrono::seconds(2) || now - last_ < std::chrono::milliseconds(200))
      return;
    last_ = now;
    shown_ = true;
    if (total_)
      std::fprintf(stderr, "\rtracefold: %s %zu/%zu (%.0f%%)", what_.c_str(), step, total_,
                   100.0 * double(step) / double(total_));
    else
      std::fprintf(stderr, "\rtracefold: %s %zu", what_.c_str(), step);
    std::fflush(stderr);
  }
  /// Clears the line (once).
  void done() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  std::string what_;
  std::size_t total_;
  Clock::time_point start_, last_{};
  bool on_;
  bool shown_ = false;
};

}  // namespace tracefold::cli
