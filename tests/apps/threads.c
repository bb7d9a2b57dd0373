/* MPI_THREAD_MULTIPLE: two threads per rank exchange messages with the same
 * thread on the partner rank, each on its own duplicated communicator, at
 * the same time. Usage: threads [steps] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_util.h"

enum { kThreads = 2 };
static int rank, size, steps;
static MPI_Comm comms[kThreads];
static long sums[kThreads];

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  const int partner = rank ^ 1;
  long value = rank * 100 + t, in = 0;
  for (int s = 0; s < steps; ++s) {
    if (partner < size) {
      MPI_Sendrecv(&value, 1, MPI_LONG, partner, t, &in, 1, MPI_LONG, partner, t, comms[t],
                   MPI_STATUS_IGNORE);
      sums[t] += in;
    }
    MPI_Barrier(comms[t]);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (!thread_init_multiple(&argc, &argv, "threads", &rank, &size)) return 0;
  steps = argc > 1 ? atoi(argv[1]) : 50;
  for (int t = 0; t < kThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  thread_run_all(worker, 0, kThreads);
  long local = sums[0] + sums[1], total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int t = 0; t < kThreads; ++t) MPI_Comm_free(&comms[t]);
  if (rank == 0) printf("threads: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
