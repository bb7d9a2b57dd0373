// Frame names from ELF and DWARF through elfutils' libdwfl. Each module
// gets a session of its own, with the binary reported at its ELF addresses
// (bias 0), so a frame's address is the module's recorded base plus its
// offset, whatever machine recorded it.
#include "tracefold/symbolize.hpp"

#include "tracefold/modules.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

namespace tracefold::symbolize {

namespace fs = std::filesystem;

namespace {

// The GNU build-id of an ELF file, "" if it has none or is no ELF file.
std::string file_build_id(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string id;
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    const void* bits = nullptr;
    const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    if (n > 0)
      id = build_id_hex(static_cast<const unsigned char*>(bits), static_cast<std::size_t>(n));
    elf_end(elf);
  }
  ::close(fd);
  return id;
}

bool is_elf_file(const fs::directory_entry& e) {
  std::error_code ec;
  if (!e.is_regular_file(ec) || e.file_size(ec) < 64) return false;
  char magic[4] = {};
  const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::read(fd, magic, 4) == 4 && std::memcmp(magic, "\177ELF", 4) == 0;
  ::close(fd);
  return ok;
}

std::string demangle(const char* name) {
  if (!name) return "";
  if (name[0] == '_' && name[1] == 'Z') {
    int status = 0;
    char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (d && status == 0) {
      std::string out = d;
      std::free(d);
      return out;
    }
    std::free(d);
  }
  return name;
}

// A C++ function by its demangled linkage name; others (C, Fortran, whose
// linkage names are not mangled) by their source name.
std::string die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  const char* linkage = nullptr;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
      dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
    linkage = dwarf_formstring(&attr);
  if (linkage && linkage[0] == '_' && linkage[1] == 'Z') return demangle(linkage);
  if (const char* name = dwarf_diename(die)) return name;
  return linkage ? linkage : "";
}

struct ModuleSession {
  Dwfl* dwfl = nullptr;
  std::string file;
};

const Dwfl_Callbacks* callbacks_for(char** debuginfo_path) {
  static Dwfl_Callbacks cb{};
  cb.find_elf = dwfl_build_id_find_elf;
  cb.find_debuginfo = dwfl_standard_find_debuginfo;
  cb.section_address = dwfl_offline_section_address;
  cb.debuginfo_path = debuginfo_path;
  return &cb;
}

}  // namespace

struct Symbolizer::Impl {
  Options options;
  std::string debuginfo_path;
  char* debuginfo_path_ptr = nullptr;
  Dwfl_Callbacks callbacks{};
  std::map<std::string, ModuleSession> sessions;
  bool indexed = false;
  std::map<std::string, std::string> by_build_id;  // from a scan of the debug dirs
  std::multimap<std::string, std::string> by_name;

  ~Impl() {
    for (auto& [name, s] : sessions)
      if (s.dwfl) dwfl_end(s.dwfl);
  }

  void index_dirs() {
    if (indexed) return;
    indexed = true;
    for (const std::string& dir : options.debug_dirs) {
      std::error_code ec;
      fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
          end;
      for (; !ec && it != end; it.increment(ec)) {
        if (it.depth() > 1) it.disable_recursion_pending();
        if (it->path().filename() == ".build-id") {
          it.disable_recursion_pending();
          continue;
        }
        if (!is_elf_file(*it)) continue;
        const std::string path = it->path().string();
        const std::string id = file_build_id(path);
        if (!id.empty()) by_build_id.emplace(id, path);
        by_name.emplace(it->path().filename().string(), path);
      }
    }
  }

  // Where the binary of `m` is, "" if nowhere.
  std::string find_file(const Module& m) {
    if (!m.build_id.empty() && m.build_id.size() > 2) {
      const std::string rel = ".build-id/" + m.build_id.substr(0, 2) + "/" + m.build_id.substr(2);
      for (const std::string& dir : options.debug_dirs)
        for (const char* ext : {"", ".debug"}) {
          const fs::path p = fs::path(dir) / (rel + ext);
          std::error_code ec;
          if (fs::exists(p, ec)) return p.string();
        }
    }
    if (!options.debug_dirs.empty()) {
      index_dirs();
      if (!m.build_id.empty()) {
        if (auto it = by_build_id.find(m.build_id); it != by_build_id.end()) return it->second;
      } else if (auto it = by_name.find(m.name); it != by_name.end()) {
        return it->second;
      }
    }
    if (options.recorded_paths && !m.path.empty()) {
      std::error_code ec;
      if (fs::is_regular_file(m.path, ec) &&
          (m.build_id.empty() || file_build_id(m.path) == m.build_id))
        return m.path;
    }
    return "";
  }

  ModuleSession& session(const Module& m) {
    auto [it, fresh] = sessions.try_emplace(m.name);
    ModuleSession& s = it->second;
    if (!fresh) return s;
    s.file = find_file(m);
    if (s.file.empty()) return s;
    s.dwfl = dwfl_begin(&callbacks);
    if (!s.dwfl) {
      s.file.clear();
      return s;
    }
    dwfl_report_begin(s.dwfl);
    // At the file's own addresses: bias 0 for executables and libraries.
    Dwfl_Module* mod = dwfl_report_elf(s.dwfl, m.name.c_str(), s.file.c_str(), -1, 0, true);
    dwfl_report_end(s.dwfl, nullptr, nullptr);
    if (!mod) {
      dwfl_end(s.dwfl);
      s.dwfl = nullptr;
      s.file.clear();
    }
    return s;
  }
};

