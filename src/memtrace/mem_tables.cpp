// The id tables of a memory trace (fold.hpp's MemTables): modules and
// contexts kept as entries of the trace's module table, so that a trace
// carries what a merge needs to rename its ids, and older traces' forms of
// those entries still read.
#include <algorithm>
#include <charconv>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fold.hpp"

namespace tracefold::memtrace {

namespace {

constexpr std::string_view kModulePrefix = "memmod";
constexpr std::string_view kContextPrefix = "memctx";
// Traces written before the build-id fields held hex digits only kept
// memctx's module count as `modules=N` and a module's code extent as
// `text+LO-HI`; both still read.
constexpr std::string_view kOldModulesField = "modules=";
constexpr std::string_view kOldExtentField = "text+";
// A module's code extent in its build-id field: LO then HI, 16 hex digits
// each, offsets from the base.
constexpr std::size_t kExtentDigits = 16;

// The number after `prefix` in a table entry's name, when there is one.
std::optional<std::uint32_t> numbered(const std::string& name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  std::uint32_t v = 0;
  const char* end = name.data() + name.size();
  auto r = std::from_chars(name.data() + prefix.size(), end, v);
  if (r.ec != std::errc() || r.ptr != end) return std::nullopt;
  return v;
}

std::string hex_digits(std::uint64_t v, std::size_t width) {
  std::string out(width, '0');
  for (std::size_t i = width; i-- > 0 && v; v >>= 4) out[i] = "0123456789abcdef"[v & 15];
  return out;
}

// A module's code extent, kept in its table entry's build-id field (nothing
// else of a memory trace uses that field) in hex digits only: the text
// form's reader takes nothing else there.
std::string text_extent(const Module& m) {
  return hex_digits(m.text_lo - m.base, kExtentDigits) +
         hex_digits(m.text_hi - m.base, kExtentDigits);
}

bool parse_hex(std::string_view s, std::uint64_t& v) {
  return !s.empty() &&
         std::from_chars(s.data(), s.data() + s.size(), v, 16).ptr == s.data() + s.size();
}

void parse_text_extent(std::string_view s, Module& m) {
  if (s.empty()) return;
  std::uint64_t lo = 0, hi = 0;
  bool good = false;
  if (s.substr(0, kOldExtentField.size()) == kOldExtentField) {
    const std::string_view r = s.substr(kOldExtentField.size());
    const std::size_t dash = r.find('-');
    good = dash != std::string_view::npos && parse_hex(r.substr(0, dash), lo) &&
           parse_hex(r.substr(dash + 1), hi);
  } else if (s.size() == 2 * kExtentDigits) {
    good = parse_hex(s.substr(0, kExtentDigits), lo) && parse_hex(s.substr(kExtentDigits), hi);
  }
  if (!good)
    throw std::runtime_error("memmod" + std::to_string(m.id) + ": bad code extent '" +
                             std::string(s) + "' (expected 32 hex digits)");
  m.text_lo = m.base + lo;
  m.text_hi = m.base + hi;
}

}  // namespace

void set_mem_tables(Trace& trace, const MemTables& tables) {
  for (const Module& m : tables.modules) {
    if (m.id == 0) continue;  // read_modules' placeholder
    tracefold::Module t;
    t.name = std::string(kModulePrefix) + std::to_string(m.id);
    t.path = m.name;
    t.base = m.base;
    if (m.has_text()) t.build_id = text_extent(m);
    trace.symtab.modules[t.name] = t;
  }
  tracefold::Module head;
  head.name = std::string(kContextPrefix);
  head.base = tables.first_log_contexts;
  if (tables.first_log_modules > 0) head.build_id = hex_digits(tables.first_log_modules, 8);
  for (std::uint32_t n : tables.log_streams)
    head.path += (head.path.empty() ? "" : ",") + std::to_string(n);
  trace.symtab.modules[head.name] = head;
  for (const auto& [id, path] : tables.contexts) {
    tracefold::Module c;
    c.name = std::string(kContextPrefix) + std::to_string(id);
    c.path = path;
    trace.symtab.modules[c.name] = c;
  }
}

std::vector<Module> trace_modules(const Trace& trace) {
  std::vector<Module> out;
  for (const auto& [name, t] : trace.symtab.modules) {
    const auto id = numbered(name, kModulePrefix);
    if (!id || *id == 0) continue;
    if (*id >= out.size()) out.resize(*id + 1);
    out[*id] = Module{*id, t.base, t.path};
    parse_text_extent(t.build_id, out[*id]);
  }
  return out;
}

std::optional<MemTables> mem_tables(const Trace& trace) {
  const tracefold::Module* head = trace.symtab.module(std::string(kContextPrefix));
  if (!head) return std::nullopt;
  MemTables t;
  t.modules = trace_modules(trace);
  if (head->base > 0xffffffffu) throw std::runtime_error("memctx: a context id over 32 bits");
  t.first_log_contexts = static_cast<std::uint32_t>(head->base);
  if (std::string_view id = head->build_id; !id.empty()) {
    // The module count in hex, or `modules=N` in decimal in older traces.
    const bool old = id.substr(0, kOldModulesField.size()) == kOldModulesField;
    if (old) id.remove_prefix(kOldModulesField.size());
    if (std::from_chars(id.data(), id.data() + id.size(), t.first_log_modules, old ? 10 : 16).ptr !=
            id.data() + id.size() ||
        id.empty())
      throw std::runtime_error("memctx: bad module count '" + head->build_id + "'");
  }
  std::string_view list = head->path;
  while (!list.empty()) {
    const std::size_t comma = std::min(list.find(','), list.size());
    std::uint32_t n = 0;
    const auto r = std::from_chars(list.data(), list.data() + comma, n);
    if (r.ec != std::errc() || r.ptr != list.data() + comma)
      throw std::runtime_error("memctx: bad streams per log '" + head->path + "'");
    t.log_streams.push_back(n);
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  for (const auto& [name, m] : trace.symtab.modules)
    if (const auto id = numbered(name, kContextPrefix)) t.contexts.emplace(*id, m.path);
  return t;
}

}  // namespace tracefold::memtrace
