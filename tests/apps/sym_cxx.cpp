// Symbolization test program in C++ (tests/mpi/symbolize.sh): a template,
// a helper inlined into its caller and a call from a shared library. Each
// MPI call's line carries a marker comment the test finds with grep.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "sym_cxx_lib.hpp"

namespace solver {

template <typename T>
struct Traits;
template <>
struct Traits<double> {
  static MPI_Datatype type() { return MPI_DOUBLE; }
};
template <>
struct Traits<int> {
  static MPI_Datatype type() { return MPI_INT; }
};

template <typename T>
__attribute__((noinline)) T reduce_all(T v) {
  T s{};
  MPI_Allreduce(&v, &s, 1, Traits<T>::type(), MPI_SUM, MPI_COMM_WORLD);  // SYM:cxx_allreduce
  return s;
}

// Always inlined into its caller, so the call site's frame is in
// broadcast_step and the source frames say so.
__attribute__((always_inline)) inline void share_value(int& v) {
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);  // SYM:cxx_bcast
}

__attribute__((noinline)) int broadcast_step(int v) {
  share_value(v);  // SYM:cxx_inlined_call
  return v + 1;
}

}  // namespace solver

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  double d = 0;
  int n = rank, b = 0;
  for (int s = 0; s < steps; ++s) {
    d += solver::reduce_all<double>(0.5 * rank);
    n = solver::reduce_all<int>(n) % 1000;
    b = solver::broadcast_step(b + s);
    symlib::synchronize(MPI_COMM_WORLD);
  }
  if (rank == 0)
    std::printf("sym_cxx: %d ranks, %d steps, checksum %.1f %d %d\n", size, steps, d, n, b);
  MPI_Finalize();
  return 0;
}
