// `tracefold symbolize`, and the call-site options every viewing command
// shares (--raw-sites, --debug-dir).
#include <unistd.h>

#include <iostream>

#include "cli.hpp"
#include "progress.hpp"
#include "tracefold/symbolize.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::cli {

void add_site_options(CLI::App* cmd, SiteOptions& o) {
  cmd->add_flag("--raw-sites", o.raw,
                "Show call sites as recorded (module+0xoffset frames), without symbols");
  cmd->add_option("--debug-dir", o.debug_dirs,
                  "Where to look for binaries by build-id (DIR/.build-id/xx/yyyy[.debug], or any "
                  "binary below DIR); may be repeated")
      ->check(CLI::ExistingDirectory);
}

void prepare_sites(Trace& trace, const SiteOptions& o, bool labels_only) {
  if (o.raw) {
    trace.symtab.symbols.clear();
    return;
  }
  symbolize::Symbolizer symbolizer({o.debug_dirs, true});
  symbolize::symbolize_trace(
      trace, symbolizer, {},
      labels_only ? symbolize::FrameScope::kLabels : symbolize::FrameScope::kAll);
}

namespace {

struct SymbolizeArgs {
  std::string trace;
  std::string output;
  std::vector<std::string> debug_dirs;
  bool text = false;
  bool no_recorded_paths = false;
};

void run_symbolize(const SymbolizeArgs& a) {
  Trace t = load_trace(a.trace);
  symbolize::Symbolizer symbolizer({a.debug_dirs, !a.no_recorded_paths});
  Progress progress("symbolizing " + a.trace + ": frame", 0);
  const symbolize::Result r = symbolize::symbolize_trace(t, symbolizer, progress.fn());
  progress.done();
  const std::string out = a.output.empty() ? a.trace : a.output;
  save_trace(t, out, a.text ? TraceEncoding::kText : TraceEncoding::kCompact);
  std::cerr << "tracefold: symbolized " << out << ": " << r.frames << " frames, " << r.resolved
            << " named now, " << r.embedded << " named before, "
            << r.frames - r.resolved - r.embedded << " unknown\n";
  if (!r.missing_modules.empty()) {
    std::cerr << "tracefold: no binary found for:";
    for (const std::string& m : r.missing_modules) std::cerr << " " << m;
    std::cerr << " (see --debug-dir)\n";
  }
}

}  // namespace

void add_symbolize_command(CLI::App& app) {
  auto a = std::make_shared<SymbolizeArgs>();
  auto* cmd = app.add_subcommand(
      "symbolize", "Embed function names and source lines of the call sites into a trace");
  cmd->add_option("trace", a->trace, "Trace file")->required()->check(existing_trace());
  cmd->add_option("-o,--output", a->output, "Trace to write (default: rewrite TRACE in place)");
  cmd->add_option("--debug-dir", a->debug_dirs,
                  "Where to look for binaries by build-id (DIR/.build-id/xx/yyyy[.debug], or any "
                  "binary below DIR); may be repeated")
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--no-recorded-paths", a->no_recorded_paths,
                "Do not read binaries at the paths the recorder stored");
  cmd->add_flag("--text", a->text, "Write the text form");
  cmd->callback([a] {
    guarded([&] { run_symbolize(*a); });
    throw CLI::RuntimeError(0);
  });
}

}  // namespace tracefold::cli
