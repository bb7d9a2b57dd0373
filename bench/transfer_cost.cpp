// What moving a trace costs in one round of the merge at MPI_Finalize (the
// sender's encoding and the receiver's decoding), in each form a round
// could use, and what writing and reading its file costs:
//   transfer_cost text|transfer|compact|final TRACE...
// text: format_trace/parse_trace; transfer: encode_compact_transfer (what
// the merge sends); compact: encode_compact, the file form (derived fields,
// zstd by size); final: the file form as the merge at MPI_Finalize writes
// it (DerivedFields::kSameValues). Prints each trace's bytes in the form
// and checks that it reads back to the same trace: the same text, or for
// `final` the same text once every field's values are folded as pushing
// them folds them. Instructions of the round trip
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
  else if (std::strcmp(form, "final") == 0)
    wire = encode_compact(t, kCompactLevelBySize, DerivedFields::kSameValues);
  else
    wire = encode_compact(t);
  bytes = wire.size();
  return decode_trace(wire, "moved trace");
}

// The trace with every field's values folded as pushes fold them.
Trace pushed_fields(Trace t) {
  for (Node& n : t.nodes)
    for (auto& [id, e] : n.fields)
      for (ElasticEntry& en : e.entries()) {
        if (en.values.is_histogram()) continue;
        ValueSeq again;
        for (ValueSeq::Cursor c = en.values.cursor(); !c.done();) again.push_back(c.next());
        en.values = std::move(again);
      }
  return t;
}

bool known_form(const char* f) {
  for (const char* k : {"text", "transfer", "compact", "final"})
    if (std::strcmp(f, k) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || !known_form(argv[1])) {
    std::fprintf(stderr, "usage: transfer_cost text|transfer|compact|final TRACE...\n");
    return 2;
  }
  int status = 0;
  for (int i = 2; i < argc; ++i) {
    try {
      const Trace t = load_trace(argv[i]);
      std::size_t bytes = 0;
      const Trace back = move_trace(t, argv[1], bytes);
      const bool same = std::strcmp(argv[1], "final") == 0
                            ? format_trace(pushed_fields(back)) == format_trace(pushed_fields(t))
                            : format_trace(back) == format_trace(t);
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
