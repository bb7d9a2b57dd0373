/* Non-rectangular loops for the folding tests (seed 001 could not fold
 * them): a triangular loop (j < i) over an N x N matrix, and a loop whose
 * inner trip count varies from one outer iteration to the next (i % 7 + 1,
 * so the trip counts repeat with period 7 whatever N).
 * usage: loops N (1 <= N <= 512) */
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

#define NMAX 512
static double m[NMAX][NMAX];
static double v[NMAX * 8];
static double s[NMAX];

__attribute__((noinline)) void triangular(long n) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < i; j++) m[i][j] = m[j][i] + 1.0;
}

__attribute__((noinline)) void varying(long n) {
  for (long i = 0; i < n; i++) {
    double t = 0;
    for (long j = 0; j < i % 7 + 1; j++) t += v[i + j];
    s[i] = t;
  }
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  if (n < 1 || n > NMAX) {
    fprintf(stderr, "usage: loops N (1 <= N <= %d)\n", NMAX);
    return 2;
  }
  TRACEFOLD_MEM_START();
  triangular(n);
  varying(n);
  TRACEFOLD_MEM_STOP();
  printf("%g %g\n", m[n - 1][0], s[n - 1]);
  return 0;
}
