/* MPI + threads halo kernel for the tracefold-mem scaling test: a 1-D
 * decomposition of a ROWS-per-rank by COLS grid (rows kept with one ghost
 * row above and one below), ITERS Jacobi sweeps. Each iteration the main
 * thread exchanges ghost rows with the neighbours (MPI_THREAD_FUNNELED);
 * the first and last rank have no neighbour on one side and instead write a
 * fixed boundary value into that ghost row, so the edge ranks' streams
 * differ from the interior ones'. Then WORKERS threads (2 unless given,
 * at most 16) each sweep their share of the rows (pthread barriers between
 * the phases).
 * usage: mpirun -np P halo ROWS COLS ITERS [WORKERS] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracefold/memtrace.h"

#define MAX_WORKERS 16

static long rows, cols, iters, workers = 2;
static double *grid, *next;
static pthread_barrier_t phase;

__attribute__((noinline)) void boundary_row(double* row, long n, double v) {
  for (long j = 0; j < n; j++) row[j] = v;
}

__attribute__((noinline)) void sweep(const double* g, double* out, long r0, long r1, long n) {
  for (long i = r0; i < r1; i++)
    for (long j = 1; j < n - 1; j++)
      out[i * n + j] =
          0.25 * (g[(i - 1) * n + j] + g[(i + 1) * n + j] + g[i * n + j - 1] + g[i * n + j + 1]);
}

__attribute__((noinline)) void copy_back(double* g, const double* out, long r0, long r1, long n) {
  for (long i = r0; i < r1; i++)
    for (long j = 1; j < n - 1; j++) g[i * n + j] = out[i * n + j];
}

typedef struct {
  int k;
} Worker;

static void* work(void* arg) {
  const Worker* w = arg;
  const long half = rows / workers;
  const long r0 = 1 + w->k * half, r1 = w->k == workers - 1 ? rows + 1 : r0 + half;
  for (long it = 0; it < iters; it++) {
    pthread_barrier_wait(&phase); /* ghost rows are in */
    sweep(grid, next, r0, r1, cols);
    pthread_barrier_wait(&phase); /* everyone has read the old grid */
    copy_back(grid, next, r0, r1, cols);
    pthread_barrier_wait(&phase); /* the new grid is complete */
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rows = argc > 3 ? atol(argv[1]) : 0;
  cols = argc > 3 ? atol(argv[2]) : 0;
  iters = argc > 3 ? atol(argv[3]) : 0;
  if (argc > 4) workers = atol(argv[4]);
  if (workers < 1 || workers > MAX_WORKERS || rows < workers || cols < 3 || iters < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: halo ROWS(>=WORKERS) COLS(>=3) ITERS(>=1) [WORKERS(1-16)]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  grid = calloc((size_t)((rows + 2) * cols), sizeof(double));
  next = calloc((size_t)((rows + 2) * cols), sizeof(double));
  if (!grid || !next) MPI_Abort(MPI_COMM_WORLD, 2);
  for (long i = 1; i <= rows; i++) grid[i * cols] = grid[i * cols + cols - 1] = 1.0;
  const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  pthread_barrier_init(&phase, NULL, (unsigned)workers + 1);
  pthread_t id[MAX_WORKERS];
  Worker w[MAX_WORKERS];
  TRACEFOLD_MEM_START();
  for (int k = 0; k < workers; k++) {
    w[k].k = k;
    if (pthread_create(&id[k], NULL, work, &w[k]) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (long it = 0; it < iters; it++) {
    if (up == MPI_PROC_NULL) boundary_row(grid, cols, 2.0);
    if (down == MPI_PROC_NULL) boundary_row(grid + (rows + 1) * cols, cols, 0.0);
    MPI_Sendrecv(grid + cols, (int)cols, MPI_DOUBLE, up, 0, grid + (rows + 1) * cols, (int)cols,
                 MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(grid + rows * cols, (int)cols, MPI_DOUBLE, down, 1, grid, (int)cols, MPI_DOUBLE,
                 up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_barrier_wait(&phase);
    pthread_barrier_wait(&phase);
    pthread_barrier_wait(&phase);
  }
  for (int k = 0; k < workers; k++) pthread_join(id[k], NULL);
  TRACEFOLD_MEM_STOP();
  double mine = 0, total = 0;
  for (long i = 1; i <= rows; i++)
    for (long j = 0; j < cols; j++) mine += grid[i * cols + j];
  MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("halo ranks %d sum %.6f\n", size, total);
  pthread_barrier_destroy(&phase);
  free(grid);
  free(next);
  MPI_Finalize();
  return 0;
}
