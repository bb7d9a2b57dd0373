/* A persistent wildcard receive: rank 0 sets up one
 * MPI_Recv_init(MPI_ANY_SOURCE, tag 5) and, every step, starts it once per
 * other rank and completes it with MPI_Wait, noting who sent; the other
 * ranks each send rank 0 one message per step. Which sender a start
 * matches depends on arrival order, so it varies from run to run.
 * usage: app_persistent_wild STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  long sum = 0, value = 0;
  if (rank == 0) {
    MPI_Request req;
    MPI_Recv_init(&value, 1, MPI_LONG, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req);
    for (int s = 0; s < steps; ++s) {
      for (int k = 1; k < size; ++k) {
        MPI_Status st;
        MPI_Start(&req);
        MPI_Wait(&req, &st);
        if (value != 1000L * st.MPI_SOURCE + s) {
          fprintf(stderr, "persistent_wild: step %d: got %ld from rank %d\n", s, value,
                  st.MPI_SOURCE);
          MPI_Abort(MPI_COMM_WORLD, 2);
        }
        sum += value;
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&req);
  } else {
    for (int s = 0; s < steps; ++s) {
      value = 1000L * rank + s;
      MPI_Send(&value, 1, MPI_LONG, 0, 5, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  if (rank == 0) printf("persistent_wild: %d ranks, %d steps, checksum %ld\n", size, steps, sum);
  MPI_Finalize();
  return 0;
}
