/* Parallel integer sort in the shape of a bucketed key sort (NPB IS's
 * communication, written for the project): every step each rank draws its
 * keys from a pseudo-random generator seeded by rank and step, counts them
 * into buckets, sums the bucket counts over all ranks (MPI_Allreduce),
 * hands each rank a run of whole buckets holding about an equal share of
 * all keys, tells every rank how many keys it will send it (MPI_Alltoall),
 * sends the keys (MPI_Alltoallv: the counts come from the data, so they
 * differ from rank to rank and step to step), sorts what it received and
 * checks the order across rank boundaries (MPI_Sendrecv of the largest key
 * to the next rank, MPI_Reduce of the errors and a checksum).
 * KEYS > 0: that many keys over all ranks (strong scaling, KEYS/P a rank);
 * KEYS < 0: -KEYS keys a rank (weak scaling). Computation: WORK units per
 * 1,024 keys a rank hold, so it shrinks with P under strong scaling.
 * usage: app_isort STEPS [WORK [KEYS]] */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_work.h"

#define KEY_BITS 16
#define BUCKET_BITS 8
#define NBUCKETS (1 << BUCKET_BITS)

static uint64_t next_random(uint64_t* s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The mean of four uniform draws: keys pile up in the middle of the range,
 * so equal key ranges would not be equal shares of the keys. */
static void draw_keys(int* keys, long n, int rank, int step) {
  uint64_t s = 0x5EED0000ull + (uint64_t)rank * 1000003ull + (uint64_t)step * 7919ull;
  for (long i = 0; i < n; ++i) {
    uint64_t sum = 0;
    for (int k = 0; k < 4; ++k) sum += next_random(&s) >> (64 - KEY_BITS);
    keys[i] = (int)(sum / 4);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app_timer_start();
  const int wunits = app_work_units(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int params[2] = {argc > 1 ? atoi(argv[1]) : 10, argc > 3 ? atoi(argv[3]) : 65536};
  MPI_Bcast(params, 2, MPI_INT, 0, MPI_COMM_WORLD);
  const int steps = params[0];
  const long total = params[1] > 0 ? params[1] : (long)-params[1] * size;
  const long local = total / size + (rank < total % size ? 1 : 0);
  int* keys = malloc(sizeof(int) * (size_t)(local > 0 ? local : 1));
  int* packed = malloc(sizeof(int) * (size_t)(local > 0 ? local : 1));
  int *scount = calloc((size_t)size, sizeof(int)), *sdispl = calloc((size_t)size, sizeof(int));
  int *rcount = calloc((size_t)size, sizeof(int)), *rdispl = calloc((size_t)size, sizeof(int));
  int bucket[NBUCKETS], totals[NBUCKETS], owner[NBUCKETS], fill[NBUCKETS];
  int* received = NULL;
  long errors = 0, checksum = 0;
  for (int step = 0; step < steps; ++step) {
    draw_keys(keys, local, rank, step);
    memset(bucket, 0, sizeof bucket);
    for (long i = 0; i < local; ++i) ++bucket[keys[i] >> (KEY_BITS - BUCKET_BITS)];
    MPI_Allreduce(bucket, totals, NBUCKETS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    /* whole buckets to each rank in key order, moving on once a rank holds
     * its share of all keys */
    long acc = 0;
    int dest = 0;
    for (int b = 0; b < NBUCKETS; ++b) {
      owner[b] = dest;
      acc += totals[b];
      while (dest < size - 1 && acc * size >= (long)(dest + 1) * total) ++dest;
    }
    memset(scount, 0, sizeof(int) * (size_t)size);
    for (int b = 0; b < NBUCKETS; ++b) scount[owner[b]] += bucket[b];
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
    long nrecv = 0;
    for (int j = 0; j < size; ++j) {
      sdispl[j] = j ? sdispl[j - 1] + scount[j - 1] : 0;
      rdispl[j] = (int)nrecv;
      nrecv += rcount[j];
    }
    /* pack by bucket: a bucket's keys go to its owner, buckets in order */
    for (int b = 0, at = 0; b < NBUCKETS; ++b) {
      fill[b] = at;
      at += bucket[b];
    }
    for (long i = 0; i < local; ++i) packed[fill[keys[i] >> (KEY_BITS - BUCKET_BITS)]++] = keys[i];
    received = realloc(received, sizeof(int) * (size_t)(nrecv > 0 ? nrecv : 1));
    MPI_Alltoallv(packed, scount, sdispl, MPI_INT, received, rcount, rdispl, MPI_INT,
                  MPI_COMM_WORLD);
    app_work((int)((long)wunits * local / 1024));
    /* counting sort of the received keys, then the order check */
    static int histo[1 << KEY_BITS];
    memset(histo, 0, sizeof histo);
    for (long i = 0; i < nrecv; ++i) ++histo[received[i]];
    long at = 0;
    for (int k = 0; k < (1 << KEY_BITS); ++k)
      for (int c = 0; c < histo[k]; ++c) received[at++] = k;
    int mymax = nrecv ? received[nrecv - 1] : -1, prevmax = -1;
    MPI_Sendrecv(&mymax, 1, MPI_INT, rank + 1 < size ? rank + 1 : MPI_PROC_NULL, 5, &prevmax, 1,
                 MPI_INT, rank > 0 ? rank - 1 : MPI_PROC_NULL, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    long mine[2] = {nrecv && prevmax > received[0] ? 1 : 0, 0}, sums[2];
    for (long i = 0; i < nrecv; ++i) mine[1] += received[i];
    MPI_Reduce(mine, sums, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      errors += sums[0];
      checksum = (checksum * 31 + sums[1]) % 1000000007L;
    }
  }
  if (rank == 0)
    printf("isort: ranks=%d keys=%ld steps=%d order errors=%ld checksum=%ld\n", size, total, steps,
           errors, checksum);
  free(keys);
  free(packed);
  free(received);
  free(scount);
  free(sdispl);
  free(rcount);
  free(rdispl);
  app_timer_stop();
  MPI_Finalize();
  return errors != 0;
}
