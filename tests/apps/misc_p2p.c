/* Less common point-to-point and collective calls, all in one time loop:
 * wildcard receives completed by MPI_Waitany and MPI_Waitsome, an
 * MPI_Iprobe polling loop before MPI_Recv, MPI_Sendrecv_replace around a
 * ring, a derived datatype (MPI_Type_vector) for a strided column,
 * MPI_Alltoallv/MPI_Gatherv with rank-dependent counts, MPI_Scan, and
 * MPI_Testall polling. usage: app_misc_p2p STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define COLS 6

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Datatype column;
  MPI_Type_vector(4, 1, COLS, MPI_LONG, &column);
  MPI_Type_commit(&column);
  long grid[4][COLS], colbuf[4][COLS];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < COLS; ++j) grid[i][j] = rank * 100 + i * COLS + j;
  int* scounts = malloc(size * sizeof(int));
  int* sdispl = malloc(size * sizeof(int));
  int* rcounts = malloc(size * sizeof(int));
  int* rdispl = malloc(size * sizeof(int));
  long* sbuf = malloc(size * size * sizeof(long));
  long* rbuf = malloc(size * size * sizeof(long));
  long acc = 0;
  for (int s = 0; s < steps; ++s) {
    /* wildcard receives from both neighbours, completed by Waitany */
    long in[2] = {0, 0}, out = rank * 10 + s;
    MPI_Request rq[4];
    MPI_Irecv(&in[0], 1, MPI_LONG, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&in[1], 1, MPI_LONG, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(&out, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(&out, 1, MPI_LONG, right, 1, MPI_COMM_WORLD, &rq[3]);
    for (int k = 0; k < 2; ++k) {
      int idx;
      MPI_Status st;
      MPI_Waitany(2, rq, &idx, &st);
    }
    int done = 0, idxs[4];
    while (done < 2) {
      int n;
      MPI_Waitsome(2, rq + 2, &n, idxs, MPI_STATUSES_IGNORE);
      if (n == MPI_UNDEFINED) break;
      done += n;
    }
    acc += in[0] + in[1];
    /* Iprobe polling, then the matching receive */
    MPI_Send(&out, 1, MPI_LONG, right, 2, MPI_COMM_WORLD);
    int flag = 0;
    MPI_Status pst;
    while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &flag, &pst);
    long got;
    MPI_Recv(&got, 1, MPI_LONG, pst.MPI_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    acc += got;
    /* strided column around the ring, in place */
    MPI_Sendrecv_replace(&grid[0][s % COLS], 1, column, right, 3, left, 3, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    MPI_Sendrecv(&grid[0][0], 1, column, left, 4, &colbuf[0][0], 1, column, right, 4,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    acc += grid[3][s % COLS] + colbuf[2][0];
    /* rank-dependent counts */
    int total = 0;
    for (int p = 0; p < size; ++p) {
      scounts[p] = 1 + (rank + p + s) % 3;
      sdispl[p] = p * size;
      rcounts[p] = 1 + (p + rank + s) % 3;
      rdispl[p] = p * size;
      for (int k = 0; k < scounts[p]; ++k) sbuf[p * size + k] = rank + p + k + s;
      total += rcounts[p];
    }
    MPI_Alltoallv(sbuf, scounts, sdispl, MPI_LONG, rbuf, rcounts, rdispl, MPI_LONG, MPI_COMM_WORLD);
    for (int p = 0; p < size; ++p)
      for (int k = 0; k < rcounts[p]; ++k) acc += rbuf[p * size + k];
    int mine = 1 + (rank + s) % 2;
    int* gcounts = rank == 0 ? rcounts : NULL;
    int* gdispl = rank == 0 ? rdispl : NULL;
    if (rank == 0)
      for (int p = 0; p < size; ++p) gcounts[p] = 1 + (p + s) % 2, gdispl[p] = p * size;
    MPI_Gatherv(sbuf, mine, MPI_LONG, rbuf, gcounts, gdispl, MPI_LONG, 0, MPI_COMM_WORLD);
    long pre;
    MPI_Scan(&acc, &pre, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Request br;
    long bval = s;
    MPI_Ibcast(&bval, 1, MPI_LONG, 0, MPI_COMM_WORLD, &br);
    int bdone = 0;
    while (!bdone) MPI_Testall(1, &br, &bdone, MPI_STATUSES_IGNORE);
    acc = (acc + pre % 1000 + bval + total) % 1000003;
  }
  long sum = 0;
  MPI_Allreduce(&acc, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("misc_p2p: %d ranks, %d steps, checksum %ld\n", size, steps, sum);
  MPI_Type_free(&column);
  free(scounts);
  free(sdispl);
  free(rcounts);
  free(rdispl);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
