// The wall time a replay spends on a recorded computation gap, with the
// replayer's own overruns carried (no MPI: unit-tested).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tracefold::replay_detail {

// An overrun of a gap larger than this is taken for a lost core (the rank
// was descheduled during the walk), not for the walk's cost: not carried.
inline constexpr int64_t kMaxWalkOverrunNs = 20000;

// A gap runs from the end of the previous call, as it was recorded, so the
// replayer's own walk to the next call is part of it, not added to it.
// Between calls recorded back to back the walk takes longer than the
// recorded gap; summed over a program that makes a hundred calls a step
// that is percents of the run, so the overrun is owed and taken off the
// next gap long enough to pay it.
class GapClock {
 public:
  /// Wall time left to spend on a gap of `ns` that began at `start_ns`,
  /// it being `now_ns`, less what earlier gaps owe.
  int64_t left(int64_t start_ns, int64_t ns, int64_t now_ns) {
    const int64_t left = start_ns + ns - now_ns;
    if (left <= 0) {
      if (-left <= kMaxWalkOverrunNs) owed_ += -left;
      return 0;
    }
    const int64_t paid = std::min(owed_, left);
    owed_ -= paid;
    return left - paid;
  }
  int64_t owed() const { return owed_; }

 private:
  int64_t owed_ = 0;
};

}  // namespace tracefold::replay_detail
