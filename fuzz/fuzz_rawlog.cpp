// libFuzzer target: one rank's raw log (parse_raw_log), then folding it as
// `tracefold fold` does.
#include <exception>
#include <string_view>

#include "fuzz_common.hpp"
#include "tracefold/rawlog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tracefold::RawLog log;
  try {
    log = tracefold::parse_raw_log(text, "fuzz");
  } catch (const std::exception&) {
    return 0;
  }
  try {
    tracefold::fuzz::exercise(tracefold::fold_log(log));
  } catch (const std::exception&) {
  }
  return 0;
}
