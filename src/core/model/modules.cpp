// Module table, embedded symbols, and how call sites are shown.
#include "tracefold/modules.hpp"

#include <charconv>
#include <cstdio>

namespace tracefold {

const Module* SymbolTables::module(const std::string& name) const {
  auto it = modules.find(name);
  return it == modules.end() ? nullptr : &it->second;
}

const SourceFrames* SymbolTables::symbols_of(const Frame& f) const {
  auto it = symbols.find(f);
  return it == symbols.end() ? nullptr : &it->second;
}

void SymbolTables::merge(const SymbolTables& other) {
  for (const auto& [name, m] : other.modules) modules.try_emplace(name, m);
  for (const auto& [f, s] : other.symbols) symbols.try_emplace(f, s);
}

void SymbolTables::prune(const SiteTable& sites) {
  std::map<std::string, Module> used_modules;
  std::map<Frame, SourceFrames> used_symbols;
  for (const CallSite& cs : sites.all())
    for (const Frame& f : cs.frames) {
      if (auto it = modules.find(f.module); it != modules.end()) used_modules.insert(*it);
      if (auto it = symbols.find(f); it != symbols.end()) used_symbols.insert(*it);
    }
  modules = std::move(used_modules);
  symbols = std::move(used_symbols);
}

namespace {

// Spaces, '%' and control characters are escaped, so that a field is one
// word; an empty field is written "-" (and a field "-" as "%2d").
std::string escape(std::string_view s) {
  if (s.empty()) return "-";
  if (s == "-") return "%2d";
  std::string out;
  for (unsigned char c : s) {
    if (c <= ' ' || c == '%' || c == 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::optional<std::string> unescape(std::string_view s) {
  if (s == "-") return std::string();
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= s.size()) return std::nullopt;
    auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (ec != std::errc() || p != s.data() + i + 3) return std::nullopt;
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

// Splits off the next space-separated word.
std::string_view word(std::string_view& text) {
  const std::size_t sp = text.find(' ');
  std::string_view w = text.substr(0, sp);
  text = sp == std::string_view::npos ? std::string_view() : text.substr(sp + 1);
  return w;
}

bool take_prefix(std::string_view& w, std::string_view prefix) {
  if (w.substr(0, prefix.size()) != prefix) return false;
  w.remove_prefix(prefix.size());
  return true;
}

bool is_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string raw_frame(const Frame& f) {
  return f.module + "+" + hex(f.offset);
}

std::string join_inlined(const SourceFrames& s) {
  std::string out;
  for (const SourceFrame& f : s) {
    const std::string one = format_source_frame(f);
    if (one.empty()) continue;
    if (!out.empty()) out += " < ";
    out += one;
  }
  return out;
}

}  // namespace

std::string format_source_frame(const SourceFrame& f) {
  if (f.function.empty()) return "";
  std::string out = f.function;
  if (!f.file.empty()) {
    const std::size_t slash = f.file.find_last_of('/');
    out += " (" + (slash == std::string::npos ? f.file : f.file.substr(slash + 1));
    if (f.line) out += ":" + std::to_string(f.line);
    out += ")";
  }
  return out;
}

std::string build_id_hex(const unsigned char* bytes, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

std::string format_module_line(const Module& m) {
  return "module " + escape(m.name) + " base=" + hex(m.base) +
         " build-id=" + (m.build_id.empty() ? "-" : m.build_id) + " path=" + escape(m.path);
}

std::string format_symbol_lines(const Frame& f, const SourceFrames& frames) {
  std::string out;
  for (const SourceFrame& s : frames)
    out += "symbol " + raw_frame(f) + " " + escape(s.function) + " " + escape(s.file) + " " +
           std::to_string(s.line) + "\n";
  return out;
}

std::optional<Module> parse_module_line(std::string_view text, std::string& error) {
  Module m;
  auto name = unescape(word(text));
  std::string_view base = word(text), id = word(text), path = text;
  if (!name || name->empty()) {
    error = "expected a module name";
    return std::nullopt;
  }
  m.name = *name;
  if (!take_prefix(base, "base=0x") || base.empty() || !is_hex(base) ||
      std::from_chars(base.data(), base.data() + base.size(), m.base, 16).ec != std::errc()) {
    error = "expected 'base=0xHEX' after the module name";
    return std::nullopt;
  }
  if (!take_prefix(id, "build-id=") || (id != "-" && (id.empty() || !is_hex(id)))) {
    error = "expected 'build-id=HEX' or 'build-id=-'";
    return std::nullopt;
  }
  if (id != "-") m.build_id = std::string(id);
  auto p = take_prefix(path, "path=") ? unescape(path) : std::nullopt;
  if (!p || path.find(' ') != std::string_view::npos) {
    error = "expected 'path=PATH' (escaped, one word) at the end";
    return std::nullopt;
  }
  m.path = *p;
  return m;
}

std::optional<std::pair<Frame, SourceFrame>> parse_symbol_line(std::string_view text,
                                                               std::string& error) {
  CallSite cs;
  const std::string_view frame = word(text);
  if (!SiteTable::parse(frame, cs) || cs.frames.size() != 1) {
    error = "expected a frame 'module+0xOFFSET'";
    return std::nullopt;
  }
  SourceFrame s;
  auto fn = unescape(word(text));
  auto file = unescape(word(text));
  const std::string_view line = text;
  if (!fn || !file || line.empty() || line.find(' ') != std::string_view::npos ||
      std::from_chars(line.data(), line.data() + line.size(), s.line).ec != std::errc() ||
      std::to_string(s.line) != line) {
    error = "expected 'FUNCTION FILE LINE' after the frame";
    return std::nullopt;
  }
  s.function = std::move(*fn);
  s.file = std::move(*file);
  return std::make_pair(cs.frames[0], std::move(s));
}

// System libraries (the MPI library, libc, the Fortran runtime) are not the
// application, even when their symbol tables name the frame.
bool system_module(const SymbolTables& t, const Frame& f) {
  const Module* m = t.module(f.module);
  if (!m) return f.module.rfind("libc.so", 0) == 0 || f.module.rfind("libmpi", 0) == 0;
  return m->path.rfind("/lib/", 0) == 0 || m->path.rfind("/lib64/", 0) == 0 ||
         m->path.rfind("/usr/lib", 0) == 0 || m->path.rfind("/usr/local/lib/tracefold", 0) == 0;
}

const Frame* label_frame(const SymbolTables& t, const CallSite& site) {
  if (t.symbols.empty()) return nullptr;
  // Outside the system libraries (whose debug files may be installed):
  // the innermost frame with source lines, application code built with
  // -g; failing that, the innermost named frame.
  for (const Frame& f : site.frames)
    if (const SourceFrames* s = t.symbols_of(f); s && !system_module(t, f))
      for (const SourceFrame& sf : *s)
        if (sf.line && !sf.function.empty()) return &f;
  for (const Frame& f : site.frames)
    if (const SourceFrames* s = t.symbols_of(f);
        s && !system_module(t, f) && !join_inlined(*s).empty())
      return &f;
  return nullptr;
}

const SourceFrame* innermost_source(const SymbolTables& t, const CallSite& site) {
  const Frame* f = label_frame(t, site);
  return f ? &t.symbols_of(*f)->front() : nullptr;
}

std::string site_label(const SymbolTables& t, const CallSite& site, SiteDisplay display) {
  const Frame* f = display.raw ? nullptr : label_frame(t, site);
  // Nothing known: the frames as recorded.
  if (!f) return SiteTable::format(site);
  const SourceFrames& s = *t.symbols_of(*f);
  std::string label = join_inlined(s);
  bool lines = false;
  for (const SourceFrame& sf : s) lines |= sf.line != 0;
  return lines ? label : label + " [" + raw_frame(*f) + "]";
}

std::vector<std::string> site_path(const SymbolTables& t, const CallSite& site) {
  std::vector<std::string> out;
  for (const Frame& f : site.frames) {
    const SourceFrames* s = t.symbols_of(f);
    std::string named = s ? join_inlined(*s) : "";
    out.push_back(named.empty() ? raw_frame(f) : named);
  }
  return out;
}

}  // namespace tracefold
