/* MPI_THREAD_MULTIPLE, 2 ranks of two threads: a Late Sender on one
 * thread only. Thread 1 (the worker) of rank 1 sleeps DELAY_MS before
 * sending to thread 1 of rank 0, which is already waiting in MPI_Recv;
 * thread 0 of rank 1 sends to thread 0 of rank 0 at once, and thread 0 of
 * rank 0 computes (sleeps) DELAY_MS / 2 before its receive, so that it
 * never waits. Each pair has its own tag. The workers first meet in an
 * MPI_Sendrecv, so that both start their part together. Prints the sleep
 * measured on rank 1's worker.
 * Usage: thread_late [delay_ms] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_util.h"

static int rank, delay_ms;
static double slept;

static void* worker(void* arg) {
  (void)arg;
  const int peer = 1 - rank;
  int token = rank, got = -1, value = 0;
  MPI_Sendrecv(&token, 1, MPI_INT, peer, 2, &got, 1, MPI_INT, peer, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (rank == 1) {
    const double t0 = MPI_Wtime();
    pause_ms(delay_ms);
    slept = MPI_Wtime() - t0;
    value = 11;
    MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int size = 0;
  if (!thread_init_multiple(&argc, &argv, "thread_late", &rank, &size)) return 0;
  delay_ms = argc > 1 ? atoi(argv[1]) : 400;
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "thread_late: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const pthread_t tid = thread_start(worker, NULL);
  int value = 0;
  if (rank == 1) {
    value = 10;
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else {
    pause_ms(delay_ms / 2);
    MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  pthread_join(tid, NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) printf("thread_late: rank 1 thread 1 slept %.6f s\n", slept);
  MPI_Finalize();
  return 0;
}
