// The shared library of the C++ symbolization test program: its calls are
// in a module of their own (libsymlib.so).
#include <mpi.h>

#include "sym_cxx_lib.hpp"

namespace symlib {

void synchronize(MPI_Comm comm) {
  MPI_Barrier(comm);  // SYM:lib_barrier
}

}  // namespace symlib
