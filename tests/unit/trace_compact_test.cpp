// The compact trace form (format version 3): round trips with the text form,
// determinism, the older text versions still read, timing dropped, and
// corrupt input refused with the file and the byte named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "sample_traces.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

namespace fs = std::filesystem;
using testing::figure52_trace;
using testing::make_event;
using testing::make_sites;
using testing::rich_trace;
using testing::sample_traces;
using testing::Stencil;

// What a compact file with this body looks like (for bodies made by hand).
std::string wrap_body(const std::string& body) {
  return std::string("\x89TFC\x03", 5) + zstd_compress(body);
}

std::string body_of(const Trace& t) {
  return encode_compact_body(t);
}

// decode_compact must throw a TraceFormatError naming `source`; returns its
// message ("" after a failure).
std::string compact_error(const std::string& bytes, const std::string& source) {
  try {
    decode_compact(bytes, source);
    ADD_FAILURE() << source << ": decoded without an error";
  } catch (const TraceFormatError& ex) {
    const std::string what = ex.what();
    EXPECT_EQ(what.rfind(source + ": ", 0), 0u) << what;
    EXPECT_NE(what.find("byte "), std::string::npos) << what;
    EXPECT_EQ(ex.source(), source);
    return what;
  } catch (const std::exception& ex) {
    ADD_FAILURE() << source << ": not a TraceFormatError: " << ex.what();
  }
  return "";
}

TEST(TraceCompact, RoundTripKeepsEveryPartOfTheTrace) {
  const auto traces = sample_traces();
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const std::string text = format_trace(traces[i]);
    const std::string bytes = encode_compact(traces[i]);
    const Trace back = decode_compact(bytes, "case " + std::to_string(i));
    EXPECT_EQ(format_trace(back), text) << "case " << i;
    // Same trace, same bytes: the reader rebuilds what the writer saw.
    EXPECT_EQ(encode_compact(back), bytes) << "case " << i;
    // And through the text form.
    EXPECT_EQ(encode_compact(parse_trace(text)), bytes) << "case " << i;
  }
  // The samples cover what the format has: statistics, lossy histograms,
  // sentinels, extreme values and a non-ascending communicator.
  EXPECT_NE(format_trace(traces[0]).find("    stat cycles "), std::string::npos);
  EXPECT_NE(format_trace(traces[0]).find(" order "), std::string::npos);
  EXPECT_NE(format_trace(traces.back()).find("hist("), std::string::npos);
  EXPECT_NE(format_trace(traces.back()).find("9223372036854775807"), std::string::npos)
      << format_trace(traces.back());
}

TEST(TraceCompact, IsDeterministicAndSmallerThanText) {
  const Stencil s{.side = 4, .steps = 9};
  const std::string a = encode_compact(reduce_traces(s.fold_all()));
  const std::string b = encode_compact(reduce_traces(s.fold_all()));
  EXPECT_EQ(a, b);
  const std::string text = format_trace(reduce_traces(s.fold_all()));
  EXPECT_LT(a.size(), zstd_compress(text).size());
  EXPECT_TRUE(is_compact(a));
  EXPECT_FALSE(is_compact(text));
}

TEST(TraceCompact, FramesAreStoredOnce) {
  // Forty sites that share five of their six frames: the body grows by
  // about one frame per site, not six.
  SiteTable many;
  for (int s = 0; s < 40; ++s) {
    CallSite cs;
    cs.frames.push_back(Frame{"libapp.so", 0x1000u + 16u * static_cast<unsigned>(s)});
    for (int k = 0; k < 5; ++k)
      cs.frames.push_back(Frame{"libapp.so", 0x9000u + 0x100u * static_cast<unsigned>(k)});
    many.intern(cs);
  }
  Trace t;
  t.world_size = 1;
  t.comms.define_world(1);
  t.sites = many;
  const std::size_t body = body_of(t).size();
  EXPECT_LT(body, 40u * 6u * 2u) << body;
  const Trace back = decode_compact(encode_compact(t), "sites");
  EXPECT_EQ(back.sites.all(), t.sites.all());
}

TEST(TraceCompact, OlderVersionsStillRead) {
  const fs::path dir = fs::path(TRACEFOLD_SOURCE_DIR) / "examples" / "pingpong-partial";
  for (const char* name : {"rank-0.trace", "rank-1.trace"}) {
    const Trace v1 = load_trace(dir / name);
    const std::string text = format_trace(v1);
    EXPECT_EQ(text.rfind("tracefold-trace 2\n", 0), 0u);
    EXPECT_EQ(format_trace(decode_compact(encode_compact(v1), name)), text);
    // decode_trace tells the forms apart: v1 text, v2 text, compact.
    std::ifstream in(dir / name, std::ios::binary);
    const std::string v1_bytes(std::istreambuf_iterator<char>(in), {});
    ASSERT_EQ(v1_bytes.rfind("tracefold-trace 1\n", 0), 0u);
    EXPECT_EQ(format_trace(decode_trace(v1_bytes, name)), text);
    EXPECT_EQ(format_trace(decode_trace(text, name)), text);
    EXPECT_EQ(format_trace(decode_trace(encode_compact(v1), name)), text);
    EXPECT_EQ(format_trace(decode_trace(zstd_compress(text), name)), text);
  }
}

