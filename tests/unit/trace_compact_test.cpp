// The compact trace form (format version 7): round trips with the text form,
// determinism, the older text and compact versions still read, histograms
// kept exactly in their columns, timing dropped, and corrupt input refused
// with the file and the byte named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "formats/trace_links.hpp"
#include "sample_traces.hpp"
#include "source_dir.hpp"
#include "trace_compact_codec.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

// The compact version a trace is written in: 9 when it has derived links.
int written_version(const Trace& t) {
  return links_form::has_derivable(t) ? links_form::kCompactVersion
                                      : Trace::kCompactVersionSingleThread;
}

namespace fs = std::filesystem;
using testing::figure52_trace;
using testing::make_event;
using testing::make_sites;
using testing::rich_trace;
using testing::sample_traces;
using testing::Stencil;

// What a compact file with this body looks like (for bodies made by hand).
std::string wrap_body(const std::string& body, int version = Trace::kCompactVersionSingleThread) {
  return std::string("\x89TFC", 4) + static_cast<char>(version) + zstd_compress(body);
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

// A value histogram whose values are seen once each (`hist(_:3 1:1 2:1
// 5:1)`): each value is its own run, never joined into a stretch as side by
// side literal runs of an ordinary sequence are (that wrote a file whose
// reader refused it: "histogram values must ascend").
TEST(TraceCompact, HistogramValuesSeenOnceRoundTrip) {
  Trace t = sample_traces().back();
  ValueSeq values;
  for (int64_t v : {kAbsent, int64_t{1}, kAbsent, int64_t{2}, kAbsent, int64_t{5}})
    values.push_back(v);
  values.make_histogram();
  bool replaced = false;
  for (Node& n : t.nodes) {
    for (auto& [f, el] : n.fields) {
      if (replaced || el.entries().size() != 1 || el.entries()[0].values.size() != 6) continue;
      el.entries()[0].values = values;
      replaced = true;
    }
  }
  if (!replaced) {
    // No field of six values in the sample: give the first node's first
    // field that shape (its node then runs six times).
    Node& n = t.nodes.front();
    ASSERT_FALSE(n.fields.empty());
    n.count = Elastic::of(ValueSeq::repeated(1, 6), n.ranks.first());
    n.fields[0].second = Elastic::of(values, n.ranks.first());
  }
  const std::string text = format_trace(t);
  ASSERT_NE(text.find("hist(_:3 1:1 2:1 5:1)"), std::string::npos) << text;
  EXPECT_EQ(format_trace(decode_compact(encode_compact(t), "hist")), text);
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

// Files written by the version-3 writer (tests/data/compact-v3, made with
// tracefold 0.1.0 of 2026-11-24: the sample traces of sample_traces.hpp,
// examples/halo-rawlog folded, and a recorded 4-rank stencil), each next
// to its text form written by the same build.
TEST(TraceCompact, Version3FilesStillRead) {
  const fs::path dir = fs::path(TRACEFOLD_SOURCE_DIR) / "tests" / "data" / "compact-v3";
  int files = 0, timed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".v3.tf")) continue;
    ++files;
    const std::string v3 = read_file_text(entry.path());
    ASSERT_EQ(v3.substr(0, 5), std::string("\x89TFC\x03", 5)) << name;
    const std::string text = read_file_text(dir / (name.substr(0, name.size() - 6) + ".trace"));
    const Trace t = load_trace(entry.path());
    EXPECT_EQ(format_trace(t), format_trace(parse_trace(text))) << name;
    // Rewritten, it is the current version, smaller when there are
    // histograms, and the same trace.
    const std::string v4 = encode_compact(t);
    EXPECT_EQ(v4[4], written_version(t)) << name;
    EXPECT_EQ(format_trace(decode_compact(v4, name)), format_trace(parse_trace(text))) << name;
    if (text.find(" bins=") != std::string::npos) {
      EXPECT_LT(v4.size(), v3.size()) << name;
      ++timed;
    }
  }
  EXPECT_EQ(files, 7);
  EXPECT_EQ(timed, 4);
}

