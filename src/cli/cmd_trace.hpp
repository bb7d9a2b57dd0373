// The commands on whole trace files (cmd_trace.cpp): fold, merge,
// convert, expand, print, stats. main declares their options and runs them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli.hpp"
#include "tracefold/export.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::cli {

// How fold, merge and convert write: the compact form unless --text.
struct WriteOptions {
  bool text = false;
  bool no_timing = false;
  TraceEncoding encoding() const { return text ? TraceEncoding::kText : TraceEncoding::kCompact; }
};

int cmd_fold(const std::string& dir, const std::string& out, const FoldOptions& opts,
             const WriteOptions& w);
int cmd_merge(const std::vector<std::string>& inputs, const std::string& out, const WriteOptions& w,
              std::size_t histogram_threshold);
int cmd_expand(const std::string& path, int32_t rank, int32_t thread, bool timing);
/// `-o -`: the text form to standard output, for reading or piping.
int cmd_convert(const std::string& in, const std::string& out, const WriteOptions& w);
int cmd_print(const std::string& path, const SiteOptions& sites, bool call_paths);
int cmd_stats(const std::string& path, bool json, const SiteOptions& sites);

}  // namespace tracefold::cli
