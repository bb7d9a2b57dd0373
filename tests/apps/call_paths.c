/* One MPI exchange reached along many call paths: two callers whose frames
 * sit at the same stack depth (so only an outer return address tells them
 * apart), recursion of varying depth, calls through a function pointer
 * that changes every step, and a second thread's stack. Exercises the
 * recorder's call-path cache, which must keep every path apart exactly as
 * a full stack walk does. Usage: call_paths [steps] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static double out[8], in[8];
static int peer;

__attribute__((noinline)) static void exchange(int tag) {
  MPI_Sendrecv(out, 8, MPI_DOUBLE, peer, tag, in, 8, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  for (int i = 0; i < 8; ++i) out[i] = 0.5 * (out[i] + in[i]) + tag;
}

/* Same frame layout, different code: equal stack depth at the MPI call.
 * The empty asm after each call keeps it from becoming a tail call, which
 * would take the caller's frame off the stack. */
__attribute__((noinline)) static void from_north(int step) {
  exchange(1 + step % 2);
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void from_south(int step) {
  exchange(3 + step % 2);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void recurse(int depth, int step) {
  if (depth == 0) {
    exchange(5);
    return;
  }
  recurse(depth - 1, step);
  __asm__ volatile("" ::: "memory"); /* as above: one frame per level */
}

static void* worker(void* arg) {
  (void)arg;
  double v = 0, sum = 0;
  for (int i = 0; i < 4; ++i) {
    v += i;
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  peer = (rank ^ 1) < size ? (rank ^ 1) : rank;
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  for (int i = 0; i < 8; ++i) out[i] = rank + i;
  void (*pick[2])(int) = {from_north, from_south};
  for (int s = 0; s < steps; ++s) {
    from_north(s);
    from_south(s);
    pick[s % 2](s); /* the same call instruction reaches both */
    recurse(s % 4, s);
  }
  /* MPI_THREAD_SERIALIZED: the main thread waits while the other calls MPI. */
  if (provided >= MPI_THREAD_SERIALIZED) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
  }
  double local = 0, total = 0;
  for (int i = 0; i < 8; ++i) local += out[i];
  MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("call_paths: %d ranks, %d steps, checksum %.6f\n", size, steps, total);
  MPI_Finalize();
  return 0;
}
