// `tracefold bench`: a trace -> a C+MPI benchmark program (src/benchgen).
#include <iostream>
#include <memory>

#include "cli.hpp"
#include "tracefold/bench.hpp"
#include "tracefold/bench_conceptual.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::cli {

namespace {

struct BenchArgs {
  std::string trace;
  std::string output = "bench.c";
  std::vector<std::string> compute;
  uint64_t seed = 1;
  std::string lang = "c";
  std::string clock = "wall";
  bool keep_wildcards = false;
  bool lossy_ok = false;
  bool single_thread = false;
  SiteOptions sites;
  bool parametric = false;
  std::vector<std::string> more;  // --parametric: the other rank counts' traces
};

// coNCePTuaL has neither wildcard receives nor one collective split over
// several statements: both passes run first. The file appears whole or
// not at all.
void write_conceptual(const Trace& recorded, const std::string& path) {
  Trace t = recorded;
  const WildcardReport w = resolve_wildcards(t);
  AlignReport a = align_collectives(t);
  const std::string text = emit_conceptual(t, print_numbering(recorded, std::move(a.origin)));
  write_file_whole(path, text);
  std::cerr << "tracefold: bench: wrote " << path << " (coNCePTuaL; " << w.recorded + w.chosen
            << " wildcard receives resolved, " << a.merged << " collective nodes combined)\n";
}

bench::Options parse_compute(const BenchArgs& a) {
  bench::Options o;
  o.seed = a.seed;
  o.keep_wildcards = a.keep_wildcards;
  o.lossy_ok = a.lossy_ok;
  o.single_thread = a.single_thread;
  o.clock = a.clock == "cpu" ? bench::ComputeClock::kCpu : bench::ComputeClock::kWall;
  for (const std::string& c : a.compute) {
    if (c == "trimmed") {
      o.compute = bench::ComputeMode::kTrimmed;
    } else if (c == "mean") {
      o.compute = bench::ComputeMode::kMean;
    } else if (c == "sample") {
      o.compute = bench::ComputeMode::kSample;
    } else if (c.rfind("scale=", 0) == 0) {
      std::size_t used = 0;
      try {
        o.scale = std::stod(c.substr(6), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != c.size() - 6 || !(o.scale >= 0))
        throw std::invalid_argument("--compute " + c + ": scale must be a number >= 0");
    } else {
      throw std::invalid_argument("--compute " + c + ": expected trimmed, mean, sample or scale=F");
    }
  }
  return o;
}

// Only when a pass changed something: a plain trace generates silently.
void report(const bench::Summary& s, const std::string& path) {
  if (s.wildcards_recorded + s.wildcards_chosen + s.collectives_merged == 0) return;
  std::cerr << "tracefold: bench: wrote " << path << " (" << s.wildcards_recorded
            << " wildcard calls resolved from recorded matches, " << s.wildcards_chosen
            << " chosen by the traversal; " << s.collectives_merged
            << " collective nodes combined)\n";
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand(
      "bench", "Generate a readable C+MPI benchmark program that makes the trace's MPI calls");
  cmd->add_option("trace", a->trace, "Trace file")->required()->check(existing_trace());
  cmd->add_option("-o,--output", a->output, "C file to write (default bench.c)");
  cmd->add_option("--compute", a->compute,
                  "Computation between calls: trimmed (default: each call's recorded mean "
                  "without an outlying bin of descheduled intervals), mean (the plain mean), "
                  "sample (drawn from the recorded histogram), scale=F (times F); may be repeated")
      // One value per --compute, so that the trace may follow it.
      ->allow_extra_args(false);
  cmd->add_option("--compute-clock", a->clock,
                  "Computation spins for the recorded wall time (wall) or for the processor time "
                  "of the compute_cpu statistic (cpu: record with --stats compute_cpu; for runs "
                  "with more ranks than cores; C output from one trace)")
      ->check(CLI::IsMember({"wall", "cpu"}));
  cmd->add_option("--seed", a->seed,
                  "Seed of --compute sample's draws and of --lossy-ok's order (default 1)");
  cmd->add_option("--lang", a->lang, "Output language: c (default) or conceptual (coNCePTuaL)")
      ->check(CLI::IsMember({"c", "conceptual"}));
  cmd->add_option("more", a->more,
                  "With --parametric: traces of the same program at other rank counts")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--parametric", a->parametric,
                "One program for any rank count its grid admits, from traces at several rank "
                "counts (as tracefold extrapolate takes them)");
  cmd->add_flag("--keep-wildcards", a->keep_wildcards,
                "Keep MPI_ANY_SOURCE/MPI_ANY_TAG receives as recorded (default: each names the "
                "source and tag it matched)");
  cmd->add_flag("--lossy-ok", a->lossy_ok,
                "Generate from a lossy trace: each value histogram is drawn in an order fixed by "
                "--seed");
  cmd->add_flag("--single-thread", a->single_thread,
                "Generate from a trace of one stream per rank that starts with MPI_Init_thread "
                "(written before threads were recorded): only one thread of the program called "
                "MPI. A trace with several threads per rank needs no option: the benchmark runs "
                "a thread per recorded thread");
  add_site_options(cmd, a->sites);
  cmd->callback([a] {
    guarded([&] {
      const bench::Options o = parse_compute(*a);
      if (o.clock == bench::ComputeClock::kCpu && (a->parametric || a->lang != "c"))
        throw std::invalid_argument(
            "--compute-clock cpu writes C from one trace only (not --parametric or --lang "
            "conceptual)");
      if (a->parametric) {
        if (a->lang != "c") throw std::invalid_argument("--parametric writes C only");
        std::vector<bench::TraceAtScale> ins;
        for (const auto& path : std::vector<std::string>{a->trace})
          ins.push_back({path, load_trace(path)});
        for (const auto& path : a->more) ins.push_back({path, load_trace(path)});
        for (auto& in : ins) prepare_sites(in.trace, a->sites);
        bench::write_parametric_c(std::move(ins), o, a->output);
        std::cerr << "tracefold: bench: wrote " << a->output << " (parametric)\n";
        return;
      }
      if (!a->more.empty())
        throw std::invalid_argument("several traces are read with --parametric only");
      Trace t = load_trace(a->trace);
      prepare_sites(t, a->sites);
      if (a->lang == "conceptual") {
        bench::check_single_thread(t, o);
        write_conceptual(t, a->output);
      } else
        report(bench::write_c(t, o, a->output), a->output);
    });
    throw CLI::RuntimeError(0);
  });
}

}  // namespace tracefold::cli
