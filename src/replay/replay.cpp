#include "tracefold/replay.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "engine.hpp"
#include "tracefold/trace_query.hpp"
#include "tracefold/validate.hpp"

namespace tracefold {

using namespace replay_detail;

void check_replayable(const Trace& trace) {
  const auto table = op_table();
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const Node& n = trace.nodes[i];
    if (n.key.op >= table.size() || !table[n.key.op].supported) {
      const std::string name = n.key.op < OpTable::size() ? OpTable::name(n.key.op) : "?";
      throw ReplayError(node_label(trace, i) + ": replay cannot perform " + name + " (ranks " +
                        n.ranks.to_string() + ")");
    }
  }
}

std::string ReplaySummary::line() const {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(3);
  s << "replay: " << ranks << " ranks"
    << (threads > 1 ? " x " + std::to_string(threads) + " threads" : "")
    << (probabilistic ? " (probabilistic)" : "") << ", wall " << wall_seconds << " s, " << calls
    << " MPI calls, " << bytes_sent << " bytes sent";
  return s.str();
}

// ------------------------------------------------------------------ driver

namespace {

bool uses_bsend(const Trace& t) {
  for (const Node& n : t.nodes) {
    const std::string& name = OpTable::name(n.key.op);
    if (name == "MPI_Bsend" || name == "MPI_Ibsend" || name == "MPI_Bsend_init") return true;
  }
  return false;
}

// Other ranks, and other threads of this one, may be blocked in a call
// that will never come.
[[noreturn]] void fail_job(const std::string& error) {
  std::fprintf(stderr, "tracefold replay: error: %s\n", error.c_str());
  PMPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

// Every rank reaches the same verdict; rank 0 says it once.
int refuse(int rank, const std::string& what) {
  if (rank == 0) std::fprintf(stderr, "tracefold replay: error: %s\n", what.c_str());
  PMPI_Finalize();
  return 2;
}

}  // namespace

int run_replay(const std::string& trace_path, const ReplayOptions& options, int* argc,
               char*** argv) {
  // The trace decides which MPI_Init variant to call, so it is read first.
  Trace trace;
  std::string load_error;
  try {
    trace = load_trace(trace_path);
    check_replayable(trace);
    preflight_check(trace, options);
  } catch (const std::exception& ex) {
    load_error = ex.what();
  }
  bool init_thread = false;
  if (load_error.empty() && trace.world_size > 0) {
    try {
      RankIterator first(trace, 0);
      Event ev;
      if (first.next(ev)) init_thread = OpTable::name(ev.op) == "MPI_Init_thread";
    } catch (const std::exception& ex) {
      load_error = ex.what();
    }
  }
  // Several threads per rank called MPI, each with its stream: one replay
  // thread each. The level the program asked for is asked for again when
  // the trace records it; without it (older traces), threads that called
  // MPI at the same time need MULTIPLE. Replay's threads do not take turns,
  // so they need MULTIPLE under a recorded FUNNELED or SERIALIZED too.
  const int threads = load_error.empty() ? std::max(trace.threads, 1) : 1;
  std::optional<ThreadLevel> recorded;
  if (load_error.empty()) recorded = recorded_thread_level(trace);
  int level = threads > 1 ? 3 : 0;
  if (recorded) level = std::max(level, std::clamp(recorded->required, 0, 3));
  static constexpr int kMpiLevels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED,
                                       MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};
  int provided = MPI_THREAD_SINGLE;
  if (threads > 1 || init_thread)
    MPI_Init_thread(argc, argv, kMpiLevels[level], &provided);
  else
    MPI_Init(argc, argv);
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!load_error.empty()) return refuse(rank, load_error);
  if (size != trace.world_size)
    return refuse(rank, trace_path + " was recorded with " + std::to_string(trace.world_size) +
                            " ranks; run the replay with mpirun -np " +
                            std::to_string(trace.world_size) + " (this run has " +
                            std::to_string(size) + ")");
  if (threads > 1 && provided < MPI_THREAD_MULTIPLE)
    return refuse(rank, trace_path + " has " + std::to_string(threads) +
                            " threads per rank calling MPI, which replay runs under "
                            "MPI_THREAD_MULTIPLE; this MPI provides only level " +
                            std::to_string(provided));
  // Only value histograms lose what replay needs (which message went where);
  // other lossy options (approximate call sites) replay exactly.
  const bool probabilistic =
      options.probabilistic.value_or(trace.lossy.find("histogram") != std::string::npos);
  // What the threads of this rank share (threaded traces; preflight_check
  // refused them for probabilistic replay).
  std::unique_ptr<SharedComms> shared;
  // Probabilistic replay draws loop counts and values per rank: the order
  // of its collectives is only known as it happens.
  if (!probabilistic) {
    std::string order_error;
    try {
      if (threads > 1) {
        shared = std::make_unique<SharedComms>(trace, rank);
        order_error = shared->error();
      }
      if (order_error.empty()) order_error = collective_order_error(trace, rank);
    } catch (const std::exception& ex) {
      order_error = ex.what();
    }
    // Each rank checked itself; the lowest that failed speaks for all.
    int mine = order_error.empty() ? size : rank, first = size;
    PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first < size) {
      if (rank == first) std::fprintf(stderr, "tracefold replay: error: %s\n", order_error.c_str());
      PMPI_Finalize();
      return 2;
    }
  }

  MPI_Comm control;  // private: the replay's own coordination is not traced
  PMPI_Comm_dup(MPI_COMM_WORLD, &control);
  std::vector<char> bsend_buffer;
  if (uses_bsend(trace)) {
    bsend_buffer.resize(64u << 20);
    PMPI_Buffer_attach(bsend_buffer.data(), static_cast<int>(bsend_buffer.size()));
  }

  // Thread t of this rank replays location t x P + rank; thread 0, which
  // initialized MPI, is this one.
  std::vector<std::unique_ptr<Engine>> engines;
  try {
    for (int t = 0; t < threads; ++t)
      engines.push_back(std::make_unique<Engine>(trace, options, rank, t, shared.get()));
  } catch (const std::exception& ex) {
    fail_job(ex.what());
  }
  if (threads > 1 && rank == 0 && !recorded)
    std::fprintf(stderr,
                 "tracefold replay: %d threads per rank; the trace does not record the thread "
                 "level its program asked for, so they are replayed under MPI_THREAD_MULTIPLE\n",
                 threads);
  else if (const int required = recorded ? recorded->required : 3;
           threads > 1 && rank == 0 && required < 3)
    std::fprintf(stderr,
                 "tracefold replay: %d threads per rank under %s; replay's threads do not take "
                 "turns, so they are replayed under MPI_THREAD_MULTIPLE\n",
                 threads, thread_level_name(required).c_str());
  const auto replay_stream = [&](Engine& engine) {
    if (probabilistic)
      engine.enable_probabilistic();
    else if (options.deterministic)
      engine.prescan_wildcards();
    engine.run();
  };
  PMPI_Barrier(control);
  const double t0 = PMPI_Wtime();
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t)
    workers.emplace_back([&, t] {
      try {
        replay_stream(*engines[static_cast<std::size_t>(t)]);
      } catch (const std::exception& ex) {
        fail_job(ex.what());
      }
    });
  try {
    replay_stream(*engines[0]);
  } catch (const std::exception& ex) {
    fail_job(ex.what());
  }
  for (std::thread& w : workers) w.join();
  for (auto& engine : engines) engine->release_mpi_objects();
  const double elapsed = PMPI_Wtime() - t0;
  double wall = 0;
  unsigned long long mine[2] = {0, 0}, total[2] = {0, 0};
  std::vector<std::pair<uint64_t, uint64_t>> per_op(OpTable::size());
  for (const auto& engine : engines) {
    mine[0] += engine->calls();
    mine[1] += engine->bytes_sent();
    for (std::size_t op = 0; op < per_op.size(); ++op) {
      per_op[op].first += engine->per_op()[op].first;
      per_op[op].second += engine->per_op()[op].second;
    }
  }
  PMPI_Reduce(&elapsed, &wall, 1, MPI_DOUBLE, MPI_MAX, 0, control);
  PMPI_Reduce(mine, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, control);
  if (!bsend_buffer.empty()) {
    void* b = nullptr;
    int s = 0;
    PMPI_Buffer_detach(&b, &s);
  }
  if (options.counts_file) {
    // rank op calls bytes: what each rank issued, for checks against a trace.
    std::string mine_text;
    for (std::size_t op = 0; op < per_op.size(); ++op) {
      if (per_op[op].first == 0) continue;
      mine_text += std::to_string(rank) + " " + OpTable::name(static_cast<OpId>(op)) + " " +
                   std::to_string(per_op[op].first) + " " + std::to_string(per_op[op].second) +
                   "\n";
    }
    int len = static_cast<int>(mine_text.size());
    std::vector<int> lens(static_cast<std::size_t>(size)), displs(lens.size());
    PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, control);
    std::string all;
    if (rank == 0) {
      int at = 0;
      for (std::size_t i = 0; i < lens.size(); ++i) {
        displs[i] = at;
        at += lens[i];
      }
      all.resize(static_cast<std::size_t>(at));
    }
    PMPI_Gatherv(mine_text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                 0, control);
    if (rank == 0) {
      std::FILE* f = std::fopen(options.counts_file->c_str(), "w");
      if (!f || std::fwrite(all.data(), 1, all.size(), f) != all.size())
        std::fprintf(stderr, "tracefold replay: error: cannot write %s\n",
                     options.counts_file->c_str());
      if (f) std::fclose(f);
    }
  }
  PMPI_Comm_free(&control);
  if (rank == 0) {
    ReplaySummary sum;
    sum.ranks = size;
    sum.threads = threads;
    sum.wall_seconds = wall;
    sum.calls = total[0];
    sum.bytes_sent = total[1];
    sum.probabilistic = probabilistic;
    std::string line = sum.line();
    if (options.compare_time && *options.compare_time > 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, ", original %.3f s, error %.1f%%", *options.compare_time,
                    100.0 * std::fabs(wall - *options.compare_time) / *options.compare_time);
      line += buf;
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}

}  // namespace tracefold
