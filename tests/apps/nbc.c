/* Nonblocking collectives. Every step: an MPI_Iallreduce overlapped with
 * computation, polled with MPI_Test until it completes (so the number of
 * Test calls differs from step to step and rank to rank), then an
 * MPI_Ibcast from a root that rotates with the step, completed with
 * MPI_Wait; every 4th step also an MPI_Ibarrier + MPI_Wait.
 * usage: app_nbc STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 30;
  long x = rank + 1, acc = 0;
  volatile double sink = 0.0;
  for (int s = 0; s < steps; ++s) {
    app_work(wunits);
    long in[2] = {x, x % 7}, out[2];
    MPI_Request r;
    MPI_Iallreduce(in, out, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
    int done = 0;
    while (!done) {
      for (int k = 0; k < 2000; ++k) sink = sink + k * 1e-9; /* overlap some work */
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }
    long b[3] = {out[0], out[1], s};
    if (rank != s % size) b[0] = b[1] = b[2] = -1;
    MPI_Ibcast(b, 3, MPI_LONG, s % size, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (s % 4 == 3) {
      MPI_Ibarrier(MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    x = (x * 5 + b[0] + b[1] + b[2]) % 100003;
    acc = (acc + x) % 1000003;
  }
  long total;
  MPI_Allreduce(&acc, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("nbc: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
