// Is the program's MPI the one this library was compiled for? The wrappers
// pass the program's arguments on untouched, which is harmless whatever
// the MPI, but the recorder's own calls use this library's handles
// (MPI_COMM_WORLD is a pointer into Open MPI, an integer in MPICH): under
// the other MPI they crash the program. So the recorder asks the MPI its
// calls reach for its name before it makes any, and stays off if it is
// the other one.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "recorder_impl.hpp"

namespace tracefold::record {

namespace {

#if defined(OPEN_MPI)
constexpr const char* kBuiltFor = "Open MPI";
#else
constexpr const char* kBuiltFor = "MPICH";
#endif

// The launchers' rank variables (Open MPI, Hydra/PMI): one line per run,
// not one per rank. Without either, every process says it.
bool first_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* r = std::getenv(v)) return std::strcmp(r, "0") == 0;
  return true;
}

std::string own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&foreign_mpi), &info) && info.dli_fname) return info.dli_fname;
  return "libtracefold.so";
}

}  // namespace

bool foreign_mpi() {
  static const bool foreign = [] {
    // Room for any library's answer: MPICH's MPI_MAX_LIBRARY_VERSION_STRING
    // is 8192, Open MPI's 256, and the buffer is filled by the MPI called.
    static char version[16384];
    int len = 0;
    if (PMPI_Get_library_version(version, &len) != MPI_SUCCESS) return false;
    version[std::clamp<int>(len, 0, sizeof version - 1)] = '\0';
    const bool open_mpi = std::strstr(version, "Open MPI") != nullptr;
#if defined(OPEN_MPI)
    if (open_mpi) return false;
#else
    if (!open_mpi) return false;
#endif
    if (first_rank()) {
      std::string name(version, std::strcspn(version, "\n,"));
      std::replace(name.begin(), name.end(), '\t', ' ');
      while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
      std::fprintf(stderr,
                   "tracefold: the program runs with %s, but %s was built for %s; the program "
                   "runs untraced (use the library built for its MPI: see docs/recording.md, "
                   "\"One MPI at a time\")\n",
                   name.c_str(), own_path().c_str(), kBuiltFor);
    }
    return true;
  }();
  return foreign;
}

}  // namespace tracefold::record
