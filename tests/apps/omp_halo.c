/* MPI_THREAD_MULTIPLE with OpenMP: each thread of a parallel region
 * sends its own slab to the same thread of the next rank of a periodic
 * ring and receives the previous rank's (tag = its OpenMP number), then
 * the master thread reduces a checksum.
 * Usage: omp_halo [steps] [threads] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_util.h"

int main(int argc, char** argv) {
  int rank = 0, size = 1;
  if (!thread_init_multiple(&argc, &argv, "omp_halo", &rank, &size)) return 0;
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  const int threads = argc > 2 ? atoi(argv[2]) : 2;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  {
    const int t = omp_get_thread_num();
    double slab[64], halo[64];
    for (int i = 0; i < 64; ++i) slab[i] = rank * 1000 + t * 100 + i;
    for (int s = 0; s < steps; ++s) {
      MPI_Sendrecv(slab, 64, MPI_DOUBLE, right, t, halo, 64, MPI_DOUBLE, left, t, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      sum += (long)halo[s % 64];
    }
  }
  long total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("omp_halo: %d ranks, %d threads, %d steps, checksum %ld\n", size, threads, steps, total);
  MPI_Finalize();
  return 0;
}
