// Contexts of `tracefold patterns` (docs/patterns.md, "Contexts"): how the
// functions on an MPI call's stack name the context a pattern lies in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tracefold::patterns {

/// How a call's context is named from its stack's functions.
struct ContextSpec {
  enum class Kind : uint8_t {
    kFunction,  ///< the function that made the call (the default)
    kCaller,    ///< it and its caller: `face < exchange_x`
    kFrame,     ///< the function `frame` levels out (0: the calling function)
    kGroups,    ///< the user's group of the innermost function a group lists
  };
  Kind kind = Kind::kFunction;
  std::size_t frame = 0;
  /// kGroups: each listed function's group, and the groups in file order.
  std::map<std::string, std::string> group_of;
  std::vector<std::string> groups;
  /// Where kGroups came from (the listing's header names it).
  std::string file;
};

/// Reads a context-groups file (docs/patterns.md, "Contexts"): `group NAME`
/// starts a group, every other line that is not blank or a `#` comment is
/// one function of the current group (blanks around it dropped, so C++
/// names with blanks inside stay whole). Each group needs a function, a
/// name and a function are listed once. Throws std::runtime_error naming
/// `name` and the line (`groups.txt:3: ...`) on anything else.
ContextSpec parse_context_groups(std::istream& in, const std::string& name);
/// parse_context_groups of the file at `path`; an unreadable file throws too.
ContextSpec load_context_groups(const std::string& path);

/// The context of a call whose stack holds `stack`, the named functions
/// innermost first (stack[0] made the MPI call, inlined levels included
/// as functions of their own). kFrame past the outermost function takes
/// the outermost; kCaller without a caller is the function alone; kGroups
/// with no listed function on the stack is the function, as by default.
/// "" for an empty stack (the caller names the context by the call site).
std::string context_name(std::span<const std::string> stack, const ContextSpec& spec);

}  // namespace tracefold::patterns
