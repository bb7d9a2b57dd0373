/* Programs with designed performance problems for `tracefold diagnose`
 * (tests/mpi/diagnose_*.sh, docs/diagnose.md).
 *
 *   app_diag_problems STEPS [MODE [UNIT_MS]]   (MODE imbalance, UNIT_MS 20
 *                                               by default)
 *
 * Work is done by sleeping inside named functions (work_a, work_b): on a
 * shared machine a spinning rank is descheduled and its work overshoots,
 * while a sleeping one takes the time it asked for, and a wall-clock
 * sampler still finds the function on the stack. Each rank measures what
 * it did; rank 0 prints the severity the diagnosis should find:
 *   diag: MODE designed SECONDS
 * computed from the measurements through PMPI (so the recording does not
 * see that bookkeeping). Modes (ranks):
 *   imbalance   rank r works (r+1) units in work_a, then MPI_Allreduce:
 *               designed = sum over steps of max - avg of the work
 *   partial     work_a (r+1) units, then work_b (P-r)/2 units: the two
 *               imbalances cancel in part (designed as above, of the sum)
 *   serial      rank 0 works P units, then MPI_Bcast from it: all others
 *               wait (designed: how long before rank 0 they entered the
 *               MPI_Bcast, summed, / P)
 *   frequent    200 tiny MPI_Allreduce calls per step between 50 us of
 *               work, entered together (designed: time in them per rank)
 *   few         per step one MPI_Allreduce of 4 MiB after one unit of work:
 *               long, not frequent
 *   late        (2 ranks or more) rank 0 works a unit, then MPI_Send to each
 *               other rank; they wait in MPI_Recv, in `receive` (designed: how
 *               long before the sends began they entered the receive, summed, / P)
 * Waiting is measured against the partner's entry time (CLOCK_MONOTONIC is
 * one clock for the ranks of one host), not as the time in the call, which
 * also holds the message's delivery: on a loaded machine that can take
 * milliseconds, and it is not waiting.
 *   large       (2 ranks) rank 1 posts MPI_Recv, then rank 0 sends 16 MiB
 *               (designed: rank 0's time in MPI_Send after the receive's / P)
 *   mpmd        the lower half works 2 units in work_a and exchanges with a
 *               partner (MPI_Sendrecv); the upper half works one unit in
 *               work_b; then MPI_Allreduce (designed: max - avg of work and exchange)
 *   balanced    every rank works a unit, then MPI_Allreduce (designed: the
 *               imbalance the machine's scheduling made of it, the sum over
 *               steps of avg - min of the ranks' time in the MPI_Allreduce,
 *               as the ranks measured it; near 0 on an idle machine)
 *   varied      imbalance, but step s reduces s + 1 ints: no call repeats
 *               an earlier one's parameters, so a `--sample-only` event log
 *               grows by every call and meets its size bound before the
 *               timeline does (tests/mpi/diagnose_cut.sh)
 *   bursts      imbalance in steps 3-7 only (of 10; from 1), one unit on every
 *               rank in the others (late_bursts: late, rank 0 working in 3-7 only)
 *   aborted     imbalance, then rank 0 calls MPI_Abort instead of
 *               MPI_Finalize (no rank's timeline gets its end offset)
 *   io          every rank works a unit, then writes 4 MiB at its own offset
 *               of one shared file (MPI_File_write_at, a file in the
 *               working directory deleted on close), then MPI_Barrier
 *               (designed: time in MPI_File_write_at per rank)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void nap(double seconds) {
  if (seconds <= 0) return;
  struct timespec t;
  t.tv_sec = (time_t)seconds;
  t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
  while (nanosleep(&t, &t) != 0) {
  }
}

/* Not inlined: the diagnosis names them from the samples' call stacks. */
__attribute__((noinline)) double work_a(double seconds) {
  const double t0 = now();
  nap(seconds);
  return now() - t0;
}

__attribute__((noinline)) double work_b(double seconds) {
  const double t0 = now();
  nap(seconds);
  return now() - t0;
}

/* The receiving side of `late` and `large`: a function of its own, which
 * the diagnosis names as one that mostly waits (a derived label). */
