/* Sampling test program (tests/mpi/sample_basic.sh): each rank runs STEPS
 * iterations of a computation of fixed size, work(), of about 0.3 s, then
 * an MPI_Allreduce (rank 0 works a quarter more, so rank 1 waits there); a
 * second thread computes in worker() meanwhile. Rank 0
 * prints a checksum on stdout; every rank prints how long each thread ran
 * on stderr, which the test compares with the number of samples taken.
 * argv[2] (optional): work()'s inner iterations (default 45 million).
 * argv[3] (optional): "stop": rank 0 stops itself (SIGSTOP, every thread)
 * for 0.4 s after its first work(), as a loaded machine takes a process
 * off its cores; a child process wakes it (SIGCONT). */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "thread_util.h"

static long inner = 45000000L;

/* Not inlined: the test looks for its name in the samples. */
__attribute__((noinline)) double work(long n, double seed) {
  double x = seed;
  for (long i = 0; i < n; ++i) x = x * 0.999999 + 1e-7 * (double)(i & 1023);
  return x;
}

/* Off every core for 0.4 s: the child sends SIGCONT once this process has
 * stopped (it polls /proc's state, so the 0.4 s start with the stop). */
static void stop_for_a_while(void) {
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child == 0) {
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)parent);
    for (int i = 0; i < 100000 && state != 'T'; ++i) {
      FILE* f = fopen(path, "r");
      if (f) {
        if (fscanf(f, "%*d %*s %c", &state) != 1) state = 0;
        fclose(f);
      }
      if (state != 'T') usleep(1000);
    }
    const struct timespec pause = {0, 400000000L};
    nanosleep(&pause, NULL);
    kill(parent, SIGCONT);
    _exit(0);
  }
  if (child < 0) return;
  raise(SIGSTOP);
  waitpid(child, NULL, 0);
}

struct worker_arg {
  int steps;
  double result, seconds;
};

__attribute__((noinline)) static void* worker(void* p) {
  struct worker_arg* a = p;
  const double t0 = now();
  double x = 1.0;
  for (int s = 0; s < a->steps; ++s) x = work(inner, x);
  a->result = x;
  a->seconds = now() - t0;
  return NULL;
}

int main(int argc, char** argv) {
  int rank = 0;
  thread_init(&argc, &argv, MPI_THREAD_FUNNELED, &rank, NULL);
  const double t0 = now();
  const int steps = argc > 1 ? atoi(argv[1]) : 4;
  if (argc > 2) inner = atol(argv[2]);
  const int stop = argc > 3 && strcmp(argv[3], "stop") == 0;
  struct worker_arg arg = {steps, 0.0, 0.0};
  const pthread_t th = thread_start(worker, &arg);
  double x = (double)rank, sum = 0.0;
  for (int s = 0; s < steps; ++s) {
    x = work(rank == 0 ? inner + inner / 4 : inner, x);
    if (stop && rank == 0 && s == 0) stop_for_a_while();
    double total = 0.0;
    MPI_Allreduce(&x, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum += total;
  }
  pthread_join(th, NULL);
  double all = 0.0;
  MPI_Allreduce(&arg.result, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double main_seconds = now() - t0;
  fprintf(stderr, "sample_work: rank %d main %.6f worker %.6f\n", rank, main_seconds, arg.seconds);
  if (rank == 0) printf("sample_work: %d steps, checksum %.6f %.6f\n", steps, sum, all);
  MPI_Finalize();
  return 0;
}
