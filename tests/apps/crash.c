/* Ends without MPI_Finalize half way through the run. Every step is a ring
 * MPI_Sendrecv plus an MPI_Allreduce; at step STEPS/2, after its Sendrecv:
 *   MODE segv: the last rank writes through a null pointer (SIGSEGV) while
 *              the others wait in the Allreduce until the launcher kills them;
 *   MODE exit: every rank calls exit(4) without finalizing MPI;
 *   MODE kill: the last rank sends itself SIGKILL (as the kernel's OOM
 *              killer would), so only the others can save what they have.
 * usage: app_crash STEPS MODE */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  const char* mode = argc > 2 ? argv[2] : "segv";
  long x = rank, in = 0, sum = 0;
  for (int s = 0; s < steps; ++s) {
    MPI_Sendrecv(&x, 1, MPI_LONG, (rank + 1) % size, 5, &in, 1, MPI_LONG, (rank + size - 1) % size,
                 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (s == steps / 2) {
      if (strcmp(mode, "segv") == 0 && rank == size - 1) {
        fprintf(stderr, "crash: rank %d writes through a null pointer at step %d\n", rank, s);
        fflush(stderr);
        int* volatile nowhere = NULL;  // volatile: the compiler may not assume it is null
        *nowhere = 1;
      }
      if (strcmp(mode, "kill") == 0 && rank == size - 1) {
        fprintf(stderr, "crash: rank %d kills itself at step %d\n", rank, s);
        fflush(stderr);
        kill(getpid(), SIGKILL);
      }
      if (strcmp(mode, "exit") == 0) {
        if (rank == 0) printf("crash: every rank exits without MPI_Finalize at step %d\n", s);
        fflush(stdout);
        exit(4);
      }
    }
    MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    x = (x + sum) % 1009;
  }
  if (rank == 0)
    printf("crash: %d ranks, %d steps, checksum %ld (no crash happened)\n", size, steps, x);
  MPI_Finalize();
  return 0;
}
