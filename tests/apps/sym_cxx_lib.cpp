// The shared library of the C++ symbolization test program: its calls are
// in a module of their own (libsymlib.so).
#include <mpi.h>

#include "sym_cxx_lib.hpp"

namespace symlib {

// Counted after the call, so the call is not a tail call and the
// library's frame stays on the stack.
static volatile int barriers = 0;

int synchronize(MPI_Comm comm) {
  const int rc = MPI_Barrier(comm);  // SYM:lib_barrier
  barriers = barriers + 1;
  return rc;
}

}  // namespace symlib
