/* 3-D hydrodynamics-proxy communication: a non-periodic 3-D process grid
 * (MPI_Dims_create), every rank exchanges with all of its up to 26
 * neighbours (faces, edges, corners) in three phases per time step, as
 * unstructured-mesh proxies do:
 *   1. nodal masses/forces, all 26 directions, summed into the ghosts;
 *   2. positions and velocities, the 6 faces only;
 *   3. gradients, all 26 directions again;
 * then an Allreduce of the time-step constraint. Like such codes, the
 * exchange is written out once per direction: every direction's Irecv and
 * Isend is its own call site (the DIRS list expands one block per
 * direction), so an interior rank makes ~120 calls from ~120 call sites per
 * step. Boundary ranks skip the directions that leave the grid; built with
 * PERIODIC=1 (app_halo26_periodic) the grid wraps and every rank has all 26.
 * usage: app_halo26 STEPS [WORK [EDGE]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

/* All 26 directions (dx, dy, dz), faces first; F marks the six faces.
 * Not formatted: clang-format reflows this macro differently on every run. */
/* clang-format off */
#define DIRS(X)                                                               \
  X(-1, 0, 0, 1) X(1, 0, 0, 1) X(0, -1, 0, 1) X(0, 1, 0, 1) X(0, 0, -1, 1)    \
  X(0, 0, 1, 1) X(-1, -1, 0, 0) X(-1, 1, 0, 0) X(1, -1, 0, 0) X(1, 1, 0, 0)   \
  X(-1, 0, -1, 0) X(-1, 0, 1, 0) X(1, 0, -1, 0) X(1, 0, 1, 0) X(0, -1, -1, 0) \
  X(0, -1, 1, 0) X(0, 1, -1, 0) X(0, 1, 1, 0) X(-1, -1, -1, 0)                \
  X(-1, -1, 1, 0) X(-1, 1, -1, 0) X(-1, 1, 1, 0) X(1, -1, -1, 0)              \
  X(1, -1, 1, 0) X(1, 1, -1, 0) X(1, 1, 1, 0)
/* clang-format on */

static int dims[3], coord[3], edge;

#ifndef PERIODIC
#define PERIODIC 0
#endif

/* World rank of the neighbour in direction (dx, dy, dz), or -1 off grid.
 * With PERIODIC every rank has all 26 (on a 2-wide axis the lower and the
 * upper neighbour are the same rank; the tags keep the messages apart). */
static int neighbour(int dx, int dy, int dz) {
  int c[3] = {coord[0] + dx, coord[1] + dy, coord[2] + dz};
  for (int d = 0; d < 3; ++d) {
    if (PERIODIC) c[d] = (c[d] + dims[d]) % dims[d];
    if (c[d] < 0 || c[d] >= dims[d]) return -1;
  }
  return (c[0] * dims[1] + c[1]) * dims[2] + c[2];
}

/* Elements a message in a direction carries: a face, an edge or a corner
 * of the local block. */
static int extent(int dx, int dy, int dz) {
  const int zeros = (dx == 0) + (dy == 0) + (dz == 0);
  return zeros == 2 ? edge * edge : zeros == 1 ? edge : 1;
}

/* The tag of a direction, so that a receive matches the opposite send. */
static int dir_tag(int dx, int dy, int dz) {
  return (dx + 1) * 9 + (dy + 1) * 3 + (dz + 1);
}

typedef struct {
  double* sbuf[27];
  double* rbuf[27];
  MPI_Request req[54];
  int nreq;
} Exchange;

#define POST_RECV(dx, dy, dz, face)                                                             \
  if (!faces_only || face) {                                                                    \
    const int nb = neighbour(dx, dy, dz);                                                       \
    if (nb >= 0)                                                                                \
      MPI_Irecv(x->rbuf[dir_tag(dx, dy, dz)], width* extent(dx, dy, dz), MPI_DOUBLE, nb,        \
                phase * 27 + dir_tag(-(dx), -(dy), -(dz)), MPI_COMM_WORLD, &x->req[x->nreq++]); \
  }

#define POST_SEND(dx, dy, dz, face)                                                             \
  if (!faces_only || face) {                                                                    \
    const int nb = neighbour(dx, dy, dz);                                                       \
    if (nb >= 0) {                                                                              \
      double* b = x->sbuf[dir_tag(dx, dy, dz)];                                                 \
      for (int i = 0; i < width * extent(dx, dy, dz); ++i) b[i] = field[i % (edge * edge)];     \
      MPI_Isend(b, width* extent(dx, dy, dz), MPI_DOUBLE, nb, phase * 27 + dir_tag(dx, dy, dz), \
                MPI_COMM_WORLD, &x->req[x->nreq++]);                                            \
    }                                                                                           \
  }

#define ADD_GHOST(dx, dy, dz, face)                                                               \
  if ((!faces_only || face) && neighbour(dx, dy, dz) >= 0) {                                      \
    const double* b = x->rbuf[dir_tag(dx, dy, dz)];                                               \
    for (int i = 0; i < width * extent(dx, dy, dz); ++i) field[i % (edge * edge)] += 1e-3 * b[i]; \
  }

/* One phase: receives, sends and one Waitall, written out per direction. */
static void exchange(Exchange* x, double* field, int width, int faces_only, int phase) {
  x->nreq = 0;
  DIRS(POST_RECV)
  DIRS(POST_SEND)
  MPI_Waitall(x->nreq, x->req, MPI_STATUSES_IGNORE);
  DIRS(ADD_GHOST)
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  edge = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 6;
  MPI_Dims_create(size, 3, dims);
  coord[0] = rank / (dims[1] * dims[2]);
  coord[1] = (rank / dims[2]) % dims[1];
  coord[2] = rank % dims[2];
  Exchange x;
  for (int d = 0; d < 27; ++d) {
    x.sbuf[d] = malloc(3 * (size_t)edge * edge * sizeof(double));
    x.rbuf[d] = malloc(3 * (size_t)edge * edge * sizeof(double));
  }
  double* mass = malloc((size_t)edge * edge * sizeof(double));
  double* vel = malloc((size_t)edge * edge * sizeof(double));
  double* grad = malloc((size_t)edge * edge * sizeof(double));
  for (int i = 0; i < edge * edge; ++i) {
    mass[i] = 1.0 + (rank + i) % 7;
    vel[i] = 0.5 * ((rank * 3 + i) % 5);
    grad[i] = 0.0;
  }
  double dt = 1e-2;
  for (int s = 0; s < steps; ++s) {
    exchange(&x, mass, 1, 0, 0);
    exchange(&x, vel, 3, 1, 1);
    exchange(&x, grad, 1, 0, 2);
    app_work(wunits);
    double local = 0.0;
    for (int i = 0; i < edge * edge; ++i) {
      grad[i] = 0.5 * grad[i] + 1e-2 * (mass[i] - vel[i]);
      local += vel[i] * vel[i] / mass[i];
    }
    double global;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    dt = 1e-2 / (1.0 + global * 1e-6);
  }
  double sum = 0.0, all;
  for (int i = 0; i < edge * edge; ++i) sum += mass[i] + vel[i] + grad[i];
  MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("halo26 (periodic %d): %d ranks %d steps grid %dx%dx%d checksum %.6e dt %.6e\n",
           PERIODIC, size, steps, dims[0], dims[1], dims[2], all, dt);
  for (int d = 0; d < 27; ++d) {
    free(x.sbuf[d]);
    free(x.rbuf[d]);
  }
  free(mass);
  free(vel);
  free(grad);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
