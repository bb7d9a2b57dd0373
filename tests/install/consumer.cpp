// A program outside the tracefold tree that uses the installed library:
// prints the world size and node count of a trace, as `tracefold print`'s
// first line says them (tests/mpi/install.sh).
#include <iostream>

#include "tracefold/trace_io.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const tracefold::Trace t = tracefold::load_trace(argv[1]);
  std::cout << "consumer: " << t.world_size << " ranks, " << t.nodes.size() << " nodes\n";
  return 0;
}
