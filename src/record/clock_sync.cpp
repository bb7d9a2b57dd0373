// Clock samples for `record --timeline`: the offset of this rank's clock
// to rank 0's, measured at MPI_Init and at MPI_Finalize (clock_sync.hpp
// has the model), and the test hook that skews one rank's clock.

#include <cstring>
#include <string>
#include <vector>

#include "recorder_impl.hpp"

namespace tracefold::record {

// TRACEFOLD_TEST_CLOCK_SKEW_NS=R:OFFSET[:PPM] (a test hook, documented in
// docs/recording.md): rank R's timeline clock reads OFFSET ns ahead and
// runs PPM parts per million fast, as if it were on another host. Only
// the timeline sees it; the folded trace's durations are unchanged.
void Recorder::read_clock_skew(int64_t t0) {
  const char* v = env("TRACEFOLD_TEST_CLOCK_SKEW_NS");
  if (!v) return;
  char* end = nullptr;
  const long skew_rank_arg = std::strtol(v, &end, 10);
  long long offset = 0;
  double ppm = 0.0;
  bool ok = end != v && *end == ':';
  if (ok) {
    const char* o = end + 1;
    offset = std::strtoll(o, &end, 10);
    ok = end != o && (*end == 0 || *end == ':');
    if (ok && *end == ':') {
      const char* p = end + 1;
      ppm = std::strtod(p, &end);
      ok = end != p && *end == 0 && ppm > -1e5 && ppm < 1e5;
    }
  }
  if (!ok) {
    if (rank == 0)
      std::fprintf(stderr,
                   "tracefold: TRACEFOLD_TEST_CLOCK_SKEW_NS='%s' is not RANK:OFFSET_NS[:PPM]; "
                   "ignored\n",
                   v);
    return;
  }
  skew_rank = static_cast<int>(skew_rank_arg);
  if (skew_rank != rank) return;
  skew_ns = offset;
  skew_ppm = ppm;
  skew_origin_ns = t0;
}

// Collective over the private communicator. Ranks on rank 0's host read
// the very same CLOCK_MONOTONIC: their offset is exactly 0, better than
// any estimate, and they skip the exchange. Others ping-pong a few rounds
// with rank 0, one rank after the other, and keep the shortest round trip.
ClockSample Recorder::clock_sample() {
  constexpr int kTag = 7, kRounds = 8;
  char host0[MPI_MAX_PROCESSOR_NAME] = {}, mine[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  PMPI_Get_processor_name(mine, &len);
  std::memcpy(host0, mine, sizeof host0);
  PMPI_Bcast(host0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, private_comm);
  // Under the skew hook the skewed rank's clock is another host's clock
  // (and if rank 0's is skewed, every other rank's is foreign to it).
  int remote = std::strncmp(host0, mine, MPI_MAX_PROCESSOR_NAME) != 0 ||
               (skew_rank >= 0 && (rank == skew_rank || skew_rank == 0));
  std::vector<int> remotes(static_cast<std::size_t>(rank == 0 ? size : 1));
  PMPI_Gather(&remote, 1, MPI_INT, remotes.data(), 1, MPI_INT, 0, private_comm);
  OffsetEstimator best;
  for (int peer = 1; peer < size; ++peer) {
    if (rank == 0 && !remotes[static_cast<std::size_t>(peer)]) continue;
    if (rank == peer && !remote) continue;
    if (rank == 0) {
      for (int k = 0; k < kRounds; ++k) {
        int64_t ping = 0;
        PMPI_Recv(&ping, 1, MPI_INT64_T, peer, kTag, private_comm, MPI_STATUS_IGNORE);
        const int64_t t = skewed(now_ns());
        PMPI_Send(&t, 1, MPI_INT64_T, peer, kTag, private_comm);
      }
    } else if (rank == peer) {
      for (int k = 0; k < kRounds; ++k) {
        const int64_t sent = skewed(now_ns());
        int64_t remote_t = 0;
        PMPI_Send(&sent, 1, MPI_INT64_T, 0, kTag, private_comm);
        PMPI_Recv(&remote_t, 1, MPI_INT64_T, 0, kTag, private_comm, MPI_STATUS_IGNORE);
        best.add_round(sent, remote_t, skewed(now_ns()));
      }
    }
  }
  if (!best.empty()) return best.best();
  return ClockSample{0, skewed(now_ns()), 0};
}

}  // namespace tracefold::record
