/* Strong scaling on a non-square process grid: a fixed GX x GY periodic
 * domain (default 720 x 360) split over the MPI_Dims_create grid of the
 * run (rows x columns, e.g. 2x2, 3x2, 3x3, 4x3). Each rank owns GX/columns
 * x GY/rows cells, so the messages to the north and south neighbours carry
 * GX/columns values and those to the west and east GY/rows: each size
 * depends on one grid dimension only, and the two differ whenever the grid
 * is not square. Every step: Irecv/Isend from one call site each over the
 * four directions, Waitall, a Jacobi sweep; an Allreduce of the residual
 * every fifth step and a checksum Allreduce at the end.
 * usage: app_strong2d STEPS [WORK [GX [GY]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

enum { NORTH, SOUTH, WEST, EAST };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const int gx = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 720;
  const int gy = argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : 360;
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int rows = dims[0], cols = dims[1];
  const int nx = gx / cols, ny = gy / rows;
  const int r = rank / cols, c = rank % cols;
  const int nb[4] = {((r + rows - 1) % rows) * cols + c, ((r + 1) % rows) * cols + c,
                     r * cols + (c + cols - 1) % cols, r * cols + (c + 1) % cols};
  const int from[4] = {SOUTH, NORTH, EAST, WEST}; /* tag: direction seen by the receiver */
  const int len[4] = {nx, nx, ny, ny};
  const int w = nx + 2;
  double* u = calloc((size_t)(nx + 2) * (ny + 2), sizeof(double));
  double* sbuf = malloc(sizeof(double) * 2 * (nx + ny));
  double* rbuf = malloc(sizeof(double) * 2 * (nx + ny));
  const int off[4] = {0, nx, 2 * nx, 2 * nx + ny};
  for (int i = 1; i <= ny; ++i)
    for (int j = 1; j <= nx; ++j) u[i * w + j] = (double)((rank * 13 + i * 5 + j) % 11);

  double resid = 0.0;
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < nx; ++k) {
      sbuf[off[NORTH] + k] = u[1 * w + k + 1];
      sbuf[off[SOUTH] + k] = u[ny * w + k + 1];
    }
    for (int k = 0; k < ny; ++k) {
      sbuf[off[WEST] + k] = u[(k + 1) * w + 1];
      sbuf[off[EAST] + k] = u[(k + 1) * w + nx];
    }
    MPI_Request reqs[8];
    for (int d = 0; d < 4; ++d)
      MPI_Irecv(rbuf + off[d], len[d], MPI_DOUBLE, nb[d], from[d], MPI_COMM_WORLD, &reqs[d]);
    for (int d = 0; d < 4; ++d)
      MPI_Isend(sbuf + off[d], len[d], MPI_DOUBLE, nb[d], d, MPI_COMM_WORLD, &reqs[4 + d]);
    MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE);
    app_work(wunits);
    for (int k = 0; k < nx; ++k) {
      u[k + 1] = rbuf[off[NORTH] + k];
      u[(ny + 1) * w + k + 1] = rbuf[off[SOUTH] + k];
    }
    for (int k = 0; k < ny; ++k) {
      u[(k + 1) * w] = rbuf[off[WEST] + k];
      u[(k + 1) * w + nx + 1] = rbuf[off[EAST] + k];
    }
    double local = 0.0;
    for (int i = 1; i <= ny; ++i)
      for (int j = 1; j <= nx; ++j) {
        const double nv =
            0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
        local += (nv - u[i * w + j]) * (nv - u[i * w + j]);
        u[i * w + j] = nv; /* Gauss-Seidel order: deterministic, good enough */
      }
    if (s % 5 == 4) MPI_Allreduce(&local, &resid, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double sum = 0.0, total = 0.0;
  for (int i = 1; i <= ny; ++i)
    for (int j = 1; j <= nx; ++j) sum += u[i * w + j];
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("strong2d: %d ranks (%dx%d), %dx%d cells each, checksum %.6e resid %.6e\n", size, rows,
           cols, nx, ny, total, resid);
  free(u);
  free(sbuf);
  free(rbuf);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
