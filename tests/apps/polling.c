/* Completion by polling, as event-driven codes do it. Every step:
 *  - an all-to-all of wildcard receives (MPI_ANY_SOURCE, MPI_ANY_TAG) on a
 *    duplicate of MPI_COMM_WORLD, drained by an MPI_Testany polling loop
 *    that does a little work between polls;
 *  - a halo exchange with the neighbours on a non-periodic line, completed
 *    by an MPI_Testsome loop; the ends of the line have one neighbour, so
 *    the "no neighbour on this side" completions run with count 0:
 *    MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE) and MPI_Testall,
 *    MPI_Testsome, MPI_Waitsome, MPI_Testany on empty arrays;
 *  - a second exchange completed one by one with MPI_Waitany;
 *  - a token to rank 0 that rank 0 finds with an MPI_Iprobe loop
 *    (MPI_ANY_SOURCE) and receives from the source the probe named;
 *  - an MPI_Ibarrier completed by an MPI_Test loop, and an MPI_Allreduce.
 * usage: app_polling STEPS [WORK] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

/* Work between two polls, so that polls find nothing for a while. */
static double spin(int n) {
  volatile double x = 1.0;
  for (int i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

/* The exchange of one side of the line: up to one neighbour. */
static int side(int rank, int size, int dir) {
  const int nb = rank + dir;
  return nb >= 0 && nb < size ? nb : MPI_PROC_NULL;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  MPI_Comm wild;
  MPI_Comm_dup(MPI_COMM_WORLD, &wild);
  long* in = malloc((size_t)size * sizeof(long));
  long* out = malloc((size_t)size * sizeof(long));
  MPI_Request* reqs = malloc(2 * (size_t)size * sizeof(MPI_Request));
  int* idx = malloc(2 * (size_t)size * sizeof(int));
  long sum = 0, polls = 0;
  for (int s = 0; s < steps; ++s) {
    /* 1. Wildcard all-to-all drained by Testany. */
    int n = 0;
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      MPI_Irecv(&in[n], 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, wild, &reqs[n]);
      ++n;
    }
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      out[p] = 1000L * s + 10L * rank + p;
      MPI_Send(&out[p], 1, MPI_LONG, p, s % 7, wild);
    }
    for (int left = n; left > 0;) {
      int i, flag;
      MPI_Status st;
      MPI_Testany(n, reqs, &i, &flag, &st);
      if (flag && i != MPI_UNDEFINED) {
        sum += in[i] + st.MPI_TAG;
        --left;
      } else {
        ++polls;
        spin(200);
      }
    }
    app_work(wunits);

    /* 2. Line halo: Testsome loop; empty completions at the ends. */
    long lo = 0, hi = 0, mine = rank * 3 + s;
    MPI_Request h[4];
    int nh = 0;
    for (int dir = -1; dir <= 1; dir += 2) {
      const int nb = side(rank, size, dir);
      if (nb == MPI_PROC_NULL) continue;
      MPI_Irecv(dir < 0 ? &lo : &hi, 1, MPI_LONG, nb, 1, MPI_COMM_WORLD, &h[nh++]);
      MPI_Isend(&mine, 1, MPI_LONG, nb, 1, MPI_COMM_WORLD, &h[nh++]);
    }
    for (int done = 0; done < nh;) {
      int outcount;
      MPI_Testsome(nh, h, &outcount, idx, MPI_STATUSES_IGNORE);
      if (outcount == MPI_UNDEFINED) break;
      done += outcount;
      if (outcount == 0) spin(100);
    }
    sum += lo + 2 * hi;
    /* Per side, the requests of that side only: none at an end. */
    for (int dir = -1; dir <= 1; dir += 2) {
      const int cnt = side(rank, size, dir) == MPI_PROC_NULL ? 0 : 1;
      MPI_Request one = MPI_REQUEST_NULL;
      if (cnt) MPI_Isend(&mine, 1, MPI_LONG, side(rank, size, dir), 2, MPI_COMM_WORLD, &one);
      long got = 0;
      if (cnt) {
        MPI_Recv(&got, 1, MPI_LONG, side(rank, size, dir), 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Waitall(1, &one, MPI_STATUSES_IGNORE);
      } else {
        int flag, outcount, i;
        MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE);
        MPI_Testall(0, NULL, &flag, MPI_STATUSES_IGNORE);
        MPI_Testsome(0, NULL, &outcount, NULL, MPI_STATUSES_IGNORE);
        MPI_Waitsome(0, NULL, &outcount, NULL, MPI_STATUSES_IGNORE);
        MPI_Testany(0, NULL, &i, &flag, MPI_STATUS_IGNORE);
        sum += flag;
      }
      sum += got;
    }

    /* 3. Exchange with both neighbours, handled as each arrives. */
    long r2[2] = {0, 0};
    MPI_Request w[4];
    int nw = 0;
    for (int dir = -1; dir <= 1; dir += 2) {
      const int nb = side(rank, size, dir);
      MPI_Irecv(&r2[dir > 0], 1, MPI_LONG, nb, 3, MPI_COMM_WORLD, &w[nw++]);
      MPI_Isend(&mine, 1, MPI_LONG, nb, 3, MPI_COMM_WORLD, &w[nw++]);
    }
    for (;;) {
      int i;
      MPI_Waitany(nw, w, &i, MPI_STATUS_IGNORE);
      if (i == MPI_UNDEFINED) break;
    }
    sum += 5 * r2[0] + 7 * r2[1];

    /* 4. A token to rank 0, found by probing. */
    if (rank == 0) {
      for (int got = 1; got < size; ++got) {
        int flag = 0;
        MPI_Status st;
        while (!flag) {
          MPI_Iprobe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &flag, &st);
          if (!flag) {
            ++polls;
            spin(100);
          }
        }
        long token;
        MPI_Recv(&token, 1, MPI_LONG, st.MPI_SOURCE, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += token;
      }
    } else {
      long token = 100L * rank + s;
      MPI_Send(&token, 1, MPI_LONG, 0, 4, MPI_COMM_WORLD);
    }

    /* 5. A barrier completed by polling. */
    MPI_Request b;
    MPI_Ibarrier(MPI_COMM_WORLD, &b);
    for (int flag = 0; !flag;) {
      MPI_Test(&b, &flag, MPI_STATUS_IGNORE);
      if (!flag) spin(50);
    }
    long total = 0;
    MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    sum = total % 1000003;
  }
  (void)polls; /* how often polls found nothing depends on timing */
  if (rank == 0) printf("polling: %d ranks, %d steps, checksum %ld\n", size, steps, sum);
  free(in);
  free(out);
  free(reqs);
  free(idx);
  MPI_Comm_free(&wild);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
