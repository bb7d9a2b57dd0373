#include "record_mpi.hpp"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace fs = std::filesystem;

namespace tracefold::cli {

const char* flavour_name(MpiFlavour f) {
  switch (f) {
    case MpiFlavour::kOpenMpi:
      return "Open MPI";
    case MpiFlavour::kMpich:
      return "MPICH";
    default:
      return "an unknown MPI";
  }
}

namespace {

bool is_elf(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, ELFMAG, SELFMAG) == 0;
}

// Reads `n` bytes at `off` into `out`; false past the end of the file.
bool read_at(std::ifstream& in, uint64_t off, void* out, std::size_t n) {
  in.clear();
  in.seekg(static_cast<std::streamoff>(off));
  return static_cast<bool>(in.read(static_cast<char*>(out), static_cast<std::streamsize>(n)));
}

}  // namespace

// 64-bit little-endian ELF only (what the recorder runs on); the section
// headers are enough, as for any file the linker wrote.
std::vector<std::string> elf_needed(const fs::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in || !read_at(in, 0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shnum > 4096)
    return out;
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (!read_at(in, eh.e_shoff, sh.data(), sh.size() * sizeof(Elf64_Shdr))) return out;
  for (const Elf64_Shdr& s : sh) {
    if (s.sh_type != SHT_DYNAMIC || s.sh_link >= sh.size()) continue;
    const Elf64_Shdr& str = sh[s.sh_link];
    if (s.sh_size > (1u << 20) || str.sh_size > (16u << 20)) return out;
    std::vector<Elf64_Dyn> dyn(s.sh_size / sizeof(Elf64_Dyn));
    std::string strings(str.sh_size, '\0');
    if (!read_at(in, s.sh_offset, dyn.data(), dyn.size() * sizeof(Elf64_Dyn)) ||
        !read_at(in, str.sh_offset, strings.data(), strings.size()))
      return out;
    for (const Elf64_Dyn& d : dyn) {
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED && d.d_un.d_val < strings.size())
        out.emplace_back(strings.c_str() + d.d_un.d_val);
    }
  }
  return out;
}

MpiFlavour linked_mpi(const fs::path& file, std::string* lib) {
  // The C library first: it names the MPI better than a Fortran companion.
  std::vector<std::string> needed = elf_needed(file);
  std::stable_partition(needed.begin(), needed.end(), [](const std::string& n) {
    return n.rfind("libmpi.so", 0) == 0 || n.rfind("libmpich.so", 0) == 0;
  });
  for (const std::string& n : needed) {
    MpiFlavour f = MpiFlavour::kUnknown;
    // Open MPI's libraries are libmpi.so.40 and its Fortran companions
    // libmpi_mpifh / libmpi_usempi*; MPICH's are libmpich*.so.12, also
    // installed (with its ABI) as libmpi.so.12.
    if (n.rfind("libmpich", 0) == 0 || n.rfind("libmpi.so.12", 0) == 0)
      f = MpiFlavour::kMpich;
    else if (n.rfind("libmpi.so", 0) == 0 || n.rfind("libmpi_", 0) == 0)
      f = MpiFlavour::kOpenMpi;
    if (f != MpiFlavour::kUnknown) {
      if (lib) *lib = n;
      return f;
    }
  }
  return MpiFlavour::kUnknown;
}

namespace {

fs::path on_path(const std::string& word) {
  if (word.find('/') != std::string::npos) return word;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / word;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

}  // namespace

MpiFlavour launcher_flavour(const std::string& launcher) {
  const fs::path found = on_path(launcher);
  std::error_code ec;
  const fs::path real = found.empty() ? fs::path() : fs::canonical(found, ec);
  if (real.empty() || ec) return MpiFlavour::kUnknown;
  for (const std::string& n : elf_needed(real))
    if (n.rfind("libopen-rte.so", 0) == 0 || n.rfind("libopen-pal.so", 0) == 0 ||
        n.rfind("libprrte.so", 0) == 0)
      return MpiFlavour::kOpenMpi;
  if (real.filename().string().rfind("mpiexec.hydra", 0) == 0) return MpiFlavour::kMpich;
  return MpiFlavour::kUnknown;
}

fs::path launched_program(const std::vector<std::string>& command, bool launched) {
  std::error_code ec;
  for (std::size_t i = launched ? 1 : 0; i < command.size(); ++i) {
    const std::string& w = command[i];
    if (w.empty() || w[0] == '-' || w.find('=') != std::string::npos) continue;
    const fs::path p = on_path(w);
    if (!p.empty() && fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0 && is_elf(p))
      return p;
    if (!launched) break;
  }
  return {};
}

}  // namespace tracefold::cli
