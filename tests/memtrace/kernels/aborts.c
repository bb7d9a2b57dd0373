/* Stores N ints, then aborts (SIGABRT): under tracefold-mem the exit status
 * must stay the signal's and the streams must hold what was recorded.
 * usage: aborts N */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  int* a = n > 0 ? malloc(sizeof(int) * (size_t)n) : NULL;
  if (a == NULL) {
    fprintf(stderr, "usage: aborts N\n");
    return 2;
  }
  for (long i = 0; i < n; i++) a[i] = (int)i;
  printf("aborting after %ld stores\n", n);
  fflush(stdout);
  abort();
}
