/* One MPI exchange reached along many call paths: two callers whose frames
 * sit at the same stack depth (so only an outer return address tells them
 * apart), two paths that differ only in the outermost frame of the default
 * 6-frame signature, recursion of varying depth, calls through a function
 * pointer that changes every step, frames whose size changes between calls
 * (alloca) while the MPI call's stack depth stays the same, a coroutine on
 * a heap-allocated stack, and a second thread's stack. Exercises the
 * recorder's call-path cache, which must keep every path apart exactly as a
 * full stack walk does. Usage: call_paths [steps] [one-thread]; with
 * one-thread no second thread calls MPI (for tools that take one stream
 * per rank). */
#define _DEFAULT_SOURCE
#include <alloca.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define KEEP_FRAME __asm__ volatile("" ::: "memory") /* no tail call */

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

/* exchange <- d4 <- d3 <- d2 <- d1 <- north_far | south_far: six frames,
 * only the last differs. */
__attribute__((noinline)) static void d4(void) {
  exchange(7);
  KEEP_FRAME;
}
__attribute__((noinline)) static void d3(void) {
  d4();
  KEEP_FRAME;
}
__attribute__((noinline)) static void d2(void) {
  d3();
  KEEP_FRAME;
}
__attribute__((noinline)) static void d1(void) {
  d2();
  KEEP_FRAME;
}
__attribute__((noinline)) static void north_far(void) {
  d1();
  KEEP_FRAME;
}
__attribute__((noinline)) static void south_far(void) {
  d1();
  KEEP_FRAME;
}

/* padded() is called from two call sites; its alloca moves shifted()'s
 * frame, and shifted()'s own alloca makes up the difference, so the MPI
 * call sits at the same stack depth on both paths and the old return
 * address into padded() is still in the unwritten alloca'd bytes: only
 * padded()'s saved frame pointer tells the two calls apart. */
__attribute__((noinline)) static void barrier_leaf(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  KEEP_FRAME;
}
__attribute__((noinline)) static void shifted(int pad) {
  volatile char* p = alloca(pad);
  p[0] = 0;
  barrier_leaf();
  KEEP_FRAME;
}
/* The same with a frame GCC realigns through another register (a VLA next
 * to an over-aligned local): its position is kept at [RBP - 8], not given
 * by RBP + 16. */
__attribute__((noinline)) static void shifted_aligned(int n) {
  _Alignas(64) volatile char buf[64];
  volatile char v[n];
  v[0] = 0;
  buf[0] = 0;
  __asm__ volatile("" : : "r"(v), "r"(buf) : "memory"); /* both are used */
  barrier_leaf();
  KEEP_FRAME;
}
/* Calls `shift` (shifted or shifted_aligned) from one of two call sites,
 * below an alloca of `pad` bytes. */
__attribute__((noinline)) static void padded(int pad, int which, void (*shift)(int)) {
  volatile char* p = alloca(pad);
  p[0] = 0;
  if (which) {
    shift(1024 - pad);
    __asm__ volatile("nop" ::: "memory");
  } else {
    shift(1024 - pad);
    __asm__ volatile("nop; nop" ::: "memory");
  }
}

static ucontext_t main_ctx, co_ctx;
static int co_step;
static void co_main(void) {
  from_north(co_step);
  from_south(co_step);
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
    (s % 2 ? south_far : north_far)();
  }
  /* Back to back and from one call instruction, so the previous call's
   * return address into padded() is still in the bytes the next call's
   * alloca leaves unwritten, and the return address into main is the same. */
  static volatile int pads[2] = {512, 256};
  for (volatile int k = 0; k < 2 * steps; ++k) padded(pads[k % 2], k % 2, shifted);
  /* Site A twice (learned), then site B right after it. */
  for (volatile int k = 0; k < 3 * steps; ++k)
    padded(k % 3 == 2 ? 256 : 512, k % 3 == 2, shifted_aligned);
  /* A coroutine on a stack of its own, from the heap. */
  const size_t co_size = 256 << 10;
  char* co_stack = malloc(co_size);
  for (co_step = 0; co_stack && co_step < 3; ++co_step) {
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = co_stack;
    co_ctx.uc_stack.ss_size = co_size;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, co_main, 0);
    swapcontext(&main_ctx, &co_ctx);
  }
  free(co_stack);
  /* MPI_THREAD_SERIALIZED: the main thread waits while the other calls MPI. */
  const int one_thread = argc > 2 && strcmp(argv[2], "one-thread") == 0;
  if (provided >= MPI_THREAD_SERIALIZED && !one_thread) {
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
