/* Threaded vector add for the tracefold-mem tests: thread k (1..T, created
 * in that order) adds k*N elements of its own arrays, so its stream must
 * hold 2kN loads and kN stores inside vadd; the main thread adds nothing.
 * usage: vadd_threads T N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

__attribute__((noinline)) void vadd(double* restrict c, const double* restrict a,
                                    const double* restrict b, long n) {
  for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
}

typedef struct {
  double *a, *b, *c;
  long n;
} Work;

static void* worker(void* arg) {
  Work* w = arg;
  vadd(w->c, w->a, w->b, w->n);
  return NULL;
}

int main(int argc, char** argv) {
  int t = argc > 2 ? atoi(argv[1]) : 0;
  long n = argc > 2 ? atol(argv[2]) : 0;
  if (t < 1 || t > 64 || n < 1) {
    fprintf(stderr, "usage: vadd_threads T(1..64) N\n");
    return 2;
  }
  Work w[64];
  pthread_t id[64];
  for (int k = 0; k < t; k++) {
    w[k].n = (k + 1) * n;
    w[k].a = calloc((size_t)w[k].n, sizeof(double));
    w[k].b = calloc((size_t)w[k].n, sizeof(double));
    w[k].c = calloc((size_t)w[k].n, sizeof(double));
    if (!w[k].a || !w[k].b || !w[k].c) return 2;
    for (long i = 0; i < w[k].n; i++) w[k].a[i] = w[k].b[i] = (double)(k + 1);
  }
  TRACEFOLD_MEM_START();
  /* Joined one by one: each thread has exited before the next is created,
   * so Valgrind reuses its thread id while the streams must not. */
  for (int k = 0; k < t; k++) {
    if (pthread_create(&id[k], NULL, worker, &w[k]) != 0) return 3;
    if (k % 2 == 1 && pthread_join(id[k], NULL) != 0) return 3;
  }
  for (int k = 0; k < t; k++)
    if (k % 2 == 0 && pthread_join(id[k], NULL) != 0) return 3;
  TRACEFOLD_MEM_STOP();
  double sum = 0;
  for (int k = 0; k < t; k++)
    for (long i = 0; i < w[k].n; i++) sum += w[k].c[i];
  printf("vadd_threads t=%d n=%ld sum=%.1f\n", t, n, sum);
  return 0;
}
