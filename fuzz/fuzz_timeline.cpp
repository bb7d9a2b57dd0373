// libFuzzer target: one rank's timeline file (parse_timeline), then the
// conversion to global time that `tracefold export` does.
#include <exception>

#include "tracefold/timeline_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  tracefold::RankTimelineFile f;
  try {
    f = tracefold::parse_timeline({data, size}, "fuzz");
    for (const auto& r : f.records) {
      (void)f.to_global(r.enter_ns);
      (void)f.to_global(r.exit_ns);
    }
  } catch (const std::exception&) {
  }
  return 0;
}
