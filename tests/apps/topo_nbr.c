/* Neighbourhood collectives on the three kinds of process topology, as
 * codes that describe their halo once and let MPI route it do:
 *  - a 2-D Cartesian grid, periodic in x only (MPI_Dims_create shape; x of
 *    3 or more), with
 *    MPI_Neighbor_alltoall of one value per direction and a nonblocking
 *    MPI_Ineighbor_allgather completed by MPI_Wait;
 *  - the same ring twice: MPI_Graph_create (every rank passes the whole
 *    graph) and MPI_Dist_graph_create_adjacent (each rank its own two
 *    neighbours), with MPI_Neighbor_allgather on the first and
 *    MPI_Neighbor_alltoall on the second;
 *  - the v and w forms with rank-dependent counts: MPI_Neighbor_alltoallv
 *    on the grid, MPI_Neighbor_allgatherv on the distributed graph and a
 *    nonblocking MPI_Ineighbor_alltoallw (counts in bytes) on the graph;
 *    and the world-wide MPI_Alltoallw (one int to each rank, typed
 *    MPI_INT for even and MPI_BYTE x 4 for odd destinations).
 * Every received value is checked, so a replay or benchmark that builds a
 * different topology fails loudly.
 * usage: app_topo_nbr STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void expect(int got, int want, const char* what, int rank) {
  if (got == want) return;
  fprintf(stderr, "topo_nbr: rank %d: %s got %d, expected %d\n", rank, what, got, want);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 5;

  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(size, 2, dims);
  /* A periodic dimension of 2 makes one rank both neighbours, and which of
     its two blocks lands where is up to the MPI library (Open MPI and MPICH
     differ): periodic only from 3 on. */
  periods[0] = dims[0] > 2;
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int nbr[4];  // MPI's order: -x, +x, -y, +y
  MPI_Cart_shift(cart, 0, 1, &nbr[0], &nbr[1]);
  MPI_Cart_shift(cart, 1, 1, &nbr[2], &nbr[3]);

  // Rings: left and right neighbours in world order.
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  int* index = malloc(sizeof(int) * (size_t)size);
  int* edges = malloc(sizeof(int) * 2 * (size_t)size);
  for (int r = 0; r < size; ++r) {
    index[r] = 2 * (r + 1);
    edges[2 * r] = (r + size - 1) % size;
    edges[2 * r + 1] = (r + 1) % size;
  }
  MPI_Comm graph, dist;
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph);
  const int both[2] = {left, right};
  /* GCC 11+ takes Open MPI's MPI_UNWEIGHTED (a small constant pointer)
     for an empty array that MPI would read. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, both, MPI_UNWEIGHTED, 2, both, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &dist);
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif

  long sum = 0;
  for (int s = 0; s < steps; ++s) {
    int out[4], in[4];
    for (int d = 0; d < 4; ++d) out[d] = rank * 1000 + s * 10 + d;
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, cart);
    // Block d went to neighbour d, which reads it as its block d^1.
    for (int d = 0; d < 4; ++d)
      if (nbr[d] != MPI_PROC_NULL)
        expect(in[d], nbr[d] * 1000 + s * 10 + (d ^ 1), "cart alltoall", rank);

    int mine = rank * 100 + s, got[4];
    MPI_Request req;
    MPI_Ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, cart, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int d = 0; d < 4; ++d)
      if (nbr[d] != MPI_PROC_NULL) expect(got[d], nbr[d] * 100 + s, "cart allgather", rank);

    int ring[2];
    MPI_Neighbor_allgather(&mine, 1, MPI_INT, ring, 1, MPI_INT, graph);
    expect(ring[0], left * 100 + s, "graph allgather (left)", rank);
    expect(ring[1], right * 100 + s, "graph allgather (right)", rank);

    const int to[2] = {rank * 10 + 1, rank * 10 + 2};
    int from[2];
    MPI_Neighbor_alltoall(to, 1, MPI_INT, from, 1, MPI_INT, dist);
    // The left neighbour sent us its block for its right neighbour.
    expect(from[0], left * 10 + 2, "dist graph alltoall (left)", rank);
    expect(from[1], right * 10 + 1, "dist graph alltoall (right)", rank);
    sum += (nbr[1] != MPI_PROC_NULL ? in[1] : 0) + (nbr[0] != MPI_PROC_NULL ? got[0] : 0) +
           ring[1] + from[0];

    // v forms: neighbour k gets 1 + (rank + k) % 3 values, all `rank`.
    int scount[4], sdisp[4], rcount[4], rdisp[4], vout[12], vin[12];
    for (int d = 0, at = 0; d < 4; ++d) {
      scount[d] = 1 + (rank + d) % 3;
      sdisp[d] = at;
      for (int k = 0; k < scount[d]; ++k) vout[at + k] = rank;
      at += scount[d];
    }
    for (int d = 0, at = 0; d < 4; ++d) {
      // Neighbour nbr[d] sent us its block d^1.
      rcount[d] = nbr[d] == MPI_PROC_NULL ? 0 : 1 + (nbr[d] + (d ^ 1)) % 3;
      rdisp[d] = at;
      at += rcount[d];
    }
    MPI_Neighbor_alltoallv(vout, scount, sdisp, MPI_INT, vin, rcount, rdisp, MPI_INT, cart);
    for (int d = 0; d < 4; ++d)
      for (int k = 0; k < rcount[d]; ++k) expect(vin[rdisp[d] + k], nbr[d], "cart alltoallv", rank);

    int mine_n = 1 + rank % 2, gv_count[2] = {1 + left % 2, 1 + right % 2};
    int gv_disp[2] = {0, gv_count[0]}, gv_out[2] = {rank, rank}, gv_in[4];
    MPI_Neighbor_allgatherv(gv_out, mine_n, MPI_INT, gv_in, gv_count, gv_disp, MPI_INT, dist);
    for (int k = 0; k < gv_count[0]; ++k) expect(gv_in[k], left, "dist allgatherv (left)", rank);
    for (int k = 0; k < gv_count[1]; ++k)
      expect(gv_in[gv_disp[1] + k], right, "dist allgatherv (right)", rank);

    int w_scount[2] = {(int)sizeof(int), 2 * (int)sizeof(int)};
    int w_rcount[2] = {2 * (int)sizeof(int), (int)sizeof(int)};
    MPI_Aint w_sdisp[2] = {0, sizeof(int)}, w_rdisp[2] = {0, 2 * sizeof(int)};
    MPI_Datatype bytes[2] = {MPI_BYTE, MPI_BYTE};
    int w_out[3] = {rank, rank + 1000, rank + 1000}, w_in[3] = {-1, -1, -1};
    MPI_Request wreq;
    MPI_Ineighbor_alltoallw(w_out, w_scount, w_sdisp, bytes, w_in, w_rcount, w_rdisp, bytes, graph,
                            &wreq);
    MPI_Wait(&wreq, MPI_STATUS_IGNORE);
    // From the left: its block for its right neighbour (two ints); from the
    // right: its block for its left (one int).
    expect(w_in[0], left + 1000, "graph alltoallw (left)", rank);
    expect(w_in[2], right, "graph alltoallw (right)", rank);
    sum += (rcount[0] > 0 ? vin[0] : 0) + gv_in[0] + w_in[2];

    int* a_out = malloc(sizeof(int) * (size_t)size);
    int* a_in = malloc(sizeof(int) * (size_t)size);
    int* a_count = malloc(sizeof(int) * (size_t)size);
    int* a_rcount = malloc(sizeof(int) * (size_t)size);
    int* a_disp = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype* a_type = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype* a_rtype = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int r = 0; r < size; ++r) {
      a_out[r] = rank * 100 + r;
      a_disp[r] = r * (int)sizeof(int);
      a_type[r] = r % 2 ? MPI_BYTE : MPI_INT;
      a_count[r] = r % 2 ? (int)sizeof(int) : 1;
      a_rtype[r] = rank % 2 ? MPI_BYTE : MPI_INT;
      a_rcount[r] = rank % 2 ? (int)sizeof(int) : 1;
    }
    MPI_Alltoallw(a_out, a_count, a_disp, a_type, a_in, a_rcount, a_disp, a_rtype, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r) expect(a_in[r], r * 100 + rank, "alltoallw", rank);
    sum += a_in[size - 1];
    free(a_out);
    free(a_in);
    free(a_count);
    free(a_rcount);
    free(a_disp);
    free(a_type);
    free(a_rtype);
  }
  long total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("topo_nbr: %d ranks, %d steps, checksum %ld\n", size, steps, total);
  MPI_Comm_free(&dist);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&cart);
  free(index);
  free(edges);
  MPI_Finalize();
  return 0;
}
