/* A ring with a rank-dependent minor pattern, like NPB MG's extra
 * partners on top of its regular torus exchange: every step each rank
 * passes a token to its right neighbour (Irecv, Isend, Waitall) and an
 * Allreduce sums a norm; in addition ranks 0 and 1 swap a small message
 * every step (MPI_Sendrecv), which no other rank does. No row-major model
 * explains ranks 0 and 1 apart from their neighbours; the snippet filter
 * of `tracefold extrapolate --snippet` drops the swap.
 * usage: app_ring_minor STEPS */
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
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  long token = rank, sum = 0;
  double norm = 0.0;
  for (int s = 0; s < steps; ++s) {
    long in;
    MPI_Request reqs[2];
    MPI_Irecv(&in, 1, MPI_LONG, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&token, 1, MPI_LONG, (rank + 1) % size, 7, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    token = in + 1;
    sum += in;
    if (rank < 2 && size > 1) {
      long mine = sum, theirs;
      MPI_Sendrecv(&mine, 1, MPI_LONG, 1 - rank, 9, &theirs, 1, MPI_LONG, 1 - rank, 9,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += theirs % 3;
    }
    app_work(wunits);
    double local = (double)sum, all;
    MPI_Allreduce(&local, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    norm += all;
  }
  if (rank == 0) printf("ring_minor: %d ranks, %d steps, checksum %.1f\n", size, steps, norm);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
