// Sizes of one trace in every encoding considered for format version 3, so
// the choice can be measured (docs/benchmarks.md):
//   format_sizes TRACE...
// prints per file and per timing mode (full, no timing): the text form, the
// text with zstd -19, the compact body without compression, and the
// compact form as written (body with zstd -19), plus the compact body at
// zstd level 3 to show what the level buys.
#include <cstdio>
#include <exception>

#include "tracefold/trace_io.hpp"

using namespace tracefold;

int main(int argc, char** argv) {
  std::printf("%-40s %-9s %9s %9s %9s %9s %9s\n", "trace", "timing", "text", "text.zst", "body",
              "body.zst3", "compact");
  for (int i = 1; i < argc; ++i) {
    try {
      Trace t = load_trace(argv[i]);
      for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) drop_timing(t);
        const std::string text = format_trace(t);
        const std::string body = encode_compact_body(t);
        std::printf("%-40s %-9s %9zu %9zu %9zu %9zu %9zu\n", argv[i], pass ? "none" : "full",
                    text.size(), zstd_compress(text).size(), body.size(),
                    zstd_compress(body, 3).size(), encode_compact(t).size());
      }
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "format_sizes: %s\n", ex.what());
      return 2;
    }
  }
  return 0;
}
