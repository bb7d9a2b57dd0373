// Is the program's MPI the one this library was compiled for? The wrappers
// pass the program's arguments on untouched, which is harmless whatever
// the MPI, but the recorder's own calls use this library's handles
// (MPI_COMM_WORLD is a pointer into Open MPI, an integer in MPICH): under
// the other MPI they crash the program. So the recorder asks the MPI its
// calls reach for its name before it makes any, and stays off if it is
// the other one.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

// The MPI's name and version: the first line of MPI_Get_library_version's answer.
std::string mpi_name(const char* version) {
  std::string name(version, std::strcspn(version, "\n,"));
  std::replace(name.begin(), name.end(), '\t', ' ');
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name;
}

// The message of foreign_mpi(), for a program running with NAME.
void say_untraced(const std::string& name) {
  if (!first_rank()) return;
  std::fprintf(stderr,
               "tracefold: the program runs with %s, but %s was built for %s; the program "
               "runs untraced (use the library built for its MPI: see docs/recording.md, "
               "\"One MPI at a time\")\n",
               name.c_str(), own_path().c_str(), kBuiltFor);
}

#if !defined(OPEN_MPI)
// Passing the program's arguments on is not harmless in this direction:
// MPICH's handles are ints, Open MPI's are pointers, and a wrapper compiled
// for MPICH keeps a communicator or datatype in a 32-bit register, so Open
// MPI gets half a pointer and the program dies in its first such call. An
// Open MPI program is recognised before main (its MPI_COMM_WORLD object is
// loaded) and started again without this library: it runs untraced and
// unchanged. Only possible when the library came in through LD_PRELOAD.
__attribute__((constructor)) void leave_open_mpi_programs(int /*argc*/, char** argv, char** envp) {
  if (!argv || !envp || !dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world")) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (!preload) return;
  const std::string self = own_path();
  const char* self_base = std::strrchr(self.c_str(), '/');
  self_base = self_base ? self_base + 1 : self.c_str();
  // LD_PRELOAD without this library (its entries are split by ':' or ' ').
  std::string kept;
  bool dropped = false;
  for (const char* p = preload; *p;) {
    const std::size_t n = std::strcspn(p, ": ");
    const std::string entry(p, n);
    const char* base = std::strrchr(entry.c_str(), '/');
    base = base ? base + 1 : entry.c_str();
    if (!entry.empty() && (entry == self || std::strcmp(base, self_base) == 0)) {
      dropped = true;
    } else if (!entry.empty()) {
      kept += (kept.empty() ? "" : ":") + entry;
    }
    p += n;
    if (*p) ++p;
  }
  if (!dropped) return;
  std::vector<std::string> env;
  for (char** e = envp; *e; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env.emplace_back(*e);
  if (!kept.empty()) env.push_back("LD_PRELOAD=" + kept);
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  // MPI_Get_library_version may be called before MPI_Init and takes no handle.
  static char version[16384];
  int len = 0;
  std::string name = "Open MPI";
  if (PMPI_Get_library_version(version, &len) == MPI_SUCCESS) {
    version[std::clamp<int>(len, 0, sizeof version - 1)] = '\0';
    name = mpi_name(version);
  }
  say_untraced(name);
  std::fflush(nullptr);
  execve("/proc/self/exe", argv, cenv.data());
  std::fprintf(stderr, "tracefold: could not restart the program without %s: %s\n", self.c_str(),
               std::strerror(errno));
}
#endif

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
    say_untraced(mpi_name(version));
    return true;
  }();
  return foreign;
}

}  // namespace tracefold::record
