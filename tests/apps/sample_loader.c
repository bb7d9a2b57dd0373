/* Sampling while the program walks the loader's list of objects
 * (dl_iterate_phdr, as libgcc, UCX and the recorder's module table do):
 * every rank calls it in a loop for SECONDS (argv[1], default 2), so
 * that ticks land in the loader's lock while it is being taken and
 * released (tests/mpi/sample_loader.sh). Every 0.1 s a rank polls
 * (MPI_Iprobe, which finds nothing), as a computing rank calls MPI now
 * and then: the recorder drains its samples there, so its ring of 4,096
 * never fills at 250 us. Rank 0 prints the calls. */
#define _GNU_SOURCE
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int count_object(struct dl_phdr_info* info, size_t size, void* data) {
  (void)info;
  (void)size;
  ++*(long*)data;
  return 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const double seconds = argc > 1 ? atof(argv[1]) : 2;
  long objects = 0, calls = 0;
  const double t0 = now();
  double polled = t0;
  for (double t = t0; t - t0 < seconds; t = now()) {
    dl_iterate_phdr(count_object, &objects);
    ++calls;
    if (t - polled >= 0.1) {
      int flag;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      polled = t;
    }
  }
  long all = 0;
  MPI_Reduce(&calls, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("sample_loader: %ld calls, %ld objects seen\n", all, objects);
  MPI_Finalize();
  return 0;
}
