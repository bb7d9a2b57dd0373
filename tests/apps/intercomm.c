/* Intercommunicators: the even and odd ranks form two groups
 * (MPI_Comm_split), joined by MPI_Intercomm_create; every step each rank
 * exchanges with the same-position rank of the other group over the
 * intercommunicator (MPI_Sendrecv) and the groups reduce across it
 * (MPI_Allreduce: each side gets the other side's sum); then
 * MPI_Intercomm_merge makes one intracommunicator again for a final
 * MPI_Allreduce. Needs an even number of ranks.
 * usage: app_intercomm STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  if (size % 2 != 0) {
    if (rank == 0) fprintf(stderr, "intercomm: needs an even number of ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int color = rank % 2;
  MPI_Comm half, inter, merged;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  /* Local leader: rank 0 of each half; remote leader in MPI_COMM_WORLD:
   * world rank 1 for the evens, 0 for the odds. */
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 99, &inter);
  int hrank;
  MPI_Comm_rank(half, &hrank);
  long x = rank + 1, got = 0, other = 0, check = 0;
  for (int s = 0; s < steps; ++s) {
    MPI_Sendrecv(&x, 1, MPI_LONG, hrank, 1, &got, 1, MPI_LONG, hrank, 1, inter, MPI_STATUS_IGNORE);
    MPI_Allreduce(&x, &other, 1, MPI_LONG, MPI_SUM, inter);
    x = (x + got + other) % 1009;
  }
  MPI_Intercomm_merge(inter, color, &merged);
  MPI_Allreduce(&x, &check, 1, MPI_LONG, MPI_SUM, merged);
  if (rank == 0) printf("intercomm: %d ranks, %d steps, checksum %ld\n", size, steps, check);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
