// The fixed part of every generated program (gen.hpp): the C helpers the
// statements call (timing, buffers, values, lists, displacements). The
// program around them is written by program.cpp.

#include "gen.hpp"

namespace tracefold::benchgen {

std::string prelude() {
  return R"(#define _XOPEN_SOURCE 700
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Not every program uses every helper below. */
#if defined(__GNUC__)
#define HELPER static __attribute__((unused))
#else
#define HELPER static
#endif

/* Sentinels in the tables below: wildcard, null process, undefined, absent. */
#define TF_ANY (-2000000001L)
#define TF_NULL (-2000000002L)
#define TF_UNDEF (-2000000003L)
#define TF_ABSENT (-2000000004L)

HELPER int rank, size;
HELPER int flag, which, outcount;
HELPER MPI_Message message = MPI_MESSAGE_NULL;
HELPER MPI_Comm scratch_comm = MPI_COMM_NULL;
/* MPI_STATUSES_IGNORE through a variable the compiler cannot see into:
   MPICH declares the status arrays of MPI_Waitall and friends with a size
   that GCC's -Wstringop-overflow checks against MPICH's (MPI_Status *)1. */
HELPER MPI_Status *volatile statuses_ignore;
HELPER const int zeros_list[2] = {0, 0};
HELPER const int *const zeros = zeros_list + 1;

HELPER double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Computation is replaced by spinning on the clock; the cost of reading
   the clock, measured once at start, is taken off each wait. */
static double clock_cost;
HELPER void calibrate(void) {
  const int n = 1000;
  double t0 = now();
  for (int k = 0; k < n; ++k) (void)now();
  clock_cost = (now() - t0) / n;
}
HELPER void spin_ns(double ns) {
  double end = now() + 1e-9 * ns - clock_cost;
  while (now() < end) {
  }
}
/* tracefold bench --compute-clock cpu: spin until this thread has used ns
   of processor time, so that time spent waiting for a core (more ranks
   than cores) does not count, as it did not for the program. Reading the
   processor clock is a system call: short spins use the wall clock (a rank
   is rarely descheduled within one), longer ones spin on the wall clock
   for what is left, which takes at most that much processor time, and
   read the processor clock only then. */
HELPER double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
HELPER void spin_cpu_ns(double ns) {
  if (ns < 50e3) {
    spin_ns(ns);
    return;
  }
  const double until = cpu_now() + 1e-9 * ns;
  for (double rest = 1e-9 * ns; rest > 1e-6; rest = until - cpu_now()) spin_ns(1e9 * rest);
}

/* A recorded time histogram bin: count, min, max, sum (ns). A draw picks a
   bin by its count, then its min or max with the odds that keep its mean. */
struct bin {
  long count, min, max, sum;
};
HELPER double draw_ns(const struct bin *bins, int n) {
  long total = 0;
  for (int k = 0; k < n; ++k) total += bins[k].count;
  long pick = (long)(drand48() * (double)total);
  int k = 0;
  while (k + 1 < n && pick >= bins[k].count) pick -= bins[k++].count;
  const struct bin *b = &bins[k];
  double mean = (double)b->sum / (double)b->count;
  if (b->max <= b->min) return (double)b->min;
  return drand48() < (mean - (double)b->min) / (double)(b->max - b->min) ? (double)b->max : (double)b->min;
}

HELPER char *alloc_buffer(long bytes) {
  char *p = calloc((size_t)bytes + 64, 1);
  if (!p) {
    fprintf(stderr, "bench: out of memory (%ld bytes)\n", bytes);
    exit(1);
  }
  return p;
}

HELPER int rank_in(MPI_Comm c) {
  int r = 0;
  if (c != MPI_COMM_NULL) PMPI_Comm_rank(c, &r);
  return r;
}
HELPER int size_of(MPI_Comm c) {
  int s = 1;
  if (c != MPI_COMM_NULL) PMPI_Comm_size(c, &s);
  return s;
}
HELPER int val(long v) {
  if (v == TF_ANY) return MPI_ANY_SOURCE;
  if (v == TF_NULL) return MPI_PROC_NULL;
  if (v == TF_UNDEF) return MPI_UNDEFINED;
  return (int)v;
}
HELPER int tag_of(long v) {
  return v == TF_ANY ? MPI_ANY_TAG : (int)v;
}
/* Peers are stored as offsets from the caller's rank in the communicator. */
HELPER int peer_of(MPI_Comm c, long offset) {
  if (offset == TF_ANY) return MPI_ANY_SOURCE;
  if (offset == TF_NULL || offset == TF_ABSENT) return MPI_PROC_NULL;
  return (int)((rank_in(c) + offset) % size_of(c));
}

/* List tables hold each list as its length, then its values. */
HELPER const int *next_list(const int *table, long n, long *at) {
  const int *p = table + *at;
  *at += 1 + p[0];
  if (*at >= n) *at = 0;
  return p + 1;
}
HELPER int list_len(const int *p) {
  return p ? p[-1] : 0;
}
/* A long sequence of values (a polling loop's) is kept as the trace folds
   it: runs of a repeated pattern. Run j holds the values before index
   end; its pattern is the len values from v[at]. */
struct run {
  long end, at, len;
};
HELPER long run_value(const struct run *r, long n, const long *v, long k) {
  long lo = 0, hi = n - 1;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (r[mid].end > k)
      hi = mid;
    else
      lo = mid + 1;
  }
  long start = lo ? r[lo - 1].end : 0;
  return v[r[lo].at + (k - start) % r[lo].len];
}
/* next_list for a list table kept as runs: the list is copied into buf
   (its length first, as in a list table). */
HELPER const int *next_run_list(const struct run *r, long n, const long *v, long *at, int *buf) {
  buf[0] = (int)run_value(r, n, v, *at);
  for (int j = 0; j < buf[0]; ++j) buf[1 + j] = (int)run_value(r, n, v, *at + 1 + j);
  *at += 1 + buf[0];
  if (*at >= r[n - 1].end) *at = 0;
  return buf + 1;
}
/* A lossy benchmark's receive counts: each at least the largest count a
   member can send (the list copied, as displs_of does). */
HELPER int *at_least_buf;
HELPER const int *counts_at_least(const int *counts, int least) {
  if (!counts) return NULL;
  int n = list_len(counts);
  at_least_buf = realloc(at_least_buf, sizeof(int) * (size_t)(n + 1));
  at_least_buf[0] = n;
  for (int k = 0; k < n; ++k) at_least_buf[k + 1] = counts[k] > least ? counts[k] : least;
  return at_least_buf + 1;
}
/* w-collectives move their recorded counts as bytes. The table only grows,
   so both type arguments of one call point at the same live array. */
HELPER MPI_Datatype *bytes_buf;
HELPER int bytes_cap;
HELPER MPI_Datatype *bytes_types(int n) {
  if (n > bytes_cap) {
    bytes_buf = realloc(bytes_buf, sizeof(MPI_Datatype) * (size_t)n);
    for (int k = bytes_cap; k < n; ++k) bytes_buf[k] = MPI_BYTE;
    bytes_cap = n;
  }
  return bytes_buf;
}
HELPER MPI_Aint *aint_displs_buf[2];
HELPER const MPI_Aint *aint_displs_of(const int *counts, int which_buf) {
  if (!counts) return NULL;
  int n = list_len(counts);
  MPI_Aint *d = aint_displs_buf[which_buf] =
      realloc(aint_displs_buf[which_buf], sizeof(MPI_Aint) * (size_t)(n + 1));
  MPI_Aint at = 0;
  for (int k = 0; k < n; ++k) {
    d[k] = at;
    at += counts[k];
  }
  return d;
}
HELPER int *displs_buf[2];
HELPER const int *displs_of(const int *counts, int which_buf) {
  if (!counts) return NULL;
  int n = list_len(counts);
  int *d = displs_buf[which_buf] = realloc(displs_buf[which_buf], sizeof(int) * (size_t)(n + 1));
  int at = 0;
  for (int k = 0; k < n; ++k) {
    d[k] = at;
    at += counts[k];
  }
  return d;
}
)";
}

}  // namespace tracefold::benchgen
