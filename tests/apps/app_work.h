/* Optional computation and timing for the test programs, used by
 * scripts/bench-replay.sh; without them the programs behave exactly as
 * before (same MPI calls, same output).
 *
 *  - app_work_units(argc, argv): the optional second argument WORK
 *    (default 0).
 *  - app_work(units): WORK units of deterministic floating-point work, about
 *    1 us each on a current x86 core (the constant below): a dependent multiply-add chain that
 *    starts from and ends in a volatile, so the compiler can neither drop it
 *    nor overlap its iterations. The result is never folded into a program's
 *    checksum. app_work(0) does nothing.
 *  - app_timer_start() right after MPI_Init and app_timer_stop() right
 *    before MPI_Finalize: when the environment variable APP_TIME is set,
 *    rank 0 prints "app_time: SECONDS" on stderr, the time of the slowest
 *    rank from a barrier after MPI_Init to MPI_Finalize -- the interval
 *    `tracefold replay` reports as its wall time. The barrier and the
 *    reduction go through the PMPI_ entry points, so a recording does not
 *    see them; without APP_TIME nothing is called. */
#ifndef TRACEFOLD_APP_WORK_H
#define TRACEFOLD_APP_WORK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* dependent multiply-adds per unit: a multiply and an add (or one FMA),
 * 4-8 cycles of latency per step, so 1-1.5 us at 3 GHz */
#define APP_WORK_CHAIN 400

static volatile double app_work_seed = 1.0, app_work_sink = 0.0;

static inline int app_work_units(int argc, char** argv) {
  const int w = argc > 2 ? atoi(argv[2]) : 0;
  return w > 0 ? w : 0;
}

static inline void app_work(int units) {
  if (units <= 0) return;
  double x = app_work_seed;
  for (long i = 0; i < (long)units * APP_WORK_CHAIN; ++i) x = x * 0.999999 + 1e-7;
  app_work_sink = x;
}

static double app_timer_t0 = -1.0;

static inline void app_timer_start(void) {
  if (!getenv("APP_TIME")) return;
  PMPI_Barrier(MPI_COMM_WORLD);
  app_timer_t0 = PMPI_Wtime();
}

static inline void app_timer_stop(void) {
  if (app_timer_t0 < 0) return;
  const double mine = PMPI_Wtime() - app_timer_t0;
  double slowest = 0.0;
  int rank = 0;
  PMPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) fprintf(stderr, "app_time: %.6f\n", slowest);
}

#endif
