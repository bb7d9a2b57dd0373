// Names of memory-access sites (instruction addresses of a memtrace raw
// log) for `tracefold memtrace-stats` and `tracefold memreplay`: the
// function holding the instruction, through the symbolizer, when a module
// of modules.bin covers it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "raw_reader.hpp"
#include "tracefold/symbolize.hpp"

namespace tracefold::cli {

class SiteNamer {
 public:
  // raw_sites: "module+0xoffset" only, no symbol lookup.
  SiteNamer(std::vector<memtrace::Module> modules, bool raw_sites);

  // "function (module+0xoffset)", "module+0xoffset" when the module has no
  // symbol there, "" when no listed module's loaded segments hold `iaddr`
  // (or its file cannot be read to tell where they end).
  std::string name(std::uint64_t iaddr);

 private:
  struct Extent {
    const memtrace::Module* module;
    std::uint64_t vaddr0;  // ELF address of file offset 0
    std::uint64_t length;  // from the load base to the end of the last PT_LOAD
  };
  std::vector<Extent> extents_;
  bool raw_sites_;
  std::vector<memtrace::Module> modules_;
  symbolize::Symbolizer symbolizer_;
};

// A raw log's modules.bin, or none when the file is absent.
std::vector<memtrace::Module> read_modules_if_any(const std::string& dir);

}  // namespace tracefold::cli
