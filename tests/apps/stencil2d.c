/* 2D 5-point Jacobi stencil on a process grid from MPI_Dims_create.
 * Halo exchange with Irecv/Isend/Waitall, a residual Allreduce every 10
 * steps, a final checksum Allreduce. Built twice: PERIODIC=1 (torus, every
 * rank has four neighbours) and PERIODIC=0 (boundary ranks skip the missing
 * neighbours, so corner, edge and interior ranks behave differently).
 * usage: app_stencil2d_* STEPS [WORK [EDGE [GLOBAL]]]
 * (EDGE: local block edge, default 24; benchmarks use larger blocks.
 * GLOBAL > 0: strong scaling, a GLOBALxGLOBAL domain shared by all ranks,
 * so the local edge and the halo messages are GLOBAL / (grid columns);
 * for square rank counts, which keep blocks square.) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#ifndef PERIODIC
#define PERIODIC 1
#endif
#define IDX(i, j) ((i) * (NX + 2) + (j))

enum { NORTH, SOUTH, WEST, EAST };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 100;
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int global = argc > 4 ? atoi(argv[4]) : 0;
  const int NX = global > 0                      ? global / dims[1]
                 : argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3])
                                                 : 24,
            NY = NX;
  const int row = rank / dims[1], col = rank % dims[1];
  int nb[4];
  if (PERIODIC) {
    nb[NORTH] = ((row + dims[0] - 1) % dims[0]) * dims[1] + col;
    nb[SOUTH] = ((row + 1) % dims[0]) * dims[1] + col;
    nb[WEST] = row * dims[1] + (col + dims[1] - 1) % dims[1];
    nb[EAST] = row * dims[1] + (col + 1) % dims[1];
  } else {
    nb[NORTH] = row > 0 ? rank - dims[1] : -1;
    nb[SOUTH] = row < dims[0] - 1 ? rank + dims[1] : -1;
    nb[WEST] = col > 0 ? rank - 1 : -1;
    nb[EAST] = col < dims[1] - 1 ? rank + 1 : -1;
  }
  /* the direction a message travels in, seen from the receiver */
  const int opposite[4] = {SOUTH, NORTH, EAST, WEST};

  double* u = calloc((NX + 2) * (NY + 2), sizeof(double));
  double* v = calloc((NX + 2) * (NY + 2), sizeof(double));
  double* sendbuf[4];
  double* recvbuf[4];
  for (int d = 0; d < 4; ++d) {
    sendbuf[d] = malloc((NX > NY ? NX : NY) * sizeof(double));
    recvbuf[d] = malloc((NX > NY ? NX : NY) * sizeof(double));
  }
  for (int i = 1; i <= NY; ++i)
    for (int j = 1; j <= NX; ++j) u[IDX(i, j)] = (double)((rank * 31 + i * 7 + j) % 17);
  /* fixed boundary values outside the global domain (non-periodic case) */
  for (int j = 0; j < NX + 2; ++j) u[IDX(0, j)] = v[IDX(0, j)] = row == 0 ? 1.0 : 0.0;

  double resid = 0.0;
  for (int s = 0; s < steps; ++s) {
    MPI_Request reqs[8];
    int n = 0;
    for (int d = 0; d < 4; ++d)
      if (nb[d] >= 0) {
        const int len = (d == NORTH || d == SOUTH) ? NX : NY;
        MPI_Irecv(recvbuf[d], len, MPI_DOUBLE, nb[d], opposite[d], MPI_COMM_WORLD, &reqs[n++]);
      }
    for (int k = 0; k < NX; ++k) {
      sendbuf[NORTH][k] = u[IDX(1, k + 1)];
      sendbuf[SOUTH][k] = u[IDX(NY, k + 1)];
    }
    for (int k = 0; k < NY; ++k) {
      sendbuf[WEST][k] = u[IDX(k + 1, 1)];
      sendbuf[EAST][k] = u[IDX(k + 1, NX)];
    }
    for (int d = 0; d < 4; ++d)
      if (nb[d] >= 0) {
        const int len = (d == NORTH || d == SOUTH) ? NX : NY;
        MPI_Isend(sendbuf[d], len, MPI_DOUBLE, nb[d], d, MPI_COMM_WORLD, &reqs[n++]);
      }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    app_work(wunits);
    if (nb[NORTH] >= 0)
      for (int k = 0; k < NX; ++k) u[IDX(0, k + 1)] = recvbuf[NORTH][k];
    if (nb[SOUTH] >= 0)
      for (int k = 0; k < NX; ++k) u[IDX(NY + 1, k + 1)] = recvbuf[SOUTH][k];
    if (nb[WEST] >= 0)
      for (int k = 0; k < NY; ++k) u[IDX(k + 1, 0)] = recvbuf[WEST][k];
    if (nb[EAST] >= 0)
      for (int k = 0; k < NY; ++k) u[IDX(k + 1, NX + 1)] = recvbuf[EAST][k];
    double local = 0.0;
    for (int i = 1; i <= NY; ++i)
      for (int j = 1; j <= NX; ++j) {
        v[IDX(i, j)] =
            0.25 * (u[IDX(i - 1, j)] + u[IDX(i + 1, j)] + u[IDX(i, j - 1)] + u[IDX(i, j + 1)]);
        const double dlt = v[IDX(i, j)] - u[IDX(i, j)];
        local += dlt * dlt;
      }
    for (int i = 1; i <= NY; ++i)
      for (int j = 1; j <= NX; ++j) u[IDX(i, j)] = v[IDX(i, j)];
    if (s % 10 == 9) MPI_Allreduce(&local, &resid, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double sum = 0.0, total = 0.0;
  for (int i = 1; i <= NY; ++i)
    for (int j = 1; j <= NX; ++j) sum += u[IDX(i, j)];
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("stencil2d %s: %d ranks (%dx%d), %d steps, checksum %.9e resid %.6e\n",
           PERIODIC ? "periodic" : "nonperiodic", size, dims[0], dims[1], steps, total, resid);
  free(u);
  free(v);
  for (int d = 0; d < 4; ++d) {
    free(sendbuf[d]);
    free(recvbuf[d]);
  }
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
