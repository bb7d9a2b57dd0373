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

/* Sleeps `us` microseconds and adds the time it really took to `slept`. */
static void nap(long us) {
  const double t0 = MPI_Wtime();
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
  slept += MPI_Wtime() - t0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 40;
  const char* what = argc > 2 ? argv[2] : "late_sender";
  int late = 0, buf[4] = {0, 1, 2, 3}, out[4];
  MPI_Barrier(MPI_COMM_WORLD);
  const int chain = !strcmp(what, "chain");
  for (int i = 0; i < steps; ++i) {
    /* Every step starts together: a rank that the machine's load held up
     * in the last step must not carry that into this one, where it would
     * enter late and wait less than was injected. (A barrier, except in the
     * barrier scenario, whose waiting is what is measured.) */
    if (!chain) {
      if (!strcmp(what, "barrier"))
        MPI_Allreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      else
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!strcmp(what, "late_sender")) {
      if (rank == 0) {
        nap(DELAY_US);
        MPI_Send(buf, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
      } else if (rank == 1) {
        MPI_Recv(out, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else if (!strcmp(what, "late_sender_nb")) {
      MPI_Request req[2];
      if (rank == 0) {
        nap(DELAY_US);
        MPI_Isend(buf, 2, MPI_INT, 1, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(buf + 2, 2, MPI_INT, 1, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      } else if (rank == 1) {
        MPI_Irecv(out, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(out + 2, 2, MPI_INT, 0, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      }
    } else if (!strcmp(what, "late_receiver")) {
      late = 1;
      if (rank == 0) {
        MPI_Ssend(buf, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
      } else if (rank == 1) {
        nap(DELAY_US);
        MPI_Recv(out, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else if (!strcmp(what, "wrong_order")) {
      if (rank == 0) {
        MPI_Send(buf, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
        nap(DELAY_US);
        MPI_Send(buf, 4, MPI_INT, 1, 2, MPI_COMM_WORLD);
      } else if (rank == 1) {
        MPI_Recv(out, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(out, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else if (!strcmp(what, "barrier")) {
      late = 1;
      if (rank == 1) nap(DELAY_US);
      MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "nxn")) {
      late = 1;
      if (rank == 1) nap(DELAY_US);
      MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(what, "bcast")) {
      if (rank == 0) nap(DELAY_US);
      MPI_Bcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "reduce")) {
      late = 1;
      if (rank == 1) nap(DELAY_US);
      MPI_Reduce(buf, out, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "ibarrier") || !strcmp(what, "iallreduce") ||
               !strcmp(what, "ibcast")) {
      MPI_Request req;
      const int bcast = !strcmp(what, "ibcast");
      late = bcast ? 0 : 1;
      if (rank == late) nap(DELAY_US);
      if (bcast)
        MPI_Ibcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD, &req);
      else if (!strcmp(what, "ibarrier"))
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
      else
        MPI_Iallreduce(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (!strcmp(what, "chain")) {
      late = 2;
      if (rank > 0) MPI_Recv(out, 4, MPI_INT, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      /* Rank 2 computes before it forwards, the others after: only rank
       * 2's computation delays the rank after it, from the first step on. */
      if (rank == 2) nap(DELAY_US);
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
  MPI_Finalize();
  return 0;
}
