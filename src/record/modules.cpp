// Per module a call site names: where it was loaded from, its GNU build-id
// and the ELF address its frame offsets count from, so that a trace can be
// symbolized later against the same binaries (docs/recording.md,
// "Modules"). Runs once per new module, never per call.
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "recorder_impl.hpp"
#include "tracefold/modules.hpp"

namespace tracefold::record {

namespace {

struct Found {
  uintptr_t load_base = 0;  // lowest mapped address (dladdr's dli_fbase)
  bool found = false;
  bool main_program = false;
  std::string path;
  std::string build_id;
  uintptr_t bias = 0;  // dlpi_addr: loaded address minus ELF address
};

// The NT_GNU_BUILD_ID note among the loaded PT_NOTE segments.
std::string build_id_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    const std::size_t align = ph.p_align == 8 ? 8 : 4;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof nh);
      const unsigned char* name = p + sizeof nh;
      const unsigned char* desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
      const unsigned char* next = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
      if (next > end || next <= p) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
        return build_id_hex(desc, nh.n_descsz);
      p = next;
    }
  }
  return "";
}

}  // namespace

void Recorder::note_module(const std::string& name, uintptr_t load_base) {
  if (modules.count(name)) return;
  Found f;
  f.load_base = load_base;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* f = static_cast<Found*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
          if (f->load_base < (lo & ~uintptr_t{4095}) || f->load_base >= lo + ph.p_memsz) continue;
          f->found = true;
          f->main_program = info->dlpi_name == nullptr || info->dlpi_name[0] == '\0';
          if (!f->main_program) f->path = info->dlpi_name;
          f->build_id = build_id_of(info);
          f->bias = info->dlpi_addr;
          return 1;
        }
        return 0;
      },
      &f);
  Module m;
  m.name = name;
  if (f.found) {
    m.build_id = f.build_id;
    m.base = load_base - f.bias;
    if (f.main_program) {
      char buf[PATH_MAX];
      const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
      if (n > 0) f.path.assign(buf, static_cast<std::size_t>(n));
    }
    // A relative path (dlopen of "./x") would mean nothing elsewhere.
    if (char* real = f.path.empty() ? nullptr : realpath(f.path.c_str(), nullptr)) {
      m.path = real;
      std::free(real);
    } else {
      m.path = f.path;
    }
  }
  modules.emplace(name, std::move(m));
}

}  // namespace tracefold::record
