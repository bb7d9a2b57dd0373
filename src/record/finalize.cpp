// The end of recording: the merge at MPI_Finalize, partial traces written
// when the program dies, and closing the timeline.

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "poll_fastpath.hpp"
#include "recorder_impl.hpp"
#include "sampler.hpp"

#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/trace_level.hpp"

namespace tracefold::record {

// Children per parent in the merge's reduction tree.
constexpr int kMergeRadix = 2;

void Recorder::start_timeline(const char* dir, int64_t t0) {
  read_clock_skew(t0);
  timeline_start = clock_sample();
  if (disabled) return;
  try {
    if (const char* m = env("TRACEFOLD_TIMELINE_MAX")) timeline_max = std::strtoull(m, nullptr, 10);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::string path =
        (std::filesystem::path(dir) / ("rank-" + std::to_string(rank) + ".tft")).string();
    timeline_path = path;
    timeline.open(path, rank, size, skewed(t0), timeline_max, block_bytes());
    timeline.set_start_offset(timeline_start.offset_ns, timeline_start.local_ns,
                              timeline_start.round_trip_ns);
  } catch (const std::exception& ex) {
    timeline_open_error = ex.what();
    std::fprintf(stderr, "tracefold: rank %d: no timeline: %s\n", rank, ex.what());
  }
}

void Recorder::close_timeline(const ClockSample& end) {
  if (!timeline.is_open()) return;
  timeline.close(end.offset_ns, end.local_ns, end.round_trip_ns, timeline_threads());
  if (!timeline.error().empty())
    std::fprintf(stderr, "tracefold: rank %d: timeline: %s\n", rank, timeline.error().c_str());
}

// One thread stream's trace (threads.cpp puts a rank's together).
Trace Recorder::stream_trace(ThreadStream& s) {
  if (s.folder) fold_unfolded(s);
  if (s.folder && !disabled) {
    try {
      Trace t = s.folder->finish(size, sites, comms);
      t.symtab.modules = modules;
      t.symtab.prune(t.sites);
      if (no_timing) drop_timing(t);
      if (site_tolerance > 0) {
        const std::string what =
            "call sites matched within " + std::to_string(site_tolerance) + " differing frames";
        t.lossy = t.lossy.empty() ? what : t.lossy + "; " + what;
      }
      return t;
    } catch (const std::exception& ex) {
      fail(std::string("finishing the trace failed: ") + ex.what());
    }
  }
  Trace t;
  t.world_size = size;
  t.comms.define_world(size);
  // The merged trace must not pass for a whole record of the run.
  if (disabled)
    t.lossy = "rank " + std::to_string(rank) + " recorded nothing (" + disabled_reason + ")";
  return t;
}

namespace {

// Places to save a trace its own path refused: the directory `tracefold
// record` prepared for this, then the working directory, then the
// temporary directory. Returns the path written, or empty with `tried`
// holding each place's error.
std::filesystem::path save_elsewhere(const Trace& trace, const std::filesystem::path& name,
                                     std::string& tried) {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs;
  if (const char* d = env("TRACEFOLD_FALLBACK_DIR")) dirs.emplace_back(d);
  std::error_code ec;
  if (auto cwd = fs::current_path(ec); !ec) dirs.push_back(cwd);
  const char* tmp = env("TMPDIR");
  dirs.emplace_back(tmp && *tmp ? tmp : "/tmp");
  for (const auto& dir : dirs) {
    const fs::path path = dir / name;
    try {
      if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
      save_trace(trace, path);
      return path;
    } catch (const std::exception& ex) {
      tried += std::string("\n  ") + ex.what();
    }
  }
  return {};
}

void save_merged_elsewhere(const Trace& merged, const std::string& output, const char* why) {
  namespace fs = std::filesystem;
  const std::string name =
      "unsaved-" + std::to_string(::getpid()) + "-" + fs::path(output).filename().string();
  std::string tried;
  if (const fs::path path = save_elsewhere(merged, name, tried); !path.empty()) {
    std::fprintf(stderr,
                 "tracefold: the run reached MPI_Finalize and all %d ranks were merged, but "
                 "writing the trace failed (%s); the merged trace was saved to %s instead\n",
                 merged.world_size, why, path.c_str());
    return;
  }
  std::fprintf(stderr,
               "tracefold: the run reached MPI_Finalize and all %d ranks were merged, but writing "
               "the trace failed (%s), and so did every other place tried:%s\n",
               merged.world_size, why, tried.c_str());
}

// One status line for `tracefold record`'s summary: "KIND ok PATH" or
// "KIND failed TEXT".
std::string status_line(const char* kind, const std::string& error, const std::string& path) {
  return std::string(kind) + (error.empty() ? " ok " + path : " failed " + error) + "\n";
}

}  // namespace

// Tells `tracefold record` (TRACEFOLD_STATUS_DIR) what this rank wrote and
// what it could not. Its directory is not the output's, which may be the
// full one; if this fails too, the messages on stderr are all there is.
void Recorder::report_status(const std::string& partial) {
  const char* dir = env("TRACEFOLD_STATUS_DIR");
  if (!dir) return;
  std::string text = "size " + std::to_string(size) + "\n";
  if (!rawlog.path().empty())
    text += status_line("rawlog", rawlog.failed_errno() ? std::strerror(rawlog.failed_errno()) : "",
                        rawlog.path());
  if (!timeline_path.empty()) {
    // Without the path, which the summary names once, the same reason on
    // several ranks reads as one.
    std::string error = timeline_open_error.empty() ? timeline.error() : timeline_open_error;
    if (error.rfind(timeline_path + ": ", 0) == 0) error.erase(0, timeline_path.size() + 2);
    text += status_line("timeline", error, timeline_path);
  }
  if (!event_log_file.empty()) {
    std::string error = event_log_open_error.empty() ? event_log.error() : event_log_open_error;
    if (error.rfind(event_log_file + ": ", 0) == 0) error.erase(0, event_log_file.size() + 2);
    text += status_line("events", error, event_log_file);
  }
  if (!partial.empty()) text += partial;
  const std::string path = std::string(dir) + "/rank-" + std::to_string(rank);
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  bool ok = f && std::fputs(text.c_str(), f) >= 0;
  if (f && std::fclose(f) != 0) ok = false;
  if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return;
  std::fprintf(stderr, "tracefold: rank %d: could not report to tracefold record in %s: %s\n", rank,
               dir, std::strerror(errno));
  std::remove(tmp.c_str());
}

void Recorder::write_partial(const char* why) {
  // A launcher's SIGTERM (sent to every rank once one has exited) must
  // not cut this write short: it waits until the file is saved, then
  // finds the work done and lets the signal take its course.
  sigset_t terminating, before;
  sigemptyset(&terminating);
  sigaddset(&terminating, SIGTERM);
  sigaddset(&terminating, SIGINT);
  pthread_sigmask(SIG_BLOCK, &terminating, &before);
  struct Restore {
    sigset_t* mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, mask, nullptr); }
  } restore{&before};
  std::lock_guard lock(mu);
  if (!initialized || finalized) return;
  finalized = true;
  wait_fast_polls(*this);
  try {
    if (rawlog.is_open()) rawlog.flush();
    stop_sampler(*this);
    // No other rank can be asked for the clock any more: keep the start
    // offset, and say it was not measured, so that readers estimate the
    // drift instead (diagnose's constant exit gap).
    close_timeline({timeline_start.offset_ns, skewed(now_ns()), RankTimelineFile::kEndNotMeasured});
    if (sample_only) {
      // Nothing was folded: the event log is this rank's partial record.
      close_event_log();
      std::fprintf(stderr, "tracefold: rank %d: %s; its event log, timeline and samples end here\n",
                   rank, why);
      report_status("");
      return;
    }
    namespace fs = std::filesystem;
    const fs::path dir = output + ".partial";
    const std::string file = "rank-" + std::to_string(rank) + ".tf";
    const Trace partial = local_trace();
    std::string error;
    try {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
      save_trace(partial, dir / file);
      std::fprintf(stderr,
                   "tracefold: rank %d: %s; wrote what was recorded to %s/ "
                   "(combine with: tracefold merge %s -o %s)\n",
                   rank, why, dir.c_str(), dir.c_str(), output.c_str());
      report_status("partial ok " + (dir / file).string() + "\n");
      return;
    } catch (const std::exception& ex) {
      error = ex.what();
      // "DIR/rank-R.tf.tmp.PID: write failed: ..." -> "write failed: ...":
      // the message below names the place, and the summary of `record`
      // groups the ranks with the same reason.
      const std::string place = (dir / file).string();
      if (const auto colon = error.find(": ", place.size());
          error.rfind(place, 0) == 0 && colon != std::string::npos)
        error.erase(0, colon + 2);
    }
    // A full or vanished output place must not cost the events: the same
    // places as for a merged trace, under the partial directory's name.
    std::string tried;
    const fs::path elsewhere = save_elsewhere(partial, fs::path(dir.filename()) / file, tried);
    if (!elsewhere.empty()) {
      std::fprintf(stderr,
                   "tracefold: rank %d: %s; its partial trace could not be written to %s/ (%s), "
                   "so it was saved to %s instead\n",
                   rank, why, dir.c_str(), error.c_str(), elsewhere.c_str());
      report_status("partial failed " + error + "\npartial-elsewhere " + elsewhere.string() + "\n");
    } else {
      std::fprintf(stderr,
                   "tracefold: rank %d: %s; its partial trace is lost: writing it to %s/ failed "
                   "(%s), and so did every other place tried:%s\n",
                   rank, why, dir.c_str(), error.c_str(), tried.c_str());
      report_status("partial failed " + error + "\n");
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "tracefold: rank %d: could not save partial trace: %s\n", rank, ex.what());
  }
}

