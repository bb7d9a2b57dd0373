/* A run whose output directory disappears before MPI_Finalize, as when a
 * job's own clean-up step moves its work directory away. Every step is a
 * ring MPI_Sendrecv plus an MPI_Allreduce; after the last step rank 0
 * renames DIR to DIR.moved, so the trace cannot be written where it was
 * asked for although every rank finishes normally.
 * usage: app_outdir_gone STEPS DIR */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    x = (x + sum) % 1000003;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && argc > 2) {
    char moved[4096];
    snprintf(moved, sizeof moved, "%s.moved", argv[2]);
    if (rename(argv[2], moved) != 0) perror("outdir_gone: rename");
    printf("outdir_gone: %d steps, x=%ld, moved %s away\n", steps, x, argv[2]);
  }
  MPI_Finalize();
  return 0;
}
