/* Computation only: STEPS rounds of work separated by MPI_Pcontrol, a local
 * call, so the trace holds compute times and no communication at all
 * (tests/mpi/simulate.sh checks that SimGrid predicts exactly their sum). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const int units = argc > 2 ? atoi(argv[2]) : 200;
  for (int s = 0; s < steps; ++s) {
    app_work(units);
    MPI_Pcontrol(1);
  }
  if (rank == 0) printf("sim_compute: %d ranks, %d steps\n", size, steps);
  MPI_Finalize();
  return 0;
}