void Recorder::finish() {
  std::unique_lock lock(mu);
  if (!initialized || finalized) return;
  finalized = true;
  wait_fast_polls(*this);
#ifdef TRACEFOLD_PATH_CACHE
  if (path_cache_mode == PathCacheMode::kCheck) {
    const PathCache* pc = path_cache();
    std::fprintf(stderr,
                 "tracefold: rank %d: call-path cache: %llu hits, %llu walks, %llu mismatches; "
                 "%llu paths learned in %llu attempts (main thread)\n",
                 rank, static_cast<unsigned long long>(path_hits.load()),
                 static_cast<unsigned long long>(path_misses.load()),
                 static_cast<unsigned long long>(path_mismatches.load()),
                 static_cast<unsigned long long>(pc ? pc->learned : 0),
                 static_cast<unsigned long long>(pc ? pc->learn_attempts : 0));
  }
#endif
  uint64_t fast_polls = 0;
  for (const auto& s : streams) fast_polls += s->fast_polls();
  if (env("TRACEFOLD_POLL_STATS"))
    std::fprintf(stderr,
                 "tracefold: rank %d: poll fast path: %llu repeats, %llu checked, %llu "
                 "mismatches\n",
                 rank, static_cast<unsigned long long>(fast_polls),
                 static_cast<unsigned long long>(poll_checked),
                 static_cast<unsigned long long>(poll_mismatches));
  if (env("TRACEFOLD_POLL_STATS") && !streams.empty() && streams[0]->folder && !disabled) {
    ThreadStream& s = *streams[0];
    fold_unfolded(s);  // as local_trace would first: the counts then cover every event
    const FoldPathCounts c = s.folder->path_counts();
    std::fprintf(stderr,
                 "tracefold: rank %d: folder: %llu general, %llu fast, %llu replayed, %llu "
                 "repeats, %llu walked\n",
                 rank, static_cast<unsigned long long>(c.general),
                 static_cast<unsigned long long>(c.fast), static_cast<unsigned long long>(c.replay),
                 static_cast<unsigned long long>(c.repeats),
                 static_cast<unsigned long long>(c.walk));
  }
  stop_sampler(*this);
  if (env("TRACEFOLD_TIMELINE")) close_timeline(clock_sample());
  if (sample_only) {
    // No trace to merge: each rank's event log stands for its part of it.
    if (rawlog.is_open()) rawlog.close();
    close_event_log();
    report_status("");
    PMPI_Comm_free(&private_comm);
    return;
  }
  struct PmpiExchange final : Exchange {
    MPI_Comm comm;
    int r, n;
    int rank() const override { return r; }
    int size() const override { return n; }
    void send(int to, const std::string& bytes) override {
      uint64_t len = bytes.size();
      PMPI_Send(&len, 1, MPI_UINT64_T, to, 1, comm);
      for (uint64_t off = 0; off < len; off += (1u << 30)) {
        const int chunk = static_cast<int>(std::min<uint64_t>(len - off, 1u << 30));
        PMPI_Send(bytes.data() + off, chunk, MPI_BYTE, to, 2, comm);
      }
    }
    std::string receive(int from) override {
      uint64_t len = 0;
      PMPI_Recv(&len, 1, MPI_UINT64_T, from, 1, comm, MPI_STATUS_IGNORE);
      std::string bytes(len, '\0');
      for (uint64_t off = 0; off < len; off += (1u << 30)) {
        const int chunk = static_cast<int>(std::min<uint64_t>(len - off, 1u << 30));
        PMPI_Recv(bytes.data() + off, chunk, MPI_BYTE, from, 2, comm, MPI_STATUS_IGNORE);
      }
      return bytes;
    }
  } ex;
  ex.comm = private_comm;
  ex.r = rank;
  ex.n = size;
  const double t0 = PMPI_Wtime();
  // The wall time includes waiting for the slowest rank and, with more
  // ranks than cores, for the processors; rank 0's own processor time is
  // the merge's work along the tree's critical path.
  const int64_t cpu0 = thread_cpu_ns();
  // Rank 0 tells `tracefold record` what it wrote, so that record need not
  // read the whole trace back only to name its size.
  std::string written;
  try {
    std::vector<std::string> errors;
    Trace local = local_trace();
    // After local_trace: it writes the raw log's thread order.
    if (rawlog.is_open()) rawlog.close();
    const int64_t cpu_local = thread_cpu_ns();
    int radix = kMergeRadix;
    if (const char* r = env("TRACEFOLD_MERGE_RADIX")) radix = std::clamp(std::atoi(r), 2, 64);
    auto merged = reduce_trace(std::move(local), ex, radix, {}, &errors);
    const int64_t cpu_rounds = thread_cpu_ns();
    for (const auto& e : errors) std::fprintf(stderr, "tracefold: rank %d: %s\n", rank, e.c_str());
    if (merged) {
      try {
        // The file is the merged trace's only form: a derived field need
        // not re-fold into the same runs as here, only to the same values.
        save_trace(*merged, output, TraceEncoding::kCompact, kCompactLevelBySize,
                   DerivedFields::kSameValues);
        // Where rank 0's share of the merge goes, for tuning it: its own
        // fold, the rounds (receiving, decoding, merging), the file.
        if (env("TRACEFOLD_MERGE_STATS"))
          std::fprintf(stderr,
                       "tracefold: merge on rank 0 (processor time): local fold %.3f s, "
                       "rounds %.3f s, file %.3f s\n",
                       1e-9 * static_cast<double>(cpu_local - cpu0),
                       1e-9 * static_cast<double>(cpu_rounds - cpu_local),
                       1e-9 * static_cast<double>(thread_cpu_ns() - cpu_rounds));
      } catch (const std::exception& write_error) {
        // Every rank's events are in `merged`: falling back to this rank's
        // partial would throw away all the others.
        save_merged_elsewhere(*merged, output, write_error.what());
        merged.reset();
      }
    }
    if (merged) {
      written = "trace ok " + std::to_string(merged->world_size) + " " +
                std::to_string(merged->nodes.size()) + "\n";
      const double secs = PMPI_Wtime() - t0;
      const double busy = 1e-9 * static_cast<double>(thread_cpu_ns() - cpu0);
      if (!env("TRACEFOLD_QUIET"))
        std::fprintf(stderr,
                     "tracefold: wrote %s (%llu bytes, %zu nodes, %d ranks, merged in %.3f s, "
                     "%.3f s of it rank 0's processor time)\n",
                     output.c_str(),
                     static_cast<unsigned long long>(std::filesystem::file_size(output)),
                     merged->nodes.size(), size, secs, busy);
    }
  } catch (const std::exception& ex2) {
    if (rawlog.is_open()) rawlog.close();
    std::fprintf(stderr, "tracefold: rank %d: merging the trace failed: %s\n", rank, ex2.what());
    finalized = false;
    lock.unlock();
    write_partial("merge at MPI_Finalize failed");
    PMPI_Comm_free(&private_comm);
    return;
  }
  report_status(written);
  PMPI_Comm_free(&private_comm);
}

