// Signal-safety soak for the sampler (tests/mpi/sample_soak.sh,
// scripts/bench-sample-soak.sh): while every thread is sampled, one thread
// allocates and frees, one loads and unloads libm, one throws and catches
// C++ exceptions through a few frames, and the main thread calls MPI. All
// of them work a fixed number of rounds, so rank 0's result line is the
// same with or without sampling. Each thread's running time goes to
// stderr, for comparison with the samples taken. Meanwhile the main thread
// starts and joins short-lived threads, and at the end it counts the
// process's POSIX timers (/proc/self/timers): a sampler that leaked one
// per thread would show hundreds.
//   app_sample_soak STEPS   (about 0.1 s of work per step per thread)
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

namespace {

int steps = 10;

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Job {
  void* (*fn)(void*);
  void* out;
  double seconds;
};

void* timed(void* p) {
  auto* job = static_cast<Job*>(p);
  const double t0 = now();
  job->fn(job->out);
  job->seconds = now() - t0;
  return nullptr;
}

void* malloc_heavy(void* out) {
  unsigned long sum = 0;
  std::vector<void*> live(256, nullptr);
  for (long i = 0; i < steps * 200000L; ++i) {
    const std::size_t k = static_cast<std::size_t>(i * 7919) % live.size();
    std::free(live[k]);
    const std::size_t n = 16 + static_cast<std::size_t>(i % 4096);
    live[k] = std::malloc(n);
    std::memset(live[k], static_cast<int>(i & 0xFF), n);
    sum += static_cast<unsigned char*>(live[k])[n - 1];
  }
  for (void* p : live) std::free(p);
  *static_cast<unsigned long*>(out) = sum;
  return nullptr;
}

void* dlopen_heavy(void* out) {
  double sum = 0.0;
  for (long i = 0; i < steps * 100000L; ++i) {
    void* h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    auto* c = reinterpret_cast<double (*)(double)>(dlsym(h, "cos"));
    if (c) sum += c(static_cast<double>(i % 100) * 0.01);
    dlclose(h);
  }
  *static_cast<double*>(out) = sum;
  return nullptr;
}

void* short_lived(void* out) {
  *static_cast<long*>(out) += 1;
  return nullptr;
}

int timers() {
  std::FILE* f = std::fopen("/proc/self/timers", "r");
  if (!f) return -1;
  int n = 0;
  char line[256];
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "ID:", 3) == 0) ++n;
  std::fclose(f);
  return n;
}

[[gnu::noinline]] int thrower(int depth, long i) {
  if (depth == 0) {
    if (i % 3 != 2) throw std::runtime_error("soak");
    return 1;
  }
  return thrower(depth - 1, i) + 1;
}

void* exception_heavy(void* out) {
  long caught = 0;
  for (long i = 0; i < steps * 20000L; ++i) {
    try {
      caught -= thrower(static_cast<int>(i % 8), i);
    } catch (const std::exception&) {
      ++caught;
    }
  }
  *static_cast<long*>(out) = caught;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1) steps = std::atoi(argv[1]);
  unsigned long mallocs = 0;
  double cosines = 0.0;
  long exceptions = 0;
  const double t0 = now();
  pthread_t t[3];
  Job jobs[3] = {
      {malloc_heavy, &mallocs, 0}, {dlopen_heavy, &cosines, 0}, {exception_heavy, &exceptions, 0}};
  for (int k = 0; k < 3; ++k) pthread_create(&t[k], nullptr, timed, &jobs[k]);
  long total = 0;
  for (long i = 0; i < steps * 2000L; ++i) {
    long mine = i + rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long got = 0;
    MPI_Sendrecv(&mine, 1, MPI_LONG, right, 0, &got, 1, MPI_LONG, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    total += sum + got;
    if (i % 20 == 0) {
      long ran = 0;
      pthread_t s;
      if (pthread_create(&s, nullptr, short_lived, &ran) == 0) pthread_join(s, nullptr);
      total += ran;
    }
  }
  for (pthread_t& th : t) pthread_join(th, nullptr);
  std::fprintf(stderr, "sample_soak: rank %d seconds %.6f %.6f %.6f %.6f\n", rank, now() - t0,
               jobs[0].seconds, jobs[1].seconds, jobs[2].seconds);
  std::fprintf(stderr, "sample_soak: rank %d timers %d\n", rank, timers());
  if (rank == 0)
    std::printf("sample_soak: %d steps, %ld %lu %.6f %ld\n", steps, total, mallocs, cosines,
                exceptions);
  MPI_Finalize();
  return 0;
}
