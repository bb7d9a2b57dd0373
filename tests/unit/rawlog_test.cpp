// Raw per-rank event logs: parsing, errors that name FILE:LINE, expansion
// output that reads back, and folding a directory of logs.
#include "tracefold/rawlog.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "stencil.hpp"
#include "test_util.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

namespace fs = std::filesystem;
using testing::expands_to;
using testing::Stencil;
using testing::StencilKind;

// Events equal up to site numbering (sites compared by frames).
::testing::AssertionResult same_events(const std::vector<Event>& a, const SiteTable& sa,
                                       const std::vector<Event>& b, const SiteTable& sb) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << a.size() << " vs " << b.size() << " events";
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].op != b[i].op || sa.at(a[i].site) != sb.at(b[i].site) || a[i].fields != b[i].fields)
      return ::testing::AssertionFailure() << "event " << i << ": '" << format_event_line(a[i])
                                           << "' vs '" << format_event_line(b[i]) << "'";
  }
  return ::testing::AssertionSuccess();
}

const char* const kLog =
    "# a small log\n"                                                                 // 1
    "rank 1 size 4\n"                                                                 // 2
    "site 10 app+0x10 main+0x99\n"                                                    // 3
    "site 20 app+0x20\n"                                                              // 4
    "comm 5 members <1 1 2 1>\n"                                                      // 5
    "\n"                                                                              // 6
    "MPI_Isend site=10 peer=3 tag=0 count=8 dsize=8 comm=0 compute_ns=5 comm_ns=6\n"  // 7
    "MPI_Irecv site=10 peer=any tag=any count=8 dsize=8 comm=5\n"                     // 8
    "MPI_Waitall site=20 req=2 links=[2,1]\n";                                        // 9

TEST(RawLog, ParsesDeclarationsAndEvents) {
  RawLog log = parse_raw_log(kLog, "k.txt");
  EXPECT_EQ(log.rank, 1);
  EXPECT_EQ(log.size, 4);
  ASSERT_EQ(log.sites.size(), 2u);
  EXPECT_EQ(SiteTable::format(log.sites.at(0)), "app+0x10 main+0x99");
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[0].site, 0u);
  EXPECT_EQ(log.events[2].site, 1u);
  EXPECT_EQ(log.events[0].get(FieldTable::peer()), 3);
  EXPECT_EQ(log.events[0].compute_ns, 5);
  EXPECT_EQ(log.events[0].comm_ns, 6);
  EXPECT_EQ(log.events[1].get(FieldTable::peer()), kAny);
  EXPECT_EQ(log.events[1].compute_ns, -1);
  ASSERT_NE(log.events[2].find(FieldTable::links()), nullptr);
  EXPECT_EQ(log.events[2].find(FieldTable::links())->list, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(log.comms.rank_in(5, 1), 0);
  EXPECT_EQ(log.comms.rank_in(5, 2), 1);
  EXPECT_EQ(format_event_line(log.events[0]),
            "MPI_Isend site=0 peer=3 tag=0 count=8 dsize=8 comm=0");
  EXPECT_EQ(format_event_line(log.events[0], true),
            "MPI_Isend site=0 peer=3 tag=0 count=8 dsize=8 comm=0 compute_ns=5 comm_ns=6");
  // CRLF line ends and tabs are accepted.
  std::string crlf;
  for (char c : std::string(kLog)) {
    if (c == '\n') crlf += '\r';
    crlf += c == ' ' && crlf.size() % 7 == 0 ? '\t' : c;
  }
  RawLog again = parse_raw_log(crlf, "crlf.txt");
  EXPECT_TRUE(same_events(again.events, again.sites, log.events, log.sites));
}

// Replaces line `n` (1-based) of kLog with `text` ("" deletes nothing: the
// line becomes empty).
std::string with_line(int n, const std::string& text) {
  std::istringstream in(kLog);
  std::string line, out;
  for (int i = 1; std::getline(in, line); ++i) out += (i == n ? text : line) + "\n";
  return out;
}

void expect_error_at(const std::string& text, std::size_t line, const std::string& needle) {
  try {
    parse_raw_log(text, "logs/rank-1.txt");
    ADD_FAILURE() << "parsed without error:\n" << text;
  } catch (const RawLogError& ex) {
    const std::string what = ex.what();
    const std::string prefix = "logs/rank-1.txt:" + std::to_string(line) + ": ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    EXPECT_NE(what.find(needle), std::string::npos)
        << what << "\n(expected to mention '" << needle << "')";
  } catch (const std::exception& ex) {
    ADD_FAILURE() << "threw " << typeid(ex).name() << " instead of RawLogError: " << ex.what();
  }
}

