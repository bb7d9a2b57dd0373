/* Rank 0's parameters go to every rank by MPI_Bcast as the very first call
 * after MPI_Init, with no work before it on any rank; then a few steps of
 * a toy relaxation with an MPI_Allreduce of the residual each. Nothing is
 * late by design, so `tracefold analyze` should find no Late Broadcast:
 * what it finds there is what the recording's start-up left
 * (tests/mpi/analyze_startup.sh).
 *
 *   app_bcast_first [STEPS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

struct params {
  int steps, cells;
  double relax;
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  struct params p = {argc > 1 ? atoi(argv[1]) : 10, 4096, 0.5};
  MPI_Bcast(&p, (int)sizeof p, MPI_BYTE, 0, MPI_COMM_WORLD);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double* u = malloc((size_t)p.cells * sizeof(double));
  for (int k = 0; k < p.cells; ++k) u[k] = (double)((k * 7 + rank) % 13);
  double residual = 0;
  for (int s = 0; s < p.steps; ++s) {
    double local = 0;
    for (int k = 1; k + 1 < p.cells; ++k) {
      const double next = (1 - p.relax) * u[k] + p.relax * 0.5 * (u[k - 1] + u[k + 1]);
      local += (next - u[k]) * (next - u[k]);
      u[k] = next;
    }
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("relaxation: %d steps on %d ranks, residual %.6e\n", p.steps, size, residual);
  free(u);
  MPI_Finalize();
  return 0;
}
