/* LU-like (NPB LU/SSOR style) on a 2D process grid. Each iteration does a
 * lower-triangular sweep (wavefront from the north-west corner) and an
 * upper-triangular sweep (from the south-east corner) over NZ planes. The
 * upstream boundary data of a plane is received with MPI_ANY_SOURCE (from
 * the north and the west neighbour, in whatever order they arrive) and
 * told apart by the status' source; the results go downstream with
 * blocking sends. Then a halo exchange whose receives are nonblocking
 * ANY_SOURCE receives completed one by one with MPI_Wait, and an
 * Allreduce of the residual every 2 iterations. usage: app_lu STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define NZ 5
#define LEN 8

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int row = rank / dims[1], col = rank % dims[1];
  const int north = row > 0 ? rank - dims[1] : -1, south = row < dims[0] - 1 ? rank + dims[1] : -1;
  const int west = col > 0 ? rank - 1 : -1, east = col < dims[1] - 1 ? rank + 1 : -1;
  long v[LEN], in[LEN], acc = rank, resid = 0, total = 0;
  for (int i = 0; i < LEN; ++i) v[i] = rank + i;
  for (int it = 0; it < steps; ++it) {
    app_work(wunits);
    for (int sweep = 0; sweep < 2; ++sweep) {
      const int up1 = sweep ? south : north, up2 = sweep ? east : west;
      const int dn1 = sweep ? north : south, dn2 = sweep ? west : east;
      const int nup = (up1 >= 0) + (up2 >= 0);
      for (int k = 0; k < NZ; ++k) {
        const int tag = sweep * 100 + k;
        for (int m = 0; m < nup; ++m) {
          MPI_Status st;
          MPI_Recv(in, LEN, MPI_LONG, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
          const int w = st.MPI_SOURCE == up1 ? 3 : 5; /* weight by direction */
          for (int i = 0; i < LEN; ++i) v[i] = (v[i] + w * in[i]) % 1000003;
        }
        for (int i = 0; i < LEN; ++i) v[i] = (v[i] * 7 + k + it) % 1000003;
        if (dn1 >= 0) MPI_Send(v, LEN, MPI_LONG, dn1, tag, MPI_COMM_WORLD);
        if (dn2 >= 0) MPI_Send(v, LEN, MPI_LONG, dn2, tag, MPI_COMM_WORLD);
      }
    }
    /* halo exchange: wildcard nonblocking receives, completed one at a time */
    const int nbs[4] = {north, south, west, east};
    MPI_Request rr[4], sr[4];
    long hin[4][2], hout[2] = {v[0], v[1]};
    int nr = 0;
    for (int d = 0; d < 4; ++d)
      if (nbs[d] >= 0)
        MPI_Irecv(hin[nr], 2, MPI_LONG, MPI_ANY_SOURCE, 300, MPI_COMM_WORLD, &rr[nr]), ++nr;
    int ns = 0;
    for (int d = 0; d < 4; ++d)
      if (nbs[d] >= 0) MPI_Isend(hout, 2, MPI_LONG, nbs[d], 300, MPI_COMM_WORLD, &sr[ns++]);
    for (int i = 0; i < nr; ++i) {
      MPI_Status st;
      MPI_Wait(&rr[i], &st);
      acc = (acc + hin[i][0] + hin[i][1]) % 1000003; /* order-independent */
    }
    MPI_Waitall(ns, sr, MPI_STATUSES_IGNORE);
    /* neighbours may race ahead into the next iteration's halo: keep it apart */
    MPI_Barrier(MPI_COMM_WORLD);
    if (it % 2 == 1) {
      long local = (acc + v[LEN - 1]) % 1000003;
      MPI_Allreduce(&local, &resid, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      total += resid;
    }
  }
  if (rank == 0)
    printf("lu: %d ranks (%dx%d), %d iterations, checksum %ld\n", size, dims[0], dims[1], steps,
           total);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
