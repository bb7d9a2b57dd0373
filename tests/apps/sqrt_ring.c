/* A 1-D code whose loops follow the square root of P: P = q*q ranks on a
 * ring, and every step passes a block around the ring in q stages (one
 * MPI_Sendrecv to the right neighbour per stage), as a code that splits
 * its data into q panels but talks on a ring does; then an Allreduce.
 * Strong scaling by default: a fixed N values split into q panels, so a
 * stage moves N/q values (N = 60); with N < 0, -N values a stage whatever
 * q is. usage: app_sqrt_ring STEPS [WORK [N]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 4;
  const int n = argc > 3 ? atoi(argv[3]) : 60;
  int q = 1;
  while (q * q < size) ++q;
  if (q * q != size || n == 0 || (n > 0 && n % q != 0)) {
    if (rank == 0)
      fprintf(stderr, "sqrt_ring: %d ranks is no square, or %d does not divide\n", size, n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int len = n > 0 ? n / q : -n;
  double* out = malloc(sizeof(double) * (size_t)len);
  double* in = malloc(sizeof(double) * (size_t)len);
  for (int i = 0; i < len; ++i) out[i] = (double)((rank * 3 + i) % 11);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double sum = 0.0;
  for (int s = 0; s < steps; ++s) {
    for (int stage = 0; stage < q; ++stage) {
      MPI_Sendrecv(out, len, MPI_DOUBLE, right, 5, in, len, MPI_DOUBLE, left, 5, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      for (int i = 0; i < len; ++i) out[i] = 0.5 * (out[i] + in[i]);
    }
    app_work(wunits);
    double local = out[0], all = 0.0;
    MPI_Allreduce(&local, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum += all;
  }
  if (rank == 0)
    printf("sqrt_ring: %d ranks (q = %d), %d a stage, checksum %.9e\n", size, q, len, sum);
  free(out);
  free(in);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
