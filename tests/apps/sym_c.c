/* Symbolization test program (tests/mpi/symbolize.sh): each MPI call's
 * line carries a marker comment the test finds with grep, and the function
 * that makes it has a name the test expects in `print` and `stats`. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double exchange_halo(double v, int rank, int size) {
  double got = 0;
  const int r = (rank + 1) % size, l = (rank + size - 1) % size;
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Status* st = MPI_STATUS_IGNORE;
  MPI_Sendrecv(&v, 1, MPI_DOUBLE, r, 7, &got, 1, MPI_DOUBLE, l, 7, w, st); /* SYM:c_sendrecv */
  return got;
}

__attribute__((noinline)) static double global_sum(double v) {
  double s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* SYM:c_allreduce */
  return s;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 5;
  double v = rank + 1, total = 0;
  for (int s = 0; s < steps; ++s) {
    v = exchange_halo(v, rank, size) * 0.5 + 1;
    total += global_sum(v);
  }
  if (rank == 0) printf("sym_c: %d ranks, %d steps, checksum %.3f\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
