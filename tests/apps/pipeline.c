/* Pipeline: a stream of image tiles through a chain of filter stages, one
 * stage per rank, as a video or signal-processing code distributes its
 * filters. Each step, rank 0 makes BLOCKS tiles and sends each on; every
 * other rank waits for a tile from the stage before it (MPI_Recv), filters
 * it and passes it on (MPI_Send); the last rank keeps a checksum. At the
 * end of each step the ranks agree on the checksum (MPI_Allreduce, in
 * check_step()), so each step's pass through run_stage() is one occurrence
 * of the pipeline.
 *
 *   app_pipeline STEPS [BLOCKS]   (defaults 4 and 3)
 *
 * BLOCKS is how many tiles are in flight per step: the stages overlap on
 * different tiles, which is what makes a chain of stages a pipeline and
 * not a shift. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

enum { kTile = 64, kTileTag = 11 };

static void filter(double* tile, int stage) {
  for (int i = 0; i < kTile; ++i) tile[i] = 0.5 * tile[i] + stage;
}

/* One step of the stream through this rank's stage; returns the sum of
 * the tiles the last stage received. */
static double run_stage(int rank, int size, int blocks, int step) {
  double tile[kTile], sum = 0;
  for (int b = 0; b < blocks; ++b) {
    if (rank == 0) {
      for (int i = 0; i < kTile; ++i) tile[i] = step + b + i;
    } else {
      MPI_Recv(tile, kTile, MPI_DOUBLE, rank - 1, kTileTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    filter(tile, rank);
    if (rank + 1 < size) {
      MPI_Send(tile, kTile, MPI_DOUBLE, rank + 1, kTileTag, MPI_COMM_WORLD);
    } else {
      for (int i = 0; i < kTile; ++i) sum += tile[i];
    }
  }
  return sum;
}

static double check_step(double sum) {
  double total;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
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
  const int blocks = argc > 2 ? atoi(argv[2]) : 3;
  double total = 0;
  for (int s = 0; s < steps; ++s) {
    total += check_step(run_stage(rank, size, blocks, s));
    app_work(wunits);
  }
  if (rank == 0)
    printf("pipeline: %d stages, %d steps of %d tiles, checksum %.1f\n", size, steps, blocks,
           total);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
