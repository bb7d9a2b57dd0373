/* 3D 7-point stencil on a periodic 3D process grid (MPI_Dims_create).
 * Six-face halo exchange with Irecv/Isend/Waitall, an Allreduce of the
 * residual every 5 steps. usage: app_stencil3d STEPS [WORK [EDGE]]
 * (EDGE: local cube edge, default 10; benchmarks use larger blocks). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define IDX(i, j, k) (((i) * (N + 2) + (j)) * (N + 2) + (k))

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 50;
  const int N = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 10; /* local cube edge */
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(size, 3, dims);
  int c[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
  int nb[6]; /* -x +x -y +y -z +z */
  for (int d = 0; d < 3; ++d)
    for (int sgn = 0; sgn < 2; ++sgn) {
      int cc[3] = {c[0], c[1], c[2]};
      cc[d] = (cc[d] + (sgn ? 1 : dims[d] - 1)) % dims[d];
      nb[2 * d + sgn] = (cc[0] * dims[1] + cc[1]) * dims[2] + cc[2];
    }
  const int total = (N + 2) * (N + 2) * (N + 2);
  double* u = calloc(total, sizeof(double));
  double* v = calloc(total, sizeof(double));
  double* sbuf = malloc(6 * N * N * sizeof(double));
  double* rbuf = malloc(6 * N * N * sizeof(double));
  for (int i = 1; i <= N; ++i)
    for (int j = 1; j <= N; ++j)
      for (int k = 1; k <= N; ++k) u[IDX(i, j, k)] = (double)((rank + 3 * i + 5 * j + 7 * k) % 11);
  double resid = 0.0;
  for (int s = 0; s < steps; ++s) {
    MPI_Request req[12];
    for (int f = 0; f < 6; ++f)
      MPI_Irecv(rbuf + f * N * N, N * N, MPI_DOUBLE, nb[f], f ^ 1, MPI_COMM_WORLD, &req[f]);
    for (int f = 0; f < 6; ++f) {
      const int d = f / 2, plane = (f & 1) ? N : 1;
      double* b = sbuf + f * N * N;
      for (int a = 1; a <= N; ++a)
        for (int e = 1; e <= N; ++e)
          b[(a - 1) * N + e - 1] = d == 0   ? u[IDX(plane, a, e)]
                                   : d == 1 ? u[IDX(a, plane, e)]
                                            : u[IDX(a, e, plane)];
      MPI_Isend(b, N * N, MPI_DOUBLE, nb[f], f, MPI_COMM_WORLD, &req[6 + f]);
    }
    MPI_Waitall(12, req, MPI_STATUSES_IGNORE);
    app_work(wunits);
    for (int f = 0; f < 6; ++f) {
      const int d = f / 2, ghost = (f & 1) ? N + 1 : 0;
      const double* b = rbuf + f * N * N;
      for (int a = 1; a <= N; ++a)
        for (int e = 1; e <= N; ++e) {
          const double x = b[(a - 1) * N + e - 1];
          if (d == 0)
            u[IDX(ghost, a, e)] = x;
          else if (d == 1)
            u[IDX(a, ghost, e)] = x;
          else
            u[IDX(a, e, ghost)] = x;
        }
    }
    double local = 0.0;
    for (int i = 1; i <= N; ++i)
      for (int j = 1; j <= N; ++j)
        for (int k = 1; k <= N; ++k) {
          v[IDX(i, j, k)] = (u[IDX(i - 1, j, k)] + u[IDX(i + 1, j, k)] + u[IDX(i, j - 1, k)] +
                             u[IDX(i, j + 1, k)] + u[IDX(i, j, k - 1)] + u[IDX(i, j, k + 1)]) /
                            6.0;
          const double dl = v[IDX(i, j, k)] - u[IDX(i, j, k)];
          local += dl * dl;
        }
    double* t = u;
    u = v;
    v = t;
    if (s % 5 == 4) MPI_Allreduce(&local, &resid, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double sum = 0.0, all = 0.0;
  for (int i = 1; i <= N; ++i)
    for (int j = 1; j <= N; ++j)
      for (int k = 1; k <= N; ++k) sum += u[IDX(i, j, k)];
  MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("stencil3d: %d ranks (%dx%dx%d), %d steps, checksum %.9e resid %.6e\n", size, dims[0],
           dims[1], dims[2], steps, all, resid);
  free(u);
  free(v);
  free(sbuf);
  free(rbuf);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
