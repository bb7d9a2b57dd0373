/* Ring: every rank passes a token to its right neighbour, STEPS times. */
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
  const int steps = argc > 1 ? atoi(argv[1]) : 100;
  long token = rank, sum = 0;
  for (int s = 0; s < steps; ++s) {
    long in;
    MPI_Request reqs[2];
    MPI_Irecv(&in, 1, MPI_LONG, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&token, 1, MPI_LONG, (rank + 1) % size, 7, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    token = in + 1;
    app_work(wunits);
    sum += in;
  }
  long total;
  MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("ring: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
