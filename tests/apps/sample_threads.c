/* Sampling test program with threads (tests/mpi/sample_threads.sh), 2
 * ranks, MPI_THREAD_MULTIPLE. Besides the main thread each rank starts,
 * each only once the one before it runs (so the sampler numbers them in
 * this order): C, which computes and never calls MPI; A; and B. A and B
 * exchange messages with the other rank's A and B, STEPS times: one side
 * computes in work() and sends, the other waits in MPI_Recv. Rank 0's A
 * and rank 1's B compute; rank 1's A and rank 0's B wait. So on each
 * rank one of A and B waits in MPI while the other computes, and the
 * ranks mirror each other. B makes its first call before A makes any (A
 * waits for it), so the recorder numbers B's stream before A's, the
 * reverse of the sampler's order; and as the two ranks' A and B record
 * mirrored calls, the trace's order of them (by what they recorded)
 * differs from the first-call order on one of the ranks.
 * Rank 0 prints a checksum on stdout; every rank prints C's running time
 * on stderr. argv[2] (optional): work()'s inner iterations (default 15
 * million, about 0.1 s). Usage: sample_threads [steps] [iterations] */
#include <mpi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_util.h"

static int rank, steps;
static long inner = 15000000L;
static sem_t started, b_called;
static double results[3], c_seconds;

__attribute__((noinline)) double work(long n, double seed) {
  double x = seed;
  for (long i = 0; i < n; ++i) x = x * 0.999999 + 1e-7 * (double)(i & 1023);
  return x;
}

/* One side computes and sends, the other receives: `computes` says which
 * this thread is. */
static double exchange(int computes, int step) {
  double x = 0.0;
  if (computes) {
    x = work(inner, 1.0 + step);
    MPI_Send(&x, 1, MPI_DOUBLE, rank ^ 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&x, 1, MPI_DOUBLE, rank ^ 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return x;
}

__attribute__((noinline)) static void* thread_c(void* p) {
  (void)p;
  sem_post(&started);
  const double t0 = now();
  double x = 1.0;
  for (int s = 0; s < steps; ++s) x = work(inner, x);
  results[0] = x;
  c_seconds = now() - t0;
  return NULL;
}

__attribute__((noinline)) static void* thread_a(void* p) {
  (void)p;
  sem_post(&started);
  sem_wait(&b_called);
  double sum = 0.0;
  for (int s = 0; s < steps; ++s) sum += exchange(rank == 0, s);
  results[1] = sum;
  return NULL;
}

__attribute__((noinline)) static void* thread_b(void* p) {
  (void)p;
  sem_post(&started);
  double sum = 0.0;
  for (int s = 0; s < steps; ++s) {
    sum += exchange(rank == 1, s);
    if (s == 0) sem_post(&b_called);
  }
  results[2] = sum;
  return NULL;
}

int main(int argc, char** argv) {
  int size = 0;
  const int provided = thread_init(&argc, &argv, MPI_THREAD_MULTIPLE, &rank, &size);
  steps = argc > 1 ? atoi(argv[1]) : 4;
  if (argc > 2) inner = atol(argv[2]);
  if (provided < MPI_THREAD_MULTIPLE || size != 2) {
    if (rank == 0) printf("sample_threads: needs 2 ranks and MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 1;
  }
  sem_init(&started, 0, 0);
  sem_init(&b_called, 0, 0);
  void* (*fns[3])(void*) = {thread_c, thread_a, thread_b};
  pthread_t th[3];
  for (int k = 0; k < 3; ++k) {
    th[k] = thread_start(fns[k], NULL);
    sem_wait(&started);
  }
  for (int k = 0; k < 3; ++k) pthread_join(th[k], NULL);
  double mine = results[0] + results[1] + results[2], all = 0.0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  fprintf(stderr, "sample_threads: rank %d c %.6f\n", rank, c_seconds);
  if (rank == 0) printf("sample_threads: %d steps, checksum %.6f\n", steps, all);
  MPI_Finalize();
  return 0;
}
