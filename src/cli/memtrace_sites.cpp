#include "memtrace_sites.hpp"

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tracefold::cli {
namespace {

namespace fs = std::filesystem;

struct ElfSpan {
  std::uint64_t vaddr0 = 0;  // the first PT_LOAD's p_vaddr - p_offset (symbolizer's base)
  std::uint64_t end = 0;     // highest p_vaddr + p_memsz of the PT_LOADs
};

// Where a module's loaded segments lie, relative to its ELF addresses;
// nullopt if the file is not a readable 64-bit ELF with a segment at file
// offset 0.
std::optional<ElfSpan> elf_span(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return std::nullopt;
  ElfSpan s;
  bool at0 = false;
  for (int i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return std::nullopt;
    if (ph.p_type != PT_LOAD) continue;
    if (ph.p_offset == 0 && !at0) {
      s.vaddr0 = ph.p_vaddr;
      at0 = true;
    }
    s.end = std::max(s.end, ph.p_vaddr + ph.p_memsz);
  }
  if (!at0 || s.end <= s.vaddr0) return std::nullopt;
  return s;
}

}  // namespace

SiteNamer::SiteNamer(std::vector<memtrace::Module> modules, bool raw_sites)
    : raw_sites_(raw_sites), modules_(std::move(modules)) {
  for (const auto& m : modules_) {
    if (m.name.empty()) continue;
    if (auto s = elf_span(m.name)) extents_.push_back({&m, s->vaddr0, s->end - s->vaddr0});
  }
}

std::string SiteNamer::name(std::uint64_t iaddr) {
  const Extent* hit = nullptr;
  for (const auto& e : extents_)
    if (iaddr >= e.module->base && iaddr - e.module->base < e.length) hit = &e;
  if (hit == nullptr) return "";
  const std::uint64_t offset = iaddr - hit->module->base;
  const std::string label = fs::path(hit->module->name).filename().string();
  std::ostringstream off;
  off << label << "+0x" << std::hex << offset;
  if (raw_sites_) return off.str();
  Module m;
  m.name = label;
  m.path = hit->module->name;
  m.base = hit->vaddr0;
  auto frames = symbolizer_.lookup(m, offset);
  if (frames.empty() || frames.front().function.empty()) return off.str();
  return frames.front().function + " (" + off.str() + ")";
}

std::vector<memtrace::Module> read_modules_if_any(const std::string& dir) {
  const fs::path p = fs::path(dir) / "modules.bin";
  if (!fs::exists(p)) return {};
  return memtrace::read_modules(p);
}

}  // namespace tracefold::cli
