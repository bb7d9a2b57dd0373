/* A producer streams blocks of samples to a consumer at a fixed cadence,
 * one every 60 ms, and the consumer's work on each block ends only 50 ms
 * into the next period, when it asks for the next block: every send of the
 * producer waits 50 ms for its receive to be posted (Late Receiver, for
 * tests/mpi/analyze_late_receiver.sh).
 *
 *   app_producer_consumer STEPS MODE [BYTES]
 *
 * Rank 0 produces, rank 1 consumes (other ranks only start and stop).
 * MODE is how the producer sends each block:
 *   send            MPI_Send
 *   isend_wait      MPI_Isend, then MPI_Wait
 *   isend_waitall   MPI_Isend, then MPI_Waitall of that one request
 * BYTES (default 16384) is the block size: a quarter of `tracefold
 * analyze`'s default --rendezvous, but more than Open MPI's shared-memory
 * eager limit (4 KiB), so the producer's call really returns only once the
 * consumer has posted its receive.
 *
 * Both keep to the periods of rank 0's clock (one host's clock: the ranks
 * must share a host), sleeping until each deadline: a rank that is late to
 * notice that its last call completed still starts the next period on time,
 * so the waiting is the designed 50 ms a period, and a spinning rank on a
 * shared machine would be descheduled and overshoot. With $WAITS_TIMES_DIR
 * set, ranks 0 and 1 write times.RANK there, as tests/apps/waits_inject.c
 * does: the producer `entered` (the host clock when it entered the call
 * that waits: the MPI_Send, MPI_Wait or MPI_Waitall), the consumer
 * `started` (when it entered each MPI_Recv), so the test knows what was
 * really waited. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PERIOD 0.060
#define WORK 0.050

static double host_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_until(double t) {
  const struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

static void write_times(int rank, const char* key, const double* t, int n) {
  const char* dir = getenv("WAITS_TIMES_DIR");
  if (!dir) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/times.%d", dir, rank);
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "%s", key);
  for (int i = 0; i < n; ++i) fprintf(f, " %.9f", t[i]);
  fprintf(f, "\n");
  fclose(f);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  const char* mode = argc > 2 ? argv[2] : "send";
  const int bytes = argc > 3 ? atoi(argv[3]) : 16384;
  const int n = bytes / (int)sizeof(double) > 0 ? bytes / (int)sizeof(double) : 1;
  if (size < 2 || steps < 1 ||
      (strcmp(mode, "send") && strcmp(mode, "isend_wait") && strcmp(mode, "isend_waitall"))) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np 2 %s STEPS send|isend_wait|isend_waitall [BYTES]\n",
              argv[0]);
    MPI_Finalize();
    return 2;
  }
  double* block = malloc((size_t)n * sizeof(double));
  double* when = calloc((size_t)steps, sizeof(double));
  double checksum = 0, origin = host_now() + PERIOD;
  MPI_Bcast(&origin, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (int i = 0; i < steps; ++i) {
    const double period = origin + (double)i * PERIOD;
    if (rank == 0) {
      for (int k = 0; k < n; ++k) block[k] = (double)i + 1e-3 * (double)k;
      sleep_until(period);
      if (!strcmp(mode, "send")) {
        when[i] = host_now();
        MPI_Send(block, n, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
      } else {
        MPI_Request req;
        MPI_Isend(block, n, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, &req);
        when[i] = host_now();
        if (!strcmp(mode, "isend_wait"))
          MPI_Wait(&req, MPI_STATUS_IGNORE);
        else
          MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
      }
    } else if (rank == 1) {
      sleep_until(period + WORK); /* the work on the block before */
      when[i] = host_now();
      MPI_Recv(block, n, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int k = 0; k < n; ++k) checksum += block[k];
    }
  }
  if (rank == 1) {
    printf("consumer: %d blocks of %d bytes by %s, checksum %.3f\n", steps, n * 8, mode, checksum);
    fflush(stdout);
  }
  if (rank < 2) write_times(rank, rank == 0 ? "entered" : "started", when, steps);
  free(block);
  free(when);
  MPI_Finalize();
  return 0;
}
