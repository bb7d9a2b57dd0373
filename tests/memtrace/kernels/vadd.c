/* Vector add C[i] = A[i] + B[i] for the tracefold-mem tests: the kernel
 * makes exactly 2N loads and N stores of 8 bytes (built at -O1 without
 * vectorisation, so the loop keeps everything else in registers).
 * usage: vadd N [EXIT_STATUS] */
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

__attribute__((noinline)) void vadd(double* restrict c, const double* restrict a,
                                    const double* restrict b, long n) {
  for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  if (argc < 2 || atol(argv[1]) <= 0) {
    fprintf(stderr, "usage: vadd N [EXIT_STATUS]\n");
    return 2;
  }
  long n = atol(argv[1]);
  double* a = malloc(sizeof(double) * (size_t)n);
  double* b = malloc(sizeof(double) * (size_t)n);
  double* c = malloc(sizeof(double) * (size_t)n);
  if (!a || !b || !c) return 2;
  for (long i = 0; i < n; i++) {
    a[i] = (double)i;
    b[i] = 2.0 * (double)i;
  }
  TRACEFOLD_MEM_START();
  vadd(c, a, b, n);
  TRACEFOLD_MEM_STOP();
  double sum = 0;
  for (long i = 0; i < n; i++) sum += c[i];
  printf("vadd n=%ld sum=%.1f\n", n, sum);
  free(a);
  free(b);
  free(c);
  return argc > 2 ? atoi(argv[2]) : 0;
}
