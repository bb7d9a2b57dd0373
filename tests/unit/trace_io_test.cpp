// The trace file: text round trip, determinism, files (plain and zstd, atomic
// writes) and clear errors on corrupt or truncated input.
#include "tracefold/trace_io.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include "sample_traces.hpp"
#include "stencil.hpp"
#include "test_util.hpp"
#include "tracefold/analysis_basic.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_level.hpp"

namespace tracefold {
namespace {

namespace fs = std::filesystem;
using testing::expands_to;
using testing::figure52_trace;
using testing::format_error_line;
using testing::line_of;
using testing::make_event;
using testing::make_sites;
using testing::rich_trace;
using testing::split_lines;
using testing::Stencil;
using testing::StencilKind;

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("tracefold-io-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

TEST(TraceIo, RoundTripIsByteIdentical) {
  const std::vector<Trace> traces = testing::sample_traces();
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const std::string text = format_trace(traces[i]);
    Trace back = parse_trace(text, "case " + std::to_string(i));
    EXPECT_EQ(format_trace(back), text) << "case " << i;
    EXPECT_FALSE(diff_traces(traces[i], back).has_value()) << "case " << i;
    EXPECT_EQ(back.world_size, traces[i].world_size);
    EXPECT_EQ(back.comms, traces[i].comms);
    EXPECT_EQ(back.sites.all(), traces[i].sites.all());
    EXPECT_EQ(back.lossy, traces[i].lossy);
  }
  EXPECT_NE(format_trace(traces[0]).find("    stat cycles "), std::string::npos);
  EXPECT_NE(format_trace(traces.back()).find("hist("), std::string::npos)
      << format_trace(traces.back());
  EXPECT_FALSE(traces.back().lossy.empty());
}

TEST(TraceIo, TextStartsWithVersionAndEndsWithEnd) {
  const std::string text = format_trace(figure52_trace());
  EXPECT_EQ(text.rfind("tracefold-trace 2\nworld 1\nlossy -\n", 0), 0u) << text;
  ASSERT_GE(text.size(), 4u);
  EXPECT_EQ(text.substr(text.size() - 4), "end\n");
}

TEST(TraceIo, SameInputGivesSameBytes) {
  Stencil s{.side = 4, .steps = 25};
  const std::string a = format_trace(reduce_traces(s.fold_all()));
  const std::string b = format_trace(reduce_traces(s.fold_all()));
  EXPECT_EQ(a, b);
  // The threaded reduction receives partial traces in whatever order the
  // threads run; the bytes must not depend on it.
  for (int attempt = 0; attempt < 4; ++attempt) {
    InMemoryExchange hub(s.size());
    std::vector<std::optional<Trace>> results(static_cast<std::size_t>(s.size()));
    std::vector<std::thread> threads;
    for (int32_t r = s.size() - 1; r >= 0; --r)
      threads.emplace_back([&, r] {
        if ((r + attempt) % 3 == 0) std::this_thread::yield();
        results[static_cast<std::size_t>(r)] = reduce_trace(s.fold_rank(r), hub.endpoint(r));
      });
    for (auto& th : threads) th.join();
    ASSERT_TRUE(results[0].has_value());
    EXPECT_EQ(format_trace(*results[0]), a) << "attempt " << attempt;
  }
}

// ------------------------------------------------------------------- files

TEST(TraceIo, SaveAndLoadPlainAndZstd) {
  TempDir dir;
  const Trace t = rich_trace();
  const std::string text = format_trace(t);

  const fs::path plain = dir.path() / "t.trace";
  save_trace(t, plain, TraceEncoding::kText);
  EXPECT_EQ(read_bytes(plain), text);
  EXPECT_EQ(format_trace(load_trace(plain)), text);

  // A .zst name is compressed text, whatever the encoding asked for.
  const fs::path packed = dir.path() / "t.trace.zst";
  save_trace(t, packed);
  const std::string raw = read_bytes(packed);
  EXPECT_TRUE(is_zstd(raw));
  EXPECT_LT(raw.size(), text.size());
  EXPECT_EQ(zstd_decompress(raw, "x"), text);
  EXPECT_EQ(format_trace(load_trace(packed)), text);
  EXPECT_EQ(read_file_text(packed), text);

  // Compression is detected by content, not by name.
  const fs::path disguised = dir.path() / "packed-but-named-plain.trace";
  write_bytes(disguised, raw);
  EXPECT_EQ(format_trace(load_trace(disguised)), text);
  // And a plain file named .zst still reads.
  const fs::path plain_zst = dir.path() / "plain.zst";
  write_bytes(plain_zst, text);
  EXPECT_EQ(format_trace(load_trace(plain_zst)), text);

  // Atomic write: only the targets, no temporary left behind.
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"packed-but-named-plain.trace", "plain.zst",
                                                   "t.trace", "t.trace.zst"}));
}

