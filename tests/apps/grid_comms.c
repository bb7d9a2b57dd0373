/* Row and column communicators of a 2-D periodic process grid, as in
 * dense linear algebra and pencil FFTs: MPI_Cart_create over an
 * MPI_Dims_create grid, the rows by MPI_Comm_split (color = row, key =
 * column), the columns by MPI_Cart_sub, and a duplicate of the row
 * communicator. Every step a halo exchange on the grid (MPI_Sendrecv along
 * both axes), a ring shift along the row on the row communicator, an
 * Allreduce over the row, a Bcast down the column from its first rank and a
 * Reduce to the last rank of the row on the duplicate.
 * usage: app_grid_comms STEPS [WORK] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  int dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2];
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart, row, col, rdup;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Cart_coords(cart, rank, 2, coords);
  MPI_Comm_split(cart, coords[0], coords[1], &row);
  const int remain[2] = {1, 0};
  MPI_Cart_sub(cart, remain, &col);
  MPI_Comm_dup(row, &rdup);
  int rsize, rrank;
  MPI_Comm_size(row, &rsize);
  MPI_Comm_rank(row, &rrank);
  double halo[8] = {0}, in[8], sum = 0.0, v = rank;
  for (int s = 0; s < steps; ++s) {
    for (int axis = 0; axis < 2; ++axis) {
      int lo, hi;
      MPI_Cart_shift(cart, axis, 1, &lo, &hi);
      MPI_Sendrecv(halo, 8, MPI_DOUBLE, hi, axis, in, 8, MPI_DOUBLE, lo, axis, cart,
                   MPI_STATUS_IGNORE);
      halo[axis] += in[axis];
    }
    double token = v, got;
    MPI_Sendrecv(&token, 1, MPI_DOUBLE, (rrank + 1) % rsize, 5, &got, 1, MPI_DOUBLE,
                 (rrank + rsize - 1) % rsize, 5, row, MPI_STATUS_IGNORE);
    app_work(wunits);
    double rowsum;
    MPI_Allreduce(&got, &rowsum, 1, MPI_DOUBLE, MPI_SUM, row);
    MPI_Bcast(&rowsum, 1, MPI_DOUBLE, 0, col);
    double total = 0.0;
    MPI_Reduce(&rowsum, &total, 1, MPI_DOUBLE, MPI_SUM, rsize - 1, rdup);
    sum += total;
    v += 1.0;
  }
  double all = 0.0;
  MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, cart);
  if (rank == 0)
    printf("grid_comms: %d ranks (%dx%d) checksum %.3f\n", size, dims[0], dims[1], all);
  MPI_Comm_free(&rdup);
  MPI_Comm_free(&col);
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
