/* Threaded vector add over one shared set of arrays for the address
 * normalisation tests: thread k (0..T-1, created in that order) adds the
 * slice [kN, (k+1)N) and then marks done[k], a static. So the threads'
 * streams in vadd differ only by where their slice starts.
 * usage: vadd_slices T N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

long done[64];

__attribute__((noinline)) void vadd(double* restrict c, const double* restrict a,
                                    const double* restrict b, long n) {
  for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
}

__attribute__((noinline)) void mark(int k) {
  done[k] = 1;
}

typedef struct {
  double *a, *b, *c;
  long n;
  int k;
} Slice;

static void* worker(void* arg) {
  Slice* s = arg;
  vadd(s->c, s->a, s->b, s->n);
  mark(s->k);
  return NULL;
}

int main(int argc, char** argv) {
  int t = argc > 2 ? atoi(argv[1]) : 0;
  long n = argc > 2 ? atol(argv[2]) : 0;
  if (t < 1 || t > 64 || n < 1) {
    fprintf(stderr, "usage: vadd_slices T(1..64) N\n");
    return 2;
  }
  double* a = calloc((size_t)(t * n), sizeof(double));
  double* b = calloc((size_t)(t * n), sizeof(double));
  double* c = calloc((size_t)(t * n), sizeof(double));
  Slice* s = calloc((size_t)t, sizeof(Slice));
  pthread_t* id = calloc((size_t)t, sizeof(pthread_t));
  if (!a || !b || !c || !s || !id) return 2;
  for (long i = 0; i < t * n; i++) a[i] = b[i] = 1.0;
  TRACEFOLD_MEM_START();
  for (int k = 0; k < t; k++) {
    s[k] = (Slice){a + k * n, b + k * n, c + k * n, n, k};
    if (pthread_create(&id[k], NULL, worker, &s[k]) != 0) return 3;
  }
  for (int k = 0; k < t; k++)
    if (pthread_join(id[k], NULL) != 0) return 3;
  TRACEFOLD_MEM_STOP();
  double sum = 0;
  long marks = 0;
  for (long i = 0; i < t * n; i++) sum += c[i];
  for (int k = 0; k < t; k++) marks += done[k];
  printf("vadd_slices t=%d n=%ld sum=%.1f done=%ld\n", t, n, sum, marks);
  free(a);
  free(b);
  free(c);
  free(s);
  free(id);
  return 0;
}
