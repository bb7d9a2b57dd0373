/* Cost per MPI call: a loop of 8-byte Allreduce and a 2-rank ping-pong.
 * Prints one line per kernel: name, calls per rank, seconds, microseconds per call.
 * Run it with and without the recorder; scripts/bench-record.sh does both. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = argc > 1 ? atoi(argv[1]) : 100000;
  double in = rank, out = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double t_allreduce = MPI_Wtime() - t0;

  char byte = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  if (rank < 2 && size >= 2) {
    for (int i = 0; i < iters; ++i) {
      if (rank == 0) {
        MPI_Send(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
  }
  double t_pingpong = MPI_Wtime() - t0;
  if (rank == 0) {
    printf("allreduce8 %d %.6f %.3f\n", iters, t_allreduce, 1e6 * t_allreduce / iters);
    printf("pingpong %d %.6f %.3f\n", 2 * iters, t_pingpong, 1e6 * t_pingpong / (2.0 * iters));
  }
  MPI_Finalize();
  return 0;
}
