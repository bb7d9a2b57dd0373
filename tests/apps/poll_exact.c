/* Polls whose outcomes do not depend on timing, so two runs record the same
 * events: rank 1 polls a known number of times while nothing can arrive
 * (rank 0 sends only once rank 1 says "go"), then learns by a blocking
 * receive of an acknowledgement that rank 0 sent after the messages, which
 * therefore have arrived, and polls once more: that poll succeeds. Kernels:
 * MPI_Test on a receive with a named source and on a wildcard one,
 * MPI_Testany, MPI_Testsome and MPI_Testall on two receives (also wildcard
 * ones with MPI_STATUSES_IGNORE), MPI_Iprobe with a named source and a
 * wildcard one, MPI_Improbe, two requests tested alternately, and one poll
 * reached from two call sites. The poll count changes from round to round.
 * Used by tests/mpi/poll_fastpath.sh (the trace with the poll fast path
 * must equal the one without).
 * usage: app_poll_exact ROUNDS [POLLS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum {
  kTest,
  kTestWild,
  kTestany,
  kTestsome,
  kTestall,
  kTestallWild,
  kTestsomeWild,
  kIprobe,
  kIprobeWild,
  kImprobe,
  kAlternate,
  kTwoSites,
  kKernels
};
enum { kGo = 900, kAck = 901 };

static void fail(const char* what, int k) {
  fprintf(stderr, "poll_exact: kernel %d: %s\n", k, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Messages rank 0 sends once told to go: how many and with which tags. */
static int messages(int k) {
  return k == kTestany || k == kTestsome || k == kTestall || k == kTestallWild ||
                 k == kTestsomeWild || k == kAlternate
             ? 2
             : 1;
}

__attribute__((noinline)) static int poll_site_a(MPI_Request* req) {
  int flag;
  MPI_Test(req, &flag, MPI_STATUS_IGNORE);
  return flag;
}

__attribute__((noinline)) static int poll_site_b(MPI_Request* req) {
  int flag;
  MPI_Test(req, &flag, MPI_STATUS_IGNORE);
  return flag;
}

/* One poll of kernel k; returns how many messages it completed or found. */
static int poll(int k, MPI_Request* reqs, int tag, int i, long* sum) {
  int flag = 0, index = -1, outcount = 0, idx[2];
  MPI_Status st;
  MPI_Message msg;
  switch (k) {
    case kTest:
      MPI_Test(&reqs[0], &flag, &st);
      return flag;
    case kTestWild:
      MPI_Test(&reqs[0], &flag, &st);
      if (flag) *sum += st.MPI_SOURCE + st.MPI_TAG;
      return flag;
    case kTestany:
      MPI_Testany(2, reqs, &index, &flag, &st);
      return flag && index != MPI_UNDEFINED;
    case kTestsome:
    case kTestsomeWild:
      MPI_Testsome(2, reqs, &outcount, idx, MPI_STATUSES_IGNORE);
      return outcount == MPI_UNDEFINED ? 0 : outcount;
    case kTestall:
    case kTestallWild:
      MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
      return flag ? 2 : 0;
    case kIprobe:
    case kIprobeWild: {
      const int src = k == kIprobe ? 0 : MPI_ANY_SOURCE;
      MPI_Iprobe(src, k == kIprobe ? tag : MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      if (flag) {
        char b;
        MPI_Recv(&b, 1, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        *sum += st.MPI_TAG;
      }
      return flag;
    }
    case kImprobe:
      MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &msg, &st);
      if (flag) {
        char b;
        MPI_Mrecv(&b, 1, MPI_CHAR, &msg, MPI_STATUS_IGNORE);
      }
      return flag;
    case kAlternate:
      MPI_Test(&reqs[i % 2], &flag, MPI_STATUS_IGNORE);
      return flag;
    default:
      return i % 3 == 0 ? poll_site_a(&reqs[0]) : poll_site_b(&reqs[0]);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 4;
  const int base = argc > 2 ? atoi(argv[2]) : 300;
  char bytes[2] = {0, 0}, go = 1;
  long sum = 0, polls = 0;
  if (size >= 2 && rank < 2) {
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < kKernels; ++k) {
        const int tag = 10 + k, m = messages(k);
        if (rank == 0) {
          MPI_Recv(&go, 1, MPI_CHAR, 1, kGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          for (int j = 0; j < m; ++j) MPI_Send(&bytes[j], 1, MPI_CHAR, 1, tag + j, MPI_COMM_WORLD);
          MPI_Send(&go, 1, MPI_CHAR, 1, kAck, MPI_COMM_WORLD);
          continue;
        }
        MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        const int wild = k == kTestWild || k == kTestallWild || k == kTestsomeWild;
        if (k != kIprobe && k != kIprobeWild && k != kImprobe)
          for (int j = 0; j < m; ++j)
            MPI_Irecv(&bytes[j], 1, MPI_CHAR, wild ? MPI_ANY_SOURCE : 0,
                      wild ? MPI_ANY_TAG : tag + j, MPI_COMM_WORLD, &reqs[j]);
        const int n = base + (r * 7919 + k * 31) % (base / 2 + 1);
        for (int i = 0; i < n; ++i, ++polls)
          if (poll(k, reqs, tag, i, &sum)) fail("a poll found something before the go", k);
        MPI_Send(&go, 1, MPI_CHAR, 0, kGo, MPI_COMM_WORLD);
        MPI_Recv(&go, 1, MPI_CHAR, 0, kAck, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* Everything sent before the acknowledgement has arrived: every
         * poll now finds a message, and the kernel is done after m of them. */
        for (int found = 0, i = 0; found < m; ++i) {
          const int got = poll(k, reqs, tag + found, i, &sum);
          if (got == 0) fail("a poll found nothing after the acknowledgement", k);
          found += got;
        }
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) printf("poll_exact: %ld polls, checksum %ld\n", polls, sum);
  MPI_Finalize();
  return 0;
}