Symbolizer::Symbolizer(Options options) : impl_(std::make_unique<Impl>()) {
  elf_version(EV_CURRENT);
  impl_->options = std::move(options);
  // Separate debug files: next to the binary, in .debug, the system's
  // debug tree, and the build-id trees of the debug directories.
  impl_->debuginfo_path = ":.debug:/usr/lib/debug";
  for (const std::string& d : impl_->options.debug_dirs)
    impl_->debuginfo_path += ":" + fs::absolute(d).string();
  impl_->debuginfo_path_ptr = impl_->debuginfo_path.data();
  impl_->callbacks = *callbacks_for(&impl_->debuginfo_path_ptr);
}

Symbolizer::~Symbolizer() = default;

std::string Symbolizer::file_of(const std::string& module_name) const {
  auto it = impl_->sessions.find(module_name);
  return it == impl_->sessions.end() ? "" : it->second.file;
}

SourceFrames Symbolizer::lookup(const Module& module, uint64_t offset) {
  SourceFrames out;
  ModuleSession& s = impl_->session(module);
  if (!s.dwfl) return out;
  const Dwarf_Addr addr = module.base + offset;
  Dwfl_Module* mod = dwfl_addrmodule(s.dwfl, addr);
  if (!mod) return out;
  Dwarf_Addr bias = 0;
  if (Dwarf_Die* cu = dwfl_module_addrdie(mod, addr, &bias)) {
    // The line of the address itself belongs to the innermost function;
    // each inlined instance says where (file:line) its caller inlined it.
    std::string file;
    int line = 0;
    if (Dwfl_Line* l = dwfl_module_getsrc(mod, addr)) {
      const char* f = dwfl_lineinfo(l, nullptr, &line, nullptr, nullptr, nullptr);
      if (f) file = f;
    }
    Dwarf_Files* files = nullptr;
    std::size_t nfiles = 0;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0) files = nullptr;
    // dwarf_getscopes stops at an inlined instance's abstract origin; the
    // function it was inlined into is found from the instance's own
    // containing scopes (dwarf_getscopes_die), one level at a time.
    Dwarf_Die* scopes = nullptr;
    int n = dwarf_getscopes(cu, addr - bias, &scopes);
    for (int depth = 0; n > 0 && depth < 64; ++depth) {
      int i = 0;
      while (i < n && dwarf_tag(&scopes[i]) != DW_TAG_subprogram &&
             dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
        ++i;
      if (i == n) break;
      Dwarf_Die fn = scopes[i];
      out.push_back({die_function_name(&fn), file, static_cast<uint32_t>(std::max(line, 0))});
      if (dwarf_tag(&fn) == DW_TAG_subprogram) break;
      Dwarf_Attribute attr;
      Dwarf_Word call_file = 0, call_line = 0;
      file.clear();
      line = 0;
      if (dwarf_formudata(dwarf_attr(&fn, DW_AT_call_file, &attr), &call_file) == 0 && files &&
          call_file < nfiles)
        if (const char* f = dwarf_filesrc(files, call_file, nullptr, nullptr)) file = f;
      if (dwarf_formudata(dwarf_attr(&fn, DW_AT_call_line, &attr), &call_line) == 0)
        line = static_cast<int>(call_line);
      std::free(scopes);
      scopes = nullptr;
      // [0] is the instance itself; the caller's scopes follow.
      n = dwarf_getscopes_die(&fn, &scopes);
      if (n > 0) {
        std::memmove(scopes, scopes + 1, sizeof(Dwarf_Die) * static_cast<std::size_t>(n - 1));
        --n;
      }
    }
    std::free(scopes);
  }
  if (out.empty() || out.back().function.empty()) {
    // No debug information: the symbol table names the function.
    if (const char* name = dwfl_module_addrname(mod, addr)) {
      if (out.empty())
        out.push_back({demangle(name), "", 0});
      else
        out.back().function = demangle(name);
    }
  }
  return out;
}

Result symbolize_trace(Trace& trace, Symbolizer& symbolizer, const ProgressFn& progress,
                       FrameScope scope) {
  Result r;
  std::set<Frame> used;
  for (const CallSite& cs : trace.sites.all())
    for (const Frame& f : cs.frames)
      if (scope == FrameScope::kAll || !system_module(trace.symtab, f)) used.insert(f);
  r.frames = used.size();
  std::set<std::string> missing;
  std::size_t done = 0;
  for (const Frame& f : used) {
    report_progress(progress, done++, used.size());
    if (trace.symtab.symbols_of(f)) {
      ++r.embedded;
      continue;
    }
    const Module* known = trace.symtab.module(f.module);
    const Module m = known ? *known : Module{f.module, "", "", 0};
    SourceFrames s = symbolizer.lookup(m, f.offset);
    if (symbolizer.file_of(m.name).empty()) missing.insert(m.name);
    if (s.empty()) continue;
    trace.symtab.symbols.emplace(f, std::move(s));
    ++r.resolved;
  }
  report_progress(progress, used.size(), used.size());
  r.missing_modules.assign(missing.begin(), missing.end());
  return r;
}

}  // namespace tracefold::symbolize
