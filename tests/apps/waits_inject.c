/* Known wait states for `tracefold analyze` (tests/mpi/analyze_*.sh).
 *
 *   app_waits_inject STEPS SCENARIO
 *
 * One rank is made late by sleeping (not spinning: on a shared machine a
 * spinning rank is descheduled and its delay overshoots) for DELAY_US per
 * step; the late rank prints the sleeping time it measured, which is the
 * waiting time the analysis should find:
 *   waits: SCENARIO injected SECONDS s by rank R
 *
 * Every step but in `chain` starts with a synchronization of all ranks.
 * Scenarios (ranks):
 *   late_sender (2)     rank 0 sleeps, then MPI_Send; rank 1 MPI_Recv waits
 *   late_sender_nb (2)  the same with Isend/Irecv and Waitall
 *   late_receiver (2)   rank 1 sleeps, then MPI_Recv; rank 0 MPI_Ssend waits
 *   wrong_order (2)     rank 0 sends tag 1, sleeps, sends tag 2; rank 1
 *                       receives tag 2 first (waits), then tag 1
 *   barrier (3)         rank 1 sleeps before MPI_Barrier; the others wait
 *   nxn (3)             rank 1 sleeps before MPI_Allreduce; the others wait
 *   bcast (3)           root 0 sleeps before MPI_Bcast; the others wait
 *   reduce (2)          rank 1 sleeps before MPI_Reduce; root 0 waits
 *   ibarrier (3)        rank 1 sleeps before MPI_Ibarrier; the others wait
 *                       in the MPI_Wait of theirs
 *   iallreduce (3)      the same with MPI_Iallreduce
 *   ibcast (3)          root 0 sleeps before MPI_Ibcast; the others wait in
 *                       MPI_Wait
 *   subcomm (4)         even and odd ranks in two communicators; rank 3
 *                       sleeps before MPI_Allreduce and MPI_Scan on the
 *                       odd one (rank 1 waits)
 *   chain (4)           rank r receives from r-1, sends to r+1, computes
 *                       1 ms; rank 2 alone computes DELAY_US more before it
 *                       sends, and rank 3 waits for it
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DELAY_US 5000

static double slept;
/* Per step, when this rank entered the call whose waiting is measured. */
static double *entered, *started;
static int step;
/* The host's clock, as the recorder reads it: MPI_Wtime may count from a
 * per-process origin (Open MPI), which makes ranks' readings incomparable. */
static double host_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* Entered the call it waits in (and started the operation: for a
 * nonblocking collective, STARTED() before the I-call, ENTER() before the
 * Wait). */
#define ENTER() \
  (entered[step] = host_now(), started[step] = started[step] ? started[step] : entered[step])
#define STARTED() (started[step] = host_now())

/* Sleeps `us` microseconds and adds the time it really took to `slept`. */
static void nap(long us) {
  const double t0 = MPI_Wtime();
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
  slept += MPI_Wtime() - t0;
}

/* The first synchronization, in a function of its own so that its call
 * path is named: which rank reaches it last depends on how long MPI_Init
 * took there, and the delay that causes is real but not injected (the
 * checks leave it out; tests/mpi/analyze_check.py). */
