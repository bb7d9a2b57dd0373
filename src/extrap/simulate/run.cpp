// Runs SMPI's replay (smpirun + tracefold-smpi-replay) and reads its report.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tracefold/simulate.hpp"

namespace fs = std::filesystem;

namespace tracefold {

namespace {

// SimGrid's own words when it fails: its error and critical lines, else the
// end of its output.
std::string smpi_failure(const fs::path& log) {
  std::ifstream in(log);
  std::vector<std::string> all, errors;
  for (std::string line; std::getline(in, line);) {
    all.push_back(line);
    if (line.find("/CRITICAL]") != std::string::npos || line.find("/ERROR]") != std::string::npos ||
        line.find("rror") != std::string::npos || line.find("ssertion") != std::string::npos)
      errors.push_back(line);
  }
  const auto& pick = errors.empty() ? all : errors;
  std::string out;
  const std::size_t from = pick.size() > 6 ? pick.size() - 6 : 0;
  for (std::size_t i = from; i < pick.size(); ++i) out += "\n  " + pick[i];
  return out.empty() ? " (no output)" : out;
}

int run_logged(const std::vector<std::string>& argv, const fs::path& log,
               const std::string& report) {
  const pid_t pid = fork();
  if (pid < 0) throw SimulateError("cannot start smpirun: fork failed");
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      ::close(fd);
    }
    setenv("TRACEFOLD_SMPI_REPORT", report.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s\n", args[0]);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Every simulated rank keeps its action file open for the whole replay:
// raise the soft limit on open files (inherited by smpirun) to fit them.
void allow_open_files(int32_t ranks) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  const rlim_t want = static_cast<rlim_t>(ranks) + 256;
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur >= want) return;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < want)
    throw SimulateError("SMPI's replay keeps one file open per rank: " + std::to_string(ranks) +
                        " ranks need about " + std::to_string(want) +
                        " open files, the hard limit is " + std::to_string(lim.rlim_max) +
                        " (ulimit -Hn)");
  lim.rlim_cur = want;
  setrlimit(RLIMIT_NOFILE, &lim);
}

}  // namespace

SimulationResult run_smpi_replay(const SmpiRun& run) {
  if (!fs::is_regular_file(run.platform))
    throw SimulateError(run.platform + ": no such platform file");
  allow_open_files(run.ranks);
  const fs::path work = fs::absolute(run.work_dir);
  const fs::path log = work / "smpi.log";
  const fs::path report = work / "smpi.report";
  fs::remove(report);
  std::vector<std::string> argv = {run.smpirun, "-no-privatize",
                                   "-np",       std::to_string(run.ranks),
                                   "-platform", fs::absolute(run.platform).string()};
  if (!run.hostfile.empty()) {
    argv.push_back("-hostfile");
    argv.push_back(fs::absolute(run.hostfile).string());
  }
  argv.insert(argv.end(), {"-replay", fs::absolute(run.actions_list).string(),
                           "--cfg=plugin:link_load", "--cfg=network/crosstraffic:0",
                           "--log=xbt_cfg.thresh:warning", "--log=smpi_config.thresh:warning"});
  for (const auto& c : run.extra_cfg) argv.push_back("--cfg=" + c);
  argv.push_back(run.replay_program);

  const auto t0 = std::chrono::steady_clock::now();
  const int rc = run_logged(argv, log, report.string());
  SimulationResult res;
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0 || !fs::exists(report)) {
    const std::string where =
        run.work_dir_kept ? ", log " + log.string() : " (keep its log with -o DIR)";
    std::string msg = "SMPI's replay failed (exit " + std::to_string(rc) + "; platform " +
                      run.platform + where + "):" + smpi_failure(log);
    throw SimulateError(msg);
  }
  std::ifstream in(report);
  res.comm_seconds.assign(static_cast<std::size_t>(run.ranks), 0);
  res.end_seconds.assign(static_cast<std::size_t>(run.ranks), 0);
  std::vector<std::pair<LinkLoad, double>> links;  // with bandwidth
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    std::string what;
    s >> what;
    if (what == "time") {
      s >> res.predicted_seconds;
    } else if (what == "rank") {
      std::size_t r = 0;
      double comm = 0, end = 0;
      s >> r >> comm >> end;
      if (r < res.comm_seconds.size()) {
        res.comm_seconds[r] = comm;
        res.end_seconds[r] = end;
      }
    } else if (what == "link") {
      LinkLoad l;
      double bw = 0;
      s >> l.name >> l.bytes >> bw;
      links.emplace_back(l, bw);
    }
  }
  std::sort(links.begin(), links.end(), [](const auto& a, const auto& b) {
    return a.first.bytes != b.first.bytes ? a.first.bytes > b.first.bytes
                                          : a.first.name < b.first.name;
  });
  for (auto& [l, bw] : links) {
    if (static_cast<int>(res.busiest_links.size()) >= run.top_links) break;
    l.utilization =
        bw > 0 && res.predicted_seconds > 0 ? l.bytes / (bw * res.predicted_seconds) : 0;
    res.busiest_links.push_back(l);
  }
  return res;
}

}  // namespace tracefold