// A compact level given to save_trace (as memory traces are written)
// changes only the zstd frame: the default stays the level chosen by size,
// and both read back to the same trace.
TEST(TraceIo, CompactLevelChangesOnlyTheCompression) {
  TempDir dir;
  const Trace t = rich_trace();
  const fs::path by_size = dir.path() / "by-size.tf";
  const fs::path fast = dir.path() / "fast.tf";
  EXPECT_EQ(save_trace(t, by_size), encode_compact(t).size());
  EXPECT_EQ(save_trace(t, fast, TraceEncoding::kCompact, 1), encode_compact(t, 1).size());
  EXPECT_EQ(read_bytes(by_size), encode_compact(t, kCompactLevelBySize));
  EXPECT_EQ(read_bytes(fast), encode_compact(t, 1));
  EXPECT_NE(read_bytes(fast), read_bytes(by_size));
  EXPECT_EQ(format_trace(load_trace(fast)), format_trace(load_trace(by_size)));
  EXPECT_EQ(format_trace(load_trace(fast)), format_trace(t));
  // The text form has no level.
  const fs::path text = dir.path() / "t.trace";
  save_trace(t, text, TraceEncoding::kText, 1);
  EXPECT_EQ(read_bytes(text), format_trace(t));
}

TEST(TraceIo, SaveReplacesAnExistingFileAtomically) {
  TempDir dir;
  const fs::path p = dir.path() / "t.trace";
  write_bytes(p, "old contents that are longer than nothing\n");
  const Trace t = figure52_trace();
  save_trace(t, p);
  EXPECT_EQ(read_bytes(p), encode_compact(t));
  EXPECT_EQ(dir.names(), std::vector<std::string>{"t.trace"});
}

TEST(TraceIo, SaveFailureNamesThePathAndLeavesNothing) {
  TempDir dir;
  const fs::path p = dir.path() / "no-such-dir" / "t.trace";
  try {
    save_trace(figure52_trace(), p);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& ex) {
    EXPECT_NE(std::string(ex.what()).find("no-such-dir"), std::string::npos) << ex.what();
  }
  EXPECT_TRUE(dir.names().empty());
  // A directory in the way of the target: the rename fails, the temporary goes.
  const fs::path blocked = dir.path() / "blocked";
  fs::create_directories(blocked / "inside");
  EXPECT_THROW(save_trace(figure52_trace(), blocked), std::runtime_error);
  EXPECT_EQ(dir.names(), std::vector<std::string>{"blocked"});
}

TEST(TraceIo, LoadErrorsNameThePath) {
  TempDir dir;
  const fs::path missing = dir.path() / "missing.trace";
  try {
    load_trace(missing);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& ex) {
    EXPECT_NE(std::string(ex.what()).find(missing.string()), std::string::npos) << ex.what();
  }
  // Corrupt and truncated zstd data.
  const std::string packed = zstd_compress(format_trace(figure52_trace()));
  const fs::path truncated = dir.path() / "truncated.zst";
  write_bytes(truncated, packed.substr(0, packed.size() / 2));
  const fs::path garbled = dir.path() / "garbled.zst";
  std::string g = packed;
  for (std::size_t i = 8; i < g.size(); i += 3) g[i] = static_cast<char>(g[i] ^ 0x5a);
  write_bytes(garbled, g);
  for (const fs::path& p : {truncated, garbled}) {
    try {
      load_trace(p);
      FAIL() << p << ": expected an error";
    } catch (const std::runtime_error& ex) {
      EXPECT_NE(std::string(ex.what()).find(p.string()), std::string::npos) << ex.what();
    }
  }
  // A text error in a file names the file and the line.
  const fs::path bad = dir.path() / "bad.trace";
  std::string text = format_trace(figure52_trace());
  text.replace(text.find("world 1"), 7, "world x");
  write_bytes(bad, text);
  try {
    load_trace(bad);
    FAIL() << "expected an error";
  } catch (const TraceFormatError& ex) {
    EXPECT_EQ(ex.source(), bad.string());
    EXPECT_EQ(ex.line(), 2u);
    EXPECT_EQ(std::string(ex.what()).rfind(bad.string() + ":2: ", 0), 0u) << ex.what();
  }
}

// ------------------------------------------------------------ corrupt input

