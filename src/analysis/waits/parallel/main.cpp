// tracefold-analyze: `mpirun -np P tracefold analyze TRACE [-o REPORT]`
// (the CLI execs this program when it finds itself under a launcher). Takes
// the options of `tracefold analyze`; rank 0 writes the report.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "parallel.hpp"
#include "tracefold/symbolize.hpp"
#include "tracefold/trace_io.hpp"

using namespace tracefold;

namespace {

struct Args {
  std::string trace, output, timeline;
  std::size_t top = 5;
  uint64_t rendezvous = 65536;
  std::string late_receiver = "scalasca";
  bool rendezvous_given = false;
  bool raw_sites = false, bundled = false;
  std::vector<std::string> debug_dirs;
};

int run(const Args& args, int me, int np, double init_wall, double init_cpu) {
  const double t0 = MPI_Wtime();
  Trace trace;
  std::string err;
  const std::string ext = std::filesystem::path(args.output).extension().string();
  try {
    if (args.rendezvous_given && args.late_receiver != "protocol")
      throw WaitsError("--rendezvous applies to --late-receiver protocol only");
    if (!args.output.empty() && ext != ".txt" && ext != ".json" && ext != ".cubex")
      throw WaitsError(args.output + ": unknown report format (use .txt, .json or .cubex)");
    trace = load_trace(args.trace);
    // Its ranks exchange per recorded rank; locations of several threads
    // would need one stream per thread in every exchange.
    if (trace.threads > 1)
      err = args.trace + " has " + std::to_string(trace.threads) +
            " threads a rank: the parallel analysis takes one thread per rank; run `tracefold "
            "analyze` without mpirun, which analyses each (rank, thread) location";
    else if (np != trace.world_size)
      err = "analysis started with " + std::to_string(np) + " ranks, the recording has " +
            std::to_string(trace.world_size) + ": run it with mpirun -np " +
            std::to_string(trace.world_size) + " or without mpirun";
  } catch (const std::exception& e) {
    err = e.what();
  }
  waits_parallel::agree_or_throw(MPI_COMM_WORLD, err);
  // Only rank 0 writes call path labels. Symbolizing (reading the binaries'
  // debug information) took as long as a rank's whole analysis and every
  // rank waited for it at the first exchange: rank 0 now does it in a
  // thread, on its own copy of the call sites and symbols, and takes the
  // result when the report's labels are made.
  Trace side;
  std::string sym_err;
  std::jthread symbolizing;
  if (me == 0) {
    if (args.raw_sites) {
      trace.symtab.symbols.clear();
    } else {
      side.sites = trace.sites;
      side.symtab = trace.symtab;
      // Only CUBE's call tree shows whole call paths; text and JSON show
      // labels, which never name a system library's frame.
      const auto scope =
          ext == ".cubex" ? symbolize::FrameScope::kAll : symbolize::FrameScope::kLabels;
      symbolizing = std::jthread([&side, &sym_err, &args, scope] {
        try {
          symbolize::Symbolizer symbolizer({args.debug_dirs, true});
          symbolize::symbolize_trace(side, symbolizer, {}, scope);
        } catch (const std::exception& e) {
          sym_err = e.what();
        }
      });
    }
  }
  auto before_labels = [&] {
    if (!symbolizing.joinable()) return;
    symbolizing.join();
    if (sym_err.empty()) trace.symtab = std::move(side.symtab);
  };
  WaitOptions options;
  options.rendezvous_bytes = args.rendezvous;
  options.late_receiver = late_receiver_rules().at(args.late_receiver);
  const std::string dir = args.timeline.empty() ? default_timeline_dir(args.trace) : args.timeline;
  waits_parallel::Phases phases;
  phases.spent.push_back({"process start and MPI_Init", init_wall, init_cpu});
  phases.spent.push_back({"start (load)", phases.last - t0, phases.last_cpu - init_cpu});
  WaitReport report = waits_parallel::analyze_parallel(MPI_COMM_WORLD, trace, dir, options,
                                                       args.bundled, phases, before_labels);
  err = sym_err;
  if (me == 0 && err.empty()) {
    try {
      if (args.output.empty()) {
        write_wait_text(std::cout, report, args.top);
      } else {
        write_wait_report(report, args.output, args.top);
        // The time past MPI_Init (the launcher's start-up is not the analysis's).
        std::cerr << "tracefold: analysis of " << report.events << " events on " << np
                  << " ranks written to " << args.output << " (" << MPI_Wtime() - t0
                  << " s after MPI_Init)\n";
      }
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  waits_parallel::agree_or_throw(MPI_COMM_WORLD, err);
  phases.mark("report");
  if (const char* p = std::getenv("TRACEFOLD_ANALYZE_PHASES"); p && *p == '1') {
    // Where the time goes: each phase's longest wall time over the ranks
    // and its processor time summed over them.
    for (const auto& p : phases.spent) {
      double worst = 0, cpu = 0;
      MPI_Reduce(&p.wall, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      MPI_Reduce(&p.cpu, &cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (me == 0)
        std::cerr << "tracefold: phase " << p.name << ": " << worst << " s (cpu " << cpu << " s)\n";
    }
    for (const auto& [name, n] : phases.counts) {
      int64_t sum = 0;
      MPI_Reduce(&n, &sum, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
      if (me == 0) std::cerr << "tracefold: phase count " << name << ": " << sum << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Funneled: rank 0 symbolizes in a thread that makes no MPI call.
  int provided = 0;
  const auto before_init = std::chrono::steady_clock::now();
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const double init_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - before_init).count();
  // Since the process started: dynamic linking, static constructors, MPI_Init.
  const double init_cpu = waits_parallel::cpu_seconds();
  int me = 0, np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CLI::App app{"tracefold analyze under mpirun: the parallel wait-state analysis"};
  Args args;
  app.add_option("trace", args.trace, "Trace file (its timeline is TRACE.timeline/)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", args.output, "Report: .txt, .json or .cubex (default: text)");
  app.add_option("--timeline", args.timeline, "Timeline directory (default TRACE.timeline)");
  app.add_option("--top", args.top, "Call paths and ranks listed per pattern");
  app.add_option("--late-receiver", args.late_receiver,
                 "Late Receiver rule: scalasca (default) or protocol")
      ->check(CLI::IsMember(late_receiver_rules()));
  CLI::Option* rendezvous =
      app.add_option("--rendezvous", args.rendezvous,
                     "With --late-receiver protocol: sends of this many bytes or more wait for "
                     "their receive");
  app.add_flag("--bundle", args.bundled,
               "Replay each peer's messages in one MPI_Alltoallv, not one message per recorded "
               "message (faster on oversubscribed cores; same report)");
  app.add_flag("--raw-sites", args.raw_sites, "Call sites as recorded (no symbol names)");
  app.add_option("--debug-dir", args.debug_dirs, "Where to look for separate debug info");
  int rc = 0;
  try {
    app.parse(argc, argv);
    args.rendezvous_given = rendezvous->count() > 0;
    rc = run(args, me, np, init_wall, init_cpu);
  } catch (const CLI::ParseError& e) {
    rc = me == 0 ? app.exit(e) : e.get_exit_code();
  } catch (const waits_parallel::PeerFailed&) {
    rc = 2;
  } catch (const std::exception& e) {
    std::cerr << "tracefold: error: rank " << me << ": " << e.what() << "\n";
    rc = 2;
  }
  MPI_Finalize();
  return rc;
}
