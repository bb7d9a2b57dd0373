/* The setup phase of an algebraic-multigrid or sparse-matrix library: each
 * round builds a communication package. A rank computes the ranks it must
 * contact (a set that differs per rank and per round, of a size that differs
 * per round), posts one MPI_Isend to each, then serves a data exchange it
 * cannot order: MPI_Iprobe(MPI_ANY_SOURCE) until a message is there,
 * MPI_Get_count and MPI_Recv from the source the probe named, and between
 * probes MPI_Test on each of its own sends still pending, until every
 * expected message is in and every send is done. A round's senders are known
 * to their receivers (the relation is computed from a hash all ranks share),
 * so no extra protocol is needed. An MPI_Allreduce of the round's volume
 * closes even rounds, an MPI_Barrier odd ones, after an
 * MPI_Waitall(0, NULL, ...) on the empty list of late requests the library
 * keeps. The result is independent of arrival order.
 * usage: app_exchange_setup ROUNDS [WORK] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

static unsigned mix(unsigned a, unsigned b, unsigned round) {
  unsigned h = a * 2246822519u ^ (b * 3266489917u + 0x9e3779b9u + (round << 7));
  h ^= h >> 15;
  h *= 668265263u;
  h ^= h >> 13;
  return h;
}

/* Whether rank a contacts rank b in this round (not symmetric). The next
 * rank is always contacted, so every rank sends and receives at least once;
 * how many others depends on the round (denser every third round). */
static int contacts(int a, int b, int round, int size) {
  if (a == b) return 0;
  if ((a + 1) % size == b) return 1;
  const unsigned density = round % 3 == 2 ? 2u : 5u;
  return mix((unsigned)a, (unsigned)b, (unsigned)round) % density == 0;
}

/* Entries a sends to b in this round. */
static int entries(int a, int b, int round) {
  return 1 + (int)(mix((unsigned)b, (unsigned)a, (unsigned)round + 11) % 48);
}

static double spin(int n) {
  volatile double x = 1.0;
  for (int i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 10;
  int* sbuf = malloc((size_t)size * 48 * sizeof(int));
  int* rbuf = malloc(48 * sizeof(int));
  MPI_Request* reqs = malloc((size_t)size * sizeof(MPI_Request));
  long long checksum = 0;
  long long total = 0;
  for (int r = 0; r < rounds; ++r) {
    const int tag = 700 + r % 4;
    int nsend = 0, expect = 0;
    for (int p = 0; p < size; ++p) {
      if (contacts(p, rank, r, size)) ++expect;
      if (!contacts(rank, p, r, size)) continue;
      const int m = entries(rank, p, r);
      int* b = sbuf + (size_t)nsend * 48;
      for (int i = 0; i < m; ++i) b[i] = rank * 1000 + p * 10 + i % 7 + r;
      MPI_Isend(b, m, MPI_INT, p, tag, MPI_COMM_WORLD, &reqs[nsend++]);
    }
    int pending = nsend;
    while (expect > 0 || pending > 0) {
      if (expect > 0) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
          int count;
          MPI_Get_count(&st, MPI_INT, &count);
          MPI_Recv(rbuf, count, MPI_INT, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          for (int i = 0; i < count; ++i) checksum += rbuf[i];
          --expect;
          continue;
        }
      }
      /* Test the sends still pending, keeping the list compact. */
      for (int i = 0; i < pending;) {
        int done = 0;
        MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
        if (done)
          reqs[i] = reqs[--pending];
        else
          ++i;
      }
      spin(200);
    }
    MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE);
    app_work(wunits);
    if (r % 2 == 0) {
      long long mine = nsend, all;
      MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      total += all;
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  long long sum;
  MPI_Reduce(&checksum, &sum, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("exchange_setup: %d ranks %d rounds checksum %lld messages %lld\n", size, rounds, sum,
           total);
  free(sbuf);
  free(rbuf);
  free(reqs);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
