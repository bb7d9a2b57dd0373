/* MPI_THREAD_MULTIPLE: two threads per rank, each with its own pattern.
 * The main thread (thread 0: it calls MPI first) passes a token round a
 * ring (tag 1, to rank + 1, from rank - 1); the second thread (thread 1)
 * does a 1-D periodic halo exchange with both neighbours (tag 2, Irecv,
 * Isend, Waitall). Both run their steps at the same time, so a rank's
 * calls interleave as the run's timing has it. With `shared`, the halo
 * uses tag 1 too: the threads then share (communicator, peer, tag). All
 * messages are one int, so that a message taken by the other thread's
 * receive (as `shared` allows) still fits and the run ends.
 * Usage: thread_patterns [steps] [shared] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thread_util.h"

static int rank, size, steps, halo_tag = 2;

static void* halo(void* arg) {
  (void)arg;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  int out[2] = {0, 0}, in[2];
  for (int s = 0; s < steps; ++s) {
    MPI_Request r[4];
    out[0] = out[1] = rank + s;
    MPI_Irecv(&in[0], 1, MPI_INT, left, halo_tag, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, right, halo_tag, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(&out[0], 1, MPI_INT, left, halo_tag, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(&out[1], 1, MPI_INT, right, halo_tag, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (!thread_init_multiple(&argc, &argv, "thread_patterns", &rank, &size)) return 0;
  steps = argc > 1 ? atoi(argv[1]) : 4;
  if (argc > 2 && strcmp(argv[2], "shared") == 0) halo_tag = 1;
  pthread_t second;
  pthread_create(&second, NULL, halo, NULL);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int token = 0;
  for (int s = 0; s < steps; ++s) {
    if (rank == 0) {
      token = s;
      MPI_Send(&token, 1, MPI_INT, next, 1, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&token, 1, MPI_INT, next, 1, MPI_COMM_WORLD);
    }
  }
  pthread_join(second, NULL);
  if (rank == 0) printf("thread_patterns: %d ranks %d steps token %d\n", size, steps, token);
  MPI_Finalize();
  return 0;
}
