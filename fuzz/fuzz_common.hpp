// Shared by the fuzz targets: what every reader's output must survive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "tracefold/expand.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold::fuzz {

// What a command does next with a trace it has read: write it again and
// walk a few ranks' events. The walk is capped so that a legitimately
// huge loop count (a valid 100-byte trace may describe 1e18 calls) does
// not read as a hang.
inline void exercise(const Trace& t) {
  (void)format_trace(t);
  (void)encode_compact(t);
  const int32_t ranks = t.world_size < 3 ? t.world_size : 3;
  for (int32_t r = 0; r < ranks; ++r) {
    RankIterator it(t, r);
    Event ev;
    for (int i = 0; i < 20000 && it.next(ev); ++i) {
    }
  }
}

// The body of a trace reader's target: refusing an input with a message is
// the expected outcome for most inputs; a trace the reader accepts must
// survive what a command does next.
template <class Read>
int read_and_exercise(const uint8_t* data, std::size_t size, Read read) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Trace t;
  try {
    t = read(bytes);
  } catch (const std::exception&) {
    return 0;
  }
  try {
    exercise(t);
  } catch (const std::exception&) {
  }
  return 0;
}

}  // namespace tracefold::fuzz