TEST(RawLog, ErrorsNameFileAndLine) {
  expect_error_at(with_line(7, "MPI_Isendd site=10 peer=3"), 7, "MPI_Isendd");
  expect_error_at(with_line(7, "MPI_Isend peer=3 tag=0"), 7, "site");
  expect_error_at(with_line(8, "MPI_Irecv site=30 peer=3"), 8, "30");
  expect_error_at(with_line(8, "MPI_Irecv site=ten peer=3"), 8, "ten");
  expect_error_at(with_line(7, "MPI_Isend site=10 peer=3 count=eight"), 7, "eight");
  expect_error_at(with_line(7, "MPI_Isend site=10 peer=3 count=8x"), 7, "8x");
  expect_error_at(with_line(7, "MPI_Isend site=10 peer=4"), 7, "peer");
  expect_error_at(with_line(7, "MPI_Isend site=10 peer=-1"), 7, "peer");
  expect_error_at(with_line(8, "MPI_Irecv site=10 peer=2 comm=5 tag=1"), 8,
                  "peer");                                                   // comm 5 has 2 ranks
  expect_error_at(with_line(8, "MPI_Irecv site=10 peer=0 comm=6"), 8, "6");  // undeclared comm
  expect_error_at(with_line(7, "MPI_Isend site=10 peer"), 7, "peer");
  expect_error_at(with_line(7, "MPI_Isend site=10 =3"), 7, "=3");
  expect_error_at(with_line(7, "MPI_Isend site=10 peer=3 peer=2"), 7, "twice");
  expect_error_at(with_line(7, "MPI_Isend site=10 Peer=3"), 7, "Peer");
  expect_error_at(with_line(9, "MPI_Waitall site=20 links=[2,1"), 9, "links");
  expect_error_at(with_line(9, "MPI_Waitall site=20 links=[2,x]"), 9, "x");
  expect_error_at(with_line(9, "MPI_Waitall site=20 links=3"), 9,
                  "links");  // list field given a scalar
  expect_error_at(with_line(7, "MPI_Isend site=10 peer=3 compute_ns=-4"), 7, "compute_ns");
  expect_error_at(with_line(7, "MPI_Isend site=10 peer=3 comm_ns=lots"), 7, "comm_ns");
  expect_error_at(with_line(3, "site 10 app+0xzz"), 3, "frames");
  expect_error_at(with_line(4, "site 10 app+0x20"), 4, "twice");
  expect_error_at(with_line(4, "site"), 4, "site");
  expect_error_at(with_line(5, "comm 5 members <1 1 2"), 5, "ranklist");
  expect_error_at(with_line(5, "comm 5 members <1 2 2 1>"), 5, "does not contain");
  expect_error_at(with_line(5, "comm 5 members <1 0 5 1>"), 5, "4");
  expect_error_at(with_line(5, "comm 5 order 1 x"), 5, "x");
  expect_error_at(with_line(5, "comm 5 groups 1 2"), 5, "members");
  expect_error_at(with_line(5, "comm 0 members <1 0 2 1>"), 5, "world");
  expect_error_at(with_line(6, "rank 1 size 4"), 6, "rank");
  expect_error_at(with_line(2, "rank 4 size 4"), 2, "rank");
  expect_error_at(with_line(2, "rank 1 size 0"), 2, "rank");
  expect_error_at(with_line(2, "rank one size 4"), 2, "rank");
}

TEST(RawLog, MissingHeaderIsAnError) {
  expect_error_at(with_line(2, "# no header"), 3, "rank");
  expect_error_at("MPI_Barrier site=0\n", 1, "rank");
  try {
    parse_raw_log("", "empty.txt");
    FAIL() << "empty log parsed";
  } catch (const RawLogError& ex) {
    EXPECT_EQ(std::string(ex.what()).rfind("empty.txt:", 0), 0u) << ex.what();
    EXPECT_NE(std::string(ex.what()).find("rank"), std::string::npos) << ex.what();
  }
  try {
    parse_raw_log("# only a comment\n\n", "comment.txt");
    FAIL() << "comment-only log parsed";
  } catch (const RawLogError& ex) {
    EXPECT_EQ(std::string(ex.what()).rfind("comment.txt:", 0), 0u) << ex.what();
  }
}

TEST(RawLog, StencilLogParsesToTheGeneratedEvents) {
  for (StencilKind kind : {StencilKind::kOpen, StencilKind::kPeriodicComms}) {
    Stencil s{.side = 3, .steps = 4, .kind = kind};
    for (int32_t r = 0; r < s.size(); ++r) {
      RawLog log = parse_raw_log(s.raw_log(r), "stencil");
      EXPECT_EQ(log.rank, r);
      EXPECT_EQ(log.size, 9);
      EXPECT_EQ(log.comms, s.comms_of(r));
      const auto expected = s.events(r);
      EXPECT_TRUE(same_events(log.events, log.sites, expected, Stencil::sites())) << "rank " << r;
      ASSERT_EQ(log.events.size(), expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(log.events[i].compute_ns, expected[i].compute_ns);
        EXPECT_EQ(log.events[i].comm_ns, expected[i].comm_ns);
      }
    }
  }
}

