/* A hybrid stencil under MPI_THREAD_FUNNELED: OpenMP threads compute a
 * 1-D Jacobi sweep, the master thread alone exchanges halos with both
 * neighbours of a periodic ring and reduces the residual. The program is
 * SPMD in ranks and in threads, so its trace should not depend on either.
 * Usage: omp_stencil [steps] [threads] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 4096 };

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const int threads = argc > 2 ? atoi(argv[2]) : 2;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  static double u[N + 2], v[N + 2];
  for (int i = 0; i < N + 2; ++i) u[i] = rank + i * 1e-3;
  double res = 0;
#pragma omp parallel num_threads(threads)
  for (int s = 0; s < steps; ++s) {
#pragma omp master
    {
      MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[N + 1], 1, MPI_DOUBLE, right, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
#pragma omp barrier
#pragma omp for
    for (int i = 1; i <= N; ++i) v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
#pragma omp for
    for (int i = 1; i <= N; ++i) u[i] = v[i];
#pragma omp master
    {
      double local = u[N / 2], global = 0;
      MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      res = global;
    }
#pragma omp barrier
  }
  if (rank == 0)
    printf("omp_stencil: %d ranks, %d threads, %d steps, sum %.6f\n", size, threads, steps, res);
  MPI_Finalize();
  return 0;
}
