/* The parent stores N ints, forks a child that stores 5N, waits for it and
 * stores 2N more: under tracefold-mem the stream is the parent's alone.
 * usage: forks N */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  int* a = n > 0 ? malloc(sizeof(int) * 5 * (size_t)n) : NULL;
  if (a == NULL) {
    fprintf(stderr, "usage: forks N\n");
    return 2;
  }
  for (long i = 0; i < n; i++) a[i] = (int)i;
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 3;
  if (child == 0) {
    for (long i = 0; i < 5 * n; i++) a[i] = (int)i;
    return 4;
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 3;
  for (long i = 0; i < 2 * n; i++) a[i] = (int)i;
  printf("forks n=%ld child exited %d\n", n, WEXITSTATUS(status));
  return 0;
}
