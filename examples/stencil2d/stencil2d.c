/* A 2D 5-point stencil (Jacobi sweeps) on a non-periodic process grid:
 * each step exchanges halos with up to four neighbours (Irecv/Isend/Waitall)
 * and checks convergence with an Allreduce every 10 steps.
 * Usage: stencil2d [steps] [local_n] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 100;
  const int n = argc > 2 ? atoi(argv[2]) : 64;
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int px = dims[1], py = dims[0];
  const int x = rank % px, y = rank / px;
  const int north = y > 0 ? rank - px : MPI_PROC_NULL;
  const int south = y < py - 1 ? rank + px : MPI_PROC_NULL;
  const int west = x > 0 ? rank - 1 : MPI_PROC_NULL;
  const int east = x < px - 1 ? rank + 1 : MPI_PROC_NULL;
  const int nbr[4] = {north, south, west, east};

  double* u = calloc((size_t)(n + 2) * (n + 2), sizeof *u);
  double* v = calloc((size_t)(n + 2) * (n + 2), sizeof *v);
  double* sendbuf = malloc(4 * (size_t)n * sizeof *sendbuf);
  double* recvbuf = malloc(4 * (size_t)n * sizeof *recvbuf);
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j) u[i * (n + 2) + j] = (rank + 1) * 0.001 * (i + j);
  double residual = 0;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i) {
      sendbuf[0 * n + i] = u[1 * (n + 2) + i + 1];
      sendbuf[1 * n + i] = u[n * (n + 2) + i + 1];
      sendbuf[2 * n + i] = u[(i + 1) * (n + 2) + 1];
      sendbuf[3 * n + i] = u[(i + 1) * (n + 2) + n];
    }
    MPI_Request reqs[8];
    int k = 0;
    for (int d = 0; d < 4; ++d)
      if (nbr[d] != MPI_PROC_NULL)
        MPI_Irecv(recvbuf + d * n, n, MPI_DOUBLE, nbr[d], d ^ 1, MPI_COMM_WORLD, &reqs[k++]);
    for (int d = 0; d < 4; ++d)
      if (nbr[d] != MPI_PROC_NULL)
        MPI_Isend(sendbuf + d * n, n, MPI_DOUBLE, nbr[d], d, MPI_COMM_WORLD, &reqs[k++]);
    MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; ++i) {
      if (north != MPI_PROC_NULL) u[0 * (n + 2) + i + 1] = recvbuf[0 * n + i];
      if (south != MPI_PROC_NULL) u[(n + 1) * (n + 2) + i + 1] = recvbuf[1 * n + i];
      if (west != MPI_PROC_NULL) u[(i + 1) * (n + 2) + 0] = recvbuf[2 * n + i];
      if (east != MPI_PROC_NULL) u[(i + 1) * (n + 2) + n + 1] = recvbuf[3 * n + i];
    }
    double local = 0;
    for (int i = 1; i <= n; ++i)
      for (int j = 1; j <= n; ++j) {
        const int c = i * (n + 2) + j;
        v[c] = 0.25 * (u[c - 1] + u[c + 1] + u[c - (n + 2)] + u[c + (n + 2)]);
        local += (v[c] - u[c]) * (v[c] - u[c]);
      }
    double* t = u;
    u = v;
    v = t;
    if (s % 10 == 9) MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("stencil2d: %d ranks (%dx%d), %d steps, residual %.6e\n", size, py, px, steps, residual);
  free(u);
  free(v);
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return 0;
}
