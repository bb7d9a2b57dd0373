/* Sub-communicators. Row and column communicators from MPI_Comm_split over
 * a 2D grid (MPI_Dims_create), and a Cartesian communicator (periodic in
 * dimension 1 only) with MPI_Cart_shift neighbours and MPI_Cart_sub row
 * and column communicators. Every step: Allreduce in the row, Bcast in the
 * column (root varies with the step), Sendrecv with the Cartesian
 * neighbours (MPI_PROC_NULL at the non-periodic edges), Allreduce over the
 * Cart_sub row and Reduce over the Cart_sub column.
 * usage: app_comms STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int row = rank / dims[1], col = rank % dims[1];
  MPI_Comm rowc, colc, cart, crow, ccol;
  MPI_Comm_split(MPI_COMM_WORLD, row, col, &rowc);
  MPI_Comm_split(MPI_COMM_WORLD, col, row, &colc);
  const int periods[2] = {0, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int crank, coords[2];
  MPI_Comm_rank(cart, &crank);
  MPI_Cart_coords(cart, crank, 2, coords);
  int up, down, left, right;
  MPI_Cart_shift(cart, 0, 1, &up, &down);
  MPI_Cart_shift(cart, 1, 1, &left, &right);
  const int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
  MPI_Cart_sub(cart, keep_row, &crow);
  MPI_Cart_sub(cart, keep_col, &ccol);
  int rsize, csize;
  MPI_Comm_size(rowc, &rsize);
  MPI_Comm_size(colc, &csize);
  long x = rank + 1, acc = 0;
  for (int s = 0; s < steps; ++s) {
    long rsum, cval, in1 = 0, in2 = 0, subsum, red = 0;
    MPI_Allreduce(&x, &rsum, 1, MPI_LONG, MPI_SUM, rowc);
    cval = rsum + s;
    MPI_Bcast(&cval, 1, MPI_LONG, s % csize, colc);
    MPI_Sendrecv(&x, 1, MPI_LONG, down, 1, &in1, 1, MPI_LONG, up, 1, cart, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&x, 1, MPI_LONG, right, 2, &in2, 1, MPI_LONG, left, 2, cart, MPI_STATUS_IGNORE);
    MPI_Allreduce(&cval, &subsum, 1, MPI_LONG, MPI_MAX, crow);
    MPI_Reduce(&in2, &red, 1, MPI_LONG, MPI_SUM, 0, ccol);
    x = (x * 3 + in1 + in2 + subsum + red) % 100003;
    acc = (acc + x) % 1000003;
  }
  long total = 0;
  MPI_Allreduce(&acc, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("comms: %d ranks (%dx%d, rows of %d, columns of %d), %d steps, checksum %ld\n", size,
           dims[0], dims[1], rsize, csize, steps, total);
  MPI_Comm_free(&ccol);
  MPI_Comm_free(&crow);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&colc);
  MPI_Comm_free(&rowc);
  MPI_Finalize();
  return 0;
}
