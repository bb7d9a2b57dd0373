// What moving a trace costs in one round of the merge at MPI_Finalize (the
// sender's encoding and the receiver's decoding), in each form a round
// could use:
//   transfer_cost text|transfer|compact TRACE...
// text: format_trace/parse_trace; transfer: encode_compact_transfer (what
// the merge sends); compact: encode_compact, the file form (derived fields,
// zstd by size). Prints each trace's bytes in the form and checks that it
// reads back to the same trace (same text). Instructions of the round trip
// alone: scripts/bench-transfer.sh runs this under callgrind, collecting
// inside move_trace only.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "tracefold/trace_io.hpp"
#include "tracefold/trace_level.hpp"

using namespace tracefold;

namespace {

// Not inlined: callgrind's --toggle-collect names it.
[[gnu::noinline]] Trace move_trace(const Trace& t, const char* form, std::size_t& bytes) {
  std::string wire;
  if (std::strcmp(form, "text") == 0)
    wire = format_trace(t);
  else if (std::strcmp(form, "transfer") == 0)
    wire = encode_compact_transfer(t);
  else
    wire = encode_compact(t);
  bytes = wire.size();
  return decode_trace(wire, "moved trace");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || (std::strcmp(argv[1], "text") != 0 && std::strcmp(argv[1], "transfer") != 0 &&
                   std::strcmp(argv[1], "compact") != 0)) {
    std::fprintf(stderr, "usage: transfer_cost text|transfer|compact TRACE...\n");
    return 2;
  }
  int status = 0;
  for (int i = 2; i < argc; ++i) {
    try {
      const Trace t = load_trace(argv[i]);
      std::size_t bytes = 0;
      const Trace back = move_trace(t, argv[1], bytes);
      const bool same = format_trace(back) == format_trace(t);
      std::printf("%s %s %zu bytes %s\n", argv[i], argv[1], bytes,
                  same ? "reads back the same" : "READS BACK DIFFERENT");
      if (!same) status = 1;
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "transfer_cost: %s\n", ex.what());
      status = 1;
    }
  }
  return status;
}
