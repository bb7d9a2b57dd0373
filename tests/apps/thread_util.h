/* Start-up and small helpers shared by the threaded test programs
 * (thread_*.c, threads.c, sample_*.c, omp_halo.c). Static inline, so each
 * program gets its own copy and the build needs no extra library. Of the
 * calls the recorder traces only MPI_Init_thread (and MPI_Finalize where
 * MPI_THREAD_MULTIPLE is missing) is made here: the calls the tests look
 * at stay at the programs' own call sites. */
#ifndef TRACEFOLD_TESTS_APPS_THREAD_UTIL_H
#define TRACEFOLD_TESTS_APPS_THREAD_UTIL_H

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

/* The most threads thread_run_all starts at once. */
enum { kThreadUtilMax = 16 };

/* MPI_Init_thread asking for `level`, then this process's rank and the
 * size of MPI_COMM_WORLD into `rank` and `size` (NULL: not asked).
 * Returns the level MPI provided. */
static inline int thread_init(int* argc, char*** argv, int level, int* rank, int* size) {
  int provided = 0;
  MPI_Init_thread(argc, argv, level, &provided);
  if (rank) MPI_Comm_rank(MPI_COMM_WORLD, rank);
  if (size) MPI_Comm_size(MPI_COMM_WORLD, size);
  return provided;
}

/* thread_init for MPI_THREAD_MULTIPLE. Returns 1 when MPI provides it.
 * Otherwise rank 0 prints "NAME: MPI_THREAD_MULTIPLE not provided (LEVEL)"
 * on stdout, MPI is finalized and 0 is returned, and the program is to
 * exit 0: its tests grep "not provided" and report themselves not run. */
static inline int thread_init_multiple(int* argc, char*** argv, const char* name, int* rank,
                                       int* size) {
  const int provided = thread_init(argc, argv, MPI_THREAD_MULTIPLE, rank, size);
  if (provided >= MPI_THREAD_MULTIPLE) return 1;
  if (*rank == 0) printf("%s: MPI_THREAD_MULTIPLE not provided (%d)\n", name, provided);
  MPI_Finalize();
  return 0;
}

/* fn(arg) on a thread of its own. A thread that cannot start aborts the
 * run: the program's calls would not be the ones its test expects. */
static inline pthread_t thread_start(void* (*fn)(void*), void* arg) {
  pthread_t th;
  if (pthread_create(&th, NULL, fn, arg) != 0) {
    fprintf(stderr, "thread_start: pthread_create failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return th;
}

/* fn((void*)(long)k) for k = first .. first + n - 1, each on a thread of
 * its own, all started before any is joined; returns once all have
 * ended. */
static inline void thread_run_all(void* (*fn)(void*), int first, int n) {
  pthread_t th[kThreadUtilMax];
  if (n > kThreadUtilMax) {
    fprintf(stderr, "thread_run_all: %d threads, at most %d\n", n, kThreadUtilMax);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int k = 0; k < n; ++k) th[k] = thread_start(fn, (void*)(long)(first + k));
  for (int k = 0; k < n; ++k) pthread_join(th[k], NULL);
}

/* Seconds on CLOCK_MONOTONIC (the clock the timeline and samples use). */
static inline double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sleeps `ms` milliseconds, whatever signals interrupt it. */
static inline void pause_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

#endif