// Files written by the version-4 writer (tests/data/compact-v4, made with
// tracefold of 2026-11-24 from the text files of compact-v3, and two from
// examples/ring-rawlog and examples/stencil2d-rawlog), each next to
// its text form written by the same build: still read, and rewritten in
// version 5 they are the same trace.
TEST(TraceCompact, Version4FilesStillRead) {
  const fs::path dir = fs::path(TRACEFOLD_SOURCE_DIR) / "tests" / "data" / "compact-v4";
  int files = 0, timed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".v4.tf")) continue;
    ++files;
    const std::string v4 = read_file_text(entry.path());
    ASSERT_EQ(v4.substr(0, 5), std::string("\x89TFC\x04", 5)) << name;
    const std::string text = read_file_text(dir / (name.substr(0, name.size() - 6) + ".trace"));
    const Trace t = load_trace(entry.path());
    EXPECT_EQ(format_trace(t), format_trace(parse_trace(text))) << name;
    const std::string now = encode_compact(t);
    EXPECT_EQ(now[4], written_version(t)) << name;
    EXPECT_EQ(format_trace(decode_compact(now, name)), format_trace(parse_trace(text))) << name;
    timed += text.find(" bins=") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(files, 9);
  EXPECT_EQ(timed, 6);
}

// Files written by the version-5 writer (tests/data/compact-v5, made with
// tracefold of 2026-11-25 from the text files of compact-v4, and a
// recorded sym_c trace with its module table and embedded symbols), each
// next to its text form: still read, and rewritten in version 6 the same
// trace in fewer bytes (the dictionary, and build-ids as bytes).
TEST(TraceCompact, Version5FilesStillRead) {
  const fs::path dir = fs::path(TRACEFOLD_SOURCE_DIR) / "tests" / "data" / "compact-v5";
  int files = 0, with_modules = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".v5.tf")) continue;
    ++files;
    const std::string v5 = read_file_text(entry.path());
    ASSERT_EQ(v5.substr(0, 5), std::string("\x89TFC\x05", 5)) << name;
    const std::string text = read_file_text(dir / (name.substr(0, name.size() - 6) + ".trace"));
    const Trace t = load_trace(entry.path());
    EXPECT_EQ(format_trace(t), format_trace(parse_trace(text))) << name;
    const std::string v6 = encode_compact(t);
    EXPECT_EQ(v6[4], written_version(t)) << name;
    EXPECT_EQ(format_trace(decode_compact(v6, name)), format_trace(parse_trace(text))) << name;
    EXPECT_LT(v6.size(), v5.size()) << name;
    if (!t.symtab.modules.empty()) {
      ++with_modules;
      EXPECT_FALSE(t.symtab.symbols.empty()) << name;
      EXPECT_LT(v6.size() + 60, v5.size()) << name;
    }
  }
  EXPECT_EQ(files, 10);
  EXPECT_EQ(with_modules, 1);
}

// The dictionary of version 6 is part of the format: files written with it
// are unreadable with any other bytes.
TEST(TraceCompact, Version6DictionaryIsFrozen) {
  const std::string_view d = compact::dictionary();
  EXPECT_EQ(d.size(), 3455u);
  uint64_t fnv1a = 0xcbf29ce484222325ull;  // (its SHA-256 is in docs/format.md)
  for (unsigned char c : d) fnv1a = (fnv1a ^ c) * 0x100000001b3ull;
  EXPECT_EQ(fnv1a, 0x0170dd4cd2b7e15full);
}

// Build-ids the byte form cannot give back as written (upper case, half a
// byte) stay strings; lower-case ones become bytes. Either way they come
// back exactly, next to modules without one.
TEST(TraceCompact, BuildIdsOfEveryShapeComeBack) {
  const Trace t = figure52_trace();
  for (const char* id :
       {"", "00ff10", "ABCDEF", "abc", "0123456789abcdef0123456789abcdef01234567"}) {
    SymbolTables tables;
    Module m;
    m.name = "app";
    m.path = "/opt/app";
    m.build_id = id;
    tables.modules.emplace(m.name, m);
    Module libc;
    libc.name = "libc.so.6";
    libc.path = "";
    tables.modules.emplace(libc.name, libc);
    Trace u = t;
    u.symtab = tables;
    const Trace back = decode_compact(encode_compact(u), "ids.tf");
    ASSERT_EQ(back.symtab.modules.size(), 2u) << id;
    EXPECT_EQ(back.symtab.modules.at("app").build_id, id);
    EXPECT_EQ(back.symtab.modules.at("app").path, "/opt/app");
    EXPECT_EQ(back.symtab.modules.at("libc.so.6").build_id, "");
  }
}

