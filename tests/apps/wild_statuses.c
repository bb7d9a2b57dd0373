/* Wildcard receives completed by multi-request completions. Every phase
 * rank 0 posts one MPI_ANY_SOURCE/MPI_ANY_TAG receive per other rank, a
 * receive wildcard in its tag only, one wildcard in its source only, a
 * plain receive, MPI_REQUEST_NULL and (for Waitall/Testall) a wildcard
 * receive it cancels, and completes them all with MPI_Waitall, a
 * MPI_Waitsome loop, a MPI_Testall polling loop or a MPI_Testsome loop,
 * first with a status array, then with MPI_STATUSES_IGNORE.
 *
 * What each wildcard receive matches is deterministic: the other ranks
 * send their wildcard messages one after another (MPI_Ssend, passing a
 * token along; the order alternates), so the k-th message meets the k-th
 * posted receive, and a barrier ends every phase. The side messages go
 * over a duplicate communicator and can match one receive each.
 *
 * Rank 0 prints, per phase, the source and tag each wildcard receive
 * matched, in request array order ("undef" for the cancelled one): from
 * its statuses when it has them, else from the payloads (sender * 1000 +
 * tag). usage: app_wild_statuses STEPS (at least 3 ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxReqs = 16, kSpecTag = 7, kSrcWildTag = 9, kCancelTag = 999 };

static const char* const kOps[] = {"MPI_Waitall", "MPI_Waitsome", "MPI_Testall", "MPI_Testsome"};

static int rank, size;
static MPI_Comm side;

static int chain_tag(int phase, int r) {
  return 100 + 10 * phase + r;
}

/* Ranks 1..size-1 take turns sending their wildcard message to rank 0. */
static void send_in_turn(int phase, int reverse) {
  const int first = reverse ? size - 1 : 1, last = reverse ? 1 : size - 1;
  const int before = reverse ? rank + 1 : rank - 1, after = reverse ? rank - 1 : rank + 1;
  int token = 0;
  if (rank != first) MPI_Recv(&token, 1, MPI_INT, before, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int payload = rank * 1000 + chain_tag(phase, rank);
  /* Synchronous: returns once matched, so the next sender's message cannot
   * overtake this one at rank 0. */
  MPI_Ssend(&payload, 1, MPI_INT, 0, chain_tag(phase, rank), MPI_COMM_WORLD);
  if (rank != last) MPI_Send(&token, 1, MPI_INT, after, 1, MPI_COMM_WORLD);
}

static void send_side(int step) {
  MPI_Request reqs[2];
  int payload[2], n = 0;
  if (rank == 1) {
    payload[0] = 1000 + kSpecTag;
    payload[1] = 1000 + kSrcWildTag;
    MPI_Isend(&payload[0], 1, MPI_INT, 0, kSpecTag, side, &reqs[n++]);
    MPI_Isend(&payload[1], 1, MPI_INT, 0, kSrcWildTag, side, &reqs[n++]);
  } else if (rank == 2) {
    const int tag = 20 + step % 50;
    payload[0] = 2000 + tag;
    MPI_Isend(&payload[0], 1, MPI_INT, 0, tag, side, &reqs[n++]);
  }
  MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}

static void append(char* out, size_t cap, const char* text) {
  const size_t len = strlen(out);
  snprintf(out + len, cap - len, "%s%s", len ? "," : "", text);
}

/* Rank 0: one phase. Returns a checksum of the payloads. */
static long receive_phase(int step, int op, int ignore) {
  MPI_Request reqs[kMaxReqs];
  MPI_Status statuses[kMaxReqs];
  int payload[kMaxReqs], wild[kMaxReqs], cancelled[kMaxReqs];
  const int with_cancel = op == 0 || op == 2;
  memset(wild, 0, sizeof wild);
  memset(cancelled, 0, sizeof cancelled);
  for (int i = 0; i < kMaxReqs; ++i) payload[i] = -1;
  /* Array order differs from posting order: side receives are posted first
   * (they cannot take a wildcard message anyway), then the world
   * wildcards, whose posting order decides what they match. Layout:
   * world wildcard, plain, world wildcard, tag wildcard, null, the other
   * world wildcards, source wildcard, [cancelled]. */
  const int spec = 1, tag_wild = 3, null_slot = 4, src_wild = size + 2, cancel = size + 3;
  const int count = with_cancel ? size + 4 : size + 3;
  MPI_Irecv(&payload[spec], 1, MPI_INT, 1, kSpecTag, side, &reqs[spec]);
  MPI_Irecv(&payload[tag_wild], 1, MPI_INT, 2, MPI_ANY_TAG, side, &reqs[tag_wild]);
  MPI_Irecv(&payload[src_wild], 1, MPI_INT, MPI_ANY_SOURCE, kSrcWildTag, side, &reqs[src_wild]);
  wild[tag_wild] = wild[src_wild] = 1;
  reqs[null_slot] = MPI_REQUEST_NULL;
  for (int i = 0; i < src_wild; ++i) {
    if (i == spec || i == tag_wild || i == null_slot) continue;
    MPI_Irecv(&payload[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[i]);
    wild[i] = 1;
  }
  if (with_cancel) {
    MPI_Irecv(&payload[cancel], 1, MPI_INT, MPI_ANY_SOURCE, kCancelTag, MPI_COMM_WORLD,
              &reqs[cancel]);
    MPI_Cancel(&reqs[cancel]);
    wild[cancel] = cancelled[cancel] = 1;
  }
  MPI_Status* st = ignore ? MPI_STATUSES_IGNORE : statuses;
  if (op == 0) {
    MPI_Waitall(count, reqs, st);
  } else if (op == 2) {
    int flag = 0;
    while (!flag) MPI_Testall(count, reqs, &flag, st);
  } else {
    /* Statuses of Waitsome/Testsome are per completion: keep them by index. */
    MPI_Status by_index[kMaxReqs];
    int indices[kMaxReqs], done = 0, live = count - 1; /* all but the null slot */
    while (done < live) {
      int outcount = 0;
      if (op == 1)
        MPI_Waitsome(count, reqs, &outcount, indices, st);
      else
        MPI_Testsome(count, reqs, &outcount, indices, st);
      if (outcount == MPI_UNDEFINED) break;
      for (int k = 0; k < outcount; ++k)
        if (!ignore) by_index[indices[k]] = statuses[k];
      done += outcount;
    }
    if (!ignore) memcpy(statuses, by_index, sizeof statuses);
  }
  char srcs[512] = "", tags[512] = "";
  long sum = 0;
  for (int i = 0; i < count; ++i) {
    if (!wild[i]) {
      if (i != null_slot) sum += payload[i];
      continue;
    }
    int src, tag;
    if (ignore) {
      if (cancelled[i]) {
        append(srcs, sizeof srcs, "undef");
        append(tags, sizeof tags, "undef");
        continue;
      }
      src = payload[i] / 1000;
      tag = payload[i] % 1000;
    } else {
      int was_cancelled = 0;
      MPI_Test_cancelled(&statuses[i], &was_cancelled);
      if (was_cancelled != cancelled[i]) {
        fprintf(stderr, "wild_statuses: request %d: cancelled %d, expected %d\n", i, was_cancelled,
                cancelled[i]);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      if (was_cancelled) {
        append(srcs, sizeof srcs, "undef");
        append(tags, sizeof tags, "undef");
        continue;
      }
      src = statuses[i].MPI_SOURCE;
      tag = statuses[i].MPI_TAG;
      if (payload[i] != src * 1000 + tag) {
        fprintf(stderr, "wild_statuses: request %d: status says %d/%d, payload %d\n", i, src, tag,
                payload[i]);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%d", src);
    append(srcs, sizeof srcs, buf);
    snprintf(buf, sizeof buf, "%d", tag);
    append(tags, sizeof tags, buf);
    sum += payload[i];
  }
  printf("wild step %d %s%s srcs=[%s] mtags=[%s]\n", step, kOps[op], ignore ? " ignore" : "", srcs,
         tags);
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 2;
  if (size < 3 || size + 4 > kMaxReqs) {
    if (rank == 0) fprintf(stderr, "wild_statuses: needs 3 to %d ranks\n", kMaxReqs - 4);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &side);
  long sum = 0;
  for (int s = 0; s < steps; ++s) {
    for (int ignore = 0; ignore < 2; ++ignore) {
      for (int op = 0; op < 4; ++op) {
        const int phase = 4 * ignore + op;
        if (rank == 0) {
          sum += receive_phase(s, op, ignore);
        } else {
          send_side(s);
          send_in_turn(phase, (s + phase) % 2);
        }
        MPI_Barrier(MPI_COMM_WORLD);
      }
    }
  }
  MPI_Comm_free(&side);
  if (rank == 0) printf("wild_statuses: %d ranks, %d steps, checksum %ld\n", size, steps, sum);
  MPI_Finalize();
  return 0;
}
