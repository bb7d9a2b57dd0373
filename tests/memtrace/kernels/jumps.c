/* longjmp out of nested calls for the tracefold-mem tests: after deep()
 * recurses and jumps back to main, main calls touch(), whose accesses must
 * be in the context main>touch, not below the abandoned frames.
 * usage: jumps DEPTH */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf env;
static volatile long sink;

__attribute__((noinline)) void deep(int n) {
  sink += n;
  if (n == 0) {
    if (sink >= 0) longjmp(env, 1);
    return;
  }
  deep(n - 1);
  sink -= n; /* never reached: keeps the recursion a call, not a jump */
}

__attribute__((noinline)) void touch(long* a, long n) {
  for (long i = 0; i < n; i++) a[i] = i;
}

int main(int argc, char** argv) {
  int depth = argc > 1 ? atoi(argv[1]) : -1;
  if (depth < 0) {
    fprintf(stderr, "usage: jumps DEPTH\n");
    return 2;
  }
  static long a[100];
  if (setjmp(env) == 0) deep(depth);
  touch(a, 100);
  printf("jumps depth=%d sink=%ld a99=%ld\n", depth, (long)sink, a[99]);
  return 0;
}
