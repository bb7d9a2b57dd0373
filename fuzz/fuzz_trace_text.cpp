// libFuzzer target: the text form of a trace (parse_trace).
#include <exception>
#include <string_view>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tracefold::Trace t;
  try {
    t = tracefold::parse_trace(text, "fuzz");
  } catch (const std::exception&) {
    return 0;  // refused with a message: the expected outcome for most inputs
  }
  try {
    tracefold::fuzz::exercise(t);
  } catch (const std::exception&) {
  }
  return 0;
}
