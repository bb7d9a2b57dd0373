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
  std::printf("%-40s %-7s %8s %9s %8s %9s %8s %6s %9s %9s\n", "trace", "timing", "text", "text.zst",
              "body", "body.zst3", "compact", "sites", "sites.txt", "sites.bin");
  for (int i = 1; i < argc; ++i) {
    try {
      Trace t = load_trace(argv[i]);
      for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) drop_timing(t);
        const std::string text = format_trace(t);
        const std::string body = encode_compact_body(t);
        std::size_t site_text = 0;
        for (SiteId s = 0; s < t.sites.size(); ++s)
          site_text +=
              ("site " + std::to_string(s) + " " + SiteTable::format(t.sites.at(s)) + "\n").size();
        Trace only_sites = t;
        only_sites.nodes.clear();
        Trace none = only_sites;
        none.sites = SiteTable{};
        const std::size_t site_bin =
            encode_compact_body(only_sites).size() - encode_compact_body(none).size();
        std::printf("%-40s %-7s %8zu %9zu %8zu %9zu %8zu %6zu %9zu %9zu\n", argv[i],
                    pass ? "none" : "full", text.size(), zstd_compress(text).size(), body.size(),
                    zstd_compress(body, 3).size(), encode_compact(t).size(), t.sites.size(),
                    site_text, site_bin);
      }
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "format_sizes: %s\n", ex.what());
      return 2;
    }
  }
  return 0;
}
