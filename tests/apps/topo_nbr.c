/* Neighbourhood collectives on the three kinds of process topology, as
 * codes that describe their halo once and let MPI route it do:
 *  - a 2-D Cartesian grid, periodic in x only (MPI_Dims_create shape), with
 *    MPI_Neighbor_alltoall of one value per direction and a nonblocking
 *    MPI_Ineighbor_allgather completed by MPI_Wait;
 *  - the same ring twice: MPI_Graph_create (every rank passes the whole
 *    graph) and MPI_Dist_graph_create_adjacent (each rank its own two
 *    neighbours), with MPI_Neighbor_allgather on the first and
 *    MPI_Neighbor_alltoall on the second.
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
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, both, MPI_UNWEIGHTED, 2, both,
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist);

  long sum = 0;
  for (int s = 0; s < steps; ++s) {
    int out[4], in[4];
    for (int d = 0; d < 4; ++d) out[d] = rank * 1000 + s * 10 + d;
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, cart);
    // Block d went to neighbour d, which reads it as its block d^1.
    for (int d = 0; d < 4; ++d)
      if (nbr[d] != MPI_PROC_NULL) expect(in[d], nbr[d] * 1000 + s * 10 + (d ^ 1), "cart alltoall", rank);

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
    sum += in[1] + got[0] + ring[1] + from[0];
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
