/* 3-D FFT in the shape of NPB FT: a complex NX x NY x NZ array over a
 * np1 x np2 process grid, the transposes done by MPI_Alltoall on row and
 * column communicators made with MPI_Comm_split. Layout 1 (the default) is
 * a slab decomposition, np1 = 1 and np2 = P: the row communicator holds
 * every rank and each transpose sends NX*NY*NZ / P^2 complex values to
 * every rank (strong scaling: 1/P^2 per message). Layout 2 is a pencil
 * decomposition on the MPI_Dims_create grid, transposing on the rows and
 * then the columns. Each step evolves the array, transforms it forward
 * and back (two transposes each way) and reduces a checksum. The cube side
 * N is fixed (strong scaling, default 32); with N < 0 the array is
 * -N x -N x (-N * P / 4) (weak scaling: the volume grows with the ranks).
 * usage: app_fft3d STEPS [WORK [N [LAYOUT]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

/* a cheap stand-in for the local 1-D transforms: mixes neighbours */
static void mix(double* a, long n, int step) {
  for (long i = 0; i + 3 < n; i += 2) {
    const double re = a[i], im = a[i + 1];
    a[i] = 0.5 * (re + a[i + 2]) + 1e-3 * step;
    a[i + 1] = 0.5 * (im - a[i + 3]);
  }
}

static void transpose(double* a, double* b, long n, int per_dest, MPI_Comm comm) {
  MPI_Alltoall(a, per_dest, MPI_DOUBLE, b, per_dest, MPI_DOUBLE, comm);
  for (long i = 0; i < n; ++i) a[i] = b[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int params[3] = {argc > 1 ? atoi(argv[1]) : 10, argc > 3 ? atoi(argv[3]) : 32,
                   argc > 4 ? atoi(argv[4]) : 1};
  MPI_Bcast(params, 3, MPI_INT, 0, MPI_COMM_WORLD);
  const int steps = params[0], layout = params[2];
  const long nx = params[1] > 0 ? params[1] : -params[1];
  const long nz = params[1] > 0 ? nx : nx * size / 4;
  int dims[2] = {1, size};
  if (layout == 2) {
    dims[0] = dims[1] = 0;
    MPI_Dims_create(size, 2, dims);
  }
  const int np1 = dims[0], np2 = dims[1];
  const long points = nx * nx * nz / size;
  if (points * size != nx * nx * nz || points % ((long)np1 * np2) != 0 || points < 1) {
    if (rank == 0) fprintf(stderr, "fft3d: the array does not divide over %d ranks\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* row: the np2 ranks of my row (consecutive); column: the np1 ranks of
   * my column */
  MPI_Comm row_comm, col_comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank / np2, rank, &row_comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank % np2, rank, &col_comm);
  double* a = malloc(sizeof(double) * 2 * (size_t)points);
  double* b = malloc(sizeof(double) * 2 * (size_t)points);
  for (long i = 0; i < 2 * points; ++i) a[i] = (double)((rank * 31 + i) % 19) / 19.0;
  double chk[2] = {0, 0}, sum[2];
  for (int s = 0; s < steps; ++s) {
    app_work(wunits);
    mix(a, 2 * points, s);
    /* forward: x lines local, transpose to y lines, to z lines */
    if (np1 > 1) transpose(a, b, 2 * points, (int)(2 * points / np1), col_comm);
    mix(a, 2 * points, s);
    if (np2 > 1) transpose(a, b, 2 * points, (int)(2 * points / np2), row_comm);
    mix(a, 2 * points, s);
    /* inverse: back the other way */
    if (np2 > 1) transpose(a, b, 2 * points, (int)(2 * points / np2), row_comm);
    mix(a, 2 * points, s);
    if (np1 > 1) transpose(a, b, 2 * points, (int)(2 * points / np1), col_comm);
    sum[0] = sum[1] = 0.0;
    for (long i = 0; i < 2 * points; i += 2 * 7) {
      sum[0] += a[i];
      sum[1] += a[i + 1];
    }
    MPI_Allreduce(sum, chk, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("fft3d: %d ranks (%dx%d), %ldx%ldx%ld, checksum (%.9e, %.9e)\n", size, np1, np2, nx, nx,
           nz, chk[0], chk[1]);
  MPI_Comm_free(&row_comm);
  MPI_Comm_free(&col_comm);
  free(a);
  free(b);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
