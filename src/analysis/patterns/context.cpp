#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tracefold/patterns_context.hpp"

namespace tracefold::patterns {

namespace {

std::string trimmed(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

[[noreturn]] void fail(const std::string& name, std::size_t line, const std::string& what) {
  throw std::runtime_error(name + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

ContextSpec parse_context_groups(std::istream& in, const std::string& name) {
  ContextSpec spec;
  spec.kind = ContextSpec::Kind::kGroups;
  spec.file = name;
  std::string raw;
  std::size_t line = 0, group_line = 0, members = 0;
  // A group is checked for members when the next one starts and at the end,
  // and blamed on its own line.
  auto close_group = [&] {
    if (!spec.groups.empty() && members == 0)
      fail(name, group_line, "group '" + spec.groups.back() + "' lists no function");
  };
  while (std::getline(in, raw)) {
    ++line;
    const std::string text = trimmed(raw);
    if (text.empty() || text[0] == '#') continue;
    if (text.rfind("group", 0) == 0 && (text.size() == 5 || text[5] == ' ' || text[5] == '\t')) {
      close_group();
      const std::string g = trimmed(text.substr(5));
      if (g.empty()) fail(name, line, "'group' needs a name");
      for (const std::string& other : spec.groups)
        if (other == g) fail(name, line, "group '" + g + "' is defined twice");
      spec.groups.push_back(g);
      group_line = line;
      members = 0;
      continue;
    }
    if (spec.groups.empty())
      fail(name, line, "function '" + text + "' before the first 'group NAME' line");
    auto [it, fresh] = spec.group_of.try_emplace(text, spec.groups.back());
    if (!fresh)
      fail(name, line, "function '" + text + "' is already in group '" + it->second + "'");
    ++members;
  }
  close_group();
  if (spec.groups.empty()) fail(name, line, "no 'group NAME' line");
  return spec;
}

ContextSpec load_context_groups(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the context groups file");
  return parse_context_groups(in, path);
}

std::string context_name(std::span<const std::string> stack, const ContextSpec& spec) {
  if (stack.empty()) return "";
  switch (spec.kind) {
    case ContextSpec::Kind::kFunction:
      return stack[0];
    case ContextSpec::Kind::kCaller:
      return stack.size() > 1 ? stack[0] + " < " + stack[1] : stack[0];
    case ContextSpec::Kind::kFrame:
      return stack[std::min(spec.frame, stack.size() - 1)];
    case ContextSpec::Kind::kGroups:
      // The innermost listed function decides: a helper listed in a group
      // of its own stays apart from the group of the function calling it.
      for (const std::string& f : stack)
        if (auto it = spec.group_of.find(f); it != spec.group_of.end()) return it->second;
      return stack[0];
  }
  return stack[0];
}

}  // namespace tracefold::patterns
