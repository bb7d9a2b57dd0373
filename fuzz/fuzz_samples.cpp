// libFuzzer target: one rank's samples file (parse_samples), then the
// context paths a reader of samples walks.
#include <exception>

#include "tracefold/samples.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const tracefold::RankSamples s = tracefold::parse_samples({data, size}, "fuzz");
    for (const tracefold::Sample& x : s.samples) {
      const auto path = s.path(x.context);
      if (path.size() != s.depth(x.context) || x.lca_depth > path.size()) __builtin_trap();
    }
  } catch (const std::exception&) {
  }
  return 0;
}
