// Clock offset estimation and the linear clock correction of timelines.

#include "tracefold/clock_sync.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace tracefold {

void OffsetEstimator::add_round(int64_t sent_ns, int64_t remote_ns, int64_t received_ns) {
  const int64_t rtt = received_ns - sent_ns;
  if (rtt < 0) return;  // a clock that went backwards: no estimate from it
  // The midpoint is the best guess of when rank 0 read its clock; halves
  // are taken separately so that no sum can overflow.
  const int64_t mid = sent_ns / 2 + received_ns / 2 + (sent_ns % 2 + received_ns % 2) / 2;
  if (best_ && best_->round_trip_ns <= rtt) return;
  best_ = ClockSample{remote_ns - mid, mid, rtt};
}

ClockSample OffsetEstimator::best() const {
  if (!best_) throw std::logic_error("OffsetEstimator::best: no round");
  return *best_;
}

ClockMap::ClockMap(const ClockSample& start, const ClockSample& end) : start_(start), end_(end) {
  // Samples taken at the same instant give no rate: keep the first.
  if (end_.local_ns == start_.local_ns) end_ = start_;
}

double ClockMap::offset_at(int64_t local_ns) const {
  const double o0 = static_cast<double>(start_.offset_ns);
  if (end_.local_ns == start_.local_ns) return o0;
  const double f = (static_cast<double>(local_ns) - static_cast<double>(start_.local_ns)) /
                   (static_cast<double>(end_.local_ns) - static_cast<double>(start_.local_ns));
  return o0 + f * (static_cast<double>(end_.offset_ns) - o0);
}

std::optional<int64_t> ClockMap::to_global(int64_t local_ns) const {
  // The constant part in integers (exact), the drift through double.
  int64_t shifted = 0;
  if (__builtin_add_overflow(local_ns, start_.offset_ns, &shifted)) return std::nullopt;
  if (end_.local_ns == start_.local_ns || end_.offset_ns == start_.offset_ns) return shifted;
  const double drift = offset_at(local_ns) - static_cast<double>(start_.offset_ns);
  // 2^63 is exact in double; anything at or above it (or NaN) is out of range.
  constexpr double kLimit = 9223372036854775808.0;
  if (!(drift > -kLimit && drift < kLimit)) return std::nullopt;
  int64_t out = 0;
  if (__builtin_add_overflow(shifted, static_cast<int64_t>(std::llround(drift)), &out))
    return std::nullopt;
  return out;
}

double ClockMap::drift_ppm() const {
  if (end_.local_ns == start_.local_ns) return 0.0;
  return (static_cast<double>(end_.offset_ns) - static_cast<double>(start_.offset_ns)) /
         (static_cast<double>(end_.local_ns) - static_cast<double>(start_.local_ns)) * 1e6;
}

int64_t ClockMap::max_abs_offset() const {
  auto mag = [](int64_t v) { return v == INT64_MIN ? INT64_MAX : std::llabs(v); };
  return std::max(mag(start_.offset_ns), mag(end_.offset_ns));
}

int64_t ClockMap::uncertainty_ns() const {
  if (start_.round_trip_ns < 0 || end_.round_trip_ns < 0) return -1;
  return std::max(start_.round_trip_ns, end_.round_trip_ns) / 2;
}

void ClockCorrection::add(const ClockMap& map) {
  if (map.is_identity()) return;
  const int64_t u = map.uncertainty_ns();
  // One rank of unknown error makes the bound unknown.
  uncertainty_ns =
      ranks == 0 ? u : (uncertainty_ns < 0 || u < 0 ? -1 : std::max(uncertainty_ns, u));
  ++ranks;
  max_offset_ns = std::max(max_offset_ns, map.max_abs_offset());
  max_drift_ppm = std::max(max_drift_ppm, std::fabs(map.drift_ppm()));
}

namespace {

std::string duration(double ns) {
  char buf[32];
  if (ns >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3g s", ns / 1e9);
  else if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3g ms", ns / 1e6);
  else if (ns >= 1e3)
    std::snprintf(buf, sizeof buf, "%.3g us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  return buf;
}

}  // namespace

std::string ClockCorrection::describe() const {
  if (!applied()) return "clocks: no correction needed";
  char drift[32];
  std::snprintf(drift, sizeof drift, "%.3g", max_drift_ppm);
  return "clocks: " + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") +
         " corrected by up to " + duration(static_cast<double>(max_offset_ns)) + " (drift up to " +
         drift + " ppm, error " +
         (uncertainty_ns < 0 ? std::string("unknown")
                             : "up to " + duration(static_cast<double>(uncertainty_ns))) +
         ")";
}

}  // namespace tracefold
