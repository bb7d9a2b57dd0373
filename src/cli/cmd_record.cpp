// `tracefold record`: runs a launcher command (mpirun, mpiexec, or the
// program alone) with libtracefold.so preloaded and its options passed as
// TRACEFOLD_* environment variables (docs/recording.md).
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "tracefold/trace_io.hpp"

namespace fs = std::filesystem;

namespace tracefold::cli {

namespace {

fs::path find_recorder_library() {
  return find_companion("TRACEFOLD_LIB",
                        {"../record/libtracefold.so", TRACEFOLD_LIB_FROM_BIN,
                         "../lib/libtracefold.so", "libtracefold.so"},
                        "cannot find libtracefold.so (set TRACEFOLD_LIB)");
}

std::string command_output(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    std::array<char, 256> buf{};
    while (fgets(buf.data(), buf.size(), p)) out += buf.data();
    pclose(p);
  }
  return out;
}

enum class Launcher { kNone, kOpenMpi, kHydra };

// Proves DIR can take files (creating it when asked) by writing and removing
// a probe, so an unwritable output place stops `record` before the program
// runs rather than losing its recording at the end. Root passes permission
// bits, so only a real write tells.
void check_writable_dir(const fs::path& dir, const std::string& what, bool create) {
  std::error_code ec;
  if (create) {
    fs::create_directories(dir, ec);
    if (ec)
      throw std::runtime_error("record: cannot create the " + what + " directory " + dir.string() +
                               ": " + ec.message());
  } else if (!fs::is_directory(dir, ec)) {
    throw std::runtime_error("record: the " + what + " directory " + dir.string() +
                             (fs::exists(dir, ec) ? " is not a directory" : " does not exist") +
                             " (nothing was run)");
  }
  const fs::path probe = dir / (".tracefold-probe." + std::to_string(::getpid()));
  errno = 0;
  FILE* f = std::fopen(probe.c_str(), "w");
  bool written = f && std::fputs("probe\n", f) >= 0;
  const int err = errno;
  if (f && std::fclose(f) != 0) written = false;
  fs::remove(probe, ec);
  if (!written)
    throw std::runtime_error("record: cannot write in the " + what + " directory " + dir.string() +
                             ": " + std::strerror(err ? err : EIO) + " (nothing was run)");
}

// A private directory where the recorder saves a merged trace its output
// path refused (TRACEFOLD_FALLBACK_DIR). It lives in the temporary
// directory, not next to the output: whatever removed or filled the
// output's directory is likely to have done the same to a neighbour.
fs::path make_fallback_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = (fs::path(tmp && *tmp ? tmp : "/tmp") / "tracefold-unsaved.XXXXXX").string();
  if (::mkdtemp(templ.data())) return templ;
  return {};
}

Launcher detect_launcher(const std::string& program) {
  const std::string base = fs::path(program).filename().string();
  if (base.rfind("mpirun", 0) != 0 && base.rfind("mpiexec", 0) != 0 &&
      base.rfind("orterun", 0) != 0)
    return Launcher::kNone;
  const std::string version = command_output("'" + program + "' --version 2>&1");
  if (version.find("Open MPI") != std::string::npos || version.find("OpenRTE") != std::string::npos)
    return Launcher::kOpenMpi;
  return Launcher::kHydra;
}

}  // namespace

