/* SSOR wavefront solver on a power-of-two process grid laid out the way
 * NPB LU lays it out, which is not MPI_Dims_create's: 2^k ranks form
 * 2^ceil(k/2) columns (the fastest coordinate) by 2^floor(k/2) rows, so 8
 * ranks are 4 columns x 2 rows where MPI_Dims_create would give 2 x 4.
 * Every step does a lower-triangular sweep over NZ planes (a wavefront from
 * the north-west corner: receive from west and north, relax the plane, send
 * east and south), an upper-triangular sweep back from the south-east
 * corner, a halo exchange with nonblocking calls, and an Allreduce of the
 * residual. Neighbours beyond the edge are MPI_PROC_NULL, so every rank
 * makes the same calls (a rank on the edge talks to nobody there).
 * Weak scaling by default (NX x NY points per rank); with GX and GY the
 * global plane is fixed (strong scaling) and each rank gets GX/columns x
 * GY/rows points, the remainder spread over the first columns and rows.
 * usage: app_ssor_wave STEPS [WORK [GX GY]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define NZ 4
#define NVAR 5 /* values per boundary point, like the five flow variables */
#define NX 6
#define NY 6

/* share of `total` points owned by position `i` of `n`: floor, plus one for
 * the first total % n positions */
static int share(int total, int n, int i) {
  return total / n + (i < total % n);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  int k = 0;
  while ((1 << k) < size) ++k;
  if ((1 << k) != size) {
    if (rank == 0) fprintf(stderr, "ssor_wave: %d ranks is not a power of two\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int cols = 1 << ((k + 1) / 2), rows = size / cols;
  const int row = rank / cols, col = rank % cols;
  const int gx = argc > 4 ? atoi(argv[3]) : 0, gy = argc > 4 ? atoi(argv[4]) : 0;
  const int nx = gx > 0 ? share(gx, cols, col) : NX, ny = gy > 0 ? share(gy, rows, row) : NY;
  const int north = row > 0 ? rank - cols : MPI_PROC_NULL;
  const int south = row < rows - 1 ? rank + cols : MPI_PROC_NULL;
  const int west = col > 0 ? rank - 1 : MPI_PROC_NULL;
  const int east = col < cols - 1 ? rank + 1 : MPI_PROC_NULL;

  /* one plane of nx x ny points per z level, NVAR values each */
  const int plane = nx * ny * NVAR;
  double* u = malloc(sizeof(double) * (size_t)plane * NZ);
  double* ew = malloc(sizeof(double) * (size_t)ny * NVAR); /* a west/east face */
  double* ns = malloc(sizeof(double) * (size_t)nx * NVAR); /* a north/south face */
  for (int i = 0; i < plane * NZ; ++i) u[i] = (double)((rank * 7 + i) % 13) / 13.0;

  double resid = 0.0;
  for (int s = 0; s < steps; ++s) {
    app_work(wunits);
    for (int sweep = 0; sweep < 2; ++sweep) {
      /* lower sweep: data flows from north-west; upper: from south-east */
      const int up_ns = sweep ? south : north, up_ew = sweep ? east : west;
      const int dn_ns = sweep ? north : south, dn_ew = sweep ? west : east;
      for (int kz = 0; kz < NZ; ++kz) {
        const int z = sweep ? NZ - 1 - kz : kz;
        double* p = u + (size_t)plane * z;
        MPI_Recv(ew, ny * NVAR, MPI_DOUBLE, up_ew, 10 + sweep, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(ns, nx * NVAR, MPI_DOUBLE, up_ns, 20 + sweep, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* relax the plane in wavefront order, then hand its far faces on */
        for (int j = 0; j < ny; ++j)
          for (int i = 0; i < nx; ++i)
            for (int v = 0; v < NVAR; ++v) {
              double* x = &p[(j * nx + i) * NVAR + v];
              const double w = up_ew == MPI_PROC_NULL ? 0.0 : ew[j * NVAR + v];
              const double n = up_ns == MPI_PROC_NULL ? 0.0 : ns[i * NVAR + v];
              *x = 0.5 * *x + 0.25 * (i ? x[-NVAR] : w) + 0.25 * (j ? x[-nx * NVAR] : n);
            }
        for (int j = 0; j < ny; ++j)
          for (int v = 0; v < NVAR; ++v) ew[j * NVAR + v] = p[(j * nx + nx - 1) * NVAR + v];
        for (int i = 0; i < nx; ++i)
          for (int v = 0; v < NVAR; ++v) ns[i * NVAR + v] = p[((ny - 1) * nx + i) * NVAR + v];
        MPI_Send(ew, ny * NVAR, MPI_DOUBLE, dn_ew, 10 + sweep, MPI_COMM_WORLD);
        MPI_Send(ns, nx * NVAR, MPI_DOUBLE, dn_ns, 20 + sweep, MPI_COMM_WORLD);
      }
    }
    /* halo exchange of the top plane's edges with all four neighbours */
    const int nb[4] = {north, south, west, east};
    const int len[4] = {nx, nx, ny, ny};
    double halo_in[4][64], halo_out[4][64];
    MPI_Request req[8];
    for (int d = 0; d < 4; ++d) {
      for (int i = 0; i < len[d] && i < 64; ++i) halo_out[d][i] = u[i % plane];
      MPI_Irecv(halo_in[d], len[d] < 64 ? len[d] : 64, MPI_DOUBLE, nb[d], 30 + (d ^ 1),
                MPI_COMM_WORLD, &req[d]);
    }
    for (int d = 0; d < 4; ++d)
      MPI_Isend(halo_out[d], len[d] < 64 ? len[d] : 64, MPI_DOUBLE, nb[d], 30 + d, MPI_COMM_WORLD,
                &req[4 + d]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    double local = 0.0, total = 0.0;
    for (int i = 0; i < plane * NZ; i += 7) local += u[i] * u[i];
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    resid = total;
  }
  if (rank == 0)
    printf("ssor_wave: %d ranks (%d columns x %d rows), %dx%d points, checksum %.9e\n", size, cols,
           rows, nx, ny, resid);
  free(u);
  free(ew);
  free(ns);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
