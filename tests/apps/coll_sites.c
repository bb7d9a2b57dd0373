/* One collective, called from different call sites on different ranks
 * (seed 000, Figure 4.4): every step, all ranks do a ring exchange, then
 * even ranks call MPI_Allreduce directly and odd ranks through a helper
 * function; at the end rank 0 calls MPI_Barrier directly and the others
 * through another helper. Each pair is one collective at run time, though
 * the trace sees two call sites (the helpers are kept out of line so the
 * compiler cannot merge the calls).
 * usage: app_coll_sites STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void reduce_helper(const long* in, long* out) {
  MPI_Allreduce(in, out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
}

__attribute__((noinline)) static void barrier_helper(void) {
  MPI_Barrier(MPI_COMM_WORLD);
}

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
    if (rank % 2 == 0)
      MPI_Allreduce(&local, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    else
      reduce_helper(&local, &sum);
    total += sum;
  }
  if (rank == 0)
    MPI_Barrier(MPI_COMM_WORLD);
  else
    barrier_helper();
  if (rank == 0) printf("coll_sites: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
