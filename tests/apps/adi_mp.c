/* ADI solver on a multipartition layout, shaped like NPB SP/BT: P = q*q
 * ranks form a q x q grid (rank = a + q*b) over a cube of q x q x q cells,
 * and rank (a, b) owns the q cells ((a + c) mod q, (b + c) mod q, c),
 * c = 0 .. q-1: one cell in every slab of every direction, placed along a
 * diagonal. A line solve in x, y or z is then a pipeline of q stages with
 * every rank busy in each: at stage s each rank works on its cell in slab s
 * and hands the boundary of the previous stage's cell on to the owner of
 * the next cell along the line (x: rank (a+1, b), y: (a, b+1), z: the
 * diagonal (a-1, b-1), all modulo q) with one MPI_Sendrecv, so a sweep has
 * q-1 exchanges; each solve sweeps forward, then back. A step also swaps
 * cell faces with the six neighbours (nonblocking) and reduces a residual.
 * Strong scaling by default: a fixed N^3 cube (N = 60), cell sides N/q with
 * the remainder spread over the first slabs; with N < 0 weak scaling, cells
 * of side -N whatever q is. usage: app_adi_mp STEPS [WORK [N]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define NVAR 5

static int q, qa, qb;
static int side[64]; /* side of a cell in slab i of any direction */
static double acc;

static int rank_at(int a, int b) {
  return ((a % q + q) % q) + q * ((b % q + q) % q);
}

/* slab index of my cell c along direction dir (0 x, 1 y, 2 z) */
static int slab(int dir, int c) {
  if (dir == 0) return (qa + c) % q;
  if (dir == 1) return (qb + c) % q;
  return c;
}

/* my cell in slab s of direction dir */
static int cell_in_slab(int dir, int s) {
  if (dir == 0) return ((s - qa) % q + q) % q;
  if (dir == 1) return ((s - qb) % q + q) % q;
  return s;
}

/* points on the face of cell c that is normal to dir, NVAR values each */
static int face(int dir, int c) {
  int f = NVAR;
  for (int d = 0; d < 3; ++d)
    if (d != dir) f *= side[slab(d, c)];
  return f;
}

static void relax(double* buf, int n, int stage) {
  for (int i = 0; i < n; ++i) {
    buf[i] = 0.5 * buf[i] + 0.001 * (double)((i + stage) % 17);
    acc += buf[i];
  }
}

/* One line solve along dir: forward over the slabs, then back. succ is the
 * owner of my cell's successor along the line, pred of its predecessor.
 * The two loops are separate call sites, like the separate forward
 * elimination and back substitution of a real solver. */
static void line_solve(int dir, int succ, int pred, double* out, double* in, int tag) {
  for (int s = 0; s < q; ++s) {
    const int c = cell_in_slab(dir, s);
    if (s > 0) {
      const int prev = cell_in_slab(dir, s - 1);
      MPI_Sendrecv(out, face(dir, prev), MPI_DOUBLE, succ, tag, in, face(dir, c), MPI_DOUBLE, pred,
                   tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < face(dir, c); ++i) out[i] = in[i];
    }
    relax(out, face(dir, c), s);
  }
  for (int s = q - 1; s >= 0; --s) {
    const int c = cell_in_slab(dir, s);
    if (s < q - 1) {
      const int next = cell_in_slab(dir, s + 1);
      MPI_Sendrecv(out, face(dir, next), MPI_DOUBLE, pred, tag + 1, in, face(dir, c), MPI_DOUBLE,
                   succ, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < face(dir, c); ++i) out[i] = in[i];
    }
    relax(out, face(dir, c), -s);
  }
}

__attribute__((noinline)) static void x_solve(double* out, double* in) {
  line_solve(0, rank_at(qa + 1, qb), rank_at(qa - 1, qb), out, in, 10);
}
__attribute__((noinline)) static void y_solve(double* out, double* in) {
  line_solve(1, rank_at(qa, qb + 1), rank_at(qa, qb - 1), out, in, 20);
}
__attribute__((noinline)) static void z_solve(double* out, double* in) {
  line_solve(2, rank_at(qa - 1, qb - 1), rank_at(qa + 1, qb + 1), out, in, 30);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const int n = argc > 3 ? atoi(argv[3]) : 60;
  for (q = 1; q * q < size; ++q) {
  }
  if (q * q != size || q > 64 || n == 0 || (n > 0 && n < q)) {
    if (rank == 0) fprintf(stderr, "adi_mp: %d ranks is not a square of 1..64, or bad N\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  qa = rank % q;
  qb = rank / q;
  for (int i = 0; i < q; ++i) side[i] = n > 0 ? n / q + (i < n % q) : -n;
  int biggest = NVAR * side[0] * side[0];
  double* out = malloc(sizeof(double) * (size_t)biggest);
  double* in = malloc(sizeof(double) * (size_t)biggest);
  double* halo_out = malloc(sizeof(double) * 6 * (size_t)biggest);
  double* halo_in = malloc(sizeof(double) * 6 * (size_t)biggest);
  for (int i = 0; i < biggest; ++i) out[i] = (double)((rank * 11 + i) % 7);
  /* the six face neighbours of the multipartition: x, y and z successors
   * and predecessors */
  const int nb[6] = {rank_at(qa + 1, qb), rank_at(qa - 1, qb),     rank_at(qa, qb + 1),
                     rank_at(qa, qb - 1), rank_at(qa - 1, qb - 1), rank_at(qa + 1, qb + 1)};
  double resid = 0.0;
  for (int s = 0; s < steps; ++s) {
    app_work(wunits);
    /* copy_faces: the faces of my first cell to each neighbour */
    MPI_Request req[12];
    for (int d = 0; d < 6; ++d) {
      const int len = face(d / 2, 0);
      for (int i = 0; i < len; ++i) halo_out[d * biggest + i] = out[i % biggest] + d;
      /* a z neighbour's face may be smaller than mine: room for the largest */
      MPI_Irecv(halo_in + d * biggest, biggest, MPI_DOUBLE, nb[d ^ 1], 40 + d, MPI_COMM_WORLD,
                &req[d]);
      MPI_Isend(halo_out + d * biggest, len, MPI_DOUBLE, nb[d], 40 + d, MPI_COMM_WORLD,
                &req[6 + d]);
    }
    MPI_Waitall(12, req, MPI_STATUSES_IGNORE);
    x_solve(out, in);
    y_solve(out, in);
    z_solve(out, in);
    double local = acc, total = 0.0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    resid = total;
  }
  if (rank == 0)
    printf("adi_mp: %d ranks (%dx%d), cells of side %d, checksum %.9e\n", size, q, q, side[0],
           resid);
  free(out);
  free(in);
  free(halo_out);
  free(halo_in);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
