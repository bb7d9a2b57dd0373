/* Persistent requests: a 1D periodic halo exchange set up once with
 * MPI_Send_init/MPI_Recv_init and run every step with MPI_Startall +
 * MPI_Waitall; a separate persistent "token" send to rank 0 is driven with
 * MPI_Start + MPI_Wait every 5th step. Requests are freed at the end.
 * usage: app_persistent STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

#define LEN 16

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 50;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double sl[LEN], sr[LEN], rl[LEN], rr[LEN];
  MPI_Request req[4];
  MPI_Recv_init(rl, LEN, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
  MPI_Recv_init(rr, LEN, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
  MPI_Send_init(sr, LEN, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[2]);
  MPI_Send_init(sl, LEN, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[3]);
  long token = 0, got = 0;
  MPI_Request treq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
  if (rank != 0) MPI_Send_init(&token, 1, MPI_LONG, 0, 3, MPI_COMM_WORLD, &treq);
  double u[LEN];
  for (int i = 0; i < LEN; ++i) u[i] = (double)((rank * LEN + i) % 9);
  long tokens = 0;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < LEN; ++i) {
      sl[i] = u[i];
      sr[i] = u[LEN - 1 - i];
    }
    MPI_Startall(4, req);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    app_work(wunits);
    for (int i = 0; i < LEN; ++i) u[i] = 0.5 * u[i] + 0.25 * (rl[i] + rr[i]);
    if (s % 5 == 0) {
      if (rank != 0) {
        token = s + rank;
        MPI_Start(&treq);
        MPI_Wait(&treq, MPI_STATUS_IGNORE);
      } else {
        for (int k = 1; k < size; ++k) {
          MPI_Irecv(&got, 1, MPI_LONG, k, 3, MPI_COMM_WORLD, &rreq);
          MPI_Wait(&rreq, MPI_STATUS_IGNORE);
          tokens += got;
        }
      }
    }
  }
  for (int i = 0; i < 4; ++i) MPI_Request_free(&req[i]);
  if (treq != MPI_REQUEST_NULL) MPI_Request_free(&treq);
  double sum = 0.0, total = 0.0;
  for (int i = 0; i < LEN; ++i) sum += u[i];
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("persistent: %d ranks, %d steps, checksum %.9e tokens %ld\n", size, steps, total,
           tokens);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
