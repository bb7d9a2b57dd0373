/* Calls MPI_Abort in the middle of the run. Every step is a ring
 * MPI_Sendrecv plus an MPI_Allreduce; at step STEPS/2 the last rank calls
 * MPI_Abort(MPI_COMM_WORLD, 3) while the others wait in the next
 * collective. usage: app_abort STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  long x = rank, in = 0, sum = 0;
  for (int s = 0; s < steps; ++s) {
    MPI_Sendrecv(&x, 1, MPI_LONG, (rank + 1) % size, 5, &in, 1, MPI_LONG, (rank + size - 1) % size,
                 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (s == steps / 2 && rank == size - 1) {
      fprintf(stderr, "abort: rank %d calls MPI_Abort at step %d\n", rank, s);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    x = (x + sum) % 1009;
  }
  if (rank == 0)
    printf("abort: %d ranks, %d steps, checksum %ld (MPI_Abort did not happen)\n", size, steps, x);
  MPI_Finalize();
  return 0;
}
