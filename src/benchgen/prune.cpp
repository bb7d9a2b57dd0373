// Dropping the file-scope helpers a generated program does not use
// (gen.hpp): the prelude carries every helper any trace may need (request
// ring, communicators, topologies, datatypes: some 20 KB), which made a
// small trace's benchmark forty times its size.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gen.hpp"

namespace tracefold::benchgen {

namespace {

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// A file-scope definition that starts with `static` or `HELPER`, with the
// comment lines just before it; `name` is empty when it declares several.
struct Unit {
  std::size_t from = 0, to = 0;
  std::string name;
};

// The one name a definition declares: the identifier before its first
// `(`, `[`, `=`, `;` or `{`; "" when a `,` at its top level declares more.
std::string declared_name(const std::string& text) {
  std::string last, cur;
  for (char c : text) {
    if (ident_char(c)) {
      cur += c;
      continue;
    }
    if (!cur.empty()) last = cur, cur.clear();
    if (c == '(') return last;  // a function
    if (c == '[' || c == '=' || c == '{' || c == ';') break;
  }
  // A variable: more than one declarator has a comma outside braces and
  // brackets before the `;`.
  int depth = 0;
  for (char c : text) {
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) return "";
    if (c == ';' && depth == 0) break;
  }
  return last;
}

// Erases [from, to) of `s` together with the comment lines just before it.
void erase_with_comment(std::string& s, std::size_t from, std::size_t to) {
  if (from >= 3 && s.compare(from - 3, 3, "*/\n") == 0) {
    const std::size_t open = s.rfind("/*", from - 3);
    if (open != std::string::npos && (open == 0 || s[open - 1] == '\n')) from = open;
  }
  s.erase(from, to - from);
}

// What the unit pass cannot see: the histogram bin type once draw_ns is
// gone, and a diagnostic push/pop pair around helpers that all went.
std::string drop_leftovers(std::string s) {
  const std::string bin = "struct bin {\n";
  const std::size_t b = s.find(bin);
  if (b != std::string::npos && s.find("struct bin", b + bin.size()) == std::string::npos) {
    const std::size_t e = s.find("};\n", b);
    if (e != std::string::npos) erase_with_comment(s, b, e + 3);
  }
  const std::string guard = "#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11\n";
  const std::string push = guard + "#pragma GCC diagnostic push\n";
  const std::string pop = guard + "#pragma GCC diagnostic pop\n#endif\n";
  for (std::size_t p = s.find(push); p != std::string::npos; p = s.find(push, p + 1)) {
    const std::size_t endif = s.find("#endif\n", p);
    if (endif == std::string::npos) break;
    if (s.compare(endif + 7, pop.size(), pop) == 0) {
      erase_with_comment(s, p, endif + 7 + pop.size());
      break;
    }
  }
  return s;
}

}  // namespace

std::string drop_unused(const std::string& c) {
  // Pass 1: top-level units, and where comments, strings and code are.
  std::vector<Unit> units;
  std::vector<bool> code(c.size(), false);  // identifier-bearing code, not comment or string
  int depth = 0;
  std::size_t comment_from = std::string::npos;  // comment lines just before a unit
  std::size_t unit_from = std::string::npos;
  for (std::size_t i = 0; i < c.size();) {
    const bool line_start = i == 0 || c[i - 1] == '\n';
    if (line_start && depth == 0 && unit_from == std::string::npos) {
      if (c.compare(i, 7, "static ") == 0 || c.compare(i, 7, "HELPER ") == 0) {
        unit_from = comment_from == std::string::npos ? i : comment_from;
      } else if (c.compare(i, 2, "/*") != 0) {
        comment_from = std::string::npos;
      } else if (comment_from == std::string::npos) {
        comment_from = i;
      }
    }
    if (c.compare(i, 2, "/*") == 0) {
      const std::size_t e = c.find("*/", i + 2);
      i = e == std::string::npos ? c.size() : e + 2;
      continue;
    }
    if (c.compare(i, 2, "//") == 0) {
      while (i < c.size() && c[i] != '\n') ++i;
      continue;
    }
    if (c[i] == '"' || c[i] == '\'') {
      const char q = c[i++];
      while (i < c.size() && c[i] != q) i += c[i] == '\\' ? 2 : 1;
      ++i;
      continue;
    }
    if (c[i] == '#' && line_start) {  // preprocessor lines are code, kept as they are
      while (i < c.size() && c[i] != '\n') code[i++] = true;
      continue;
    }
    code[i] = true;
    if (c[i] == '{') ++depth;
    if (c[i] == '}') --depth;
    // A unit ends with the `;` or `}` that brings it back to the top level.
    if (unit_from != std::string::npos && depth == 0 && (c[i] == ';' || c[i] == '}')) {
      std::size_t e = c.find('\n', i);
      e = e == std::string::npos ? c.size() : e + 1;
      // `static long a; /* note */` : the rest of the line goes with it.
      Unit u{unit_from, e, ""};
      const std::size_t start = c.find_first_not_of(" \n", unit_from);
      std::size_t decl = start;
      while (c.compare(decl, 2, "/*") == 0)
        decl = c.find_first_not_of(" \n", c.find("*/", decl) + 2);
      u.name = declared_name(c.substr(decl, i + 1 - decl));
      units.push_back(u);
      unit_from = comment_from = std::string::npos;
      for (++i; i < e; ++i) code[i] = false;
      continue;
    }
    ++i;
  }
  // Pass 2: references to each unit's name from every other part of the
  // file; a name nothing else refers to goes, and what it alone referred
  // to after it.
  std::map<std::string, std::vector<std::size_t>> defines;
  for (std::size_t k = 0; k < units.size(); ++k)
    if (!units[k].name.empty() && units[k].name != "main") defines[units[k].name].push_back(k);
  std::vector<int> owner(c.size(), -1);
  for (std::size_t k = 0; k < units.size(); ++k)
    for (std::size_t i = units[k].from; i < units[k].to; ++i) owner[i] = static_cast<int>(k);
  std::map<std::string, long> refs;
  std::vector<std::map<std::string, long>> uses(units.size());  // by unit
  for (std::size_t i = 0; i < c.size();) {
    if (!code[i] || !ident_char(c[i]) || (i && ident_char(c[i - 1]))) {
      ++i;
      continue;
    }
    std::size_t e = i;
    while (e < c.size() && ident_char(c[e])) ++e;
    const std::string id = c.substr(i, e - i);
    auto d = defines.find(id);
    if (d != defines.end()) {
      const int k = owner[i];
      const bool own = k >= 0 && units[static_cast<std::size_t>(k)].name == id;
      if (!own) {
        ++refs[id];
        if (k >= 0) ++uses[static_cast<std::size_t>(k)][id];
      }
    }
    i = e;
  }
  std::vector<bool> dead(units.size(), false);
  std::vector<std::string> work;
  for (const auto& [name, ks] : defines)
    if (!refs[name]) work.push_back(name);
  while (!work.empty()) {
    const std::string name = work.back();
    work.pop_back();
    for (std::size_t k : defines[name]) {
      if (dead[k]) continue;
      dead[k] = true;
      for (const auto& [used, n] : uses[k])
        if ((refs[used] -= n) == 0) work.push_back(used);
    }
  }
  std::string out;
  out.reserve(c.size());
  std::size_t at = 0;
  for (std::size_t k = 0; k < units.size(); ++k) {
    if (!dead[k]) continue;
    out.append(c, at, units[k].from - at);
    at = units[k].to;
  }
  out.append(c, at, std::string::npos);
  return drop_leftovers(out);
}

}  // namespace tracefold::benchgen
