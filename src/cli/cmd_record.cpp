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
#include "record_mpi.hpp"
#include "record_samples.hpp"
#include "record_summary.hpp"
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
  int err = errno;
  // A full disk refuses the probe only when the buffer reaches it, at fclose.
  if (f && std::fclose(f) != 0) {
    if (written) err = errno;
    written = false;
  }
  fs::remove(probe, ec);
  if (!written)
    throw std::runtime_error("record: cannot write in the " + what + " directory " + dir.string() +
                             ": " + std::strerror(err ? err : EIO) + " (nothing was run)");
}

// A private directory where the recorder saves a merged trace its output
// path refused (TRACEFOLD_FALLBACK_DIR). It lives in the temporary
// directory, not next to the output: whatever removed or filled the
// output's directory is likely to have done the same to a neighbour.
fs::path make_private_dir(const char* prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      (fs::path(tmp && *tmp ? tmp : "/tmp") / (std::string(prefix) + ".XXXXXX")).string();
  if (::mkdtemp(templ.data())) return templ;
  return {};
}

Launcher detect_launcher(const std::string& program) {
  const std::string base = fs::path(program).filename().string();
  if (base.rfind("mpirun", 0) != 0 && base.rfind("mpiexec", 0) != 0 &&
      base.rfind("orterun", 0) != 0)
    return Launcher::kNone;
  // Running `LAUNCHER --version` costs a shell and a launcher start-up
  // (20-30 ms, a tenth of a short run's recording overhead); the
  // launcher's own file usually tells as well.
  switch (launcher_flavour(program)) {
    case MpiFlavour::kOpenMpi:
      return Launcher::kOpenMpi;
    case MpiFlavour::kMpich:
      return Launcher::kHydra;
    case MpiFlavour::kUnknown:
      break;
  }
  const std::string version = command_output("'" + program + "' --version 2>&1");
  if (version.find("Open MPI") != std::string::npos || version.find("OpenRTE") != std::string::npos)
    return Launcher::kOpenMpi;
  return Launcher::kHydra;
}

// The recorder library for the program's MPI: `lib` when it was built for
// that MPI, else its sibling built for it (libtracefold-mpich.so next to
// libtracefold.so, cmake -DTRACEFOLD_MPI_FLAVOURS). The program and the
// launcher must agree too. Throws, naming the fix, when nothing fits.
fs::path library_for(const fs::path& lib, const std::vector<std::string>& command,
                     Launcher launcher) {
  const fs::path program = launched_program(command, launcher != Launcher::kNone);
  std::string prog_lib, own_lib;
  const MpiFlavour prog = program.empty() ? MpiFlavour::kUnknown : linked_mpi(program, &prog_lib);
  const MpiFlavour runs = launcher == Launcher::kOpenMpi ? MpiFlavour::kOpenMpi
                          : launcher == Launcher::kHydra ? MpiFlavour::kMpich
                                                         : MpiFlavour::kUnknown;
  if (prog != MpiFlavour::kUnknown && runs != MpiFlavour::kUnknown && prog != runs)
    throw std::runtime_error(
        "record: " + program.string() + " uses " + flavour_name(prog) + " (" + prog_lib +
        "), but the launcher " + command[0] + " is " + flavour_name(runs) + "'s; start it with " +
        flavour_name(prog) + "'s launcher (" +
        (prog == MpiFlavour::kMpich ? "mpiexec.mpich" : "mpirun.openmpi") + ") (nothing was run)");
  const MpiFlavour want = prog != MpiFlavour::kUnknown ? prog : runs;
  const MpiFlavour have = linked_mpi(lib, &own_lib);
  if (want == MpiFlavour::kUnknown || have == MpiFlavour::kUnknown || want == have) return lib;
  const std::string sibling =
      want == MpiFlavour::kMpich ? "libtracefold-mpich.so" : "libtracefold-openmpi.so";
  for (const fs::path& candidate :
       {lib.parent_path() / sibling, lib.parent_path() / "libtracefold.so"}) {
    std::error_code ec;
    if (candidate != lib && fs::exists(candidate, ec) && linked_mpi(candidate) == want) {
      if (std::getenv("TRACEFOLD_VERBOSE"))
        std::cerr << "tracefold: " << (program.empty() ? command[0] : program.string())
                  << " runs with " << flavour_name(want) << ": recording with "
                  << candidate.string() << "\n";
      return candidate;
    }
  }
  const std::string who = program.empty() ? "the launcher " + command[0]
                                          : program.string() + " (linked with " + prog_lib + ")";
  throw std::runtime_error("record: " + who + " uses " + flavour_name(want) + ", but " +
                           lib.string() + " was built for " + flavour_name(have) + " (" + own_lib +
                           ") and there is no " + sibling +
                           " next to it; build it (cmake "
                           "-DTRACEFOLD_MPI_FLAVOURS=\"openmpi;mpich\") or name one with "
                           "TRACEFOLD_LIB (nothing was run)");
}

}  // namespace

