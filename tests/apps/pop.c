/* An irregular time-step code in the style of POP (ocean model). The grid
 * is periodic in x (east-west) and bounded in y. Every step:
 *  - baroclinic: halo exchange of two fields (Irecv/Isend/Waitall);
 *  - barotropic solver: a trip count that changes from step to step, each
 *    iteration a one-field halo exchange plus a 2-double Allreduce;
 *  - tracers: 2..4 tracers (varies by step), each exchanged north-south with
 *    blocking MPI_Sendrecv (MPI_PROC_NULL beyond the walls);
 *  - step 0 only: a Barrier; every 10th step: diagnostics Reduce to rank 0;
 *    steps 7, 32, 57, ...: a Bcast of new forcing parameters; when the
 *    solver needed many iterations: an extra Allreduce "convergence check".
 * usage: app_pop STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define NX 12
#define NY 8

static void halo(double* f, int nf, const int nb[4], MPI_Comm comm, int tagbase) {
  /* nb: north south west east; f holds nf fields of (NY+2)*(NX+2) */
  double sb[4][2 * NX], rb[4][2 * NX];
  MPI_Request req[8];
  int n = 0;
  const int opp[4] = {1, 0, 3, 2};
  for (int d = 0; d < 4; ++d)
    if (nb[d] != MPI_PROC_NULL) {
      const int len = (d < 2 ? NX : NY) * nf;
      MPI_Irecv(rb[d], len, MPI_DOUBLE, nb[d], tagbase + opp[d], comm, &req[n++]);
    }
  for (int d = 0; d < 4; ++d)
    if (nb[d] != MPI_PROC_NULL) {
      const int len = (d < 2 ? NX : NY) * nf;
      for (int k = 0; k < len; ++k) sb[d][k] = f[(k * 7 + d) % ((NY + 2) * (NX + 2) * nf)];
      MPI_Isend(sb[d], len, MPI_DOUBLE, nb[d], tagbase + d, comm, &req[n++]);
    }
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  for (int d = 0; d < 4; ++d)
    if (nb[d] != MPI_PROC_NULL) {
      const int len = (d < 2 ? NX : NY) * nf;
      for (int k = 0; k < len; ++k)
        f[(k * 11 + d * 3) % ((NY + 2) * (NX + 2) * nf)] = 0.5 * (f[k] + rb[d][k]);
    }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 50;
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int row = rank / dims[1], col = rank % dims[1];
  int nb[4];
  nb[0] = row > 0 ? rank - dims[1] : MPI_PROC_NULL;
  nb[1] = row < dims[0] - 1 ? rank + dims[1] : MPI_PROC_NULL;
  nb[2] = row * dims[1] + (col + dims[1] - 1) % dims[1];
  nb[3] = row * dims[1] + (col + 1) % dims[1];
  const int fsz = (NY + 2) * (NX + 2);
  double* uv = malloc(2 * fsz * sizeof(double));
  double* eta = malloc(fsz * sizeof(double));
  double* tr = malloc(4 * fsz * sizeof(double));
  for (int i = 0; i < 2 * fsz; ++i) uv[i] = (double)((i + rank) % 5);
  for (int i = 0; i < fsz; ++i) eta[i] = (double)((i * 3 + rank) % 7);
  for (int i = 0; i < 4 * fsz; ++i) tr[i] = (double)((i + 2 * rank) % 3);
  double forcing[3] = {1.0, 0.5, 0.25}, diag[3] = {0, 0, 0}, gdiag[3] = {0, 0, 0};
  long solver_iters = 0;
  for (int s = 0; s < steps; ++s) {
    app_work(wunits);
    if (s == 0) MPI_Barrier(MPI_COMM_WORLD);
    halo(uv, 2, nb, MPI_COMM_WORLD, 0);
    for (int i = 0; i < 2 * fsz; ++i) uv[i] = 0.9 * uv[i] + 0.1 * forcing[i % 3];
    const int niter = 3 + (s * 7) % 5 + (s % 13 == 0 ? 4 : 0);
    for (int it = 0; it < niter; ++it) {
      halo(eta, 1, nb, MPI_COMM_WORLD, 10);
      double dots[2] = {0, 0}, gdots[2];
      for (int i = 0; i < fsz; ++i) {
        eta[i] = 0.95 * eta[i] + 0.05 * uv[i];
        dots[0] += eta[i];
        dots[1] += eta[i] * eta[i];
      }
      MPI_Allreduce(dots, gdots, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      eta[it % fsz] += gdots[0] * 1e-6;
    }
    solver_iters += niter;
    if (niter >= 7) {
      double c = eta[0], gc;
      MPI_Allreduce(&c, &gc, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    const int ntr = 2 + s % 3;
    for (int t = 0; t < ntr; ++t) {
      double* f = tr + t * fsz;
      double in[NX];
      MPI_Sendrecv(f + NX + 2, NX, MPI_DOUBLE, nb[0], 20 + t, in, NX, MPI_DOUBLE, nb[1], 20 + t,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (nb[1] != MPI_PROC_NULL)
        for (int k = 0; k < NX; ++k) f[(NY + 1) * (NX + 2) + k + 1] = in[k];
      MPI_Sendrecv(f + NY * (NX + 2), NX, MPI_DOUBLE, nb[1], 30 + t, in, NX, MPI_DOUBLE, nb[0],
                   30 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (nb[0] != MPI_PROC_NULL)
        for (int k = 0; k < NX; ++k) f[k + 1] = in[k];
      for (int i = 0; i < fsz; ++i) f[i] = 0.99 * f[i] + 0.01 * eta[i];
    }
    if (s % 10 == 0) {
      diag[0] = diag[1] = diag[2] = 0.0;
      for (int i = 0; i < fsz; ++i) {
        diag[0] += eta[i];
        diag[1] += uv[i];
        diag[2] += tr[i];
      }
      MPI_Reduce(diag, gdiag, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    if (s % 25 == 7) {
      if (rank == 0) forcing[s % 3] += 0.125;
      MPI_Bcast(forcing, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
  }
  double sum = 0.0, total = 0.0;
  for (int i = 0; i < fsz; ++i) sum += eta[i] + uv[i] + tr[i];
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("pop: %d ranks (%dx%d), %d steps, %ld solver iterations, checksum %.9e diag %.6e\n",
           size, dims[0], dims[1], steps, solver_iters, total, gdiag[0]);
  free(uv);
  free(eta);
  free(tr);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
