/* Unsuccessful polls, counted exactly: rank 1 posts a receive (or waits for
 * a message to probe), calls one polling function a known number of times
 * while nothing can arrive (rank 0 sends only after a barrier that rank 1
 * enters after polling), then completes the receive. The number of polls
 * per round varies, as a real waiting loop's does. Each kernel is its own
 * function (poll_test, poll_testany, poll_testsome, poll_testall,
 * poll_iprobe) so that callgrind can count its instructions apart:
 * scripts/bench-polls.sh divides the difference between a traced and an
 * untraced run by the number of polls.
 * usage: polls [POLLS_PER_ROUND [ROUNDS]]; prints each kernel's poll count. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kTest, kTestany, kTestsome, kTestall, kIprobe, kKernels };
static const char* const kNames[kKernels] = {"test", "testany", "testsome", "testall", "iprobe"};

static int polls_in_round(int base, int round) {
  return base + (round * 7919) % (base / 2 + 1);
}

/* One poll that must find nothing; aborts if it finds something. */
static void check(int found) {
  if (found) {
    fprintf(stderr, "polls: a poll succeeded too early\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

__attribute__((noinline)) static long poll_test(MPI_Request* req, int n) {
  int flag;
  for (int i = 0; i < n; ++i) {
    MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    check(flag);
  }
  return n;
}

__attribute__((noinline)) static long poll_testany(MPI_Request* req, int n) {
  int flag, index;
  for (int i = 0; i < n; ++i) {
    MPI_Testany(1, req, &index, &flag, MPI_STATUS_IGNORE);
    check(flag);
  }
  return n;
}

__attribute__((noinline)) static long poll_testsome(MPI_Request* req, int n) {
  int outcount, indices[1];
  for (int i = 0; i < n; ++i) {
    MPI_Testsome(1, req, &outcount, indices, MPI_STATUSES_IGNORE);
    check(outcount != 0);
  }
  return n;
}

__attribute__((noinline)) static long poll_testall(MPI_Request* req, int n) {
  int flag;
  for (int i = 0; i < n; ++i) {
    MPI_Testall(1, req, &flag, MPI_STATUSES_IGNORE);
    check(flag);
  }
  return n;
}

__attribute__((noinline)) static long poll_iprobe(int tag, int n) {
  int flag;
  for (int i = 0; i < n; ++i) {
    MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    check(flag);
  }
  return n;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int base = argc > 1 ? atoi(argv[1]) : 1000;
  const int rounds = argc > 2 ? atoi(argv[2]) : 20;
  long polls[kKernels] = {0};
  char byte = 0;
  if (size >= 2 && rank < 2) {
    for (int k = 0; k < kKernels; ++k) {
      for (int r = 0; r < rounds; ++r) {
        const int tag = 10 + k;
        if (rank == 0) {
          MPI_Barrier(MPI_COMM_WORLD);
          MPI_Send(&byte, 1, MPI_CHAR, 1, tag, MPI_COMM_WORLD);
          continue;
        }
        const int n = polls_in_round(base, r);
        MPI_Request req = MPI_REQUEST_NULL;
        if (k != kIprobe) MPI_Irecv(&byte, 1, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &req);
        switch (k) {
          case kTest:
            polls[k] += poll_test(&req, n);
            break;
          case kTestany:
            polls[k] += poll_testany(&req, n);
            break;
          case kTestsome:
            polls[k] += poll_testsome(&req, n);
            break;
          case kTestall:
            polls[k] += poll_testall(&req, n);
            break;
          default:
            polls[k] += poll_iprobe(tag, n);
            break;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (k == kIprobe)
          MPI_Recv(&byte, 1, MPI_CHAR, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
          MPI_Wait(&req, MPI_STATUS_IGNORE);
      }
    }
  } else {
    for (int k = 0; k < kKernels * rounds; ++k) MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 1)
    for (int k = 0; k < kKernels; ++k) printf("%s %ld\n", kNames[k], polls[k]);
  MPI_Finalize();
  return 0;
}
