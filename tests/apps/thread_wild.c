/* MPI_THREAD_MULTIPLE with a wildcard receive on a thread after the first:
 * per step the main thread (thread 0) passes a value around a ring on a
 * communicator of its own, while on another communicator the second thread
 * of every rank but 0 sends one message to rank 0's second thread, which
 * takes them with MPI_ANY_SOURCE in the order they come (its status names
 * the sender, so the trace records each match); then the second
 * threads meet in a barrier that rank 0 calls from a line of its own (the
 * benchmark aligns the two lines into one collective). Usage:
 * thread_wild [steps] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_util.h"

enum { kTag = 5 };
static int rank, size, steps;
static MPI_Comm ring_comm, wild_comm;
static long received;

static void* gather_thread(void* arg) {
  (void)arg;
  for (int s = 0; s < steps; ++s) {
    long value = rank * 1000 + s;
    if (rank == 0) {
      for (int k = 1; k < size; ++k) {
        long in = 0;
        MPI_Status status;
        MPI_Recv(&in, 1, MPI_LONG, MPI_ANY_SOURCE, kTag, wild_comm, &status);
        if (in / 1000 == status.MPI_SOURCE) received += in;
      }
      MPI_Barrier(wild_comm);
    } else {
      MPI_Send(&value, 1, MPI_LONG, 0, kTag, wild_comm);
      MPI_Barrier(wild_comm);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (!thread_init_multiple(&argc, &argv, "thread_wild", &rank, &size)) return 0;
  steps = argc > 1 ? atoi(argv[1]) : 10;
  MPI_Comm_dup(MPI_COMM_WORLD, &ring_comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &wild_comm);
  pthread_t other = thread_start(gather_thread, NULL);
  long token = rank;
  for (int s = 0; s < steps; ++s) {
    long in = 0;
    MPI_Sendrecv(&token, 1, MPI_LONG, (rank + 1) % size, 0, &in, 1, MPI_LONG,
                 (rank + size - 1) % size, 0, ring_comm, MPI_STATUS_IGNORE);
    token = in + 1;
  }
  pthread_join(other, NULL);
  MPI_Comm_free(&wild_comm);
  MPI_Comm_free(&ring_comm);
  if (rank == 0) printf("thread_wild: %d ranks, %d steps, received %ld\n", size, steps, received);
  MPI_Finalize();
  return 0;
}