TEST(TraceIo, EveryTruncationIsAFormatErrorAtTheCut) {
  const std::string text = format_trace(rich_trace());
  ASSERT_GT(text.size(), 1000u);
  for (std::size_t cut = 0; cut < text.size(); ++cut) {
    const std::string part = text.substr(0, cut);
    const std::string source = "cut@" + std::to_string(cut);
    auto line = format_error_line(part, source);
    if (!line) continue;
    // The error is at the cut line, or at the last complete line when the cut
    // falls on a line boundary.
    std::size_t expected = cut == 0 ? 0 : line_of(text, cut - 1);
    if (cut > 0 && text[cut - 1] != '\n') expected = line_of(text, cut);
    if (cut == 0) {
      EXPECT_LE(*line, 1u) << source;
    } else {
      EXPECT_EQ(*line, expected) << source << " (cut inside line " << line_of(text, cut) << ")";
    }
    if (::testing::Test::HasFailure()) break;  // one clear report is enough
  }
}

struct Mutation {
  const char* name;
  std::string (*apply)(const std::string&,
                       std::size_t&);  // returns mutated text, sets the expected line
};

// Line-level helpers over the text form (split_lines: sample_traces.hpp).
std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}
// Index (0-based) of the first line starting with `prefix` at or after `from`.
std::size_t find_line(const std::vector<std::string>& lines, const std::string& prefix,
                      std::size_t from = 0) {
  for (std::size_t i = from; i < lines.size(); ++i)
    if (lines[i].rfind(prefix, 0) == 0) return i;
  ADD_FAILURE() << "no line starts with '" << prefix << "'";
  return lines.size() - 1;
}

// Replaces the first occurrence of `from` in the line starting with `prefix`;
// returns the mutated text and the 1-based line.
std::string edit_line(const std::string& text, const std::string& prefix, const std::string& from,
                      const std::string& to, std::size_t& line) {
  auto lines = split_lines(text);
  const std::size_t i = find_line(lines, prefix);
  const auto at = lines[i].find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in '" << lines[i] << "'";
  if (at != std::string::npos) lines[i].replace(at, from.size(), to);
  line = i + 1;
  return join_lines(lines);
}

