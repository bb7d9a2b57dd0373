/* Derived datatypes created and freed every step, each of another size:
 * the MPI library may hand out a freed type's handle for the next one, so
 * the recorder must not keep a freed handle's size (dsize). Step s
 * broadcasts one element of a contiguous type of 1 + s % 4 ints. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  int buf[4] = {0, 0, 0, 0};
  long sum = 0;
  for (int s = 0; s < steps; ++s) {
    MPI_Datatype t;
    MPI_Type_contiguous(1 + s % 4, MPI_INT, &t);
    MPI_Type_commit(&t);
    if (rank == 0)
      for (int k = 0; k < 4; ++k) buf[k] = s + k;
    MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD);
    for (int k = 0; k < 1 + s % 4; ++k) sum += buf[k];
    MPI_Type_free(&t);
  }
  long total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("dtype_reuse: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
