// drop_unused(): the file-scope helpers a generated program does not use
// go, with what only they used and the comments just before them.
#include <gtest/gtest.h>

#include "gen.hpp"

using tracefold::benchgen::drop_unused;

namespace {

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST(BenchPrune, DropsUnreferencedHelpersToAFixedPoint) {
  const std::string c =
      "#define HELPER static\n"
      "static double clock_cost;\n"
      "/* Spins; uses the clock cost. */\n"
      "HELPER void spin(double ns) {\n  (void)ns;\n  clock_cost += 1;\n}\n"
      "/* Only the unused helper reads this table. */\n"
      "static const long table[3] = {1,\n    2, 3};\n"
      "HELPER long unused(void) {\n  return table[0]; /* {not a brace} */\n}\n"
      "static MPI_Datatype derived(long id);\n"
      "HELPER MPI_Datatype derived(long id) {\n  return derived(id - 1);\n}\n"
      "HELPER int rank, size;\n"
      "static const char *const names[2] = {\"unused\", \"\"};\n"
      "int main(void) {\n  spin(1);\n  return names[0][0];\n}\n";
  const std::string out = drop_unused(c);
  EXPECT_TRUE(has(out, "HELPER void spin("));
  EXPECT_TRUE(has(out, "/* Spins; uses the clock cost. */"));
  EXPECT_TRUE(has(out, "static double clock_cost;"));  // used by a kept helper
  EXPECT_TRUE(has(out, "names[2]"));
  EXPECT_FALSE(has(out, "unused(void)"));
  EXPECT_FALSE(has(out, "table[3]"));  // only the dropped helper used it
  EXPECT_FALSE(has(out, "Only the unused helper"));
  // A function that only calls itself, declared before it is defined.
  EXPECT_FALSE(has(out, "derived"));
  // Several names in one declaration are kept (one of them may be used).
  EXPECT_TRUE(has(out, "HELPER int rank, size;"));
  EXPECT_TRUE(has(out, "int main(void) {\n  spin(1);"));
}

TEST(BenchPrune, KeepsAProgramThatUsesEverything) {
  const std::string c =
      "static long n_calls;\nHELPER int val(long v) {\n  return (int)v;\n}\n"
      "int main(void) {\n  ++n_calls;\n  return val(n_calls);\n}\n";
  EXPECT_EQ(drop_unused(c), c);
}
