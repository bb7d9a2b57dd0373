// Built-in statistics (TRACEFOLD_STATS, `record --stats`) and the registry
// programs add their own to (include/tracefold/record.hpp).
#include <sys/resource.h>

#include <climits>
#include <ctime>

#include "recorder_impl.hpp"
#include "tracefold/analysis_basic.hpp"

namespace tracefold::record {

namespace {

class BytesStatistic final : public Statistic {
 public:
  std::string name() const override { return "bytes"; }
  void start() override {}
  int64_t end(const Event& ev) override { return static_cast<int64_t>(event_bytes(ev)); }
};

// Per thread: under MPI_THREAD_MULTIPLE two threads may be between start()
// and end() at once, and each counts its own faults.
TRACEFOLD_STATIC_TLS constinit thread_local int64_t tl_faults_before = 0;

class MinorFaultsStatistic final : public Statistic {
 public:
  std::string name() const override { return "minflt"; }
  void start() override { tl_faults_before = faults(); }
  int64_t end(const Event&) override { return faults() - tl_faults_before; }

 private:
  static int64_t faults() {
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt;
  }
};

// -1 until the thread's first call has returned (or MPI_Init marked it):
// the first value of a thread is then its processor time since it started.
TRACEFOLD_STATIC_TLS constinit thread_local int64_t tl_cpu_last_exit = -1;
TRACEFOLD_STATIC_TLS constinit thread_local int64_t tl_cpu_enter = 0;

// The calling thread's processor time between its previous call's return
// and this call's entry: the computation the program did, without the time
// its rank waited for a core. The wall-clock compute time of an
// oversubscribed run holds that waiting too, and a replay that spins for it
// on a loaded machine waits for a core again on top (docs/replay.md
// "Processor-time computation").
class ComputeCpuStatistic final : public Statistic {
 public:
  std::string name() const override { return std::string(kComputeCpuStatistic); }
  void start() override { tl_cpu_enter = thread_cpu_ns(); }
  int64_t end(const Event&) override {
    if (tl_cpu_last_exit < 0) return tl_cpu_enter;
    return std::max<int64_t>(0, tl_cpu_enter - tl_cpu_last_exit - read_cost());
  }

 private:
  // The processor clock is a system call (about a microsecond in a virtual
  // machine), and between the two readings that bound a computation lies
  // one reading's worth of it: the least difference of back-to-back
  // readings, taken off each value so calls in a row show no computation.
  static int64_t read_cost() {
    static const int64_t cost = [] {
      int64_t least = INT64_MAX;
      for (int i = 0; i < 32; ++i) {
        const int64_t a = thread_cpu_ns(), b = thread_cpu_ns();
        least = std::min(least, b - a);
      }
      return least;
    }();
    return cost;
  }
};

}  // namespace

void mark_compute_cpu() {
  tl_cpu_last_exit = thread_cpu_ns();
}

StatisticRegistry& statistics() {
  static auto* r = [] {
    auto* reg = new StatisticRegistry;
    reg->available.push_back(std::make_unique<BytesStatistic>());
    reg->available.push_back(std::make_unique<MinorFaultsStatistic>());
    reg->available.push_back(std::make_unique<ComputeCpuStatistic>());
    return reg;
  }();
  return *r;
}

void register_statistic(std::unique_ptr<Statistic> statistic) {
  auto& reg = statistics();
  std::lock_guard lock(reg.mu);
  reg.available.push_back(std::move(statistic));
}

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace tracefold::record