__attribute__((noinline)) static void start_together(int barrier) {
  int buf = 1, out;
  if (barrier)
    MPI_Allreduce(&buf, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  else
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 40;
  const char* what = argc > 2 ? argv[2] : "late_sender";
  int late = 0, buf[4] = {0, 1, 2, 3}, out[4];
  entered = calloc((size_t)steps + 1, sizeof(double));
  started = calloc((size_t)steps + 1, sizeof(double));
  const int chain = !strcmp(what, "chain");
  MPI_Comm sub = MPI_COMM_NULL;
  if (!strcmp(what, "subcomm")) MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
  /* Where the waiting measured is at a barrier, the ranks synchronize by
   * MPI_Allreduce instead: their waits there are not what was injected. */
  const int barrier = !strcmp(what, "barrier") || !strcmp(what, "ibarrier");
  start_together(barrier);
  for (int i = 0; i < steps; ++i) {
    step = i;
    /* Every step starts together: a rank that the machine's load held up
     * in the last step must not carry that into this one, where it would
     * enter late and wait less than was injected. (A barrier, except in the
     * barrier scenarios, whose waiting is what is measured.) */
    if (!chain) {
      if (barrier)
        MPI_Allreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      else
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!strcmp(what, "late_sender")) {
      if (rank == 0) {
        nap(DELAY_US);
        ENTER();
        MPI_Send(buf, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
      } else if (rank == 1) {
        ENTER();
        MPI_Recv(out, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else if (!strcmp(what, "late_sender_nb")) {
      MPI_Request req[2];
      if (rank == 0) {
        nap(DELAY_US);
        MPI_Isend(buf, 2, MPI_INT, 1, 1, MPI_COMM_WORLD, &req[0]);
        ENTER();
        MPI_Isend(buf + 2, 2, MPI_INT, 1, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      } else if (rank == 1) {
        MPI_Irecv(out, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(out + 2, 2, MPI_INT, 0, 2, MPI_COMM_WORLD, &req[1]);
        ENTER();
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      }
    } else if (!strcmp(what, "late_receiver")) {
      late = 1;
      if (rank == 0) {
        ENTER();
        MPI_Ssend(buf, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
      } else if (rank == 1) {
        nap(DELAY_US);
        ENTER();
        MPI_Recv(out, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else if (!strcmp(what, "wrong_order")) {
      if (rank == 0) {
        MPI_Send(buf, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
        nap(DELAY_US);
        ENTER();
        MPI_Send(buf, 4, MPI_INT, 1, 2, MPI_COMM_WORLD);
      } else if (rank == 1) {
        ENTER();
        MPI_Recv(out, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(out, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else if (!strcmp(what, "barrier")) {
      late = 1;
      if (rank == 1) nap(DELAY_US);
      ENTER();
      MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "nxn")) {
      late = 1;
      if (rank == 1) nap(DELAY_US);
      ENTER();
      MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(what, "bcast")) {
      if (rank == 0) nap(DELAY_US);
      ENTER();
      MPI_Bcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "reduce")) {
      late = 1;
      if (rank == 1) nap(DELAY_US);
      ENTER();
      MPI_Reduce(buf, out, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "ibarrier") || !strcmp(what, "iallreduce") ||
               !strcmp(what, "ibcast")) {
      MPI_Request req;
      const int bcast = !strcmp(what, "ibcast");
      late = bcast ? 0 : 1;
      if (rank == late) nap(DELAY_US);
      /* The late rank is waited for from its start of the collective, the
       * others wait in their MPI_Wait. */
      if (rank == late) ENTER();
      STARTED();
      if (bcast)
        MPI_Ibcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD, &req);
      else if (!strcmp(what, "ibarrier"))
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
      else
        MPI_Iallreduce(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
      if (rank != late) ENTER();
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "subcomm")) {
      late = 3;
      if (rank == late) nap(DELAY_US);
      ENTER();
      MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, sub);
      MPI_Scan(buf, out, 4, MPI_INT, MPI_SUM, sub);
    } else if (!strcmp(what, "chain")) {
      late = 2;
      if (rank == 3) ENTER();
      if (rank > 0) MPI_Recv(out, 4, MPI_INT, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      /* Rank 2 computes before it forwards, the others after: only rank
       * 2's computation delays the rank after it, from the first step on. */
      if (rank == 2) nap(DELAY_US);
      if (rank == 2) ENTER();
      if (rank + 1 < size) MPI_Send(buf, 4, MPI_INT, rank + 1, 1, MPI_COMM_WORLD);
      const double injected_so_far = slept;
      nap(1000);
      slept = injected_so_far; /* the common 1 ms is not injected lateness */
    } else {
      if (rank == 0) fprintf(stderr, "unknown scenario %s\n", what);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  /* The late rank reports: a message to rank 0 would add a wait of its own. */
  if (rank == late) printf("waits: %s injected %.6f s by rank %d\n", what, slept, late);
  fflush(stdout);
  /* What each rank really waited is computed from the entry times by the
   * test (tests/mpi/analyze_check.py): a rank that the machine's load holds
   * up after its sleep (or a waiting one held up before its call) changes
   * the waiting, not the sleeping. Each rank writes its own times (host
   * clock, comparable between the ranks of one machine) to
   * $WAITS_TIMES_DIR/times.RANK: exchanging them here would add a wait the
   * trace does not show, which the analysis would take for computation
   * before MPI_Finalize, and mpirun may cut long output lines of several
   * ranks into each other. */
  const char* dir = getenv("WAITS_TIMES_DIR");
  if (dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/times.%d", dir, rank);
    FILE* f = fopen(path, "w");
    if (f) {
      fprintf(f, "entered");
      for (int i = 0; i < steps; ++i) fprintf(f, " %.9f", entered[i]);
      fprintf(f, "\nstarted");
      for (int i = 0; i < steps; ++i) fprintf(f, " %.9f", started[i]);
      fprintf(f, "\n");
      fclose(f);
    }
  }
  if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
  free(entered);
  free(started);
  MPI_Finalize();
  return 0;
}