int cmd_record(std::vector<std::string> command, const RecordOptions& o) {
  std::string output = o.output;
  const std::string& rawlog = o.rawlog;
  if (command.empty())
    throw std::runtime_error(
        "record: no command given (use: tracefold record -- mpirun -np N ./app)");
  const Launcher launcher = detect_launcher(command[0]);
  const fs::path lib = library_for(find_recorder_library(), command, launcher);
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
  if (o.histogram_threshold > 0)
    vars.emplace_back("TRACEFOLD_HISTOGRAM_THRESHOLD", std::to_string(o.histogram_threshold));
  // Samples go next to the timeline, on its clock.
  const bool timeline = o.timeline || !o.timeline_dir.empty() || o.sample_ns > 0;
  const std::string timeline_dir =
      o.timeline_dir.empty() ? output + ".timeline" : fs::absolute(o.timeline_dir).string();
  fs::remove_all(timeline_dir, ec);
  if (timeline) {
    check_writable_dir(timeline_dir, "timeline", true);
    vars.emplace_back("TRACEFOLD_TIMELINE", timeline_dir);
    if (o.timeline_max > 0)
      vars.emplace_back("TRACEFOLD_TIMELINE_MAX", std::to_string(o.timeline_max));
    if (o.sample_ns > 0) {
      vars.emplace_back("TRACEFOLD_SAMPLE", std::to_string(o.sample_ns));
      vars.emplace_back("TRACEFOLD_SAMPLE_CLOCK", o.sample_clock);
    }
    if (o.sample_only) vars.emplace_back("TRACEFOLD_SAMPLE_ONLY", "1");
  }
  const fs::path fallback = make_private_dir("tracefold-unsaved");
  if (!fallback.empty()) vars.emplace_back("TRACEFOLD_FALLBACK_DIR", fallback.string());
  // The ranks say here what they wrote and what they could not.
  const fs::path status_dir = make_private_dir("tracefold-status");
  if (!status_dir.empty()) vars.emplace_back("TRACEFOLD_STATUS_DIR", status_dir.string());
  std::vector<std::string> args = command;
  switch (launcher) {
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
      // Open MPI applies `-x` to its own app context only: a
      // multiple-program launch (`A : B`) gets the variables in every
      // context, or its later contexts run untraced while the traced ranks
      // wait for them in the recorder's start-up.
      for (std::size_t i = args.size(); i-- > 1;)
        if (args[i] == ":")
          args.insert(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, extra.begin(),
                      extra.end());
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
  bool partials_elsewhere = false;
  if (!fallback.empty()) {
    for (const auto& f : fs::directory_iterator(fallback, ec)) {
      if (f.is_directory(ec))
        partials_elsewhere = true;  // the summary names them
      else
        unsaved.push_back(f.path());
    }
    if (unsaved.empty() && !partials_elsewhere) fs::remove(fallback, ec);
  }
  RecordPlaces places{output,
                      rawlog.empty() ? fs::path() : fs::path(rawlog),
                      timeline ? fs::path(timeline_dir) : fs::path(),
                      status_dir,
                      fallback,
                      0};
  const fs::path partial_dir = output + ".partial";
  if (!unsaved.empty()) {
    // The recorder has said why the output path refused the trace.
    for (const auto& f : unsaved)
      std::cerr << "tracefold: the merged trace of the whole run is in " << f.string()
                << " (it could not be written to " << output << ")\n";
  } else if (fs::exists(output)) {
    // Rank 0 reports what it wrote; reading the trace back (a tenth of a
    // second for a long polling run) is needed only to rewrite it as text.
    std::optional<WrittenTrace> w = o.text ? std::nullopt : written_trace(status_dir);
    if (!w) {
      Trace t = load_trace(output);
      // The recorder writes the compact form; --text rewrites it here.
      if (o.text) save_trace(t, output, TraceEncoding::kText);
      w = WrittenTrace{t.world_size, t.nodes.size()};
    }
    places.world_size = w->world_size;
    // `-o /dev/null` (a timing run that keeps no trace) has no size to give.
    std::error_code size_error;
    const auto bytes = fs::file_size(output, size_error);
    std::cerr << "tracefold: trace of " << w->world_size << " ranks written to " << output << " ("
              << (size_error ? std::string() : human_bytes(bytes) + ", ") << w->nodes
              << " nodes)\n";
  } else if (o.sample_only) {
    std::cerr << "tracefold: no folded trace (--sample-only): each rank's calls are in "
              << timeline_dir << "/events-R.tfe beside its timeline and samples (read them with: "
              << "tracefold diagnose " << output
              << (o.timeline_dir.empty() ? "" : " --timeline " + timeline_dir) << ")\n";
  } else if (!fs::is_empty(partial_dir, ec) && !ec) {
    std::cerr << "tracefold: the run did not reach MPI_Finalize; partial traces are in "
              << partial_dir.string() << "/ (combine them: tracefold merge " << partial_dir.string()
              << " -o " << output << ")\n";
  } else if (partials_elsewhere) {
    std::cerr << "tracefold: the run did not reach MPI_Finalize, and no partial trace could be "
                 "written to "
              << partial_dir.string() << "/; see below where they went\n";
  } else {
    std::cerr << "tracefold: no trace was written to " << o.output
              << " (see the messages above; if there are none, was the program an MPI program, "
                 "dynamically linked?)\n";
  }
  bool whole = summarize_record(places);
  if (o.sample_ns > 0) whole &= summarize_samples(timeline_dir, o.sample_ns, places.world_size);
  if (!status_dir.empty()) fs::remove_all(status_dir, ec);
  // A run whose recording lost files must not look like a success; the
  // program's own failure status wins, being the first thing to fix.
  if (rc == 0 && !whole) {
    std::cerr << "tracefold: the program succeeded but its recording is incomplete (see above); "
                 "exit status 3\n";
    return 3;
  }
  return rc;
}

}  // namespace tracefold::cli