namespace {
struct sigaction old_actions[65];
}  // namespace

void Recorder::on_signal(int sig) {
  const ThreadStream* own = tl_stream;
  if (tl_holding || (own && own->fast_busy.load(std::memory_order_relaxed) != 0)) {
    // The signal interrupted this thread half way through changing the
    // recorder's state: folding it now could crash or save nonsense.
    char line[160];
    const int n = std::snprintf(line, sizeof line,
                                "tracefold: rank %d: signal %d arrived inside the recorder; "
                                "no partial trace for this rank\n",
                                recorder().rank, sig);
    if (n > 0) (void)!write(STDERR_FILENO, line, static_cast<std::size_t>(n));
  } else {
    char why[64];
    std::snprintf(why, sizeof why, "killed by signal %d (%s)", sig, strsignal(sig));
    recorder().write_partial(why);
  }
  sigaction(sig, &old_actions[sig], nullptr);
  raise(sig);
}

void Recorder::install_handlers() {
  if (env("TRACEFOLD_NO_SIGNALS")) return;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT}) {
    struct sigaction sa {};
    sa.sa_handler = &Recorder::on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(sig, &sa, &old_actions[sig]);
  }
  std::atexit([] { recorder().write_partial("the program exited without MPI_Finalize"); });
}

}  // namespace tracefold::record
