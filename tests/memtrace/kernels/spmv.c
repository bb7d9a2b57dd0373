/* CSR sparse matrix-vector product (irregular: the column indices come from
 * a pseudo-random generator) for the folding tests: y = A x, N rows of 1 to
 * 8 non-zeros each, repeated R times.
 * usage: spmv N R (1 <= N <= 100000) */
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

__attribute__((noinline)) void spmv(long n, const long* rowptr, const long* col, const double* val,
                                    const double* x, double* y) {
  for (long i = 0; i < n; i++) {
    double t = 0;
    for (long k = rowptr[i]; k < rowptr[i + 1]; k++) t += val[k] * x[col[k]];
    y[i] = t;
  }
}

int main(int argc, char** argv) {
  long n = argc > 2 ? atol(argv[1]) : 0;
  long r = argc > 2 ? atol(argv[2]) : 0;
  if (n < 1 || n > 100000 || r < 1) {
    fprintf(stderr, "usage: spmv N R (1 <= N <= 100000)\n");
    return 2;
  }
  long* rowptr = malloc((size_t)(n + 1) * sizeof(long));
  long* col = malloc((size_t)n * 8 * sizeof(long));
  double* val = malloc((size_t)n * 8 * sizeof(double));
  double* x = malloc((size_t)n * sizeof(double));
  double* y = malloc((size_t)n * sizeof(double));
  if (!rowptr || !col || !val || !x || !y) return 2;
  unsigned long seed = 12345;
  rowptr[0] = 0;
  for (long i = 0; i < n; i++) {
    seed = seed * 6364136223846793005UL + 1442695040888963407UL;
    long nz = (long)(seed >> 33) % 8 + 1;
    rowptr[i + 1] = rowptr[i] + nz;
    for (long k = rowptr[i]; k < rowptr[i + 1]; k++) {
      seed = seed * 6364136223846793005UL + 1442695040888963407UL;
      col[k] = (long)(seed >> 33) % n;
      val[k] = 1.0;
    }
    x[i] = 1.0;
  }
  TRACEFOLD_MEM_START();
  for (long it = 0; it < r; it++) spmv(n, rowptr, col, val, x, y);
  TRACEFOLD_MEM_STOP();
  printf("%g\n", y[n - 1]);
  return 0;
}
