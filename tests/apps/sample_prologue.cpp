// A program whose MPI calls spend long in the recorder's wrapper before
// their enter time: it registers a statistic, `slow_start`, whose start()
// (run by the wrapper before it takes the call's enter time) spins for
// 8 ms, longer than the slack tests/apps/samples_check.cpp allows a sample
// before the call it names. Each of STEPS steps computes 2 ms, then calls
// MPI_Barrier. Recorded with `--sample 1ms --stats slow_start`, a sample
// taken in that spin must be computation before the call, not inside it
// (tests/mpi/sample_basic.sh). The statistic is registered through the
// preloaded recorder, found with dlsym: the program links no tracefold.
// usage: app_sample_prologue STEPS
#include <dlfcn.h>
#include <mpi.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "tracefold/record.hpp"

namespace {

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

void spin(double s) {
  for (const double end = now() + s; now() < end;) {
  }
}

class SlowStart final : public tracefold::record::Statistic {
 public:
  std::string name() const override { return "slow_start"; }
  void start() override { spin(8e-3); }
  int64_t end(const tracefold::Event&) override { return 0; }
};

}  // namespace

int main(int argc, char** argv) {
  using Register = void (*)(std::unique_ptr<tracefold::record::Statistic>);
  // The mangled name of tracefold::record::register_statistic.
  if (auto reg = reinterpret_cast<Register>(dlsym(
          RTLD_DEFAULT,
          "_ZN9tracefold6record18register_statisticESt10unique_ptrINS0_9StatisticESt14default_"
          "deleteIS2_EE")))
    reg(std::make_unique<SlowStart>());
  MPI_Init(&argc, &argv);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10;
  for (int s = 0; s < steps; ++s) {
    spin(2e-3);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("sample_prologue: %d steps\n", steps);
  MPI_Finalize();
  return 0;
}
