/* Completion calls and the requests they complete. Every step each rank
 * posts two wildcard receives (MPI_ANY_SOURCE; its two ring neighbours send
 * to it), sends to both neighbours with MPI_Isend, completes the receives
 * one at a time with MPI_Waitany and the sends with MPI_Waitall. Small
 * sends may complete at once inside Open MPI, which then hands out one
 * shared "already complete" request handle for both Isends.
 * usage: app_request_links STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  long acc = 0;
  for (int s = 0; s < steps; ++s) {
    long in[2], out[2] = {rank + s, 2 * rank + s};
    MPI_Request recv[2], send[2];
    MPI_Irecv(&in[0], 1, MPI_LONG, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &recv[0]);
    MPI_Irecv(&in[1], 1, MPI_LONG, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &recv[1]);
    MPI_Isend(&out[0], 1, MPI_LONG, right, 5, MPI_COMM_WORLD, &send[0]);
    MPI_Isend(&out[1], 1, MPI_LONG, left, 5, MPI_COMM_WORLD, &send[1]);
    for (int k = 0; k < 2; ++k) {
      int idx;
      MPI_Status st;
      MPI_Waitany(2, recv, &idx, &st);
      acc += st.MPI_SOURCE == left ? 3 * in[idx] : 5 * in[idx];
    }
    MPI_Waitall(2, send, MPI_STATUSES_IGNORE);
  }
  long total = 0;
  MPI_Reduce(&acc, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("request_links: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
