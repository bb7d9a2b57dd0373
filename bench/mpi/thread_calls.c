/* Recording cost per call with threads: THREADS pthreads of one rank each
 * make CALLS MPI_Sendrecv calls to MPI_PROC_NULL (recorded like any
 * Sendrecv, no message moves) under MPI_THREAD_MULTIPLE. Prints the
 * seconds the slowest thread took.
 * Usage: thread_calls CALLS THREADS */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int calls;

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  double* seconds = malloc(sizeof *seconds);
  int x = t, y = 0;
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i)
    MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, t, &y, 1, MPI_INT, MPI_PROC_NULL, t, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  *seconds = MPI_Wtime() - start;
  return seconds;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  calls = argc > 1 ? atoi(argv[1]) : 1000;
  const int threads = argc > 2 ? atoi(argv[2]) : 1;
  if (provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "thread_calls: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  pthread_t tid[64];
  double slowest = 0;
  for (int t = 0; t < threads && t < 64; ++t) pthread_create(&tid[t], NULL, worker, (void*)(long)t);
  for (int t = 0; t < threads && t < 64; ++t) {
    void* r = NULL;
    pthread_join(tid[t], &r);
    if (*(double*)r > slowest) slowest = *(double*)r;
    free(r);
  }
  printf("seconds %.9f\n", slowest);
  MPI_Finalize();
  return 0;
}
