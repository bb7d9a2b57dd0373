// `tracefold diff` (cmd_diff.cpp). main runs it itself: its exit status 1
// ("different") is not an error.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "tracefold/analysis_basic.hpp"

struct DiffArgs {
  std::string a, b;
  tracefold::DiffOptions options;
  /// Compare the resolved views (bench_passes.hpp resolved_stream).
  bool resolved = false;
};

/// Declares `diff` and its options on `app`, filling `args`.
CLI::App* add_diff_command(CLI::App& app, DiffArgs& args);
/// 0 same, 1 different; throws on unreadable input.
int run_diff(const DiffArgs& args);
