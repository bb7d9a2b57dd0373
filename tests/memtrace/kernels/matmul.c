/* Matrix multiply C = A B (ijk order, doubles) for the cache simulator's
 * check against cachegrind. The matrices are static arrays so that the data
 * lie at the same addresses under both tools (heap blocks do not:
 * tracefold-mem allocates them itself). B's columns are walked with a
 * stride of a row, so for N above about 64 B does not fit a 32 KiB L1 and
 * the misses depend on which lines LRU keeps.
 * usage: matmul N (1 <= N <= 128) */
#include <stdio.h>
#include <stdlib.h>

#define NMAX 128
static double A[NMAX * NMAX], B[NMAX * NMAX], C[NMAX * NMAX];

__attribute__((noinline)) void matmul(long n) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      double s = 0;
      for (long k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
      C[i * n + j] = s;
    }
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  if (n < 1 || n > NMAX) {
    fprintf(stderr, "usage: matmul N (1 <= N <= %d)\n", NMAX);
    return 2;
  }
  for (long i = 0; i < n * n; i++) {
    A[i] = (double)(i % 7);
    B[i] = (double)(i % 5);
  }
  matmul(n);
  double sum = 0;
  for (long i = 0; i < n * n; i++) sum += C[i];
  printf("matmul n=%ld sum=%.1f\n", n, sum);
  return 0;
}
