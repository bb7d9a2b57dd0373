/* MPI kernel for the tracefold-mem tests: rank r fills (r+1)*N doubles in
 * fill(), which makes exactly (r+1)*N stores and one load (its `ret`).
 * usage: mpirun -np P ranks N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void fill(double* a, long n) {
  for (long i = 0; i < n; i++) a[i] = (double)i;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = argc > 1 ? atol(argv[1]) : 0;
  double* a = n > 0 ? malloc(sizeof(double) * (size_t)n * (size_t)(rank + 1)) : NULL;
  if (a == NULL) {
    if (rank == 0) fprintf(stderr, "usage: ranks N\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fill(a, n * (rank + 1));
  double mine = a[n * (rank + 1) - 1], total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("ranks %d total %.0f\n", size, total);
  free(a);
  MPI_Finalize();
  return 0;
}
