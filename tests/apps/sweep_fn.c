/* Wavefront sweeps written as one function per direction, as Sweep3D-like
 * codes often are: on a 2-D process grid, sweep_pp() starts at rank 0 and
 * runs towards +x and +y, sweep_mp() from the +x end towards -x and +y,
 * sweep_pm() and sweep_mm() likewise. Each sweep pipelines KBLOCKS blocks:
 * for every block a rank receives from its upstream x and y neighbours
 * (blocking MPI_Recv), computes, and sends downstream (blocking MPI_Send);
 * every direction has its own tag. One iteration runs the four in order,
 * then an Allreduce of the flux in main. usage: app_sweep_fn STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define KBLOCKS 3
#define LEN 16

static int rows, cols, row, col, wunits;
static double face[LEN], in[LEN];

/* The rank at (r, c), or -1 off the grid. */
static int at(int r, int c) {
  return r < 0 || r >= rows || c < 0 || c >= cols ? -1 : r * cols + c;
}

/* One sweep towards dx along x (columns) and dy along y (rows), written
 * out in a function of its own per direction (the MPI calls' innermost
 * frame is that function, as in the codes this imitates). */
#define SWEEP(name, dx, dy, tag)                                                                \
  __attribute__((noinline)) static void name(void) {                                            \
    const int upx = at(row, col - (dx)), upy = at(row - (dy), col);                             \
    const int downx = at(row, col + (dx)), downy = at(row + (dy), col);                         \
    for (int k = 0; k < KBLOCKS; ++k) {                                                         \
      if (upx >= 0) MPI_Recv(in, LEN, MPI_DOUBLE, upx, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); \
      for (int i = 0; i < LEN; ++i) face[i] = 0.5 * face[i] + 0.25 * in[i] + k;                 \
      if (upy >= 0) MPI_Recv(in, LEN, MPI_DOUBLE, upy, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); \
      for (int i = 0; i < LEN; ++i) face[i] = 0.5 * face[i] + 0.25 * in[i];                     \
      app_work(wunits);                                                                         \
      if (downx >= 0) MPI_Send(face, LEN, MPI_DOUBLE, downx, tag, MPI_COMM_WORLD);              \
      if (downy >= 0) MPI_Send(face, LEN, MPI_DOUBLE, downy, tag, MPI_COMM_WORLD);              \
    }                                                                                           \
  }

SWEEP(sweep_pp, +1, +1, 11)
SWEEP(sweep_mp, -1, +1, 12)
SWEEP(sweep_pm, +1, -1, 13)
SWEEP(sweep_mm, -1, -1, 14)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  rows = dims[0];
  cols = dims[1];
  row = rank / cols;
  col = rank % cols;
  for (int i = 0; i < LEN; ++i) face[i] = rank + i;
  double flux = 0.0, total = 0.0;
  for (int it = 0; it < steps; ++it) {
    sweep_pp();
    sweep_mp();
    sweep_pm();
    sweep_mm();
    double local = face[0] + face[LEN - 1];
    MPI_Allreduce(&local, &flux, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    total += flux;
  }
  if (rank == 0)
    printf("sweep_fn: %d ranks (%dx%d), %d iterations, flux %.6e\n", size, rows, cols, steps,
           total);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
