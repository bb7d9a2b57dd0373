/* MPI_THREAD_MULTIPLE: one thread makes the requests, another completes
 * them. Per step, thread 1 posts an MPI_Irecv from the left neighbour and
 * an MPI_Isend to the right one on a periodic ring; thread 0 then
 * completes both, with MPI_Waitall on even steps and one MPI_Wait each on
 * odd steps. The threads take turns (a pthread barrier), so each step's
 * requests are completed before the next are made. With `third`, a third
 * thread completes them instead of thread 0, and makes its first MPI call
 * (an MPI_Barrier on MPI_COMM_SELF) before thread 1 does.
 * Usage: thread_requests [steps] [third] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thread_util.h"

static int rank, size, steps;
static MPI_Request reqs[2];
static long out, in, sum;
static pthread_barrier_t turn;

static void* poster(void* arg) {
  if (arg) pthread_barrier_wait(&turn);  // the completer called MPI first
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int s = 0; s < steps; ++s) {
    out = rank * 1000 + s;
    MPI_Irecv(&in, 1, MPI_LONG, left, 7, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&out, 1, MPI_LONG, right, 7, MPI_COMM_WORLD, &reqs[1]);
    pthread_barrier_wait(&turn);  // posted: thread 0 completes them
    pthread_barrier_wait(&turn);  // completed
  }
  return NULL;
}

static void* completer(void* arg) {
  if (arg) {
    MPI_Barrier(MPI_COMM_SELF);
    pthread_barrier_wait(&turn);
  }
  for (int s = 0; s < steps; ++s) {
    pthread_barrier_wait(&turn);
    if (s % 2 == 0) {
      MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    } else {
      MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
      MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    }
    sum += in;
    pthread_barrier_wait(&turn);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (!thread_init_multiple(&argc, &argv, "thread_requests", &rank, &size)) return 0;
  steps = argc > 1 ? atoi(argv[1]) : 20;
  const int third = argc > 2 && strcmp(argv[2], "third") == 0;
  pthread_barrier_init(&turn, NULL, 2);
  const pthread_t tid = thread_start(poster, third ? &turn : NULL);
  if (third) {
    pthread_join(thread_start(completer, &turn), NULL);
  } else {
    completer(NULL);
  }
  pthread_join(tid, NULL);
  pthread_barrier_destroy(&turn);
  long total = 0;
  MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("thread_requests: %d ranks, %d steps, sum %ld\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
