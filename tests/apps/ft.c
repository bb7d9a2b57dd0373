/* FT-like: a distributed transform whose transpose is an MPI_Alltoall,
 * followed by a checksum MPI_Allreduce (two doubles, like a complex sum)
 * every step. Parameters are broadcast from rank 0 first.
 * usage: app_ft STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define BLOCK 32 /* doubles per destination rank */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int params[2] = {argc > 1 ? atoi(argv[1]) : 10, BLOCK};
  MPI_Bcast(params, 2, MPI_INT, 0, MPI_COMM_WORLD);
  const int steps = params[0], block = params[1];
  const int n = block * size;
  double* a = malloc(n * sizeof(double));
  double* b = malloc(n * sizeof(double));
  for (int i = 0; i < n; ++i) a[i] = (double)((rank * n + i) % 13) / 13.0;
  double sums[2] = {0, 0}, chk[2] = {0, 0};
  for (int s = 0; s < steps; ++s) {
    app_work(wunits);
    /* "1D FFTs" along the local dimension: a cheap mixing step */
    for (int i = 0; i < n; ++i)
      b[i] = 0.5 * a[i] + 0.25 * a[(i + 1) % n] + 0.25 * a[(i + n - 1) % n];
    MPI_Alltoall(b, block, MPI_DOUBLE, a, block, MPI_DOUBLE, MPI_COMM_WORLD);
    sums[0] = sums[1] = 0.0;
    for (int i = 0; i < n; i += 3) {
      sums[0] += a[i];
      sums[1] += a[i] * (i % 2 ? -1.0 : 1.0);
    }
    MPI_Allreduce(sums, chk, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("ft: %d ranks, %d steps, checksum (%.9e, %.9e)\n", size, steps, chk[0], chk[1]);
  free(a);
  free(b);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
