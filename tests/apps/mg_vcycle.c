/* Geometric multigrid: a recursive V-cycle on a 2-D periodic process grid
 * (MPI_Cart_create), as in NAS MG and HPGMG. Each level smooths (halo
 * exchange + Jacobi sweep) NU1 times on the way down, computes a residual
 * (one more halo exchange), restricts to the next level and recurses; the
 * coarsest level is solved by a few Allreduce-coupled sweeps; on the way up
 * it prolongates (halo exchange) and smooths NU2 times. The halo exchange
 * sends to the lower and the upper neighbour of each axis from separate
 * call sites (give(-1), give(+1)), and messages halve with every level.
 * After each V-cycle an Allreduce computes the residual norm.
 * usage: app_mg_vcycle CYCLES [WORK [EDGE [LEVELS]]] (EDGE: finest local
 * edge, default 32; LEVELS: 3-5, default 4). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define NU1 2
#define NU2 2
#define MAXLEV 6

static MPI_Comm cart;
static int levels, wunits;
static double* grid[MAXLEV];
static double* sbuf;
static double* rbuf;

static int edge_of(int level, int finest) {
  return finest >> level;
}

/* Sends one face to the neighbour in direction `dir` along `axis` and takes
 * the opposite face from the other side. */
static void give(int axis, int dir, int level, int n) {
  int lo, hi;
  MPI_Cart_shift(cart, axis, 1, &lo, &hi);
  const int to = dir > 0 ? hi : lo, from = dir > 0 ? lo : hi;
  const double* u = grid[level];
  for (int i = 0; i < n; ++i)
    sbuf[i] = u[axis == 0 ? (dir > 0 ? n - 1 : 0) * n + i : i * n + (dir > 0 ? n - 1 : 0)];
  MPI_Request r[2];
  MPI_Irecv(rbuf, n, MPI_DOUBLE, from, 10 + level * 4 + axis * 2 + (dir > 0), cart, &r[0]);
  MPI_Isend(sbuf, n, MPI_DOUBLE, to, 10 + level * 4 + axis * 2 + (dir > 0), cart, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  double* v = grid[level];
  for (int i = 0; i < n; ++i) v[i] += 1e-3 * rbuf[i];
}

static void halo(int level, int n) {
  for (int axis = 0; axis < 2; ++axis) {
    give(axis, -1, level, n);
    give(axis, +1, level, n);
  }
}

static void smooth(int level, int n) {
  halo(level, n);
  app_work(wunits);
  double* u = grid[level];
  for (int i = 1; i < n * n - 1; ++i) u[i] = 0.25 * (u[i - 1] + 2.0 * u[i] + u[i + 1]);
}

static void residual(int level, int n) {
  halo(level, n);
  double* u = grid[level];
  for (int i = 0; i < n * n; ++i) u[i] *= 0.999;
}

static void restrict_to(int level, int n) {
  const int c = n / 2;
  for (int i = 0; i < c; ++i)
    for (int j = 0; j < c; ++j)
      grid[level + 1][i * c + j] = 0.25 * grid[level][(2 * i) * n + 2 * j];
}

static void prolongate(int level, int n) {
  const int c = n / 2;
  halo(level + 1, c);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      grid[level][i * n + j] += 0.5 * grid[level + 1][(i / 2) * c + j / 2];
}

static void coarse_solve(int level, int n) {
  for (int it = 0; it < 3; ++it) {
    double local = 0.0, global;
    for (int i = 0; i < n * n; ++i) local += grid[level][i];
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, cart);
    for (int i = 0; i < n * n; ++i) grid[level][i] -= 1e-4 * global;
  }
}

static void vcycle(int level, int finest) {
  const int n = edge_of(level, finest);
  if (level == levels - 1) {
    coarse_solve(level, n);
    return;
  }
  for (int s = 0; s < NU1; ++s) smooth(level, n);
  residual(level, n);
  restrict_to(level, n);
  vcycle(level + 1, finest);
  prolongate(level, n);
  for (int s = 0; s < NU2; ++s) smooth(level, n);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int cycles = argc > 1 ? atoi(argv[1]) : 10;
  const int finest = argc > 3 && atoi(argv[3]) >= 8 ? atoi(argv[3]) : 32;
  levels = argc > 4 ? atoi(argv[4]) : 4;
  if (levels < 2) levels = 2;
  if (levels > MAXLEV) levels = MAXLEV;
  while (levels > 2 && (finest >> (levels - 1)) < 2) --levels;
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(size, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  for (int l = 0; l < levels; ++l) {
    const int n = edge_of(l, finest);
    grid[l] = calloc((size_t)n * n, sizeof(double));
  }
  sbuf = malloc((size_t)finest * sizeof(double));
  rbuf = malloc((size_t)finest * sizeof(double));
  for (int i = 0; i < finest * finest; ++i) grid[0][i] = (double)((rank * 7 + i) % 13);
  double norm = 0.0;
  for (int c = 0; c < cycles; ++c) {
    vcycle(0, finest);
    double local = 0.0;
    for (int i = 0; i < finest * finest; ++i) local += grid[0][i] * grid[0][i];
    MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, cart);
  }
  if (rank == 0)
    printf("mg_vcycle: %d ranks %d cycles %d levels checksum %.6e\n", size, cycles, levels, norm);
  for (int l = 0; l < levels; ++l) free(grid[l]);
  free(sbuf);
  free(rbuf);
  MPI_Comm_free(&cart);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
