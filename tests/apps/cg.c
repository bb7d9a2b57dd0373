/* CG-like communication in the style of NPB CG: the ranks form a
 * nprows x npcols grid (power-of-two size). A sparse mat-vec reduces the
 * partial result across the row by recursive halving with power-of-two
 * partners (MPI_Sendrecv), then swaps it with the "transpose" partner.
 * Dot products are recursive-doubling Sendrecvs of one double across the
 * row. Each outer step runs CGIT inner iterations and ends with an
 * Allreduce of the norm. usage: app_cg STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define NLOC 64
#define CGIT 5

static int ilog2(int x) {
  int l = 0;
  while ((1 << l) < x) ++l;
  return l;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  if (size & (size - 1)) {
    if (rank == 0) fprintf(stderr, "cg: the number of ranks must be a power of two\n");
    MPI_Finalize();
    return 1;
  }
  const int lg = ilog2(size);
  const int nprows = 1 << (lg / 2), npcols = size / nprows; /* npcols = nprows or 2*nprows */
  const int row = rank / npcols, col = rank % npcols;
  int exch;
  if (npcols == nprows)
    exch = (rank % nprows) * nprows + rank / nprows;
  else
    exch = 2 * (((rank / 2) % nprows) * nprows + rank / 2 / nprows) + rank % 2;
  const int l2c = ilog2(npcols);
  double* w = malloc(NLOC * sizeof(double));
  double* r = malloc(NLOC * sizeof(double));
  double* q = malloc(NLOC * sizeof(double));
  double* p = malloc(NLOC * sizeof(double));
  for (int i = 0; i < NLOC; ++i) p[i] = 1.0 + ((rank * NLOC + i) % 7) * 0.125;
  double norm = 0.0;
  for (int s = 0; s < steps; ++s) {
    app_work(wunits);
    for (int it = 0; it < CGIT; ++it) {
      /* local mat-vec: tridiagonal-ish */
      for (int i = 0; i < NLOC; ++i)
        w[i] = 2.0 * p[i] - 0.5 * p[(i + 1) % NLOC] - 0.25 * p[(i + NLOC - 1) % NLOC];
      /* reduce across the row by recursive halving with partners col ^ 2^i */
      int len = NLOC;
      for (int i = l2c - 1; i >= 0; --i) {
        const int partner = row * npcols + (col ^ (1 << i));
        len = len > 1 ? len / 2 : 1;
        MPI_Sendrecv(w, len, MPI_DOUBLE, partner, i, r, len, MPI_DOUBLE, partner, i, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (int k = 0; k < len; ++k) w[k] += r[k];
      }
      /* exchange with the transpose partner */
      MPI_Sendrecv(w, len, MPI_DOUBLE, exch, 50, q, len, MPI_DOUBLE, exch, 50, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      for (int i = 0; i < NLOC; ++i) q[i] = q[i % len];
      /* two dot products, each a recursive doubling across the row */
      for (int dp = 0; dp < 2; ++dp) {
        double d = 0.0, other;
        for (int i = 0; i < NLOC; ++i) d += dp ? q[i] * q[i] : p[i] * q[i];
        for (int i = 0; i < l2c; ++i) {
          const int partner = row * npcols + (col ^ (1 << i));
          MPI_Sendrecv(&d, 1, MPI_DOUBLE, partner, 60 + dp, &other, 1, MPI_DOUBLE, partner, 60 + dp,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          d += other;
        }
        if (dp == 0)
          for (int i = 0; i < NLOC; ++i) p[i] = 0.5 * p[i] + q[i] / (1.0 + (d < 0 ? -d : d));
      }
    }
    double local = 0.0;
    for (int i = 0; i < NLOC; ++i) local += p[i] * p[i];
    MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("cg: %d ranks (%dx%d), %d steps, checksum %.9e\n", size, nprows, npcols, steps, norm);
  free(w);
  free(r);
  free(q);
  free(p);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
