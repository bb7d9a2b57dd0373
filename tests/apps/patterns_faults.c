/* A 2-D halo exchange with one fault or twist chosen by MODE, for the
 * robustness test of `tracefold patterns` (tests/mpi/patterns_robust.sh).
 * Ranks form a non-periodic MPI_Dims_create grid (rank = x + X * y, x along
 * a row); each step exchanges a face of 32 doubles with the 4 neighbours
 * (Irecv, Isend, Waitall), then every rank joins an Allreduce in main.
 *   clean   as said
 *   drop    the last rank's west neighbour does not send it its face, and
 *           the last rank does not wait for it: one edge missing
 *   extra   rank 0 also sends the last rank one message per step, inside
 *           exchange(): one edge in excess
 *   helper  the faces go through one helper, face(), called by exchange_x()
 *           for the x axis and by exchange_y() for the y axis
 *   nested  step s runs the exchange 1 + s % 3 times (a repeat inside a
 *           repeat)
 * usage: app_patterns_faults STEPS [MODE] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FACE 32

static int rank, size, dims[2];
static double out[5][FACE], in[5][FACE];

/* The rank at (x, y), or -1 outside the grid. */
static int at(int x, int y) {
  if (x < 0 || y < 0 || x >= dims[1] || y >= dims[0]) return -1;
  return x + dims[1] * y;
}

/* Receives from `from` and sends to `to` (either may be -1: none), one face
 * each, through slot `k` of the buffers. */
static void face(int to, int from, int k) {
  MPI_Request r[2];
  int n = 0;
  if (from >= 0) MPI_Irecv(in[k], FACE, MPI_DOUBLE, from, 0, MPI_COMM_WORLD, &r[n++]);
  if (to >= 0) MPI_Isend(out[k], FACE, MPI_DOUBLE, to, 0, MPI_COMM_WORLD, &r[n++]);
  MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
}

static void exchange_x(int x, int y) {
  face(at(x + 1, y), at(x - 1, y), 0);
  face(at(x - 1, y), at(x + 1, y), 1);
}

static void exchange_y(int x, int y) {
  face(at(x, y + 1), at(x, y - 1), 2);
  face(at(x, y - 1), at(x, y + 1), 3);
}

/* All four faces posted at once; `drop` and `extra` as the modes say. */
static void exchange(int x, int y, int drop, int extra) {
  const int nb[4] = {at(x - 1, y), at(x + 1, y), at(x, y - 1), at(x, y + 1)};
  MPI_Request r[10];
  int n = 0;
  for (int k = 0; k < 4; ++k) {
    if (nb[k] < 0 || (drop && rank == size - 1 && nb[k] == size - 2)) continue;
    MPI_Irecv(in[k], FACE, MPI_DOUBLE, nb[k], 0, MPI_COMM_WORLD, &r[n++]);
  }
  if (extra && rank == size - 1) MPI_Irecv(in[4], FACE, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &r[n++]);
  for (int k = 0; k < 4; ++k) {
    if (nb[k] < 0 || (drop && rank == size - 2 && nb[k] == size - 1)) continue;
    MPI_Isend(out[k], FACE, MPI_DOUBLE, nb[k], 0, MPI_COMM_WORLD, &r[n++]);
  }
  if (extra && rank == 0) MPI_Isend(out[4], FACE, MPI_DOUBLE, size - 1, 1, MPI_COMM_WORLD, &r[n++]);
  MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const char* mode = argc > 2 ? argv[2] : "clean";
  if (strcmp(mode, "clean") && strcmp(mode, "drop") && strcmp(mode, "extra") &&
      strcmp(mode, "helper") && strcmp(mode, "nested")) {
    if (rank == 0) fprintf(stderr, "app_patterns_faults: unknown mode '%s'\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Dims_create(size, 2, dims);
  const int x = rank % dims[1], y = rank / dims[1];
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < FACE; ++i) out[k][i] = rank + 0.01 * i;
  double sum = 0;
  for (int s = 0; s < steps; ++s) {
    if (!strcmp(mode, "helper")) {
      exchange_x(x, y);
      exchange_y(x, y);
    } else {
      const int times = strcmp(mode, "nested") ? 1 : 1 + s % 3;
      for (int t = 0; t < times; ++t) exchange(x, y, !strcmp(mode, "drop"), !strcmp(mode, "extra"));
    }
    double local = in[0][0] + in[1][0] + in[2][0] + in[3][0], total;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum += total;
  }
  if (rank == 0)
    printf("patterns_faults: %d ranks (%dx%d), %d steps, mode %s, checksum %.2f\n", size, dims[0],
           dims[1], steps, mode, sum);
  MPI_Finalize();
  return 0;
}
