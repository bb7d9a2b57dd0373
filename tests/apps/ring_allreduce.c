/* Ring allreduce in point-to-point, as data-parallel training codes sum
 * their gradients without MPI_Allreduce (the bandwidth-optimal ring of
 * Baidu's and Horovod's reducers): the vector is cut into one chunk per
 * rank; in p - 1 reduce-scatter steps each rank sends a chunk to the next
 * rank and adds the chunk it receives from the previous one, so that each
 * rank ends with one chunk fully summed; in p - 1 allgather steps the
 * summed chunks go round once more. Every step is one MPI_Sendrecv.
 * Each training step then agrees on the loss with one MPI_Allreduce (in
 * train_step()), so each call of ring_allreduce() is one occurrence.
 *
 *   app_ring_allreduce STEPS [CHUNK]   (defaults 4 and 32 doubles a chunk)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

enum { kRingTag = 21 };

static void ring_allreduce(double* v, int chunk, int rank, int size) {
  double* in = malloc(sizeof(double) * (size_t)chunk);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int s = 0; s < size - 1; ++s) { /* reduce-scatter */
    const int out_c = (rank - s + size) % size, in_c = (rank - s - 1 + size) % size;
    MPI_Sendrecv(v + out_c * chunk, chunk, MPI_DOUBLE, next, kRingTag, in, chunk, MPI_DOUBLE, prev,
                 kRingTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < chunk; ++i) v[in_c * chunk + i] += in[i];
  }
  for (int s = 0; s < size - 1; ++s) { /* allgather */
    const int out_c = (rank + 1 - s + size) % size, in_c = (rank - s + size) % size;
    MPI_Sendrecv(v + out_c * chunk, chunk, MPI_DOUBLE, next, kRingTag, v + in_c * chunk, chunk,
                 MPI_DOUBLE, prev, kRingTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  free(in);
}

static double train_step(double* grad, int chunk, int rank, int size, int step) {
  for (int i = 0; i < chunk * size; ++i) grad[i] = rank + step + i % 7;
  ring_allreduce(grad, chunk, rank, size);
  double loss = grad[0], total;
  MPI_Allreduce(&loss, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 4;
  const int chunk = argc > 2 ? atoi(argv[2]) : 32;
  double* grad = malloc(sizeof(double) * (size_t)(chunk * size));
  double total = 0;
  for (int s = 0; s < steps; ++s) {
    total += train_step(grad, chunk, rank, size, s);
    app_work(wunits);
  }
  if (rank == 0) printf("ring_allreduce: %d ranks, %d steps, checksum %.1f\n", size, steps, total);
  free(grad);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
