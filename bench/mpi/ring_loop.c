/* The calls of tests/apps/ring.c written by hand, as the baseline for the
 * replay's walking overhead (scripts/bench-replay.sh): every rank passes a
 * token (one MPI_LONG) to its right neighbour ITERS times with
 * MPI_Irecv + MPI_Isend + MPI_Waitall, then one MPI_Allreduce -- the same
 * calls, in the same order, that `tracefold replay --no-compute` issues for
 * a trace of `app_ring ITERS`.
 *
 * Timed like the replay's summary: from a barrier after MPI_Init to the end
 * of the last call, slowest rank. Prints on rank 0:
 *   ring_loop: N ranks, ITERS iterations, CALLS MPI calls, wall T s, R calls/s
 * CALLS counts the calls the replay counts: the ring's and the Allreduce
 * of all ranks (not MPI_Init/MPI_Finalize, MPI_Comm_rank/MPI_Comm_size, nor
 * the timing's own barrier and reduction).
 * usage: ring_loop ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = argc > 1 ? atoi(argv[1]) : 100000;
  long token = rank, sum = 0;
  for (int s = 0; s < iters; ++s) {
    long in;
    MPI_Request reqs[2];
    MPI_Irecv(&in, 1, MPI_LONG, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&token, 1, MPI_LONG, (rank + 1) % size, 7, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    token = in + 1;
    sum += in;
  }
  long total;
  MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const double mine = MPI_Wtime() - t0;
  double wall = 0.0;
  MPI_Reduce(&mine, &wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  const double calls = (double)size * (3.0 * iters + 1.0);
  if (rank == 0)
    printf(
        "ring_loop: %d ranks, %d iterations, %.0f MPI calls, wall %.6f s, %.0f calls/s (checksum "
        "%ld)\n",
        size, iters, calls, wall, calls / wall, total);
  MPI_Finalize();
  return 0;
}
