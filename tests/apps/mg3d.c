/* Geometric multigrid on a 3-D periodic process grid, shaped like NPB MG:
 * P = 2^k ranks on MPI_Dims_create's grid (4 = 2x2x1, 8 = 2x2x2,
 * 16 = 4x2x2, 32 = 4x4x2, in MPI order; rank = x + px*(y + py*z), x
 * fastest), a global grid of G_d points along dimension d, and LEVELS
 * levels of G_d >> l points. A V-cycle runs a fixed schedule of
 * (computation, level) pairs -- smooth and residual on the way down,
 * two smoothings on the coarsest level, interpolation and smoothing on
 * the way up -- and every entry ends in one halo exchange of the level:
 * six faces, one Irecv/Isend/Waitall per direction, each at its own call
 * site. After each cycle an Allreduce takes the norm.
 *
 * Where a level has fewer points along d than ranks (G_d >> l < p_d), the
 * points sit on every s-th rank along d (s = p_d / (G_d >> l)): the other
 * ranks idle on that level (no exchange at all), and the active ones
 * exchange with the active ranks s apart, wrapping around -- the distance
 * doubles with every coarser level. A dimension left with one active rank
 * needs no exchange (its periodic face is its own); a dimension keeps one
 * point on its coarsest levels.
 *
 * Weak scaling by default: LOCAL points per dimension on every rank at the
 * finest level (G_d = LOCAL * p_d). MODE 1: strong scaling, a fixed
 * G_d = LOCAL points along every dimension (a power of two, at least the
 * largest p_d).
 * MODE + 2: levels with idle ranks exchange through comm3_ex, a copy of
 * comm3 at call sites of their own that only the ranks active on such a
 * level reach (a code may keep separate exchange code for its coarse
 * levels; NPB MG has a comm3_ex of its own); MODE + 4: those levels
 * exchange nothing (the same program without its coarse exchanges, to
 * compare a lossy extrapolation with). MODE + 8: a grid with edges instead
 * of a periodic one (Dirichlet boundaries, as in HPGMG or a non-periodic
 * MG): a neighbour beyond an edge is MPI_PROC_NULL, on every level (on a
 * coarse one the last busy rank along d is the last multiple of its
 * stride), and every busy rank makes the same calls.
 * DIMS 2 puts the ranks on MPI_Dims_create's 2-D grid instead (pz = 1: the
 * z faces are the rank's own, never exchanged).
 * usage: app_mg3d CYCLES [WORK [MODE [LOCAL [LEVELS [DIMS]]]]]
 *        defaults: MODE 0, LOCAL 2 (weak) or 8 (strong), LEVELS 3, DIMS 3 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define MAXLEV 8

static int p[3], c[3]; /* ranks and my coordinate along x, y, z */
static int glob[3];    /* points along each dimension, finest level */
static int levels, wunits, coarse, edges;
static double* sbuf;
static double* rbuf;
static double acc;

static int rank_of(const int* co) {
  return co[0] + p[0] * (co[1] + p[1] * co[2]);
}

/* ranks between two active ones along d on level l (1: all active) */
/* points along d on level l; a dimension keeps one point at least */
static int points(int d, int l) {
  const int g = glob[d] >> l;
  return g > 0 ? g : 1;
}

static int stride(int d, int l) {
  return points(d, l) >= p[d] ? 1 : p[d] / points(d, l);
}

static int local_points(int d, int l) {
  return points(d, l) >= p[d] ? points(d, l) / p[d] : 1;
}

static int active(int l) {
  for (int d = 0; d < 3; ++d)
    if (c[d] % stride(d, l) != 0) return 0;
  return 1;
}

static int neighbour(int d, int dir, int l) {
  int co[3] = {c[0], c[1], c[2]};
  co[d] += dir * stride(d, l);
  if (edges && (co[d] < 0 || co[d] >= p[d])) return MPI_PROC_NULL;
  co[d] = (co[d] % p[d] + p[d]) % p[d];
  return rank_of(co);
}

static int face(int d, int l) {
  int f = 1;
  for (int e = 0; e < 3; ++e)
    if (e != d) f *= local_points(e, l);
  return f;
}

/* One face: receive from the opposite neighbour, send to the one in
 * direction dir. Each direction is its own call site (the six calls in
 * comm3 below). */
