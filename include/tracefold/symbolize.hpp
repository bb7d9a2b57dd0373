// Naming call-site frames: function, source file and line, with inlined
// frames expanded, read from the binaries' ELF symbol tables and DWARF by
// elfutils (libdwfl). Binaries are found by the path the recorder stored
// or, by build-id, in debug directories (docs/cli.md, `symbolize`).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tracefold/modules.hpp"
#include "tracefold/progress.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::symbolize {

struct Options {
  /// Searched before the recorded paths, each as: a debuginfod-style tree
  /// (`DIR/.build-id/xx/yyyy.debug` or `DIR/.build-id/xx/yyyy`), then any
  /// ELF file below DIR (two levels deep) whose build-id matches, then a
  /// file named like the module when no build-id was recorded.
  std::vector<std::string> debug_dirs;
  /// Look at the path the recorder stored (a file whose build-id differs
  /// from the recorded one is never used).
  bool recorded_paths = true;
};

/// Resolves frames of modules, one libdwfl session per module, kept for
/// the Symbolizer's life (so thousands of sites cost one load per module).
class Symbolizer {
 public:
  explicit Symbolizer(Options options = {});
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  /// Source frames at `offset` in `module` (innermost inlined frame first):
  /// function with file and line from DWARF; the symbol-table name alone
  /// for a binary without debug information; empty when nothing is known
  /// or the binary cannot be found.
  SourceFrames lookup(const Module& module, uint64_t offset);
  /// The file used for `module` ("" when none was found), after a lookup.
  std::string file_of(const std::string& module_name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What symbolize_trace did.
struct Result {
  std::size_t frames = 0;                    ///< distinct frames the sites use (in scope)
  std::size_t embedded = 0;                  ///< frames that already had symbols
  std::size_t resolved = 0;                  ///< frames named now
  std::vector<std::string> missing_modules;  ///< modules no binary was found for
};

/// Which frames to name (symbolize_trace): all of them, or only those a
/// site's label can be (outside the system libraries, see label_frame),
/// for views that show labels and no whole call paths. Naming a system
/// library's frame may mean decompressing all of its installed debug
/// information (libc's, from libc6-dbg: 200 M instructions) for frames no
/// label shows.
enum class FrameScope { kAll, kLabels };

/// Adds to `trace.symtab` the symbols of every frame its sites use (in
/// `scope`) that it does not have yet. Frames that resolve to nothing are
/// left out. `progress` is told after each frame looked up.
Result symbolize_trace(Trace& trace, Symbolizer& symbolizer, const ProgressFn& progress = {},
                       FrameScope scope = FrameScope::kAll);

}  // namespace tracefold::symbolize
