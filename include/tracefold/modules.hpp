// Modules and source symbols of a trace's call sites.
//
// Call-site frames are `module+0xOFFSET` (event.hpp). To name them later, on
// another machine, the recorder keeps per module its full path, GNU
// build-id and base (the ELF virtual address that offset 0 stands for), and
// `tracefold symbolize` may embed per frame the source frames it resolves
// to, so a trace stays readable once the binaries are gone. Both tables are
// optional in the file (docs/format.md, "Modules and symbols").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracefold/event.hpp"

namespace tracefold {

/// One loaded object (executable or shared library) named by call sites.
struct Module {
  std::string name;      ///< the frame's module name (file name, spaces as `_`)
  std::string path;      ///< full path where it was loaded from ("" if unknown)
  std::string build_id;  ///< GNU build-id in lowercase hex ("" if none)
  uint64_t base = 0;     ///< ELF virtual address of frame offset 0
  auto operator<=>(const Module&) const = default;
};

/// One source-level frame: a function, and where in it. Inlined code gives
/// several for one address.
struct SourceFrame {
  std::string function;  ///< demangled name ("" if unknown)
  std::string file;      ///< source file ("" if unknown)
  uint32_t line = 0;     ///< 0 if unknown
  auto operator<=>(const SourceFrame&) const = default;
};

/// Source frames of one address, innermost (most deeply inlined) first.
using SourceFrames = std::vector<SourceFrame>;

/// The module table (by name) and the symbols embedded per frame.
struct SymbolTables {
  std::map<std::string, Module> modules;
  std::map<Frame, SourceFrames> symbols;
  bool empty() const { return modules.empty() && symbols.empty(); }

  /// The module named `name`, or nullptr.
  const Module* module(const std::string& name) const;
  /// Embedded source frames of `f`, or nullptr.
  const SourceFrames* symbols_of(const Frame& f) const;
  /// Adds the entries of `other` that are missing here (first one wins).
  void merge(const SymbolTables& other);
  /// Keeps only modules and symbols that `sites` use.
  void prune(const SiteTable& sites);
};

/// A GNU build-id note's bytes as the lowercase hex the module table and
/// `.build-id/xx/yyyy` directories use.
std::string build_id_hex(const unsigned char* bytes, std::size_t n);

/// Text-form lines (docs/format.md): `module NAME base=0x.. build-id=HEX
/// path=PATH` and `symbol MODULE+0xOFF FUNCTION FILE LINE` (one line per
/// source frame, innermost first; fields percent-escaped).
std::string format_module_line(const Module& m);
std::string format_symbol_lines(const Frame& f, const SourceFrames& frames);
/// Parse the text after `module ` / `symbol `; nullopt on bad text, with
/// `error` saying why.
std::optional<Module> parse_module_line(std::string_view text, std::string& error);
std::optional<std::pair<Frame, SourceFrame>> parse_symbol_line(std::string_view text,
                                                               std::string& error);

/// How a call site is shown to users.
struct SiteDisplay {
  bool raw = false;  ///< true: `module+0xoffset ...` only (--raw-sites)
};

/// Whether `f` is in a system library (the MPI library, libc, the Fortran
/// runtime, tracefold's own): such a frame is never a site's label_frame,
/// so a view that shows labels only needs no names for it.
bool system_module(const SymbolTables& tables, const Frame& f);
/// The frame a call site is shown by: the innermost one with source lines
/// (application code built with -g), else the innermost named one outside
/// the system libraries; nullptr when no frame of the site is named.
const Frame* label_frame(const SymbolTables& tables, const CallSite& site);
/// The innermost source frame of label_frame (where the call is), or nullptr.
const SourceFrame* innermost_source(const SymbolTables& tables, const CallSite& site);
/// One line naming a call site: the source frames of label_frame,
/// `function (file:line)`, inlined ones first, joined by " < ", plus
/// ` [module+0xoffset]` when no line is known; the frames as recorded
/// (SiteTable::format) when no frame is named, or with `raw`.
std::string site_label(const SymbolTables& tables, const CallSite& site, SiteDisplay display = {});
/// The whole call path with symbols where known, innermost first, one
/// entry per frame (inlined frames inside one entry).
std::vector<std::string> site_path(const SymbolTables& tables, const CallSite& site);
/// `function (file:line)`, `function`, or "" for a frame with no name.
std::string format_source_frame(const SourceFrame& f);

}  // namespace tracefold
