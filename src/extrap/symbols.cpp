// The symbol tables of an extrapolated trace: the union of its inputs'.
//
// Call sites are frames `module+0xOFFSET`; what names them (the module
// table with paths and build-ids, and the source frames `tracefold
// symbolize` embeds) lives beside the nodes. The extrapolated trace copies
// its call sites from the inputs, so the inputs' tables name them as well;
// without them `print`, `patterns` and `report` would show bare offsets
// and need the binaries found again by hand.
#include <cstdio>

#include "internal.hpp"

namespace tracefold::extrap::detail {

namespace {

std::string frame_text(const Frame& f) {
  char off[32];
  std::snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(f.offset));
  return f.module + off;
}

std::string frames_text(const SourceFrames& s) {
  if (s.empty()) return "(nothing)";
  std::string out;
  for (const SourceFrame& f : s) {
    if (!out.empty()) out += " < ";
    const std::string one = format_source_frame(f);
    out += one.empty() ? "(unnamed)" : one;
  }
  return out;
}

std::string module_text(const Module& m) {
  std::string out = m.build_id.empty() ? "no build-id" : "build-id " + m.build_id;
  out += ", path " + (m.path.empty() ? std::string("unknown") : m.path);
  char base[40];
  std::snprintf(base, sizeof base, ", base 0x%llx", static_cast<unsigned long long>(m.base));
  return out + base;
}

// Whether two module entries of one name stand for the same binary. A
// build-id decides when both have one (the path may differ: the same
// build run from another directory); otherwise only path and base can.
bool same_binary(const Module& a, const Module& b) {
  if (!a.build_id.empty() && !b.build_id.empty()) return a.build_id == b.build_id;
  return a.path == b.path && a.base == b.base;
}

}  // namespace

SymbolTables common_symbols(const std::vector<ExtrapInput>& in) {
  SymbolTables out;
  // Which input each entry came from, for the error.
  std::map<std::string, const std::string*> module_from;
  std::map<Frame, const std::string*> symbol_from;
  for (const ExtrapInput& x : in) {
    for (const auto& [name, m] : x.trace.symtab.modules) {
      auto [it, fresh] = out.modules.try_emplace(name, m);
      if (fresh) {
        module_from[name] = &x.name;
        continue;
      }
      if (!same_binary(it->second, m))
        throw ExtrapError(x.name + " and " + *module_from[name] + " were recorded with different " +
                          "binaries of module " + name + " (" + module_text(m) + " against " +
                          module_text(it->second) +
                          "): their call sites cannot be compared; record every input "
                          "with the same build of the program");
      // Keep a build-id that only a later input knows.
      if (it->second.build_id.empty() && !m.build_id.empty()) it->second = m;
    }
    for (const auto& [frame, names] : x.trace.symtab.symbols) {
      auto [it, fresh] = out.symbols.try_emplace(frame, names);
      if (fresh) {
        symbol_from[frame] = &x.name;
        continue;
      }
      if (it->second != names)
        throw ExtrapError(x.name + " and " + *symbol_from[frame] + " name call-site frame " +
                          frame_text(frame) + " differently (" + frames_text(names) + " against " +
                          frames_text(it->second) +
                          "): they were symbolized from different binaries; record the "
                          "inputs again, or symbolize every one against the same build "
                          "(tracefold symbolize --debug-dir DIR)");
    }
  }
  return out;
}

}  // namespace tracefold::extrap::detail