#define GIVE(d, dir)                                                                       \
  do {                                                                                     \
    if (p[d] / stride(d, l) > 1) {                                                         \
      const int n = face(d, l), tag = 10 + 2 * (d) + ((dir) > 0);                          \
      MPI_Request r[2];                                                                    \
      for (int i = 0; i < n; ++i) sbuf[i] = acc + i;                                       \
      MPI_Irecv(rbuf, n, MPI_DOUBLE, neighbour(d, -(dir), l), tag, MPI_COMM_WORLD, &r[0]); \
      MPI_Isend(sbuf, n, MPI_DOUBLE, neighbour(d, dir, l), tag, MPI_COMM_WORLD, &r[1]);    \
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);                                              \
      for (int i = 0; i < n; ++i) acc += 1e-6 * rbuf[i];                                   \
    }                                                                                      \
  } while (0)

/* Some rank idles on level l. */
static int has_idle(int l) {
  for (int d = 0; d < 3; ++d)
    if (stride(d, l) > 1) return 1;
  return 0;
}

__attribute__((noinline)) static void comm3_ex(int l) {
  GIVE(0, -1);
  GIVE(0, +1);
  GIVE(1, -1);
  GIVE(1, +1);
  GIVE(2, -1);
  GIVE(2, +1);
}

__attribute__((noinline)) static void comm3(int l) {
  if (!active(l)) return;
  if (coarse && has_idle(l)) {
    if (coarse == 1) comm3_ex(l);
    return;
  }
  GIVE(0, -1);
  GIVE(0, +1);
  GIVE(1, -1);
  GIVE(1, +1);
  GIVE(2, -1);
  GIVE(2, +1);
}

static void compute(int kind, int l) {
  if (!active(l)) return;
  const int n = local_points(0, l) * local_points(1, l) * local_points(2, l);
  app_work(wunits >> l);
  for (int i = 0; i < n; ++i) acc = 0.999 * acc + 1e-3 * (double)((kind + i + l) % 5);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int cycles = argc > 1 ? atoi(argv[1]) : 4;
  const int mode = argc > 3 ? atoi(argv[3]) : 0;
  const int strong = mode & 1;
  coarse = (mode >> 1) & 3;
  edges = (mode >> 3) & 1;
  const int local = argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : (strong ? 8 : 2);
  levels = argc > 5 ? atoi(argv[5]) : 3;
  if (levels < 1) levels = 1;
  if (levels > MAXLEV) levels = MAXLEV;
  const int ndims = argc > 6 && atoi(argv[6]) == 2 ? 2 : 3;
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(size, ndims, dims);
  if (ndims == 2) {
    dims[2] = dims[1];
    dims[1] = dims[0];
    dims[0] = 1;
  }
  for (int d = 0; d < 3; ++d) {
    p[d] = dims[2 - d];
    glob[d] = strong ? local : local * p[d];
  }
  c[0] = rank % p[0];
  c[1] = rank / p[0] % p[1];
  c[2] = rank / (p[0] * p[1]);
  for (int d = 0; d < 3; ++d) {
    /* powers of two only, and at least one point a rank at the finest level */
    if ((p[d] & (p[d] - 1)) || (glob[d] & (glob[d] - 1)) || glob[d] < p[d]) {
      if (rank == 0) fprintf(stderr, "mg3d: %d ranks or %d points do not fit\n", size, local);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  int biggest = 1;
  for (int d = 0; d < 3; ++d)
    if (face(d, 0) > biggest) biggest = face(d, 0);
  sbuf = malloc(sizeof(double) * (size_t)biggest);
  rbuf = malloc(sizeof(double) * (size_t)biggest);
  acc = (double)(rank % 7);

  /* the V-cycle's schedule: (computation, level); 0 smooth, 1 residual,
   * 2 interpolation. One call of comm3 serves every entry. */
  int sched[4 * MAXLEV][2], ns = 0;
  for (int l = 0; l < levels - 1; ++l) {
    sched[ns][0] = 0, sched[ns++][1] = l;
    sched[ns][0] = 1, sched[ns++][1] = l;
  }
  sched[ns][0] = 0, sched[ns++][1] = levels - 1;
  sched[ns][0] = 0, sched[ns++][1] = levels - 1;
  for (int l = levels - 2; l >= 0; --l) {
    sched[ns][0] = 2, sched[ns++][1] = l;
    sched[ns][0] = 0, sched[ns++][1] = l;
  }
  double norm = 0.0;
  for (int it = 0; it < cycles; ++it) {
    for (int s = 0; s < ns; ++s) {
      compute(sched[s][0], sched[s][1]);
      comm3(sched[s][1]);
    }
    double mine = acc, all = 0.0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    norm += all;
  }
  if (rank == 0)
    printf("mg3d: %d ranks (%dx%dx%d), %d levels, %s%s, checksum %.9e\n", size, p[2], p[1], p[0],
           levels, strong ? "strong" : "weak", edges ? ", edges" : "", norm);
  free(sbuf);
  free(rbuf);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
