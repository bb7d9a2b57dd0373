#pragma once
// Where the unit tests find their data files (tests/data, examples/).
//
// The path is compiled into one file only (source_dir.cpp): as a compile
// definition of every unit-test file it would make each checkout's command
// lines differ, and ccache could not share a single unit-test object between
// two worktrees of the project.
namespace tracefold::testing {
const char* source_dir();
}  // namespace tracefold::testing

#define TRACEFOLD_SOURCE_DIR ::tracefold::testing::source_dir()
