/* Algebraic-multigrid-like communication, as in BoomerAMG-style solvers:
 * every level has its own irregular neighbour set (derived from a hash of
 * the rank pair and the level, always symmetric, plus the ring neighbours),
 * message sizes differ per pair, and coarser levels are held by fewer ranks
 * (rank % 2^level == 0). Each V-cycle visits the levels down and up; at
 * each visit a rank sends its boundary values to its neighbours with
 * Isend and takes theirs by polling MPI_Iprobe(MPI_ANY_SOURCE), receiving
 * whatever has arrived (MPI_Get_count + MPI_Recv from the status's source)
 * and doing a little local work between unsuccessful polls. An Allreduce
 * of the residual ends each cycle.
 * usage: app_amg_like CYCLES [WORK [LEVELS]] (LEVELS default 4). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

static unsigned mix(unsigned a, unsigned b, unsigned level) {
  unsigned h = a * 2654435761u ^ (b + 0x9e3779b9u + (level << 6));
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return h;
}

/* Whether ranks a and b exchange on this level (symmetric). */
static int linked(int a, int b, int level, int size, int stride) {
  if (a == b) return 0;
  const int ia = a / stride, ib = b / stride, n = size / stride;
  if (n < 2) return 0;
  if ((ia + 1) % n == ib || (ib + 1) % n == ia) return 1;
  const unsigned lo = (unsigned)(a < b ? a : b), hi = (unsigned)(a < b ? b : a);
  return mix(lo, hi, (unsigned)level) % 3 == 0;
}

/* Values sent from a to b on a level: differs per pair and level. */
static int volume(int a, int b, int level) {
  return 4 + (int)(mix((unsigned)a, (unsigned)b, (unsigned)level + 17) % 29);
}

static double local_sweeps(double* x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) {
    x[i] = 0.9 * x[i] + 0.1 * x[(i + 1) % n];
    s += x[i];
  }
  return s;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int cycles = argc > 1 ? atoi(argv[1]) : 10;
  int levels = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 4;
  while (levels > 1 && (size >> (levels - 1)) < 2) --levels;
  const int n = 256;
  double* x = malloc(n * sizeof(double));
  for (int i = 0; i < n; ++i) x[i] = (double)((rank * 5 + i) % 17);
  double* sbuf = malloc((size_t)size * 40 * sizeof(double));
  double* rbuf = malloc(40 * sizeof(double));
  MPI_Request* reqs = malloc((size_t)size * sizeof(MPI_Request));
  long long received_sum = 0; /* integer: independent of arrival order */
  double resid = 0.0;
  for (int c = 0; c < cycles; ++c) {
    for (int v = 0; v < 2 * levels - 1; ++v) {
      const int level = v < levels ? v : 2 * levels - 2 - v; /* down, then up */
      const int stride = 1 << level;
      if (rank % stride != 0) continue; /* not on this coarse level */
      const int tag = 100 + level;
      int nsend = 0, expect = 0;
      for (int p = 0; p < size; p += stride) {
        if (!linked(rank, p, level, size, stride)) continue;
        const int m = volume(rank, p, level);
        double* b = sbuf + (size_t)nsend * 40;
        for (int i = 0; i < m; ++i) b[i] = x[(i * 7 + p) % n];
        MPI_Isend(b, m, MPI_DOUBLE, p, tag, MPI_COMM_WORLD, &reqs[nsend++]);
        ++expect;
      }
      while (expect > 0) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
          local_sweeps(x, 16);
          continue;
        }
        int count;
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        MPI_Recv(rbuf, count, MPI_DOUBLE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < count; ++i) received_sum += (long long)(rbuf[i] * 1000.0);
        --expect;
      }
      MPI_Waitall(nsend, reqs, MPI_STATUSES_IGNORE);
      app_work(wunits);
      local_sweeps(x, n);
    }
    double local = local_sweeps(x, n), global;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    resid = global;
  }
  long long all;
  MPI_Reduce(&received_sum, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("amg_like: %d ranks %d cycles %d levels checksum %lld resid %.6e\n", size, cycles,
           levels, all, resid);
  free(x);
  free(sbuf);
  free(rbuf);
  free(reqs);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
