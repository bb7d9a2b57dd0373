/* Strided sweeps for the clang front end's tests: thread k (0..T-1, created
 * in that order) reads one double per 64-byte line of its own static,
 * line-aligned region of M lines, twice (two calls of `sweep`), then stores
 * its sum. So `sweep` makes exactly M loads of 8 bytes per call, and the
 * cache misses of its load can be worked out by hand. The threads run one
 * after the other in the reverse of their creation order (each waits on its
 * own semaphore, posted by the thread created after it), so a recorder
 * numbering threads by when they first record gets the numbers backwards.
 * usage: strided T M */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

#define MAX_T 8
#define MAX_M 4096
#define LINE_DOUBLES 8

static double a[MAX_T][MAX_M * LINE_DOUBLES] __attribute__((aligned(64)));
static double result[MAX_T * LINE_DOUBLES] __attribute__((aligned(64)));
static long lines;
static sem_t go[MAX_T];

__attribute__((noinline)) double sweep(const double* p, long m) {
  double s = 0;
  for (long i = 0; i < m; i++) s += p[i * LINE_DOUBLES];
  return s;
}

static void* worker(void* arg) {
  long k = (long)arg;
  sem_wait(&go[k]);
  double s = sweep(a[k], lines);
  /* Memory may have changed for all the compiler knows: it must call sweep
   * again rather than double the first sum. */
  __asm__ volatile("" ::: "memory");
  s += sweep(a[k], lines);
  result[k * LINE_DOUBLES] = s;
  if (k > 0) sem_post(&go[k - 1]);
  return NULL;
}

int main(int argc, char** argv) {
  int t = argc > 2 ? atoi(argv[1]) : 0;
  lines = argc > 2 ? atol(argv[2]) : 0;
  if (t < 1 || t > MAX_T || lines < 1 || lines > MAX_M) {
    fprintf(stderr, "usage: strided T(1..%d) M(1..%d)\n", MAX_T, MAX_M);
    return 2;
  }
  for (int k = 0; k < t; k++)
    for (long i = 0; i < lines; i++) a[k][i * LINE_DOUBLES] = (double)(k + 1);
  pthread_t id[MAX_T];
  for (int k = 0; k < t; k++)
    if (sem_init(&go[k], 0, 0) != 0) return 3;
  TRACEFOLD_MEM_START();
  for (long k = 0; k < t; k++)
    if (pthread_create(&id[k], NULL, worker, (void*)k) != 0) return 3;
  sem_post(&go[t - 1]);
  for (int k = 0; k < t; k++)
    if (pthread_join(id[k], NULL) != 0) return 3;
  TRACEFOLD_MEM_STOP();
  double sum = 0;
  for (int k = 0; k < t; k++) sum += result[k * LINE_DOUBLES];
  printf("strided t=%d m=%ld sum=%.1f\n", t, lines, sum);
  return 0;
}
