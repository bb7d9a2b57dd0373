/* A 2-D halo exchange described once as a Cartesian topology and routed by
 * MPI: MPI_Cart_create over MPI_Dims_create's grid, periodic along the
 * first (slowest) axis when it has 3 or more ranks, then every step
 * exchange() sends one face of the field to each of the four neighbours
 * with MPI_Neighbor_alltoall and the boundary values with
 * MPI_Neighbor_allgather (8 doubles each way, both), and main reduces a
 * residual with MPI_Allreduce. No point-to-point call: the neighbours are
 * the topology's. With `graph` or `dist` the same neighbours are given as
 * MPI_Graph_create's whole graph or as each rank's own lists to
 * MPI_Dist_graph_create_adjacent instead, or with `distgen` each rank passes
 * only its outgoing edges to MPI_Dist_graph_create (MPI works out who
 * sends to whom); with `sub` the grid is the
 * sub-grid MPI_Cart_sub keeps of a 3-D grid one rank deep (the same ranks
 * and neighbours).
 * usage: app_nbr_halo STEPS [cart|graph|dist|distgen|sub] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 8

static MPI_Comm cart;
static double faces[4 * LEN], ghosts[4 * LEN], edge[LEN], edges[4 * LEN];

/* The neighbours of `rank` on the grid, as MPI_Cart_shift orders them
 * (-y, +y, -x, +x), those off a non-periodic edge left out. */
static int neighbours(int rank, const int dims[2], const int periods[2], int out[4]) {
  const int row = rank / dims[1], col = rank % dims[1];
  int n = 0;
  for (int step = -1; step <= 1; step += 2) {
    const int r = row + step;
    if (r >= 0 && r < dims[0])
      out[n++] = r * dims[1] + col;
    else if (periods[0])
      out[n++] = ((r + dims[0]) % dims[0]) * dims[1] + col;
  }
  for (int step = -1; step <= 1; step += 2)
    if (col + step >= 0 && col + step < dims[1]) out[n++] = row * dims[1] + col + step;
  return n;
}

__attribute__((noinline)) static void exchange(int step) {
  for (int i = 0; i < 4 * LEN; ++i) faces[i] = step + i;
  for (int i = 0; i < LEN; ++i) edge[i] = step * 0.5 + i;
  MPI_Neighbor_alltoall(faces, LEN, MPI_DOUBLE, ghosts, LEN, MPI_DOUBLE, cart);
  MPI_Neighbor_allgather(edge, LEN, MPI_DOUBLE, edges, LEN, MPI_DOUBLE, cart);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 5;
  int dims[2] = {0, 0}, periods[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  /* A periodic axis of 2 makes one rank both neighbours: periodic from 3. */
  periods[0] = dims[0] > 2;
  const char* kind = argc > 2 ? argv[2] : "cart";
  if (strcmp(kind, "graph") == 0) {
    int* index = malloc(sizeof(int) * (size_t)size);
    int* all = malloc(sizeof(int) * 4 * (size_t)size);
    int total = 0;
    for (int r = 0; r < size; ++r) {
      total += neighbours(r, dims, periods, all + total);
      index[r] = total;
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, all, 0, &cart);
    free(index);
    free(all);
  } else if (strcmp(kind, "dist") == 0) {
    int mine[4];
    const int n = neighbours(rank, dims, periods, mine);
/* GCC 11+ takes Open MPI's MPI_UNWEIGHTED (a small constant pointer) for
   an empty array that MPI would read (as in topo_nbr.c). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, mine, MPI_UNWEIGHTED, n, mine, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &cart);
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif
  } else if (strcmp(kind, "distgen") == 0) {
    int mine[4];
    const int n = neighbours(rank, dims, periods, mine);
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &n, mine, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                          &cart);
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif
  } else if (strcmp(kind, "sub") == 0) {
    const int dims3[3] = {dims[0], dims[1], 1}, periods3[3] = {periods[0], 0, 0};
    const int keep[3] = {1, 1, 0};
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims3, periods3, 0, &grid);
    MPI_Cart_sub(grid, keep, &cart);
    MPI_Comm_free(&grid);
  } else {
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  }
  double total = 0.0;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < 4 * LEN; ++i) ghosts[i] = edges[i] = 0.0;
    exchange(s);
    double local = 0.0, sum = 0.0;
    for (int i = 0; i < 4 * LEN; ++i) local += ghosts[i] + edges[i];
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    total += sum;
  }
  if (rank == 0)
    printf("nbr_halo: %d ranks (%dx%d), %d steps, checksum %.6e\n", size, dims[0], dims[1], steps,
           total);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
