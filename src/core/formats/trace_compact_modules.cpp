// The compact form's optional trailing section: the module table and the
// embedded symbols (docs/format.md, "Compact form"). Kept apart from the
// node codec; a body without the section is a trace without the tables.
//
// Version 6 makes the section smaller for the small traces where it is
// most of the file: the frame table's module names count as the first
// strings (they are not written twice), and a build-id is stored as its
// bytes rather than as hex text.
#include <algorithm>
#include <map>

#include "trace_compact_codec.hpp"

namespace tracefold::compact {

namespace {

constexpr uint64_t kSymbolSection = 1;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// A build-id the byte form gives back exactly: lower-case hex, whole bytes.
bool byte_form(const std::string& hex) {
  if (hex.empty() || hex.size() % 2 != 0) return false;
  return std::all_of(hex.begin(), hex.end(), [](char c) { return hex_digit(c) >= 0; });
}

}  // namespace

void put_symbol_tables(Out& o, const SymbolTables& t, const std::vector<std::string>& known) {
  if (t.empty()) return;
  // Every string once (file and function names repeat across frames); the
  // reader knows `known` already.
  std::map<std::string, std::size_t> ids;
  std::vector<const std::string*> strings;
  for (const std::string& k : known) ids.try_emplace(k, ids.size());
  auto id = [&](const std::string& s) {
    auto [it, fresh] = ids.try_emplace(s, ids.size());
    if (fresh) strings.push_back(&it->first);
    return it->second;
  };
  Out s;
  s.uv(t.modules.size());
  for (const auto& [name, m] : t.modules) {
    s.uv(id(m.name));
    s.uv(id(m.path));
    // 0: none; odd 2k+1: k bytes follow; even 2i+2: string i (hex that
    // the byte form would not give back as written).
    if (m.build_id.empty()) {
      s.uv(0);
    } else if (byte_form(m.build_id)) {
      s.uv(m.build_id.size() + 1);
      for (std::size_t i = 0; i < m.build_id.size(); i += 2)
        s.bytes() +=
            static_cast<char>(hex_digit(m.build_id[i]) * 16 + hex_digit(m.build_id[i + 1]));
    } else {
      s.uv(2 * id(m.build_id) + 2);
    }
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

void get_symbol_tables(In& in, SymbolTables& t, int version,
                       const std::vector<std::string>& known) {
  const uint64_t tag = in.uv("a section tag");
  if (tag != kSymbolSection)
    in.fail("unexpected data after the last node (section tag " + std::to_string(tag) +
            "; 1 is the symbol section)");
  In s = in.sub(in.count("the symbol section's size"));
  std::vector<std::string> strings;
  if (version >= 6) strings = known;
  const std::size_t nstrings = s.count("a string count");
  strings.reserve(strings.size() + nstrings);
  for (std::size_t i = 0; i < nstrings; ++i) strings.push_back(s.str("a string"));
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
    if (version < 6) {
      m.build_id = get("a build-id");
    } else if (const uint64_t code = s.uv("a build-id"); code % 2 == 1) {
      static constexpr char kHex[] = "0123456789abcdef";
      for (unsigned char b : s.raw((code - 1) / 2, "a build-id")) {
        m.build_id += kHex[b >> 4];
        m.build_id += kHex[b & 15];
      }
    } else if (code > 0) {
      const uint64_t i = code / 2 - 1;
      if (i >= strings.size()) s.fail("build-id string " + std::to_string(i) + " is not a string");
      m.build_id = strings[i];
    }
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
