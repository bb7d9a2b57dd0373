// libFuzzer target: the compact form of a trace (decode_compact).
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return tracefold::fuzz::read_and_exercise(
      data, size, [](std::string_view bytes) { return tracefold::decode_compact(bytes, "fuzz"); });
}
