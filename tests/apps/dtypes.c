/* Derived datatypes the way simulation codes use them. A 3-D block with a
 * ghost layer on a periodic 3-D process grid exchanges its six faces as
 * subarray types (MPI_Type_create_subarray, built once); particles are a
 * struct type (MPI_Type_create_struct, then MPI_Type_create_resized to the
 * C struct's extent) moved with MPI_Sendrecv and gathered with
 * MPI_Allgather; a column of the block (MPI_Type_vector) and a pencil
 * across its planes (MPI_Type_create_hvector) are broadcast; boundary
 * lists (MPI_Type_indexed, MPI_Type_create_hindexed,
 * MPI_Type_create_indexed_block, MPI_Type_create_hindexed_block) go round
 * a ring; a 3-vector (MPI_Type_contiguous) is broadcast, the rank's block
 * of a distributed line (MPI_Type_create_darray) is exchanged with itself,
 * and a Fortran real kind (MPI_Type_create_f90_real) is reduced. Some types are freed and made
 * again every step with other shapes, and the code checks its types with MPI_Type_size,
 * MPI_Type_get_extent, MPI_Type_get_envelope and MPI_Type_get_contents
 * (freeing the derived types the latter hands back).
 * usage: app_dtypes STEPS [WORK] */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define N 6
#define E (N + 2)
#define AT(i, j, k) (((i)*E + (j)) * E + (k))

typedef struct {
  double pos[3];
  double vel[3];
  int id, cell;
  char pad[8]; /* the struct's extent is more than its data */
} particle;

/* Face f (0..5: -x +x -y +y -z +z) of the block: the interior plane next
 * to it (ghost = 0) or its ghost plane (ghost = 1). */
