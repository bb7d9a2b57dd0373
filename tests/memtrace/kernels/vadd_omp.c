/* OpenMP vector add for the tracefold-mem tests: a static schedule over T
 * threads, N divisible by T, so every thread stores exactly N/T elements of
 * C inside the outlined loop body.
 * usage: OMP_NUM_THREADS=T vadd_omp N */
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

__attribute__((noinline)) void vadd(double* restrict c, const double* restrict a,
                                    const double* restrict b, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  double* a = n > 0 ? calloc((size_t)n, sizeof(double)) : NULL;
  double* b = n > 0 ? calloc((size_t)n, sizeof(double)) : NULL;
  double* c = n > 0 ? calloc((size_t)n, sizeof(double)) : NULL;
  if (!a || !b || !c) {
    fprintf(stderr, "usage: vadd_omp N\n");
    return 2;
  }
  for (long i = 0; i < n; i++) a[i] = b[i] = 1.0;
  TRACEFOLD_MEM_START();
  vadd(c, a, b, n);
  TRACEFOLD_MEM_STOP();
  double sum = 0;
  for (long i = 0; i < n; i++) sum += c[i];
  printf("vadd_omp n=%ld sum=%.1f\n", n, sum);
  return 0;
}
