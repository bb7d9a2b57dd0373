// The compact form's optional trailing section: the module table and the
// embedded symbols (docs/format.md, "Compact form"). Kept apart from the
// node codec; a body without the section is a trace without the tables.
#include <map>

#include "trace_compact_codec.hpp"

namespace tracefold::compact {

namespace {

constexpr uint64_t kSymbolSection = 1;

}  // namespace

void put_symbol_tables(Out& o, const SymbolTables& t) {
  if (t.empty()) return;
  // Every string once (file and function names repeat across frames).
  std::map<std::string, std::size_t> ids;
  std::vector<const std::string*> strings;
  auto id = [&](const std::string& s) {
    auto [it, fresh] = ids.try_emplace(s, strings.size());
    if (fresh) strings.push_back(&it->first);
    return it->second;
  };
  Out s;
  s.uv(t.modules.size());
  for (const auto& [name, m] : t.modules) {
    s.uv(id(m.name));
    s.uv(id(m.path));
    s.uv(id(m.build_id));
    s.uv(m.base);
  }
  s.uv(t.symbols.size());
  for (const auto& [f, frames] : t.symbols) {
    s.uv(id(f.module));
    s.uv(f.offset);
    s.uv(frames.size());
    for (const SourceFrame& sf : frames) {
      s.uv(id(sf.function));
      s.uv(id(sf.file));
      s.uv(sf.line);
    }
  }
  Out body;
  body.uv(strings.size());
  for (const std::string* str : strings) body.str(*str);
  body.bytes() += s.bytes();
  o.uv(kSymbolSection);
  o.uv(body.bytes().size());
  o.bytes() += body.bytes();
}

void get_symbol_tables(In& in, SymbolTables& t) {
  const uint64_t tag = in.uv("a section tag");
  if (tag != kSymbolSection)
    in.fail("unexpected data after the last node (section tag " + std::to_string(tag) +
            "; 1 is the symbol section)");
  In s = in.sub(in.count("the symbol section's size"));
  std::vector<std::string> strings(s.count("a string count"));
  for (auto& str : strings) str = s.str("a string");
  auto get = [&](const char* what) -> const std::string& {
    const uint64_t i = s.uv(what);
    if (i >= strings.size())
      s.fail(std::string(what) + " " + std::to_string(i) + " is not a string");
    return strings[i];
  };
  for (std::size_t n = s.count("a module count"); n-- > 0;) {
    Module m;
    m.name = get("a module name");
    m.path = get("a module path");
    m.build_id = get("a build-id");
    m.base = s.uv("a module base");
    if (m.name.empty() || !t.modules.emplace(m.name, m).second)
      s.fail("module '" + m.name + "' is empty or appears twice");
  }
  for (std::size_t n = s.count("a symbol count"); n-- > 0;) {
    Frame f;
    f.module = get("a frame's module");
    f.offset = s.uv("a frame's offset");
    SourceFrames frames(s.count("a source frame count"));
    for (SourceFrame& sf : frames) {
      sf.function = get("a function name");
      sf.file = get("a file name");
      sf.line = static_cast<uint32_t>(s.uv("a line", UINT32_MAX));
    }
    if (!t.symbols.emplace(f, std::move(frames)).second) s.fail("a frame's symbols appear twice");
  }
  if (!s.at_end()) s.fail("unexpected data in the symbol section");
}

}  // namespace tracefold::compact
