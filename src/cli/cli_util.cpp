// Helpers the commands share (cli.hpp): trace arguments, byte counts,
// companion programs.
#include <iomanip>
#include <sstream>

#include "cli.hpp"
#include "tracefold/event_log.hpp"
#include "tracefold/waits.hpp"

namespace fs = std::filesystem;

namespace tracefold::cli {

const CLI::Validator& existing_trace() {
  static const CLI::Validator v(
      [](std::string& path) -> std::string {
        std::error_code ec;
        if (std::filesystem::is_regular_file(path, ec) ||
            !is_unfolded_run(default_timeline_dir(path)))
          return CLI::ExistingFile(path);
        return path +
               " does not exist: a run recorded with `record --sample-only` has no folded "
               "trace, only samples, the timeline and the event logs in " +
               default_timeline_dir(path) +
               "/; `tracefold diagnose` reads it, this command needs the trace: record with "
               "--sample (or --timeline) instead of --sample-only";
      },
      "FILE");
  return v;
}

std::string human_bytes(uint64_t b) {
  std::ostringstream ss;
  if (b < 10 * 1024)
    ss << b << " B";
  else if (b < 10ull * 1024 * 1024)
    ss << std::fixed << std::setprecision(1) << b / 1024.0 << " KiB";
  else
    ss << std::fixed << std::setprecision(1) << b / (1024.0 * 1024) << " MiB";
  return ss.str();
}

static fs::path self_path() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

// A companion file of this CLI: $ENV_VAR, else the first candidate (relative
// to this binary's directory: build tree first, then install layouts).
fs::path find_companion(const char* env_var, std::initializer_list<const char*> candidates,
                        const std::string& missing) {
  if (const char* env = std::getenv(env_var)) return env;
  const fs::path exe_dir = self_path().parent_path();
  for (const char* candidate : candidates)
    if (fs::exists(exe_dir / candidate)) return fs::weakly_canonical(exe_dir / candidate);
  throw std::runtime_error(missing);
}

}  // namespace tracefold::cli
