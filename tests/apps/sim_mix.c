/* Large messages in every form SMPI's replay takes: a ring of
 * Isend/Irecv/Waitall and Sendrecv, MPI_Test, blocking Send/Recv pairs,
 * and the world collectives, STEPS times. Bandwidth-bound at 1 MiB per
 * message (tests/mpi/simulate.sh). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 17) /* doubles: 1 MiB */

static double a[N], b[N], c[N];

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 4;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double sum = 0, total = 0;
  int* counts = malloc(sizeof(int) * size);
  int* displs = malloc(sizeof(int) * size);
  int* mine = malloc(sizeof(int) * size); /* what every rank sends me */
  for (int i = 0; i < size; ++i) {
    counts[i] = 16 + i;
    displs[i] = i * 64;
    mine[i] = 16 + rank;
  }
  for (int s = 0; s < steps; ++s) {
    MPI_Request reqs[2];
    int flag = 0;
    MPI_Irecv(b, N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(a, N, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[1]);
    MPI_Test(&reqs[1], &flag, MPI_STATUS_IGNORE);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(a, N, MPI_DOUBLE, left, 2, c, N, MPI_DOUBLE, right, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (rank % 2 == 0 && rank + 1 < size)
      MPI_Send(a, N / 2, MPI_DOUBLE, rank + 1, 3, MPI_COMM_WORLD);
    else if (rank % 2 == 1)
      MPI_Recv(b, N / 2, MPI_DOUBLE, rank - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sum += b[0] + c[0] + 1;
    MPI_Bcast(a, N / 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, a, 1024, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(a, b, 1024, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD);
    MPI_Alltoall(a, 64, MPI_DOUBLE, b, 64, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Alltoallv(a, counts, displs, MPI_DOUBLE, b, mine, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Gather(a, 32, MPI_DOUBLE, b, 32, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Allgather(a, 32, MPI_DOUBLE, b, 32, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Scatter(a, 32, MPI_DOUBLE, b, 32, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan(a, b, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("sim_mix: %d ranks, %d steps, checksum %.0f\n", size, steps, total);
  free(counts);
  free(displs);
  free(mine);
  MPI_Finalize();
  return 0;
}
