/* A 2-D halo exchange described once as a Cartesian topology and routed by
 * MPI: MPI_Cart_create over MPI_Dims_create's grid, periodic along the
 * first (slowest) axis when it has 3 or more ranks, then every step
 * exchange() sends one face of the field to each of the four neighbours
 * with MPI_Neighbor_alltoall and the boundary values with
 * MPI_Neighbor_allgather (8 doubles each way, both), and main reduces a
 * residual with MPI_Allreduce. No point-to-point call: the neighbours are
 * the topology's. usage: app_nbr_halo STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LEN 8

static MPI_Comm cart;
static double faces[4 * LEN], ghosts[4 * LEN], edge[LEN], edges[4 * LEN];

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
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
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
