// tracefold bench's entry (bench.hpp): the checks a trace must pass, the
// passes it needs (wildcards, collective alignment), its program, and
// writing the file.
#include <algorithm>

#include "gen.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/trace_query.hpp"
#include "tracefold/validate.hpp"

namespace tracefold::bench {

void check_clock(const Trace& trace, const Options& options) {
  if (options.clock == ComputeClock::kCpu && !has_statistic(trace, kComputeCpuStatistic))
    throw BenchError("--compute-clock cpu: the trace holds no " +
                     std::string(kComputeCpuStatistic) + " statistic; record with --stats " +
                     std::string(kComputeCpuStatistic));
}

void check_single_thread(const Trace& trace, const Options& options) {
  if (const auto node = other_thread_node(trace))
    throw BenchError(node_label(trace, *node) + ": " + std::to_string(trace.threads) + " " +
                     std::string(kThreadsRefusal));
  if (const auto init = init_thread_node(trace); init && !options.single_thread)
    throw BenchError(node_label(trace, *init) + ": " + std::string(kInitThreadRefusal));
}

// Whether some value of the trace is a histogram (recorded with a
// threshold) rather than a sequence (a count model's or a filter's output).
bool holds_histograms(const Trace& trace) {
  const auto any = [](const Elastic& e) {
    return std::any_of(e.entries().begin(), e.entries().end(),
                       [](const auto& en) { return en.values.is_histogram(); });
  };
  for (const Node& n : trace.nodes) {
    if (any(n.count)) return true;
    for (const auto& l : n.loops)
      if (any(l.members) || any(l.iters)) return true;
    for (const auto& [f, e] : n.fields)
      if (any(e)) return true;
  }
  return false;
}

namespace {

// The program of `trace` once the passes have run; `label` names its nodes
// (node_label of `trace` when null).
std::string generate(const Trace& trace, const Options& options,
                     std::function<std::string(std::size_t)> label) {
  if (other_thread_node(trace)) return benchgen::threaded_program(trace, options, std::move(label));
  benchgen::Gen g(trace, options);
  g.label = std::move(label);
  return g.program();
}

}  // namespace

std::string generate_c(const Trace& trace, const Options& options, Summary* summary) {
  // Each recorded thread's stream becomes a thread of the benchmark; only
  // a trace of one stream per rank that starts with MPI_Init_thread (from
  // a recorder that did not record threads) is refused unless
  // --single-thread says one thread called MPI.
  if (const auto init = init_thread_node(trace);
      init && trace.threads <= 1 && !options.single_thread)
    throw BenchError(node_label(trace, *init) + ": " + std::string(kInitThreadRefusal));
  check_clock(trace, options);
  const bool lossy = !trace.lossy.empty();
  // What --lossy-ok would do depends on what was lost: histograms lost
  // the order of their values, a model or a filter kept whole sequences.
  if (lossy && !options.lossy_ok)
    throw BenchError(
        "the trace is lossy (" + trace.lossy + "): the benchmark needs exact values (--lossy-ok " +
        (holds_histograms(trace) ? "draws them from the histograms, in an invented order)"
                                 : "generates it from the values the trace holds, each receive "
                                   "sized for the largest message it could meet)"));
  // Both checks cost one look at each node; a trace that needs neither pass
  // is generated as it is, without a copy. A lossy trace has lost the
  // order both passes walk.
  const bool resolve = !lossy && !options.keep_wildcards && has_wildcards(trace);
  const bool align = !lossy && needs_alignment(trace);
  Summary done;
  std::string text;
  if (resolve || align) {
    Trace prepared = trace;
    if (resolve) {
      const WildcardReport w = resolve_wildcards(prepared);
      done.wildcards_recorded = w.recorded;
      done.wildcards_chosen = w.chosen;
    }
    AlignReport a;
    if (align) a = align_collectives(prepared);
    done.collectives_merged = a.merged;
    text = generate(prepared, options, print_numbering(trace, std::move(a.origin)));
  } else {
    text = generate(trace, options, nullptr);
  }
  if (summary) *summary = done;
  return text;
}

Summary write_c(const Trace& trace, const Options& options, const std::string& path) {
  Summary summary;
  benchgen::write_whole(path, generate_c(trace, options, &summary));
  return summary;
}

}  // namespace tracefold::bench

namespace tracefold::benchgen {

void write_whole(const std::string& path, const std::string& text) {
  try {
    write_file_whole(path, text);
  } catch (const std::runtime_error& e) {
    throw bench::BenchError(e.what());
  }
}

}  // namespace tracefold::benchgen
