// libFuzzer target: merging a directory of partial traces (`tracefold merge
// TRACE.partial`): the input is split at each line "--8<--" into files, each
// read in any form (decode_trace) and merged in order.
#include <exception>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "tracefold/merge.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kCut = "--8<--\n";
  std::vector<std::string_view> files;
  while (files.size() < 8) {
    const auto at = rest.find(kCut);
    files.push_back(rest.substr(0, at));
    if (at == std::string_view::npos) break;
    rest.remove_prefix(at + kCut.size());
  }
  try {
    std::vector<tracefold::Trace> traces;
    for (std::size_t i = 0; i < files.size(); ++i)
      traces.push_back(tracefold::decode_trace(files[i], "rank-" + std::to_string(i) + ".tf"));
    tracefold::Trace acc = std::move(traces[0]);
    for (std::size_t i = 1; i < traces.size(); ++i) acc = tracefold::merge_traces(acc, traces[i]);
    tracefold::canonicalize_sites(acc);
    tracefold::fuzz::exercise(acc);
  } catch (const std::exception&) {
  }
  return 0;
}
