// Which MPI a program, a launcher and the recorder library use, so that
// `tracefold record` never preloads a library built for one MPI into a
// program of the other (docs/recording.md#one-mpi-at-a-time).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tracefold::cli {

enum class MpiFlavour { kUnknown, kOpenMpi, kMpich };

/// "Open MPI", "MPICH", "an unknown MPI".
const char* flavour_name(MpiFlavour f);

/// The DT_NEEDED entries of an ELF file; empty if it is not one (a
/// script, say) or cannot be read.
std::vector<std::string> elf_needed(const std::filesystem::path& file);

/// The MPI an ELF file links directly (libmpi.so.40: Open MPI;
/// libmpich.so.12, libmpi.so.12: MPICH), and that library's name in `lib`.
MpiFlavour linked_mpi(const std::filesystem::path& file, std::string* lib = nullptr);

/// The MPI a launcher belongs to, from its file alone (the word is looked
/// up on PATH and its links followed): Open MPI's launchers link its
/// run-time libraries (libopen-rte, libopen-pal, libprrte), MPICH's is
/// mpiexec.hydra. kUnknown when neither shows (a script, another launcher).
MpiFlavour launcher_flavour(const std::string& launcher);

/// The program a launcher command runs: the first word after the launcher
/// that names an ELF file (directly or on PATH); the command itself when
/// `launched` is false. Empty if none is found.
std::filesystem::path launched_program(const std::vector<std::string>& command, bool launched);

}  // namespace tracefold::cli
