// `tracefold resolve`: the benchmark-generation passes on their own
// (bench_passes.hpp): wildcard receives name what they match, and with
// --align collectives called from different lines become one node.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/trace_io.hpp"

using namespace tracefold;

void add_resolve_command(CLI::App& app) {
  struct Args {
    std::string input, output;
    bool align = false, text = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "resolve", "Name the source and tag of every wildcard receive (exits 2 on a deadlock)");
  cmd->add_option("trace", args->input, "Trace file")
      ->required()
      ->check(tracefold::cli::existing_trace());
  cmd->add_option("-o,--output", args->output, "Resolved trace")->required();
  cmd->add_flag("--align", args->align,
                "Also combine collectives called from different lines into one node");
  cmd->add_flag("--text", args->text, "Write the text form");
  cmd->callback([args] {
    cli::guarded([&] {
      Trace t = load_trace(args->input);
      if (!t.lossy.empty())
        throw std::runtime_error(args->input + " is lossy (" + t.lossy +
                                 "): its wildcard matches cannot be walked exactly");
      const WildcardReport w = resolve_wildcards(t);
      std::cerr << "tracefold: resolve: " << w.recorded << " wildcard calls from recorded matches, "
                << w.chosen << " chosen by the traversal (" << w.nodes << " nodes)\n";
      if (args->align) {
        const AlignReport a = align_collectives(t);
        std::cerr << "tracefold: resolve: " << a.merged << " collective nodes combined";
        if (!a.unmerged.empty())
          std::cerr << ", " << a.unmerged.size()
                    << " groups left apart (combining them would reorder a rank's calls)";
        std::cerr << "\n";
      }
      save_trace(t, args->output, args->text ? TraceEncoding::kText : TraceEncoding::kCompact);
    });
    // Done: main has nothing more to run for this subcommand.
    throw CLI::RuntimeError(0);
  });
}
