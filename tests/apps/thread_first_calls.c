/* MPI_THREAD_MULTIPLE, 2 ranks of a main thread and three workers whose
 * first MPI calls come in another order than the one they were created
 * in (worker 3, then 1, then 2), so that the timeline's thread numbers
 * (by first call) are not the trace's (threads.cpp orders them by what
 * they recorded) and its trailer maps the one onto the other. Worker W
 * meets worker W of the other rank in an MPI_Sendrecv (tag 10 + W), in
 * turn; then worker W of rank 1 sleeps W x DELAY_MS and sends W messages
 * of W ints (tag W) to worker W of rank 0, which waits in MPI_Recv: a
 * Late Sender of about W x DELAY_MS on that thread alone, and 1 + W calls
 * on each worker. Prints each sleep measured on rank 1.
 * Usage: thread_first_calls [delay_ms] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_util.h"

#define WORKERS 3

static int rank, delay_ms;
static double slept[WORKERS + 1];
/* The turn at which worker W makes its first call. */
static const int turn_of[WORKERS + 1] = {-1, 1, 2, 0};
static int turn;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t moved = PTHREAD_COND_INITIALIZER;

static void* worker(void* arg) {
  const int w = (int)(long)arg, peer = 1 - rank;
  int token = rank, got = -1, values[WORKERS] = {0};
  pthread_mutex_lock(&lock);
  while (turn != turn_of[w]) pthread_cond_wait(&moved, &lock);
  pthread_mutex_unlock(&lock);
  MPI_Sendrecv(&token, 1, MPI_INT, peer, 10 + w, &got, 1, MPI_INT, peer, 10 + w, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  pthread_mutex_lock(&lock);
  ++turn;
  pthread_cond_broadcast(&moved);
  pthread_mutex_unlock(&lock);
  for (int m = 0; m < w; ++m) {
    if (rank == 1) {
      if (m == 0) {
        const double t0 = MPI_Wtime();
        pause_ms(w * delay_ms);
        slept[w] = MPI_Wtime() - t0;
      }
      MPI_Send(values, w, MPI_INT, 0, w, MPI_COMM_WORLD);
    } else {
      MPI_Recv(values, w, MPI_INT, 1, w, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  int size = 0;
  if (!thread_init_multiple(&argc, &argv, "thread_first_calls", &rank, &size)) return 0;
  delay_ms = argc > 1 ? atoi(argv[1]) : 150;
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "thread_first_calls: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  thread_run_all(worker, 1, WORKERS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1)
    for (int w = 1; w <= WORKERS; ++w)
      printf("thread_first_calls: rank 1 worker %d slept %.6f s\n", w, slept[w]);
  MPI_Finalize();
  return 0;
}
