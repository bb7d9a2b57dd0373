/* Like NPB BT's structure (seed 000, Figure 5.3): the same exchange is made
 * from two solver functions, so the MPI calls have different call stacks
 * although the program is symmetric. Usage: bt_like [steps] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

static double buf_out[16], buf_in[16];

static void exchange(int peer) {
  MPI_Request r[2];
  MPI_Irecv(buf_in, 16, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(buf_out, 16, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r[1]);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  MPI_Wait(&r[1], MPI_STATUS_IGNORE);
}

__attribute__((noinline)) static void solve_x(int rank, int size) {
  for (int i = 0; i < 16; ++i) buf_out[i] += 1.0;
  exchange((rank ^ 1) < size ? (rank ^ 1) : rank);
}

__attribute__((noinline)) static void solve_y(int rank, int size) {
  for (int i = 0; i < 16; ++i) buf_out[i] *= 0.5;
  exchange((rank ^ 1) < size ? (rank ^ 1) : rank);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  for (int s = 0; s < steps; ++s) {
    app_work(wunits);
    solve_x(rank, size);
    solve_y(rank, size);
  }
  double sum = 0, total = 0;
  for (int i = 0; i < 16; ++i) sum += buf_in[i];
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("bt_like: %d ranks, %d steps, checksum %.6f\n", size, steps, total);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
