// The shared library of the C++ symbolization test program.
#pragma once
#include <mpi.h>

namespace symlib {
int synchronize(MPI_Comm comm);
}  // namespace symlib
