/* One collective, called from different source lines on different ranks
 * (seed 000, Figure 4.4): every step, even ranks do a ring exchange and
 * reach the Allreduce from one branch, odd ranks reach it from another;
 * rank 0 alone calls the closing Barrier from its own line. Each call is
 * one collective at run time, though the trace sees separate call sites.
 * usage: app_coll_sites STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  long local = rank + 1, sum = 0, total = 0, in = 0;
  for (int s = 0; s < steps; ++s) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(&local, 1, MPI_LONG, right, 1, &in, 1, MPI_LONG, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    local = (local + in) % 1000;
    if (rank % 2 == 0) {
      MPI_Allreduce(&local, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    } else {
      MPI_Allreduce(&local, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    total += sum;
  }
  if (rank == 0)
    MPI_Barrier(MPI_COMM_WORLD);
  else
    MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("coll_sites: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