TEST(RawLog, WriteExpansionReparsesToTheSameEvents) {
  for (StencilKind kind :
       {StencilKind::kOpen, StencilKind::kPeriodicComms, StencilKind::kPeriodicWorld}) {
    Stencil s{.side = 4, .steps = 9, .kind = kind};
    const Trace t = reduce_traces(s.fold_all());
    for (int32_t r = 0; r < s.size(); ++r) {
      for (bool timing : {false, true}) {
        std::ostringstream out;
        write_expansion(out, t, r, timing);
        RawLog back;
        try {
          back = parse_raw_log(out.str(), "expansion");
        } catch (const std::exception& ex) {
          FAIL() << "rank " << r << ": " << ex.what() << "\n" << out.str().substr(0, 2000);
        }
        EXPECT_EQ(back.rank, r);
        EXPECT_EQ(back.size, s.size());
        EXPECT_EQ(back.comms, s.comms_of(r)) << "rank " << r;
        EXPECT_TRUE(same_events(back.events, back.sites, s.events(r), Stencil::sites()))
            << "rank " << r;
        // Folding the re-read log again gives the same expansion.
        EXPECT_TRUE(expands_to(fold_log(back), r, s.events(r), Stencil::sites())) << "rank " << r;
        if (timing) {
          for (const Event& e : back.events) {
            EXPECT_GE(e.compute_ns, 0);
            EXPECT_GE(e.comm_ns, 0);
          }
        }
      }
    }
  }
}

// `_` is how the trace format writes "field not present". In a raw log,
// `tag=_` must either be rejected or mean "no tag": it must not become a field
// whose value is the absent marker, because folding drops such a field and
// the log then no longer matches its own folded trace.
TEST(RawLog, AbsentSentinelIsNotAFieldValue) {
  const std::string text = "rank 0 size 2\nsite 1 a+0x1\nMPI_Send site=1 peer=1 tag=_ count=1\n";
  RawLog log;
  try {
    log = parse_raw_log(text, "absent.txt");
  } catch (const RawLogError& ex) {
    EXPECT_EQ(std::string(ex.what()).rfind("absent.txt:3: ", 0), 0u) << ex.what();
    return;  // rejected: fine
  }
  ASSERT_EQ(log.events.size(), 1u);
  const FieldId tag = *FieldTable::find("tag");
  EXPECT_EQ(log.events[0].find(tag), nullptr)
      << "tag=_ was stored as a field: '" << format_event_line(log.events[0]) << "'";
  const Trace t = fold_log(log);
  EXPECT_TRUE(same_events(expand_rank(t, 0), t.sites, log.events, log.sites));
}

// A communicator ranklist far larger than the world must be rejected from its
// bounds, not expanded into billions of ranks first. Run in a child with a
// 1 GiB address-space limit; the error must name the line and the problem.
TEST(RawLogDeathTest, HugeCommunicatorIsRejectedWithoutExpandingIt) {
  const std::string text = with_line(5, "comm 5 members <1 1 2000000000 1>");
  auto child = [&] {
    rlimit lim{std::size_t{1} << 30, std::size_t{1} << 30};
    setrlimit(RLIMIT_AS, &lim);
    try {
      parse_raw_log(text, "huge.txt");
    } catch (const RawLogError& ex) {
      std::fprintf(stderr, "%s\n", ex.what());
      const std::string what = ex.what();
      if (what.rfind("huge.txt:5: ", 0) != 0) std::_Exit(3);
      std::_Exit(what.find("alloc") == std::string::npos ? 0 : 6);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "%s: %s\n", typeid(ex).name(), ex.what());
      std::_Exit(4);
    }
    std::_Exit(5);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "")
      << "exit 3: wrong location, 4: not a RawLogError, 5: no error, 6: allocation failure";
}