TEST(TraceCompact, DropTimingKeepsParametersAndStatistics) {
  Trace t = rich_trace();
  const std::size_t before = encode_compact(t).size();
  drop_timing(t);
  const std::string text = format_trace(t);
  // Only the timing block that carries user statistics stays, empty.
  EXPECT_NE(text.find("    stat cycles "), std::string::npos);
  EXPECT_NE(text.find("    compute n=0\n"), std::string::npos);
  EXPECT_EQ(text.find("    compute n=1"), std::string::npos);
  std::size_t blocks = 0;
  for (auto p = text.find("  time pred="); p != std::string::npos;
       p = text.find("  time pred=", p + 1))
    ++blocks;
  EXPECT_EQ(blocks, 1u);
  EXPECT_LT(encode_compact(t).size(), before);
  // The parameters are untouched: every rank expands to the same calls.
  const Trace full = rich_trace();
  for (int32_t r = 0; r < 9; ++r) {
    RankIterator a(full, r), b(t, r);
    Event ea, eb;
    while (true) {
      const bool more = a.next(ea);
      ASSERT_EQ(more, b.next(eb)) << "rank " << r;
      if (!more) break;
      EXPECT_TRUE(ea.same_call(eb)) << "rank " << r;
    }
  }
}

// ------------------------------------------------------------ corrupt input

TEST(TraceCompact, EveryTruncationOfTheFileIsRefused) {
  const std::string bytes = encode_compact(figure52_trace());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::string what = compact_error(bytes.substr(0, n), "cut.tf");
    if (n >= 5) {
      EXPECT_NE(what.find("truncated"), std::string::npos) << n << ": " << what;
    }
  }
}

TEST(TraceCompact, EveryTruncationOfTheBodyIsRefused) {
  // Cut inside the body, then compressed whole: the reader's own checks
  // (counts, ends of numbers), not zstd's, must catch it.
  const std::string body = body_of(rich_trace());
  for (std::size_t n = 0; n < body.size(); ++n) {
    const std::string what = compact_error(wrap_body(body.substr(0, n)), "body.tf");
    EXPECT_NE(what.find("body byte "), std::string::npos) << n << ": " << what;
  }
  // Trailing bytes are refused too.
  EXPECT_NE(compact_error(wrap_body(body + '\0'), "long.tf").find("after the last node"),
            std::string::npos);
  std::string file = encode_compact(rich_trace());
  EXPECT_NE(compact_error(file + "x", "tail.tf").find("after the compressed body"),
            std::string::npos);
}

TEST(TraceCompact, WrongMagicAndVersionAreNamed) {
  std::string bytes = encode_compact(figure52_trace());
  std::string bad = bytes;
  bad[3] = 'X';
  EXPECT_NE(compact_error(bad, "magic.tf").find("not a compact trace"), std::string::npos);
  bad = bytes;
  bad[4] = 4;
  const std::string what = compact_error(bad, "v4.tf");
  EXPECT_NE(what.find("v4.tf: byte 4: unsupported compact format version 4"), std::string::npos)
      << what;
  // decode_trace refuses binary that is none of the forms, without quoting it.
  try {
    decode_trace(std::string("\x7f"
                             "ELF\x02\x01",
                             6),
                 "a.out");
    FAIL() << "expected an error";
  } catch (const TraceFormatError& ex) {
    EXPECT_NE(std::string(ex.what()).find("a.out: byte 0: not a tracefold trace"),
              std::string::npos)
        << ex.what();
  }
}

// A body that declares `count` items of the first table after the world size
// and the lossy note.
std::string body_declaring(uint64_t count) {
  std::string body = "\x04";  // world 4
  body += '\0';               // lossy note ""
  for (; count >= 0x80; count >>= 7) body += static_cast<char>((count & 0x7f) | 0x80);
  body += static_cast<char>(count);
  return body + "tail";
}

TEST(TraceCompact, HugeDeclaredSizesAreRefusedBeforeAllocating) {
  for (uint64_t n : {uint64_t{5}, uint64_t{1} << 40, ~uint64_t{0}}) {
    const std::string what = compact_error(wrap_body(body_declaring(n)), "huge.tf");
    EXPECT_NE(what.find("the number of operations is " + std::to_string(n) + " but only 4 bytes"),
              std::string::npos)
        << what;
  }
  // A number longer than 64 bits.
  std::string body = "\x04";
  body += std::string(11, '\xff');
  EXPECT_NE(compact_error(wrap_body(body), "long.tf").find("longer than 10 bytes"),
            std::string::npos);
  // A world beyond 32 bits.
  EXPECT_NE(compact_error(wrap_body(std::string("\x80\x80\x80\x80\x10", 5)), "world.tf")
                .find("the world size is too large"),
            std::string::npos);
}

TEST(TraceCompact, CorruptBodiesNeverCrashOrEscapeAsOtherErrors) {
  const std::string body = body_of(rich_trace());
  std::mt19937 rng(13);
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string b = body;
    const int flips = 1 + round % 3;
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] ^= static_cast<char>(1u << (rng() % 8));
    try {
      const Trace t = decode_compact(wrap_body(b), "fuzz.tf");
      // What decodes must write back and read again the same.
      EXPECT_EQ(format_trace(decode_compact(encode_compact(t), "again")), format_trace(t));
    } catch (const TraceFormatError&) {
      ++refused;
    } catch (const std::exception& ex) {
      ADD_FAILURE() << "round " << round << ": " << ex.what();
    }
  }
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace tracefold