TEST(TraceIo, MutatedLinesAreFormatErrorsNamingTheLine) {
  const std::string text = format_trace(reduce_traces(Stencil{.side = 3, .steps = 5}.fold_all()));
  const auto lines = split_lines(text);
  struct Case {
    std::string name;
    std::string text;
    std::size_t line;      // expected error line (1-based)
    std::size_t line_max;  // accepted up to this line (for errors found at the end of a block)
  };
  std::vector<Case> cases;
  auto add = [&](const std::string& name, const std::string& prefix, const std::string& from,
                 const std::string& to) {
    Case c{name, "", 0, 0};
    c.text = edit_line(text, prefix, from, to, c.line);
    c.line_max = c.line;
    cases.push_back(c);
  };
  add("bad header", "tracefold-trace", "tracefold-trace", "tracefold-trase");
  // " 2", or " 5" when the sample's settled timing has a `pred=other` block.
  const std::string version = lines.at(0).substr(lines.at(0).find(' '));
  add("future version", "tracefold-trace", version, " 9");
  add("missing version", "tracefold-trace", version, " 3");
  add("version 0", "tracefold-trace", version, " 0");
  add("bad world number", "world", "world 9", "world nine");
  add("negative world", "world", "world 9", "world -9");
  add("huge world", "world", "world 9", "world 99999999999999");
  add("bad site count", "sites ", "sites 10", "sites 1o");
  add("site out of order", "site 3 ", "site 3", "site 4");
  add("bad frames", "site 2 ", "+0x", "+zz");
  {
    auto l = lines;
    const std::size_t s0 = find_line(l, "site 0 "), s1 = find_line(l, "site 1 ");
    l[s1] = "site 1 " + l[s0].substr(7);
    cases.push_back({"repeated site", join_lines(l), s1 + 1, s1 + 1});
  }
  add("bad comm ranklist", "comm 0 ", "members *", "members <1 0 9");
  add("comm member outside the world", "comm 0 ", "members *", "members <1 0 10 1>");
  // The whole-set shorthand "*" where it has no meaning, or mixed with text.
  add("whole set in a comm's order", "comm 0 ", "members *", "order *");
  add("whole set and a ranklist", "comm 0 ", "members *", "members * <0 3>");
  add("whole set as the world size", "world", "world 9", "world *");
  add("whole set twice", "node 8 ", "ranks=*", "ranks=**");
  add("whole set as a value", "  field req", "4*5 @", "* @");
  add("whole set in a histogram", "    compute", "@", "@*");
  add("whole set as a pred", "  time pred=MPI_", "pred=MPI_", "pred=*");
  add("whole set as a site", "node 2 ", "site=2", "site=*");
  add("whole set overlapping an entry", "  field req", "<0 4>", "*");
  add("bad node ranklist", "node 1 ", "ranks=<", "ranks=<<");
  add("node ranks outside the world", "node 1 ", "ranks=<", "ranks=<0 12> <");
  add("unknown op", "node 2 ", "MPI_I", "MPI_Q");
  add("site not in table", "node 2 ", "site=", "site=4");
  add("node index out of order", "node 3 ", "node 3", "node 4");
  add("bad number in values", "  field count", "64*", "6x4*");
  add("bad repeat count", "  field count", "64*", "64*-");
  add("bad loop iterations", "  loop 0 iters", "iters ", "iters q");
  add("loop level skipped", "  loop 0 iters", "loop 0", "loop 2");
  add("overlapping elastic ranklists", "  field req", " ; ", " @ <0 0> ; ");
  add("unknown attribute", "  count", "count", "cuont");
  add("bad histogram", "    compute", "n=", "n=x");
  add("bad pred", "  time pred=MPI_", "pred=MPI_", "pred=MPI_Nope");
  add("pred site not in table", "  time pred=MPI_", "/", "/9");
  add("field of two kinds", "  field list links", "list links", "links");
  add("text after end", "end", "end", "end\nmore");
  if (cases.back().text.size()) cases.back().line = cases.back().line_max = lines.size() + 1;
  {
    // Missing count line: noticed when the node's block ends (its line or the
    // next node's line).
    auto l = lines;
    const std::size_t node = find_line(l, "node 3 ");
    const std::size_t count = find_line(l, "  count", node);
    l.erase(l.begin() + static_cast<std::ptrdiff_t>(count));
    const std::size_t next = find_line(l, "node 4 ");
    cases.push_back({"missing count line", join_lines(l), node + 1, next + 1});
  }
  {
    auto l = lines;
    l.pop_back();  // 'end'
    cases.push_back({"missing end", join_lines(l), l.size(), l.size() + 1});
  }
  {
    auto l = lines;
    l.back() = "fin";
    cases.push_back({"wrong end", join_lines(l), l.size(), l.size()});
  }
  {
    auto l = lines;
    const std::size_t n = find_line(l, "nodes ");
    l[n] = "nodes 11";
    cases.push_back({"node count too high", join_lines(l), lines.size(), lines.size()});
  }
  {
    auto l = lines;
    const std::size_t n = find_line(l, "nodes ");
    l[n] = "nodes 3";
    cases.push_back({"node count too low", join_lines(l), find_line(l, "node 3 ") + 1,
                     find_line(l, "node 3 ") + 1});
  }
  {
    auto l = lines;
    const std::size_t node = find_line(l, "node 0 ");
    const std::size_t iters = find_line(l, "  loop 0 iters", node);
    l.erase(l.begin() + static_cast<std::ptrdiff_t>(iters));
    const std::size_t next = find_line(l, "node 1 ");
    cases.push_back({"loop without iters", join_lines(l), node + 1, next + 1});
  }
  {
    auto l = lines;
    const std::size_t t = find_line(l, "  time pred=");
    l.erase(l.begin() + static_cast<std::ptrdiff_t>(t + 2));  // its comm histogram
    cases.push_back({"time without comm histogram", join_lines(l), t + 3, t + 3});
  }
  {
    std::string crlf;
    for (const auto& x : lines) crlf += x + "\r\n";
    cases.push_back({"CRLF line ends", crlf, 1, 1});
  }
  {
    std::string t2 = text;
    t2.pop_back();  // last newline
    cases.push_back({"no final newline", t2, lines.size(), lines.size()});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto line = format_error_line(c.text, c.name);
    if (!line) continue;
    EXPECT_GE(*line, c.line);
    EXPECT_LE(*line, c.line_max);
  }
}

