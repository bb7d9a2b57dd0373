/* Wavefront sweep in the style of Sweep3D. A 2D process grid (i across
 * columns, j across rows) over a 3D domain cut into k-blocks. For each of
 * the eight octants the sweep starts at one corner of the grid: every rank
 * receives the incoming angular flux from its upstream i and j neighbours
 * (blocking MPI_Recv), computes the block, and sends the outgoing flux to
 * its downstream neighbours (blocking MPI_Send). Ranks on the inflow edges
 * have no upstream neighbour, so they skip those receives. An Allreduce of
 * the scalar flux ends every iteration. usage: app_sweep3d STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define KBLOCKS 4
#define MMI 3 /* angles per block */
#define IT 4  /* local cells in i */
#define JT 4  /* local cells in j */

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
  const int npe_j = dims[0], npe_i = dims[1];
  const int my_j = rank / npe_i, my_i = rank % npe_i;
  long iflux[JT * MMI], jflux[IT * MMI];
  long flux = 0, total = 0;
  for (int it = 0; it < steps; ++it) {
    app_work(wunits);
    for (int oct = 0; oct < 8; ++oct) {
      const int di = (oct & 1) ? -1 : 1, dj = (oct & 2) ? -1 : 1;
      const int up_i = (my_i - di >= 0 && my_i - di < npe_i) ? rank - di : -1;
      const int dn_i = (my_i + di >= 0 && my_i + di < npe_i) ? rank + di : -1;
      const int up_j = (my_j - dj >= 0 && my_j - dj < npe_j) ? rank - dj * npe_i : -1;
      const int dn_j = (my_j + dj >= 0 && my_j + dj < npe_j) ? rank + dj * npe_i : -1;
      for (int kb = 0; kb < KBLOCKS; ++kb) {
        const int k = (oct & 4) ? KBLOCKS - 1 - kb : kb;
        if (up_i >= 0)
          MPI_Recv(iflux, JT * MMI, MPI_LONG, up_i, 100 + oct, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
          for (int x = 0; x < JT * MMI; ++x) iflux[x] = oct + x;
        if (up_j >= 0)
          MPI_Recv(jflux, IT * MMI, MPI_LONG, up_j, 200 + oct, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
          for (int x = 0; x < IT * MMI; ++x) jflux[x] = k + x;
        /* "compute" the block: mix the incoming fluxes */
        for (int m = 0; m < MMI; ++m)
          for (int j = 0; j < JT; ++j)
            for (int i = 0; i < IT; ++i) {
              const long in = iflux[j * MMI + m] + jflux[i * MMI + m] + k + it;
              const long out = (in * 3 + 1) % 1000003;
              iflux[j * MMI + m] = out;
              jflux[i * MMI + m] = (out + in) % 1000003;
              flux += out % 97;
            }
        if (dn_i >= 0) MPI_Send(iflux, JT * MMI, MPI_LONG, dn_i, 100 + oct, MPI_COMM_WORLD);
        if (dn_j >= 0) MPI_Send(jflux, IT * MMI, MPI_LONG, dn_j, 200 + oct, MPI_COMM_WORLD);
      }
    }
    MPI_Allreduce(&flux, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("sweep3d: %d ranks (%dx%d), %d iterations, checksum %ld\n", size, npe_j, npe_i, steps,
           total);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