// Random byte mutations of a log: it parses, or fails with a RawLogError that
// starts with the source name; nothing else escapes and nothing crashes.
TEST(RawLog, ByteFlipFuzz) {
  Stencil s{.side = 3, .steps = 3, .kind = StencilKind::kPeriodicComms};
  const std::string text = s.raw_log(4);
  const std::string alphabet = "0123456789 \n\t=[],#<>-+xabcdefikmnoprstzMPI_";
  std::mt19937_64 rng(20240611);
  int parsed = 0, errors = 0;
  std::vector<std::string> escaped;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string m = text;
    tracefold::testing::mutate_bytes(m, rng, alphabet);
    const std::string source = "fuzz#" + std::to_string(iter);
    try {
      RawLog log = parse_raw_log(m, source);
      ++parsed;
      // What parses folds and expands back to itself.
      if (log.size <= 64) {
        Trace t = fold_log(log);
        // `field=_` is covered by AbsentSentinelIsNotAFieldValue; do not
        // report it again here.
        for (Event& e : log.events)
          std::erase_if(e.fields, [](const FieldValue& f) {
            return FieldTable::kind(f.field) == FieldKind::kScalar && f.scalar == kAbsent;
          });
        EXPECT_TRUE(same_events(expand_rank(t, log.rank), t.sites, log.events, log.sites))
            << source;
      }
    } catch (const RawLogError& ex) {
      ++errors;
      if (std::string(ex.what()).rfind(source + ":", 0) != 0)
        escaped.push_back(std::string("no source: ") + ex.what());
    } catch (const std::exception& ex) {
      escaped.push_back(source + ": " + typeid(ex).name() + ": " + ex.what());
    }
  }
  std::printf("[   fuzz   ] raw logs: %d parsed, %d errors, %zu other exceptions\n", parsed, errors,
              escaped.size());
  std::string sample;
  for (std::size_t i = 0; i < escaped.size() && i < 10; ++i) sample += "\n  " + escaped[i];
  EXPECT_TRUE(escaped.empty()) << escaped.size()
                               << " mutations escaped as something other than RawLogError:"
                               << sample;
  EXPECT_GT(errors, 1000);
  EXPECT_GT(parsed, 100);
}

// ------------------------------------------------------------- directories

class LogDir {
 public:
  LogDir() {
    path_ = fs::temp_directory_path() /
            ("tracefold-rawlog-" + std::to_string(::getpid()) + "-" + std::to_string(n_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~LogDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void write(int32_t rank, const std::string& text) const {
    std::ofstream(path_ / ("rank-" + std::to_string(rank) + ".txt"), std::ios::binary) << text;
  }

 private:
  static inline int n_ = 0;
  fs::path path_;
};

TEST(RawLog, FoldDirectoryMatchesInMemoryFolding) {
  Stencil s{.side = 3, .steps = 12};
  LogDir dir;
  for (int32_t r = 0; r < s.size(); ++r) dir.write(r, s.raw_log(r));
  const Trace folded = fold_directory(dir.path());
  EXPECT_EQ(format_trace(folded), format_trace(reduce_traces(s.fold_all())));
  EXPECT_EQ(format_trace(fold_directory(dir.path())), format_trace(folded));
  for (int32_t r = 0; r < s.size(); ++r)
    EXPECT_TRUE(expands_to(folded, r, s.events(r), Stencil::sites()));
}

void expect_dir_error(const fs::path& dir, const std::string& needle) {
  try {
    fold_directory(dir);
    ADD_FAILURE() << "folded without error";
  } catch (const RawLogError& ex) {
    EXPECT_NE(std::string(ex.what()).find(needle), std::string::npos)
        << ex.what() << "\n(expected '" << needle << "')";
  } catch (const std::exception& ex) {
    ADD_FAILURE() << "threw " << typeid(ex).name() << " instead of RawLogError: " << ex.what();
  }
}

TEST(RawLog, FoldDirectoryErrors) {
  Stencil s{.side = 2, .steps = 3};
  {
    LogDir dir;  // rank-1.txt missing
    dir.write(0, s.raw_log(0));
    dir.write(2, s.raw_log(2));
    dir.write(3, s.raw_log(3));
    expect_dir_error(dir.path(), (dir.path() / "rank-1.txt").string());
  }
  {
    LogDir dir;  // the last rank missing: the others declare 4 ranks
    for (int32_t r = 0; r < 3; ++r) dir.write(r, s.raw_log(r));
    expect_dir_error(dir.path(), "rank-");
    expect_dir_error(dir.path(), "size 4");
  }
  {
    LogDir dir;  // rank-2.txt holds rank 1's log
    for (int32_t r = 0; r < 4; ++r) dir.write(r, s.raw_log(r == 2 ? 1 : r));
    expect_dir_error(dir.path(), (dir.path() / "rank-2.txt").string());
  }
  {
    LogDir dir;  // a bad line in rank-3.txt, line 14
    for (int32_t r = 0; r < 4; ++r) {
      std::string text = s.raw_log(r);
      if (r == 3) {
        std::istringstream in(text);
        std::string line, out;
        for (int i = 1; std::getline(in, line); ++i)
          out += (i == 14 ? "MPI_Bogus site=0" : line) + "\n";
        text = out;
      }
      dir.write(r, text);
    }
    expect_dir_error(dir.path(), (dir.path() / "rank-3.txt").string() + ":14: ");
  }
  {
    LogDir dir;
    expect_dir_error(dir.path(), "no rank-R.txt");
    expect_dir_error(dir.path() / "nope", "not a directory");
  }
}

}  // namespace
}  // namespace tracefold