static MPI_Datatype face_type(int f, int ghost) {
  const int d = f / 2, hi = f & 1;
  int sizes[3] = {E, E, E}, sub[3] = {N, N, N}, start[3] = {1, 1, 1};
  sub[d] = 1;
  start[d] = hi ? (ghost ? N + 1 : N) : (ghost ? 0 : 1);
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

static MPI_Datatype particle_type(void) {
  const int bl[3] = {3, 3, 2};
  const MPI_Aint disp[3] = {offsetof(particle, pos), offsetof(particle, vel),
                            offsetof(particle, id)};
  const MPI_Datatype types[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_INT};
  MPI_Datatype raw, t;
  MPI_Type_create_struct(3, bl, disp, types, &raw);
  MPI_Type_create_resized(raw, 0, sizeof(particle), &t);
  MPI_Type_free(&raw);
  MPI_Type_commit(&t);
  return t;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(size, 3, dims);
  const int c[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
  int nb[6];
  for (int d = 0; d < 3; ++d)
    for (int hi = 0; hi < 2; ++hi) {
      int cc[3] = {c[0], c[1], c[2]};
      cc[d] = (cc[d] + (hi ? 1 : dims[d] - 1)) % dims[d];
      nb[2 * d + hi] = (cc[0] * dims[1] + cc[1]) * dims[2] + cc[2];
    }
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  double* u = calloc(E * E * E, sizeof(double));
  for (int i = 1; i <= N; ++i)
    for (int j = 1; j <= N; ++j)
      for (int k = 1; k <= N; ++k) u[AT(i, j, k)] = (rank * 7 + i * 3 + j * 5 + k) % 13;
  MPI_Datatype send_face[6], recv_face[6];
  for (int f = 0; f < 6; ++f) {
    send_face[f] = face_type(f, 0);
    recv_face[f] = face_type(f, 1);
  }
  MPI_Datatype ptype = particle_type();
  MPI_Datatype column; /* u[AT(1, j, 1)], j = 0..E-1 */
  MPI_Type_vector(E, 1, E, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  int blk[4] = {1, 1, 1, 1}, at[4] = {0, 3, 6, 9};
  MPI_Datatype quads; /* two ints from every fourth */
  MPI_Type_create_indexed_block(4, 2, (int[]){0, 4, 8, 12}, MPI_INT, &quads);
  MPI_Type_commit(&quads);
  MPI_Datatype hquads;
  MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){0, 8 * sizeof(int)}, MPI_INT, &hquads);
  MPI_Type_commit(&hquads);
  MPI_Datatype triple; /* a 3-vector */
  MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
  MPI_Type_commit(&triple);
  /* This rank's block of a block-distributed line of 4 values per rank. */
  int gsize = 4 * size, distrib = MPI_DISTRIBUTE_BLOCK, darg = MPI_DISTRIBUTE_DFLT_DARG;
  MPI_Datatype mypart;
  MPI_Type_create_darray(size, rank, 1, &gsize, &distrib, &darg, &size, MPI_ORDER_C, MPI_DOUBLE,
                         &mypart);
  MPI_Type_commit(&mypart);
  /* A Fortran-style real kind: predefined, never freed. */
  MPI_Datatype real6;
  MPI_Type_create_f90_real(6, MPI_UNDEFINED, &real6);
  double* line = calloc((size_t)gsize, sizeof(double));
  double vec[3] = {0, 0, 0};

  particle mine[4], theirs[4], all[64];
  int ibuf[16], iget[24];
  double list[E * E], lget[E * E];
  double sum = 0;
  for (int s = 0; s < steps; ++s) {
    /* Halo exchange of the six faces. */
    MPI_Request req[12];
    for (int f = 0; f < 6; ++f)
      MPI_Irecv(u, 1, recv_face[f], nb[f], f ^ 1, MPI_COMM_WORLD, &req[f]);
    for (int f = 0; f < 6; ++f)
      MPI_Isend(u, 1, send_face[f], nb[f], f, MPI_COMM_WORLD, &req[6 + f]);
    MPI_Waitall(12, req, MPI_STATUSES_IGNORE);
    for (int j = 0; j < E; ++j) sum += u[AT(0, j, 1)] + u[AT(N + 1, 1, j)];
    for (int i = 1; i <= N; ++i)
      for (int j = 1; j <= N; ++j)
        for (int k = 1; k <= N; ++k)
          u[AT(i, j, k)] = 0.5 * u[AT(i, j, k)] + 0.25 * u[AT(i - 1, j, k)];
    app_work(wunits);

    /* Particles leave to the right and arrive from the left. */
    const int out = (rank + s) % 3 + 1, in = (left + s) % 3 + 1;
    for (int p = 0; p < out; ++p) {
      for (int d = 0; d < 3; ++d) {
        mine[p].pos[d] = rank + 0.25 * p + d;
        mine[p].vel[d] = s - d;
      }
      mine[p].id = 100 * rank + p;
      mine[p].cell = s;
    }
    MPI_Sendrecv(mine, out, ptype, right, 7, theirs, in, ptype, left, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int p = 0; p < in; ++p) sum += theirs[p].pos[0] + theirs[p].vel[2] + theirs[p].id;
    if (size <= 64) {
      MPI_Allgather(mine, 1, ptype, all, 1, ptype, MPI_COMM_WORLD);
      for (int r = 0; r < size; ++r) sum += all[r].id + all[r].cell;
    }

    /* A pencil through the planes, made for this step's row and freed. */
    MPI_Datatype pencil;
    MPI_Type_create_hvector(N, 1, E * E * sizeof(double), MPI_DOUBLE, &pencil);
    MPI_Type_commit(&pencil);
    MPI_Bcast(&u[AT(1, 1 + s % N, 1)], 1, pencil, s % size, MPI_COMM_WORLD);
    MPI_Bcast(&u[AT(1, 0, 1 + s % N)], 1, column, (s + 1) % size, MPI_COMM_WORLD);
    MPI_Type_free(&pencil);

    /* Boundary lists round the ring: the indexed shapes change per step. */
    blk[s % 4] = 1 + s % 3;
    MPI_Datatype idx, hidx;
    MPI_Type_indexed(4, blk, at, MPI_DOUBLE, &idx);
    MPI_Aint hat[4];
    for (int k = 0; k < 4; ++k) hat[k] = (MPI_Aint)(at[k] * sizeof(double));
    MPI_Type_create_hindexed(4, blk, hat, MPI_DOUBLE, &hidx);
    MPI_Type_commit(&idx);
    MPI_Type_commit(&hidx);
    for (int k = 0; k < E * E; ++k) list[k] = u[AT(1, k / E, k % E)];
    MPI_Sendrecv(list, 1, idx, right, 8, lget, 1, hidx, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 4; ++k) sum += lget[at[k]];
    MPI_Type_free(&idx);
    MPI_Type_free(&hidx);
    for (int k = 0; k < 16; ++k) ibuf[k] = rank + k + s;
    MPI_Sendrecv(ibuf, 1, quads, right, 9, iget, 1, quads, left, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(ibuf, 1, hquads, left, 10, iget + 8, 1, hquads, right, 10, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    sum += iget[0] + iget[4] + iget[8] + iget[12];
    for (int k = 0; k < 4; ++k) line[4 * rank + k] = rank + k + s;
    MPI_Sendrecv_replace(line, 1, mypart, rank, 11, rank, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sum += line[4 * rank + 3];
    if (rank == s % size)
      for (int d = 0; d < 3; ++d) vec[d] = s + d;
    MPI_Bcast(vec, 1, triple, s % size, MPI_COMM_WORLD);
    float f = (float)(rank + s);
    MPI_Allreduce(MPI_IN_PLACE, &f, 1, real6, MPI_SUM, MPI_COMM_WORLD);
    sum += vec[2] + f;

    /* A copy of the particle type for this step, checked and freed. */
    MPI_Datatype pcopy;
    MPI_Type_dup(ptype, &pcopy);
    int psize, ni, na, nd, combiner;
    MPI_Aint lb, extent;
    MPI_Type_size(pcopy, &psize);
    MPI_Type_get_extent(pcopy, &lb, &extent);
    MPI_Type_get_envelope(ptype, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_RESIZED && nd == 1) {
      int ints[1];
      MPI_Aint addrs[2];
      MPI_Datatype inner;
      MPI_Type_get_contents(ptype, ni, na, nd, ints, addrs, &inner);
      int inner_size;
      MPI_Type_size(inner, &inner_size);
      MPI_Type_get_envelope(inner, &ni, &na, &nd, &combiner);
      sum += inner_size + nd;
      MPI_Type_free(&inner);
    }
    MPI_Type_free(&pcopy);
    sum += psize + (double)extent;
    double total;
    MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum = total / size;
  }
  for (int f = 0; f < 6; ++f) {
    MPI_Type_free(&send_face[f]);
    MPI_Type_free(&recv_face[f]);
  }
  MPI_Type_free(&ptype);
  MPI_Type_free(&column);
  MPI_Type_free(&quads);
  MPI_Type_free(&hquads);
  MPI_Type_free(&triple);
  MPI_Type_free(&mypart);
  free(line);
  free(u);
  if (rank == 0) printf("dtypes: %d ranks, %d steps, checksum %.6e\n", size, steps, sum);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
