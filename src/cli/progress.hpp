// Progress of long work on stderr: shown only when stderr is a terminal,
// and only once the work has taken more than about two seconds, so short
// runs, pipes and logs see nothing. TRACEFOLD_PROGRESS=1 shows it anyway,
// from the first step and one line per step (for batch logs, and how the
// tests see it); TRACEFOLD_PROGRESS=0 never shows it.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tracefold/progress.hpp"

namespace tracefold::cli {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  /// `what`: the work, e.g. "merging traces"; `total`: steps (0: unknown).
  Progress(std::string what, std::size_t total)
      : what_(std::move(what)), total_(total), start_(Clock::now()) {
    const char* env = std::getenv("TRACEFOLD_PROGRESS");
    forced_ = env && std::strcmp(env, "1") == 0;
    on_ = forced_ || (isatty(2) == 1 && !(env && std::strcmp(env, "0") == 0));
  }
  ~Progress() { done(); }

  /// `step` steps of `total` are done.
  void update(std::size_t step) {
    if (!on_) return;
    const auto now = Clock::now();
    if (forced_) {
      // One line per tenth of the work (and the first step), not per step.
      const std::size_t tenth = total_ ? std::min<std::size_t>(10, 10 * step / total_) : 0;
      if (printed_ && (total_ ? tenth == last_tenth_ : now - last_ < std::chrono::seconds(1)))
        return;
      last_tenth_ = tenth;
      printed_ = true;
    } else if (now - start_ < std::chrono::seconds(2) ||
               now - last_ < std::chrono::milliseconds(200)) {
      return;
    }
    last_ = now;
    shown_ = !forced_;
    const char* lead = forced_ ? "" : "\r";
    const char* end = forced_ ? "\n" : "";
    if (total_)
      std::fprintf(stderr, "%stracefold: %s %zu/%zu (%.0f%%)%s", lead, what_.c_str(), step, total_,
                   100.0 * double(step) / double(total_), end);
    else
      std::fprintf(stderr, "%stracefold: %s %zu%s", lead, what_.c_str(), step, end);
    std::fflush(stderr);
  }
  /// For a library call: `update` with the library's own step count.
  ProgressFn fn() {
    return [this](std::size_t done, std::size_t total) {
      if (total) total_ = total;
      update(done);
    };
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
  bool forced_ = false;
  bool printed_ = false;
  std::size_t last_tenth_ = 0;
  bool on_ = false;
  bool shown_ = false;
};

}  // namespace tracefold::cli