__attribute__((noinline)) void receive(double* buf, int n) {
  MPI_Recv(buf, n, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* `varied` prints each step's part of the designed value too: a run
 * analysed up to some step is checked against the sum of the steps before. */
static int print_steps;

/* Sum over steps of (max - avg) over ranks of per[step]: on rank 0. */
static double max_minus_avg(const double* per, int steps, int rank, int size) {
  double* all = rank == 0 ? malloc(sizeof(double) * (size_t)steps * (size_t)size) : NULL;
  PMPI_Gather(per, steps, MPI_DOUBLE, all, steps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double total = 0;
  if (rank == 0) {
    for (int s = 0; s < steps; ++s) {
      double mx = all[s], sum = 0; /* rank 0's value: per[] may be negative */
      for (int r = 0; r < size; ++r) {
        const double v = all[(size_t)r * (size_t)steps + (size_t)s];
        sum += v;
        if (v > mx) mx = v;
      }
      total += mx - sum / size;
      if (print_steps) printf("diag: step %d designed %.6f\n", s, mx - sum / size);
    }
    free(all);
  }
  return total;
}

/* Sum over steps and ranks other than `root` of max(0, root's entry -
 * mine), divided by the rank count: on rank 0. */
static double early_entries(const double* entry, int steps, int root, int rank, int size) {
  double* theirs = malloc(sizeof(double) * (size_t)steps);
  if (rank == root) memcpy(theirs, entry, sizeof(double) * (size_t)steps);
  PMPI_Bcast(theirs, steps, MPI_DOUBLE, root, MPI_COMM_WORLD);
  double mine = 0;
  if (rank != root)
    for (int s = 0; s < steps; ++s)
      if (theirs[s] > entry[s]) mine += theirs[s] - entry[s];
  free(theirs);
  double sum = 0;
  PMPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  return sum / size;
}

/* Sum over ranks of `mine`, divided by the rank count: on rank 0. */
static double per_rank(double mine, int size) {
  double sum = 0;
  PMPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  return sum / size;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: app_diag_problems STEPS [MODE [UNIT_MS]]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int steps = atoi(argv[1]);
  const char* mode = argc > 2 ? argv[2] : "imbalance";
  const double unit = (argc > 3 ? atof(argv[3]) : 20.0) * 1e-3;
  double* per = calloc((size_t)steps, sizeof(double));
  double mine = 0, designed = 0, check = 0;
  int in = rank + 1, out = 0;
  const char* name = mode;
  const int aborted = !strcmp(mode, "aborted"), varied = !strcmp(mode, "varied");
  const int lateb = !strcmp(mode, "late_bursts"), bursts = lateb || !strcmp(mode, "bursts");
  if (aborted || varied || bursts) mode = lateb ? "late" : "imbalance";
  print_steps = varied;
  int* ins = calloc((size_t)steps + 1, sizeof(int));
  int* outs = calloc((size_t)steps + 1, sizeof(int));
  for (int i = 0; i <= steps; ++i) ins[i] = rank + 1;
  if (!strcmp(mode, "imbalance") || !strcmp(mode, "partial") || !strcmp(mode, "balanced")) {
    for (int s = 0; s < steps; ++s) {
      if (!strcmp(mode, "balanced")) {
        work_a(unit);
      } else {
        per[s] = work_a((bursts && (s < 2 || s > 6) ? 1 : rank + 1) * unit);
        if (!strcmp(mode, "partial")) per[s] += work_b((size - rank) * unit / 2);
      }
      const double t0 = now();
      MPI_Allreduce(ins, outs, varied ? s + 1 : 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      /* The negated time in the call: max - avg of it is avg - min of the time. */
      if (!strcmp(mode, "balanced")) per[s] = t0 - now();
      check += outs[0];
    }
    designed = max_minus_avg(per, steps, rank, size);
  } else if (!strcmp(mode, "serial")) {
    for (int s = 0; s < steps; ++s) {
      if (rank == 0) work_a(size * unit);
      per[s] = now();
      MPI_Bcast(&in, 1, MPI_INT, 0, MPI_COMM_WORLD);
      check += in;
    }
    designed = early_entries(per, steps, 0, rank, size);
  } else if (!strcmp(mode, "frequent")) {
    const size_t calls = (size_t)steps * 200;
    double* enter = malloc(sizeof(double) * calls);
    double* len = malloc(sizeof(double) * calls);
    for (int s = 0; s < steps; ++s) {
      for (int i = 0; i < 200; ++i) {
        work_a(50e-6);
        /* Untraced: the ranks enter together, so the time in the
         * MPI_Allreduce is its own, not waiting for a late rank. */
        PMPI_Barrier(MPI_COMM_WORLD);
        const size_t k = (size_t)s * 200 + (size_t)i;
        enter[k] = now();
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        len[k] = now() - enter[k];
        mine += len[k];
        check += out;
      }
    }
    designed = per_rank(mine, size);
    /* Also printed: how much of that time the ranks waited for one another.
     * Whether the premise held: a loaded machine can deschedule a rank past
     * the barrier, and the others then wait for it in the MPI_Allreduce.
     * Each call's waiting, as the wait analysis takes it: from the rank's
     * entry to the last rank's, within the call. */
    double* last = malloc(sizeof(double) * calls);
    PMPI_Allreduce(enter, last, (int)calls, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double waited = 0;
    for (size_t k = 0; k < calls; ++k) {
      const double w = last[k] - enter[k];
      waited += w < 0 ? 0 : w > len[k] ? len[k] : w;
    }
    const double waited_avg = per_rank(waited, size);
    if (rank == 0)
      printf("diag: frequent entered apart: waiting %.6f of %.6f\n", waited_avg, designed);
    free(last);
    free(enter);
    free(len);
  } else if (!strcmp(mode, "few")) {
    const int n = 1 << 19; /* 4 MiB of doubles */
    double* a = malloc(sizeof(double) * (size_t)n);
    double* b = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; ++i) a[i] = rank + i * 1e-6;
    for (int s = 0; s < steps; ++s) {
      work_a(unit);
      const double t0 = now();
      MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      mine += now() - t0;
      check += b[n / 2];
    }
    designed = per_rank(mine, size);
    free(a);
    free(b);
  } else if (!strcmp(mode, "late") || !strcmp(mode, "large")) {
    const int large = !strcmp(mode, "large");
    if (large ? size != 2 : size < 2) {
      if (rank == 0)
        fprintf(stderr, "app_diag_problems: %s needs %s2 ranks\n", mode, large ? "" : "at least ");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int n = large ? 1 << 21 : 1; /* 16 MiB of doubles */
    double* buf = calloc((size_t)n, sizeof(double));
    double* dur = calloc((size_t)steps, sizeof(double));
    for (int s = 0; s < steps; ++s) {
      if (large) PMPI_Barrier(MPI_COMM_WORLD); /* the receive is posted first */
      if (rank == 0) {
        if (large)
          nap(unit / 4);
        else
          work_a(bursts && (s < 2 || s > 6) ? 0 : unit);
        buf[0] = s;
        per[s] = now();
        for (int to = 1; to < size; ++to) MPI_Send(buf, n, MPI_DOUBLE, to, 7, MPI_COMM_WORLD);
        dur[s] = now() - per[s];
      } else {
        per[s] = now();
        receive(buf, n);
        check += buf[0];
      }
    }
    if (large) {
      /* A loaded machine can deschedule rank 1 past the barrier, so that
       * it enters the receive after the send began: that part of the send
       * is waiting for the receiver (Late Receiver), not transfer. */
      double* theirs = malloc(sizeof(double) * (size_t)steps);
      if (rank == 1) memcpy(theirs, per, sizeof(double) * (size_t)steps);
      PMPI_Bcast(theirs, steps, MPI_DOUBLE, 1, MPI_COMM_WORLD);
      if (rank == 0)
        for (int s = 0; s < steps; ++s) {
          const double late = theirs[s] - per[s];
          mine += dur[s] - (late < 0 ? 0 : late > dur[s] ? dur[s] : late);
        }
      free(theirs);
      designed = per_rank(mine, size);
    } else {
      designed = early_entries(per, steps, 0, rank, size);
    }
    free(dur);
    free(buf);
  } else if (!strcmp(mode, "io")) {
    const int n = 1 << 19; /* 4 MiB of doubles per write */
    double* buf = calloc((size_t)n, sizeof(double));
    MPI_File fh;
    char name[64];
    snprintf(name, sizeof name, "diag_io.%d.tmp", (int)getpid());
    PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD); /* rank 0's pid names it */
    if (MPI_File_open(MPI_COMM_WORLD, name,
                      MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS) {
      if (rank == 0) fprintf(stderr, "app_diag_problems: cannot create %s\n", name);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int s = 0; s < steps; ++s) {
      work_a(unit);
      buf[0] = s;
      const MPI_Offset at = ((MPI_Offset)s * size + rank) * n * (MPI_Offset)sizeof(double);
      const double t0 = now();
      MPI_File_write_at(fh, at, buf, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
      mine += now() - t0;
      MPI_Barrier(MPI_COMM_WORLD);
      check += buf[0];
    }
    MPI_File_close(&fh);
    designed = per_rank(mine, size);
    free(buf);
  } else if (!strcmp(mode, "mpmd")) {
    const int lower = rank < size / 2;
    PMPI_Barrier(MPI_COMM_WORLD); /* the first step starts together */
    double start = now();
    for (int s = 0; s < steps; ++s) {
      if (lower) {
        work_a(2 * unit);
        const int partner = rank ^ 1;
        if (partner < size / 2)
          MPI_Sendrecv(&in, 1, MPI_INT, partner, 3, &out, 1, MPI_INT, partner, 3, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
      } else {
        work_b(unit);
      }
      /* The group's exchange is part of its work: on a loaded machine a
       * Sendrecv whose partner is off its core takes milliseconds. */
      per[s] = now() - start;
      MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      start = now();
      check += out;
    }
    designed = max_minus_avg(per, steps, rank, size);
  } else {
    if (rank == 0) fprintf(stderr, "app_diag_problems: unknown mode %s\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) {
    printf("diag: %s designed %.6f\n", name, designed);
    printf("diag_problems: %s %d steps checksum %.0f\n", name, steps, check);
    fflush(stdout);
  }
  if (aborted) {
    PMPI_Barrier(MPI_COMM_WORLD); /* rank 0 has printed */
    if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 3);
    for (;;) nap(1); /* until the launcher stops this rank */
  }
  free(per);
  free(ins);
  free(outs);
  MPI_Finalize();
  return 0;
}
