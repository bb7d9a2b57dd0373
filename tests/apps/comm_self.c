/* A benchmark suite's driver: every rank exchanges with its ring
 * neighbours and joins a world reduction for STEPS steps; then the last
 * rank alone runs the suite's single-process test for STEPS steps on
 * MPI_COMM_SELF (barriers, an MPI_Allreduce and an MPI_Gather) and on a
 * duplicate of it (MPI_Bcast, MPI_Allreduce), which it frees, while the
 * others wait in a world barrier. The program never creates
 * MPI_COMM_SELF: the trace names it by its members, a different id on
 * each rank.
 * usage: app_comm_self STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const int solo = size - 1;
  long x = rank + 1, acc = 0;
  /* The suite's tests of all ranks: a ring exchange and a reduction. */
  for (int s = 0; s < steps; ++s) {
    long left = 0, sum = 0;
    MPI_Sendrecv(&x, 1, MPI_LONG, (rank + 1) % size, 1, &left, 1, MPI_LONG,
                 (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&left, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    x = (x * 7 + sum + s) % 10007;
    acc = (acc + x) % 100003;
  }
  /* Its single-process test, on one rank while the others wait. */
  if (rank == solo) {
    MPI_Comm self2;
    MPI_Comm_dup(MPI_COMM_SELF, &self2);
    for (int s = 0; s < steps; ++s) {
      double v[4] = {(double)x, (double)s, 1, 2}, r[4], g[2], m[4];
      MPI_Barrier(MPI_COMM_SELF);
      MPI_Allreduce(v, r, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
      MPI_Gather(v, 2, MPI_DOUBLE, g, 2, MPI_DOUBLE, 0, MPI_COMM_SELF);
      MPI_Barrier(MPI_COMM_SELF);
      MPI_Bcast(r, 4, MPI_DOUBLE, 0, self2);
      MPI_Allreduce(r, m, 4, MPI_DOUBLE, MPI_MAX, self2);
      x = ((long)(m[0] + g[1]) * 3 + x) % 10007;
      acc = (acc + x) % 100003;
    }
    MPI_Comm_free(&self2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  long total = 0;
  MPI_Reduce(&acc, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("comm_self: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
