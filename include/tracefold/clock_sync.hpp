// Clock synchronisation of recorded timelines. No MPI here.
//
// Each rank timestamps its calls with its own monotonic clock. Ranks on
// other hosts than rank 0 run their clocks from another origin and at a
// slightly different rate, so their times are not comparable as recorded.
// The recorder measures, at MPI_Init and again at MPI_Finalize, the offset
// of each rank's clock to rank 0's by a ping-pong of a few rounds, keeping
// the round with the shortest round trip (its midpoint estimate errs by at
// most half that round trip). Readers then map a local time t to rank 0's
// clock with the offset interpolated linearly between the two samples:
// a constant offset is removed exactly, a constant drift too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tracefold {

/// One measurement: at `local_ns` on this rank's clock, rank 0's clock
/// read `local_ns + offset_ns`.
struct ClockSample {
  int64_t offset_ns = 0;
  int64_t local_ns = 0;
  /// Round trip of the exchange the estimate comes from: its error is at
  /// most half of it. 0: exact (same host as rank 0, same clock); -1: not
  /// recorded (timeline files of version 1).
  int64_t round_trip_ns = -1;
};

/// Keeps the best (shortest round trip) of several ping-pong rounds.
/// A round: this rank reads its clock (`sent_ns`), rank 0 answers with its
/// clock (`remote_ns`), this rank reads its clock again (`received_ns`).
class OffsetEstimator {
 public:
  void add_round(int64_t sent_ns, int64_t remote_ns, int64_t received_ns);
  bool empty() const { return !best_; }
  /// The best round's estimate: offset = remote - midpoint, taken at the
  /// midpoint. Throws std::logic_error if no round was added.
  ClockSample best() const;

 private:
  std::optional<ClockSample> best_;
};

/// Maps a rank's local times to rank 0's clock: the offset linear between
/// two samples (extrapolated beyond them), constant with only one.
class ClockMap {
 public:
  ClockMap() = default;  ///< the identity (rank 0, or nothing measured)
  explicit ClockMap(const ClockSample& start) : start_(start), end_(start) {}
  ClockMap(const ClockSample& start, const ClockSample& end);

  /// Offset at `local_ns`, in ns (double: no overflow for any input).
  double offset_at(int64_t local_ns) const;
  /// `local_ns` on rank 0's clock, or nullopt if it does not fit in 64 bits.
  std::optional<int64_t> to_global(int64_t local_ns) const;
  /// Rate difference to rank 0's clock, parts per million (0 with one sample).
  double drift_ppm() const;
  /// Largest |offset| over the two samples.
  int64_t max_abs_offset() const;
  /// Error bound of the samples (half the longer round trip), -1 if unknown.
  int64_t uncertainty_ns() const;
  bool is_identity() const { return start_.offset_ns == 0 && end_.offset_ns == 0; }
  const ClockSample& start() const { return start_; }
  const ClockSample& end() const { return end_; }

 private:
  ClockSample start_{0, 0, 0}, end_{0, 0, 0};
};

/// What the correction of a set of timelines amounted to (reported by the
/// tools that read recorded timelines).
struct ClockCorrection {
  int32_t ranks = 0;            ///< ranks whose offset or drift was not zero
  int64_t max_offset_ns = 0;    ///< largest |offset| applied
  double max_drift_ppm = 0.0;   ///< largest |drift|
  int64_t uncertainty_ns = -1;  ///< largest error bound, -1 if unknown
  bool applied() const { return ranks > 0; }
  /// Folds one rank's map in.
  void add(const ClockMap& map);
  /// "clocks: no correction needed" or "clocks: 3 ranks corrected by up to
  /// 1.2 ms (drift up to 4.1 ppm, error up to 2.5 us)".
  std::string describe() const;
};

}  // namespace tracefold
