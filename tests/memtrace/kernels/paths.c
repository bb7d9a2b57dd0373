/* Call paths for the tracefold-mem tests: vadd is reached along four call
 * paths (main>via_a twice from one call site, main>via_b>vadd from two call
 * sites, main>via_a from a second site), each adding N elements.
 * usage: paths N */
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

__attribute__((noinline)) void vadd(double* restrict c, const double* restrict a,
                                    const double* restrict b, long n) {
  for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
}

__attribute__((noinline)) void via_a(double* c, const double* a, const double* b, long n) {
  vadd(c, a, b, n);
  __asm__ volatile("" ::: "memory"); /* keeps the call a call, not a tail jump */
}

__attribute__((noinline)) void via_b(double* c, const double* a, const double* b, long n) {
  vadd(c, a, b, n);
  vadd(c, b, a, n);
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  if (n < 1) {
    fprintf(stderr, "usage: paths N\n");
    return 2;
  }
  double* a = calloc((size_t)n, sizeof(double));
  double* b = calloc((size_t)n, sizeof(double));
  double* c = calloc((size_t)n, sizeof(double));
  if (!a || !b || !c) return 2;
  volatile int reps = 2; /* a loop gcc cannot unroll into two call sites */
  TRACEFOLD_MEM_START();
  for (int r = 0; r < reps; r++) via_a(c, a, b, n);
  via_b(c, a, b, n);
  via_a(c, a, b, n);
  TRACEFOLD_MEM_STOP();
  printf("paths n=%ld c0=%.1f\n", n, c[0]);
  return 0;
}