// Histograms as add and merge make them, with extreme values, spans and
// bins at both ends of the range, and histograms the short form cannot
// hold (valid for the reader, but with totals that do not follow from the
// bins): all come back exactly.
TEST(TraceCompact, HistogramColumnsKeepEveryHistogramExactly) {
  std::mt19937_64 rng(7);
  std::vector<Histogram> hs;
  for (int k = 0; k < 300; ++k) {
    Histogram h;
    // Sums stay within int64: up to 500 values below 2^54, or one near 2^63.
    const int samples = k % 50 == 0 ? 1 : 1 + static_cast<int>(rng() % (k % 3 == 0 ? 3 : 500));
    const int top = 1 + static_cast<int>(rng() % 54);
    for (int i = 0; i < samples; ++i) {
      const uint64_t bits = rng() % static_cast<uint64_t>(top);
      const int64_t v =
          static_cast<int64_t>((uint64_t{1} << bits) | (rng() & ((uint64_t{1} << bits) - 1)));
      h.add(k % 50 == 0 ? std::numeric_limits<int64_t>::max() - k : v,
            static_cast<int32_t>(rng() % 9));
    }
    hs.push_back(h);
  }
  // Irregular: a sum that is not the bins' total, a minimum below the
  // first bin's, a bin of one sample whose maximum is not its minimum.
  Histogram::Parts odd = hs[1].parts();
  odd.sum += 1;
  hs.push_back(Histogram::from_parts(odd));
  odd = hs[1].parts();
  odd.min -= 1;
  hs.push_back(Histogram::from_parts(odd));
  Histogram::Bin one{.index = 4, .count = 1, .min = 16, .max = 17, .sum = 16};
  hs.push_back(Histogram::from_parts(Histogram::Parts{
      .count = 1, .sum = 16, .min = 16, .max = 17, .min_rank = 2, .max_rank = 3, .bins = {one}}));
  hs.push_back(Histogram{});  // n=0 next to the last odd one
  Trace t = figure52_trace();
  t.sites = make_sites(hs.size());  // the first sites as before, and one predecessor each
  ASSERT_FALSE(t.nodes.empty());
  Node& n = t.nodes.back();
  n.timings.clear();
  for (std::size_t i = 0; i + 1 < hs.size(); i += 2) {
    Timing tm;
    tm.pred = EventKey{n.key.op, static_cast<SiteId>(i / 2)};
    tm.compute = hs[i];
    tm.comm = hs[i + 1];
    if (i % 6 == 0) tm.stats.emplace_back("cycles", hs[(i + 3) % hs.size()]);
    n.timings.push_back(tm);
  }
  const Trace back = decode_compact(encode_compact(t), "histograms");
  ASSERT_EQ(back.nodes.back().timings.size(), n.timings.size());
  for (std::size_t i = 0; i < n.timings.size(); ++i) {
    EXPECT_EQ(back.nodes.back().timings[i].compute, n.timings[i].compute) << i;
    EXPECT_EQ(back.nodes.back().timings[i].comm, n.timings[i].comm) << i;
    EXPECT_EQ(back.nodes.back().timings[i].stats, n.timings[i].stats) << i;
  }
  EXPECT_EQ(format_trace(back), format_trace(t));
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
  const int version = written_version(rich_trace());
  for (std::size_t n = 0; n < body.size(); ++n) {
    const std::string what = compact_error(wrap_body(body.substr(0, n), version), "body.tf");
    EXPECT_NE(what.find("body byte "), std::string::npos) << n << ": " << what;
  }
  // Trailing bytes are refused too.
  EXPECT_NE(compact_error(wrap_body(body + '\0', version), "long.tf").find("after the last node"),
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
  bad[4] = 11;
  std::string what = compact_error(bad, "v11.tf");
  EXPECT_NE(what.find("v11.tf: byte 4: unsupported compact format version 11 (this tracefold reads "
                      "compact versions 3 to 10)"),
            std::string::npos)
      << what;
  bad[4] = 2;
  what = compact_error(bad, "v2.tf");
  EXPECT_NE(what.find("v2.tf: byte 4: unsupported compact format version 2"), std::string::npos)
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