int cmd_record(std::vector<std::string> command, const RecordOptions& o) {
  std::string output = o.output;
  const std::string& rawlog = o.rawlog;
  if (command.empty())
    throw std::runtime_error(
        "record: no command given (use: tracefold record -- mpirun -np N ./app)");
  const fs::path lib = find_recorder_library();
  output = fs::absolute(output).string();
  check_writable_dir(fs::path(output).parent_path(), "output", false);
  if (fs::is_directory(output))
    throw std::runtime_error("record: the output " + output +
                             " is a directory; name a trace file (nothing was run)");
  if (!rawlog.empty()) check_writable_dir(fs::absolute(rawlog), "raw-log", true);
  std::error_code ec;
  fs::remove(output, ec);
  fs::remove_all(output + ".partial", ec);
  std::vector<std::pair<std::string, std::string>> vars = {{"LD_PRELOAD", lib.string()},
                                                           {"TRACEFOLD_OUTPUT", output}};
  if (!rawlog.empty()) {
    fs::remove_all(rawlog, ec);
    vars.emplace_back("TRACEFOLD_RAWLOG", fs::absolute(rawlog).string());
  }
  if (o.stack_depth > 0) vars.emplace_back("TRACEFOLD_STACK_DEPTH", std::to_string(o.stack_depth));
  if (o.no_timing) vars.emplace_back("TRACEFOLD_NO_TIMING", "1");
  if (o.site_tolerance > 0)
    vars.emplace_back("TRACEFOLD_SITE_TOLERANCE", std::to_string(o.site_tolerance));
  if (!o.stats.empty()) vars.emplace_back("TRACEFOLD_STATS", o.stats);
  const std::string timeline_dir = output + ".timeline";
  fs::remove_all(timeline_dir, ec);
  if (o.timeline) {
    check_writable_dir(timeline_dir, "timeline", true);
    vars.emplace_back("TRACEFOLD_TIMELINE", timeline_dir);
    if (o.timeline_max > 0)
      vars.emplace_back("TRACEFOLD_TIMELINE_MAX", std::to_string(o.timeline_max));
  }
  const fs::path fallback = make_fallback_dir();
  if (!fallback.empty()) vars.emplace_back("TRACEFOLD_FALLBACK_DIR", fallback.string());
  std::vector<std::string> args = command;
  switch (detect_launcher(command[0])) {
    case Launcher::kOpenMpi: {
      // When one rank dies, mpirun sends the others SIGCONT, SIGTERM and
      // SIGKILL, this many seconds apart (default 1): on a loaded machine
      // one second cut ranks off while they saved their partial traces
      // (2-3 runs in 20, scripts/fault-inject.sh). Five seconds cost a
      // failed run about 8 s more and nothing to a run that succeeds.
      // A value the user set wins.
      setenv("OMPI_MCA_odls_base_sigkill_timeout", "5", 0);
      std::vector<std::string> extra;
      for (auto& [k, v] : vars) {
        extra.push_back("-x");
        extra.push_back(k + "=" + v);
      }
      args.insert(args.begin() + 1, extra.begin(), extra.end());
      break;
    }
    case Launcher::kHydra: {
      std::vector<std::string> extra;
      for (auto& [k, v] : vars) {
        extra.push_back("-genv");
        extra.push_back(k);
        extra.push_back(v);
      }
      args.insert(args.begin() + 1, extra.begin(), extra.end());
      break;
    }
    case Launcher::kNone:
      // A singleton run: the program itself gets the environment.
      for (auto& [k, v] : vars) setenv(k.c_str(), v.c_str(), 1);
      break;
  }
  if (std::getenv("TRACEFOLD_VERBOSE")) {
    std::cerr << "tracefold: running";
    for (const auto& a : args) std::cerr << " " << a;
    std::cerr << "\n";
  }
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("record: fork failed");
  if (pid == 0) {
    execvp(cargs[0], cargs.data());
    std::fprintf(stderr, "tracefold: error: cannot run %s: %s\n", cargs[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::vector<fs::path> unsaved;
  if (!fallback.empty()) {
    for (const auto& f : fs::directory_iterator(fallback, ec)) unsaved.push_back(f.path());
    if (unsaved.empty()) fs::remove(fallback, ec);
  }
  if (!unsaved.empty()) {
    // The recorder has said why the output path refused the trace.
    for (const auto& f : unsaved)
      std::cerr << "tracefold: the merged trace of the whole run is in " << f.string()
                << " (it could not be written to " << output << ")\n";
  } else if (fs::exists(output)) {
    Trace t = load_trace(output);
    // The recorder writes the compact form; --text rewrites it here.
    if (o.text) save_trace(t, output, TraceEncoding::kText);
    std::cerr << "tracefold: trace of " << t.world_size << " ranks written to " << output << " ("
              << human_bytes(fs::file_size(output)) << ", " << t.nodes.size() << " nodes)\n";
  } else if (fs::exists(output + ".partial")) {
    std::cerr << "tracefold: the run did not reach MPI_Finalize; partial traces are in " << output
              << ".partial/ (combine them: tracefold merge " << output << ".partial -o " << output
              << ")\n";
  } else {
    std::cerr << "tracefold: no trace was written to " << o.output
              << " (see the messages above; if there are none, was the program an MPI program, "
                 "dynamically linked?)\n";
  }
  if (!rawlog.empty() && fs::exists(rawlog))
    std::cerr << "tracefold: raw logs in " << rawlog << "/\n";
  if (o.timeline && fs::is_directory(timeline_dir)) {
    uint64_t bytes = 0;
    for (const auto& f : fs::directory_iterator(timeline_dir))
      if (f.is_regular_file()) bytes += f.file_size();
    std::cerr << "tracefold: timeline in " << timeline_dir << "/ (" << human_bytes(bytes) << ")\n";
  }
  return rc;
}

}  // namespace tracefold::cli
