/* Cost per MPI call: a loop of 8-byte Allreduce, a 2-rank ping-pong, and
 * polling: rank 1 calls MPI_Test (then MPI_Iprobe) in a loop until a message
 * arrives that rank 0 sends after spinning for a fixed time, so the number
 * of polls in that time says what one poll costs.
 * Prints one line per kernel: name, calls per rank, seconds, microseconds per call.
 * Run it with and without the recorder; scripts/bench-record.sh does both. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = argc > 1 ? atoi(argv[1]) : 100000;
  double in = rank, out = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double t_allreduce = MPI_Wtime() - t0;

  char byte = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  if (rank < 2 && size >= 2) {
    for (int i = 0; i < iters; ++i) {
      if (rank == 0) {
        MPI_Send(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
  }
  double t_pingpong = MPI_Wtime() - t0;

  /* 20 waits of 10 ms per polling kernel: hundreds of thousands of polls. */
  const int rounds = 20;
  const double wait_s = 0.01;
  long polls[2] = {0, 0};
  double poll_time[2] = {0, 0};
  for (int kernel = 0; kernel < 2; ++kernel) {
    for (int r = 0; r < rounds && size >= 2; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        const double until = MPI_Wtime() + wait_s;
        while (MPI_Wtime() < until) {
        }
        MPI_Send(&byte, 1, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
      } else if (rank == 1) {
        int flag = 0;
        t0 = MPI_Wtime();
        if (kernel == 0) {
          MPI_Request req;
          MPI_Irecv(&byte, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &req);
          while (!flag) {
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            ++polls[kernel];
          }
        } else {
          while (!flag) {
            MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            ++polls[kernel];
          }
          MPI_Recv(&byte, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        poll_time[kernel] += MPI_Wtime() - t0;
      }
    }
  }
  if (rank == 1) MPI_Send(polls, 2, MPI_LONG, 0, 8, MPI_COMM_WORLD);
  if (rank == 1) MPI_Send(poll_time, 2, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
  if (rank == 0 && size >= 2) {
    MPI_Recv(polls, 2, MPI_LONG, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(poll_time, 2, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (rank == 0) {
    printf("allreduce8 %d %.6f %.3f\n", iters, t_allreduce, 1e6 * t_allreduce / iters);
    printf("pingpong %d %.6f %.3f\n", 2 * iters, t_pingpong, 1e6 * t_pingpong / (2.0 * iters));
    if (size >= 2) {
      printf("test_poll %ld %.6f %.3f\n", polls[0], poll_time[0],
             1e6 * poll_time[0] / (double)polls[0]);
      printf("iprobe_poll %ld %.6f %.3f\n", polls[1], poll_time[1],
             1e6 * poll_time[1] / (double)polls[1]);
    }
  }
  MPI_Finalize();
  return 0;
}
