// Context modes of `tracefold patterns` (issue 32): the k-th frame and the
// user's groups of functions, as named from a call's stack of functions,
// the groups file's reader and its errors, and what the modes change in the
// per-process patterns of a helper called from two places.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/patterns.hpp"
#include "tracefold/patterns_context.hpp"

namespace tracefold::patterns {
namespace {

using Stack = std::vector<std::string>;

ContextSpec groups(const std::string& text) {
  std::istringstream in(text);
  return parse_context_groups(in, "groups.txt");
}

// The message of the error parse_context_groups throws on `text`.
std::string error_of(const std::string& text) {
  try {
    groups(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PatternsContext, FunctionCallerAndFrame) {
  const Stack s{"face", "exchange_x", "step", "main"};
  ContextSpec spec;
  EXPECT_EQ(context_name(s, spec), "face");
  spec.kind = ContextSpec::Kind::kCaller;
  EXPECT_EQ(context_name(s, spec), "face < exchange_x");
  EXPECT_EQ(context_name(Stack{"main"}, spec), "main");
  spec.kind = ContextSpec::Kind::kFrame;
  for (std::size_t k = 0; k < s.size(); ++k) {
    spec.frame = k;
    EXPECT_EQ(context_name(s, spec), s[k]) << "frame " << k;
  }
  spec.frame = 9;  // past the outermost function: the outermost
  EXPECT_EQ(context_name(s, spec), "main");
  EXPECT_EQ(context_name(Stack{}, spec), "");
}

TEST(PatternsContext, GroupsFile) {
  const ContextSpec spec = groups(
      "# the halo's helpers\n"
      "group halo\n"
      "  exchange_x\n"
      "  exchange_y   \n"
      "\n"
      "group solver\n"
      "  ns::solve<int, double>\n");
  EXPECT_EQ(spec.kind, ContextSpec::Kind::kGroups);
  EXPECT_EQ(spec.groups, (Stack{"halo", "solver"}));
  EXPECT_EQ(spec.group_of.at("exchange_y"), "halo");
  EXPECT_EQ(spec.group_of.at("ns::solve<int, double>"), "solver");
  // The innermost listed function names the context; none listed: the
  // calling function, as by default.
  EXPECT_EQ(context_name(Stack{"face", "exchange_x", "main"}, spec), "halo");
  EXPECT_EQ(context_name(Stack{"face", "exchange_y", "main"}, spec), "halo");
  EXPECT_EQ(context_name(Stack{"dot", "ns::solve<int, double>", "main"}, spec), "solver");
  EXPECT_EQ(context_name(Stack{"face", "main"}, spec), "face");
}

TEST(PatternsContext, GroupsFileErrorsNameTheLine) {
  EXPECT_EQ(error_of("exchange_x\n"),
            "groups.txt:1: function 'exchange_x' before the first 'group NAME' line");
  EXPECT_EQ(error_of("group a\n  f\ngroup\n"), "groups.txt:3: 'group' needs a name");
  EXPECT_EQ(error_of("group a\n  f\ngroup a\n  g\n"), "groups.txt:3: group 'a' is defined twice");
  EXPECT_EQ(error_of("group a\n  f\ngroup b\n  f\n"),
            "groups.txt:4: function 'f' is already in group 'a'");
  EXPECT_EQ(error_of("group a\n\ngroup b\n  g\n"), "groups.txt:1: group 'a' lists no function");
  EXPECT_EQ(error_of("group a\n  f\ngroup b\n# none\n"),
            "groups.txt:3: group 'b' lists no function");
  EXPECT_EQ(error_of("# nothing\n"), "groups.txt:1: no 'group NAME' line");
  // "groupie" is a function name, not a group line.
  EXPECT_EQ(error_of("groupie\n"),
            "groups.txt:1: function 'groupie' before the first 'group NAME' line");
}

TEST(PatternsContext, UnreadableFile) {
  EXPECT_THROW(load_context_groups("/nonexistent/groups.txt"), std::runtime_error);
}

// A helper face() called by exchange_x() (symbols a b) and by exchange_y()
// (symbols c d) every step, then an Allreduce (z) in main: by function the
// step's four face() calls make one run, a b c d, found as one pattern; the
// frame of the caller (--context-frame 1) or groups that put the callers
// apart make two runs per step and find a b and c d on their own.
TEST(PatternsContext, HelperCalledFromTwoPlaces) {
  const std::vector<Stack> stacks{{"face", "exchange_x", "main"},
                                  {"face", "exchange_x", "main"},
                                  {"face", "exchange_y", "main"},
                                  {"face", "exchange_y", "main"},
                                  {"main"}};
  const std::vector<Symbol> step{'a', 'b', 'c', 'd', 'z'};
  auto patterns_by = [&](const ContextSpec& spec) {
    std::vector<Symbol> events;
    std::vector<uint32_t> context;
    std::vector<std::string> names;
    for (int s = 0; s < 3; ++s)
      for (std::size_t i = 0; i < step.size(); ++i) {
        const std::string name = context_name(stacks[i], spec);
        auto it = std::find(names.begin(), names.end(), name);
        if (it == names.end()) it = names.insert(names.end(), name);
        events.push_back(step[i]);
        context.push_back(static_cast<uint32_t>(it - names.begin()));
      }
    std::vector<std::string> found;
    for (const ProcessPattern& p : process_patterns(events, context))
      found.push_back(std::string(p.symbols.begin(), p.symbols.end()) + " in " +
                      names[context[p.positions[0]]]);
    std::sort(found.begin(), found.end());
    return found;
  };
  ContextSpec spec;
  EXPECT_EQ(patterns_by(spec), (Stack{"abcd in face"}));
  spec.kind = ContextSpec::Kind::kFrame;
  spec.frame = 1;
  EXPECT_EQ(patterns_by(spec), (Stack{"ab in exchange_x", "cd in exchange_y"}));
  spec.kind = ContextSpec::Kind::kCaller;
  EXPECT_EQ(patterns_by(spec), (Stack{"ab in face < exchange_x", "cd in face < exchange_y"}));
  EXPECT_EQ(patterns_by(groups("group x\n exchange_x\ngroup y\n exchange_y\n")),
            (Stack{"ab in x", "cd in y"}));
  // One group for both callers joins them again.
  EXPECT_EQ(patterns_by(groups("group halo\n exchange_x\n exchange_y\n")), (Stack{"abcd in halo"}));
}

}  // namespace
}  // namespace tracefold::patterns