// A corrupt count must not make the reader allocate without bound: run it in
// a child with a 1 GiB address-space limit. The error must be a
// TraceFormatError at or after the corrupt line that names the real problem
// (not an allocation failure).
TEST(TraceIoDeathTest, HugeCountsAreFormatErrorsNotAllocations) {
  const std::string text = format_trace(reduce_traces(Stencil{.side = 3, .steps = 5}.fold_all()));
  struct Case {
    const char* name;
    const char* prefix;
    const char* from;
    const char* to;
  };
  const Case cases[] = {
      {"huge node count", "nodes ", "nodes 10", "nodes 999999999999"},
      {"huge site count", "sites ", "sites 10", "sites 999999999999"},
      {"huge comm count", "comms ", "comms 1", "comms 999999999999"},
      {"huge communicator", "comm 0 ", "members *", "members <1 0 2000000000 1>"},
  };
  for (const Case& c : cases) {
    std::size_t line = 0;
    const std::string bad = edit_line(text, c.prefix, c.from, c.to, line);
    auto child = [&] {
      rlimit lim{std::size_t{1} << 30, std::size_t{1} << 30};
      setrlimit(RLIMIT_AS, &lim);
      try {
        parse_trace(bad, c.name);
      } catch (const TraceFormatError& ex) {
        std::fprintf(stderr, "%s\n", ex.what());
        const std::string what = ex.what();
        if (what.rfind(std::string(c.name) + ":", 0) != 0 || ex.line() < line) std::_Exit(3);
        std::_Exit(what.find("alloc") == std::string::npos ? 0 : 6);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "%s: %s\n", typeid(ex).name(), ex.what());
        std::_Exit(4);
      }
      std::_Exit(5);
    };
    EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "")
        << c.name << " (line " << line
        << "); exit 3: wrong source/line, 4: not a TraceFormatError, 5: no error, 6: allocation "
           "failure";
  }
}

// Random byte mutations: parsing throws (a TraceFormatError) or succeeds;
// a trace that parses can be printed, re-read and walked without crashing.
TEST(TraceIo, ByteFlipFuzz) {
  const std::string text = format_trace(rich_trace());
  const std::string alphabet = "0123456789 \n<>@;*()-:=/,~abcdefhilmnoprstxzMPI_\t\r\x7f\x01";
  std::mt19937_64 rng(0x7ace5eed);
  int parsed = 0, format_errors = 0;
  std::vector<std::string> other_errors;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string m = text;
    tracefold::testing::mutate_bytes(m, rng, alphabet);
    const std::string source = "fuzz#" + std::to_string(iter);
    Trace t;
    try {
      t = parse_trace(m, source);
    } catch (const TraceFormatError& ex) {
      ++format_errors;
      if (std::string(ex.what()).rfind(source + ":", 0) != 0)
        other_errors.push_back(source + ": message does not start with the source: " + ex.what());
      continue;
    } catch (const std::exception& ex) {
      other_errors.push_back(source + ": " + typeid(ex).name() + ": " + ex.what());
      continue;
    }
    ++parsed;
    // What parses must print and re-read to the same bytes.
    const std::string again = format_trace(t);
    try {
      EXPECT_EQ(format_trace(parse_trace(again, source + "'")), again) << source;
    } catch (const std::exception& ex) {
      ADD_FAILURE() << source << ": a parsed trace does not re-read: " << ex.what();
    }
    // Walking every rank either works or throws; never crashes or hangs.
    for (int32_t r = 0; r < t.world_size && r < 64; ++r) {
      try {
        RankIterator it(t, r);
        Event e;
        for (int n = 0; n < 20000 && it.next(e); ++n) {
        }
      } catch (const std::exception&) {
      }
    }
    try {
      (void)render_trace(t);
    } catch (const std::exception&) {
    }
  }
  std::printf("[   fuzz   ] %d parsed, %d format errors, %zu other exceptions\n", parsed,
              format_errors, other_errors.size());
  EXPECT_GT(format_errors, 3000);
  std::string sample;
  for (std::size_t i = 0; i < other_errors.size() && i < 10; ++i)
    sample += "\n  " + other_errors[i];
  EXPECT_TRUE(other_errors.empty())
      << other_errors.size()
      << " mutations escaped as something other than TraceFormatError:" << sample;
}

// `-o /dev/null` as root once replaced the device with a regular file:
// renaming the temporary over a path that is not a regular file is wrong
// for every other process that opens it. A FIFO stands in for the device.
TEST(TraceIo, SaveWritesIntoAFifoInPlaceOfReplacingIt) {
  TempDir dir;
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  const Trace t = figure52_trace();
  save_trace(t, fifo);
  std::string got(1 << 16, '\0');
  const ssize_t n = ::read(reader, got.data(), got.size());
  ::close(reader);
  ASSERT_GE(n, 0) << std::strerror(errno);
  got.resize(static_cast<std::size_t>(n));
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_EQ(got, encode_compact(t));
  EXPECT_EQ(dir.names(), std::vector<std::string>{"pipe"});
}

}  // namespace
}  // namespace tracefold
