/* MPI_THREAD_MULTIPLE: two threads of rank 0 send to rank 1 with the SAME
 * tag and communicator, and two threads of rank 1 receive them, so which
 * receiving thread gets which thread's message follows only from the order
 * of the calls across threads. The program orders them (a turn per rank):
 * on rank 0 the second thread sends first (8 ints), then the main thread
 * (4 ints); on rank 1 the main thread receives first (8 ints, from
 * MPI_ANY_SOURCE), then the second thread (4 ints, from rank 0). So the
 * main thread of rank 1 gets the second thread's message and the reverse:
 * a replay that pairs them otherwise truncates. Each message carries its
 * sender thread, and rank 1 prints what each of its threads received.
 * With `early` > 0, the main threads first exchange that many messages on
 * the same tag before the second thread starts (it calls MPI late): rank
 * 0's second thread's first send then comes after them.
 * Usage: thread_tags [rounds] [early] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_util.h"

enum { kTag = 7, kMaxRounds = 64 };
static int rank, rounds, early;
static int turn;  // calls of this rank so far, in the order the program wants
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
// Rank 1: per thread, the sender thread of each message it received.
static int got[2][2 * kMaxRounds], ngot[2];

static void wait_turn(int t) {
  pthread_mutex_lock(&mu);
  while (turn != t) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}
static void next_turn(void) {
  pthread_mutex_lock(&mu);
  ++turn;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

// Thread `t` (0 main, 1 the second thread): its call of round `i` is the
// rank's call 2i + (t on rank 1, 1 - t on rank 0).
static void run(int t) {
  int buf[8] = {0};
  for (int i = 0; i < rounds; ++i) {
    wait_turn(2 * i + (rank == 0 ? 1 - t : t));
    if (rank == 0) {
      buf[0] = t;
      MPI_Send(buf, t == 1 ? 8 : 4, MPI_INT, 1, kTag, MPI_COMM_WORLD);
    } else {
      // With a status: the recorder takes a wildcard's source from it.
      MPI_Status st;
      MPI_Recv(buf, t == 0 ? 8 : 4, MPI_INT, t == 0 ? MPI_ANY_SOURCE : 0, kTag, MPI_COMM_WORLD,
               &st);
      got[t][ngot[t]++] = buf[0];
    }
    next_turn();
  }
}

static void* second(void* arg) {
  (void)arg;
  run(1);
  return NULL;
}

int main(int argc, char** argv) {
  int size = 0;
  if (!thread_init_multiple(&argc, &argv, "thread_tags", &rank, &size)) return 0;
  rounds = argc > 1 ? atoi(argv[1]) : 10;
  if (rounds < 1 || rounds > kMaxRounds) rounds = 10;
  early = argc > 2 ? atoi(argv[2]) : 0;
  if (early < 0 || early > kMaxRounds) early = 0;
  if (rank < 2) {
    for (int i = 0; i < early; ++i) {
      int buf[4] = {0};
      if (rank == 0)
        MPI_Send(buf, 4, MPI_INT, 1, kTag, MPI_COMM_WORLD);
      else
        MPI_Recv(buf, 4, MPI_INT, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rank == 1) got[0][ngot[0]++] = buf[0];
    }
    const pthread_t th = thread_start(second, NULL);
    run(0);
    pthread_join(th, NULL);
  }
  if (rank == 1)
    for (int t = 0; t < 2; ++t) {
      printf("thread_tags: receiver thread %d got sender threads", t);
      for (int i = 0; i < ngot[t]; ++i) printf(" %d", got[t][i]);
      printf("\n");
    }
  MPI_Finalize();
  (void)size;
  return 0;
}
