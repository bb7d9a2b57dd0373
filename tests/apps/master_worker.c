/* Master-worker task farm. Rank 0 hands out STEPS tasks of two kinds (the
 * tag says which) and collects results with MPI_Recv(MPI_ANY_SOURCE,
 * MPI_ANY_TAG): the status tells which worker answered and which kind of
 * result it is; the worker gets its next task or a stop message (tag 0).
 * Workers receive from rank 0 with MPI_ANY_TAG. Needs at least 2 ranks.
 * usage: app_master_worker STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_work.h"

enum { TAG_STOP = 0, TAG_SMALL = 1, TAG_BIG = 2, TAG_RESULT = 10 };

static long work(long task, int big) {
  long x = task + 1;
  for (int i = 0; i < (big ? 2000 : 200); ++i) x = (x * 48271) % 2147483647;
  return x % 1000;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int ntasks = argc > 1 ? atoi(argv[1]) : 50;
  if (size < 2) {
    fprintf(stderr, "master_worker: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) {
    long next = 0, sum = 0, small = 0, big = 0;
    int active = 0;
    for (int w = 1; w < size; ++w) {
      if (next < ntasks) {
        MPI_Send(&next, 1, MPI_LONG, w, next % 3 == 0 ? TAG_BIG : TAG_SMALL, MPI_COMM_WORLD);
        ++next;
        ++active;
      } else {
        MPI_Send(&next, 1, MPI_LONG, w, TAG_STOP, MPI_COMM_WORLD);
      }
    }
    while (active > 0) {
      long result;
      MPI_Status st;
      MPI_Recv(&result, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      sum += result;
      if (st.MPI_TAG == TAG_RESULT + TAG_BIG)
        ++big;
      else
        ++small;
      if (next < ntasks) {
        MPI_Send(&next, 1, MPI_LONG, st.MPI_SOURCE, next % 3 == 0 ? TAG_BIG : TAG_SMALL,
                 MPI_COMM_WORLD);
        ++next;
      } else {
        MPI_Send(&next, 1, MPI_LONG, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
        --active;
      }
    }
    printf("master_worker: %d ranks, %d tasks (%ld small, %ld big), checksum %ld\n", size, ntasks,
           small, big, sum);
  } else {
    for (;;) {
      long task;
      MPI_Status st;
      MPI_Recv(&task, 1, MPI_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      if (st.MPI_TAG == TAG_STOP) break;
      const long r = work(task, st.MPI_TAG == TAG_BIG);
      app_work(wunits);
      MPI_Send(&r, 1, MPI_LONG, 0, TAG_RESULT + st.MPI_TAG, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  app_timer_stop();
  MPI_Finalize();
  return 0;
}
