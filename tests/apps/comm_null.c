/* Communicator creation where some ranks get MPI_COMM_NULL. Rank 0 splits
 * with color MPI_UNDEFINED (it is in no "workers" communicator), then all
 * ranks split MPI_COMM_WORLD into even and odd halves, and rank 0..P-1
 * also dup the halves. Every step: Allreduce over the workers (ranks >= 1),
 * Allreduce over the half, Bcast over the duplicated half. Both splits are
 * collective over MPI_COMM_WORLD, so the trace must name each created
 * communicator the same way on every rank.
 * usage: app_comm_null STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  MPI_Comm workers, half, half2;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &workers);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Comm_dup(half, &half2);
  long x = rank + 1, acc = 0;
  for (int s = 0; s < steps; ++s) {
    long w = 0, h = 0;
    if (workers != MPI_COMM_NULL) MPI_Allreduce(&x, &w, 1, MPI_LONG, MPI_SUM, workers);
    MPI_Allreduce(&x, &h, 1, MPI_LONG, MPI_MAX, half);
    MPI_Bcast(&h, 1, MPI_LONG, 0, half2);
    x = (x * 7 + w + h + s) % 10007;
    acc = (acc + x) % 100003;
  }
  long total = 0;
  MPI_Reduce(&acc, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("comm_null: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  if (workers != MPI_COMM_NULL) MPI_Comm_free(&workers);
  MPI_Comm_free(&half2);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
