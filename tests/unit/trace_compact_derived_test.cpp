// Compact version 7: field values of a loop's head node stored by the
// loop's trip counts (docs/format.md "Values derived from loop
// iterations"), and version 6 files still read.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/trace_links.hpp"
#include "source_dir.hpp"
#include "trace_compact_codec.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/trace_level.hpp"

namespace tracefold {
namespace {

// The compact version a trace is written in: 9 when it has derived links.
int written_version(const Trace& t) {
  return links_form::has_derivable(t) ? links_form::kCompactVersion
                                      : Trace::kCompactVersionSingleThread;
}

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Trip counts of a poll loop, per rank: irregular, as arrivals make them.
const std::vector<std::vector<int>> kTrips = {
    {1, 3, 2, 5, 1, 4, 7, 2, 9, 3, 1, 6, 2, 8, 1, 1, 4, 3, 11, 2, 5, 1, 3, 6},
    {2, 1, 1, 6, 3, 2, 8, 1, 4, 4, 2, 9, 1, 3, 5, 1, 2, 7, 1, 3, 2, 6, 4, 1}};

// A trace of one MPI_Iprobe that opens the poll loop, each rank with its
// own trip counts; the flag is 0 but on each execution's last iteration
// (`flag`), the tag is the same through an execution (`tag`). Without
// `flag` and `tag`, the node has only its communicator and source.
std::string poll_trace(bool flag, bool tag) {
  std::ostringstream t;
  t << "tracefold-trace 2\nworld 2\nlossy -\nsites 1\nsite 0 app+0x10\ncomms 1\n"
       "comm 0 members *\nnodes 1\nnode 0 MPI_Iprobe site=0 ranks=*\n"
       "  loop 0 members 1 @ *\n  loop 0 iters ";
  auto per_rank = [&](auto value) {
    for (int r = 0; r < 2; ++r) {
      if (r) t << " ;";
      for (std::size_t e = 0; e < kTrips[r].size(); ++e)
        for (int k = 0; k < kTrips[r][e]; ++k) {
          const std::string v = value(r, e, k);
          if (!v.empty()) t << " " << v;
        }
      t << " @ <0 " << r << ">";
    }
    t << "\n";
  };
  int total[2] = {0, 0};
  for (int r = 0; r < 2; ++r)
    for (int n : kTrips[r]) total[r] += n;
  bool first = true;
  for (int r = 0; r < 2; ++r) {
    if (!first) t << " ;";
    first = false;
    for (int n : kTrips[r]) t << " " << n;
    t << " @ <0 " << r << ">";
  }
  t << "\n  count 1*" << total[0] << " @ <0 0> ; 1*" << total[1] << " @ <0 1>\n";
  t << "  field comm 0*" << total[0] << " @ <0 0> ; 0*" << total[1] << " @ <0 1>\n";
  t << "  field peer any*" << total[0] << " @ <0 0> ; any*" << total[1] << " @ <0 1>\n";
  if (flag) {
    t << "  field flag";
    per_rank([&](int r, std::size_t e, int k) {
      return std::string(k + 1 == kTrips[r][e] ? "1" : "0");
    });
  }
  if (tag) {
    t << "  field tag";
    per_rank([&](int, std::size_t e, int) { return std::to_string(100 + e % 3); });
  }
  t << "end\n";
  // Sequences folded value by value, as the recorder folds them (the
  // parser keeps the runs of the text as they are written).
  Trace trace = parse_trace(t.str());
  for (Node& n : trace.nodes)
    for (auto& [id, e] : n.fields)
      for (ElasticEntry& en : e.entries()) {
        ValueSeq folded;
        for (int64_t v : en.values.to_vector()) folded.push_back(v);
        en.values = std::move(folded);
      }
  return format_trace(trace);
}

TEST(TraceCompactDerived, PollFlagsAndTagsComeBackExactly) {
  const std::string text = poll_trace(true, true);
  const Trace t = parse_trace(text);
  const std::string bytes = encode_compact(t);
  EXPECT_EQ(bytes[4], 7);
  EXPECT_EQ(format_trace(decode_compact(bytes, "poll.tf")), text);
}

// In every field entry of `t`, the first run of 4 or more repetitions
// split in two (`v*4` as `v*2 v*2`): the same values, runs that pushes
// never leave. Returns how many were split.
int split_long_runs(Trace& t) {
  int split = 0;
  for (Node& n : t.nodes)
    for (auto& [id, e] : n.fields)
      for (ElasticEntry& en : e.entries()) {
        std::vector<ValueSeq::Run> runs = en.values.runs();
        for (std::size_t i = 0; i < runs.size(); ++i)
          if (runs[i].reps >= 4) {
            ValueSeq::Run rest = runs[i];
            rest.reps -= 2;
            runs[i].reps = 2;
            runs.insert(runs.begin() + static_cast<std::ptrdiff_t>(i) + 1, rest);
            ++split;
            break;
          }
        en.values = ValueSeq::from_runs(std::move(runs), false);
      }
  return split;
}

// Runs other than those pushes fold: a derived form would read back
// folded, so the writer keeps such entries plain, and the trace still
// comes back as it was.
TEST(TraceCompactDerived, EntriesThatWouldReadBackFoldedOtherwiseStayPlain) {
  const std::string folded = poll_trace(true, true);
  Trace t = parse_trace(folded);
  ASSERT_GT(split_long_runs(t), 0);
  const std::string text = format_trace(t);
  ASSERT_NE(text, folded);
  EXPECT_EQ(format_trace(decode_compact(encode_compact(t), "poll.tf")), text);
  EXPECT_EQ(format_trace(decode_compact(encode_compact_transfer(t), "poll.tf")), text);
}

// The rule of the merge at MPI_Finalize: the same split entries are
// written derived, read back with the same values (folded as pushes fold
// them, so their text differs), and the file is smaller than the one that
// keeps them plain.
TEST(TraceCompactDerived, SameValuesDerivesEntriesWhoseRunsWouldChange) {
  const std::string folded = poll_trace(true, true);
  Trace t = parse_trace(folded);
  ASSERT_GT(split_long_runs(t), 0);
  const std::string split = format_trace(t);
  ASSERT_NE(split, folded);
  const std::string runs = encode_compact(t, kCompactLevelBySize, DerivedFields::kSameRuns);
  const std::string values = encode_compact(t, kCompactLevelBySize, DerivedFields::kSameValues);
  EXPECT_LT(values.size(), runs.size());
  const Trace back = decode_compact(values, "poll.tf");
  // The values of every entry, not their runs: the derived entries come
  // back folded as pushes fold them.
  EXPECT_NE(format_trace(back), split);
  ASSERT_EQ(back.nodes.size(), t.nodes.size());
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    for (const auto& [id, e] : t.nodes[i].fields) {
      const auto& fields = back.nodes[i].fields;
      const auto it =
          std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == id; });
      ASSERT_NE(it, fields.end());
      ASSERT_EQ(it->second.entries().size(), e.entries().size());
      for (std::size_t k = 0; k < e.entries().size(); ++k)
        EXPECT_TRUE(it->second.entries()[k].values.equals(e.entries()[k].values));
    }
  // A trace in pushed form is written the same by both rules.
  const Trace pushed = parse_trace(folded);
  EXPECT_EQ(encode_compact(pushed, 9, DerivedFields::kSameValues),
            encode_compact(pushed, 9, DerivedFields::kSameRuns));
}

// derive_all's one pass finds what each form's own definition allows: on
// random trip counts and values (some constant per execution, some equal
// but on each execution's last iteration, some neither), each form found
// expands back to the values, and a form is missing only where a value
// breaks its shape.
TEST(TraceCompactDerived, DeriveAllFindsEveryFormThatFits) {
  uint64_t state = 12345;
  auto rnd = [&](int n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(n));
  };
  for (int round = 0; round < 300; ++round) {
    ValueSeq trips, values;
    const int shape = round % 3;
    const int executions = 1 + rnd(40);
    bool last_shape = true, each_shape = true;
    int64_t other = 0;
    bool have_other = false;
    for (int e = 0; e < executions; ++e) {
      const int n = rnd(6);  // empty executions too
      trips.push_back(n);
      const int64_t v = rnd(3);
      for (int k = 0; k < n; ++k) {
        int64_t x = shape == 0 ? v : shape == 1 ? (k + 1 == n ? v : 7) : rnd(3);
        if (k + 1 < n) {
          if (!have_other) other = x, have_other = true;
          if (x != other) last_shape = false;
        }
        if (k > 0 && x != values.back()) each_shape = false;
        values.push_back(x);
      }
    }
    if (values.size() > 1024 * values.run_count() || values.run_count() == 0) continue;
    const std::vector<compact::DerivedValues> forms = compact::derive_all(values, trips);
    bool found_last = false, found_each = false;
    for (const compact::DerivedValues& d : forms) {
      const auto back = compact::expand_derived(d, trips);
      ASSERT_TRUE(back) << "round " << round;
      EXPECT_TRUE(back->equals(values)) << "round " << round;
      found_last = found_last || d.form == compact::DerivedForm::kLastDiffers;
      found_each = found_each || d.form == compact::DerivedForm::kPerExecution;
    }
    EXPECT_EQ(found_last, last_shape) << "round " << round;
    EXPECT_EQ(found_each, each_shape) << "round " << round;
  }
}

// The transfer form (the merge's rounds) derives nothing: every field is
// written plain, so it is larger than the file's form, and reads back the same.
TEST(TraceCompactDerived, TransferFormWritesFieldsPlainAndReadsBack) {
  const std::string text = poll_trace(true, true);
  const Trace t = parse_trace(text);
  const std::string transfer = encode_compact_transfer(t);
  EXPECT_EQ(format_trace(decode_trace(transfer, "poll.tf")), text);
  // Plain flags and tags: more bytes than the derived ones, as the body of
  // a version without derivation would hold.
  EXPECT_GT(transfer.size(), encode_compact(t, 1).size());
}

// The flag costs a few bytes per rank, not some per loop execution; so
// does the tag. Written as they are, they took 190 and 359 bytes here.
TEST(TraceCompactDerived, PollFlagsAndTagsCostFewBytes) {
  const std::size_t none = encode_compact_body(parse_trace(poll_trace(false, false))).size();
  const std::size_t flags = encode_compact_body(parse_trace(poll_trace(true, false))).size();
  const std::size_t tags = encode_compact_body(parse_trace(poll_trace(false, true))).size();
  EXPECT_LE(flags, none + 30) << none << " " << flags;
  EXPECT_LE(tags, none + 40) << none << " " << tags;
}

TEST(TraceCompactDerived, FormsExpandByTheTripCounts) {
  ValueSeq trips, flags;
  for (int n : kTrips[0]) {
    trips.push_back(n);
    for (int k = 0; k < n; ++k) flags.push_back(k + 1 == n ? 1 : 0);
  }
  const auto last = compact::derive(flags, trips, compact::DerivedForm::kLastDiffers);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->other, 0);
  EXPECT_EQ(last->seq.size(), kTrips[0].size());
  EXPECT_EQ(last->seq.run_count(), 1u);
  const auto back = compact::expand_derived(*last, trips);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->same_representation(flags));
  // Not constant through an execution: no per-execution form.
  EXPECT_FALSE(compact::derive(flags, trips, compact::DerivedForm::kPerExecution));
  // A value too many or too few for the executions.
  compact::DerivedValues d = *last;
  d.seq.push_back(1);
  EXPECT_FALSE(compact::expand_derived(d, trips));
  d.seq.pop_back();
  d.seq.pop_back();
  EXPECT_FALSE(compact::expand_derived(d, trips));
  // A file's trip counts cannot make a reader expand without bound: 2^40
  // iterations, or 2^40 empty executions, are refused at once.
  ValueSeq huge;
  huge.push_back_n(int64_t{1} << 40, 2);
  EXPECT_FALSE(compact::expand_derived(*last, huge));
  ValueSeq empty_runs;
  empty_runs.push_back(0);
  empty_runs.push_back(1);
  empty_runs.append_repeated(0, uint64_t{1} << 40);
  EXPECT_FALSE(compact::expand_derived(*last, empty_runs));
  // Trip counts that do not add up to the values.
  ValueSeq fewer = trips;
  fewer.pop_back();
  EXPECT_FALSE(compact::derive(flags, fewer, compact::DerivedForm::kLastDiffers));
}

// Writer and reader find the trip counts of a ranklist by its ranks, not
// by the sections it is written in; ranks of two entries share none.
TEST(TraceCompactDerived, TripCountsAreFoundByRanks) {
  Elastic iters;
  ValueSeq a, b;
  a.push_back(3);
  b.push_back(4);
  iters.entries().push_back({a, Ranklist::from_sections({{0, {{2, 1}}}, {2, {{2, 1}}}})});
  iters.entries().push_back({b, Ranklist::range(4, 4)});
  const compact::LoopTrips trips(iters);
  EXPECT_EQ(trips.of(Ranklist::range(0, 4)), &iters.entries()[0].values);
  EXPECT_EQ(trips.of(Ranklist::range(1, 2)), &iters.entries()[0].values);
  EXPECT_EQ(trips.of(Ranklist::single(6)), &iters.entries()[1].values);
  EXPECT_EQ(trips.of(Ranklist::range(3, 2)), nullptr);
  EXPECT_EQ(trips.of(Ranklist::range(6, 3)), nullptr);
}

// A damaged body with derived entries is refused with a format error or
// read as some other trace, never anything else; and what is read can be
// written again (a negative trip count, say, is not derived).
TEST(TraceCompactDerived, DamagedDerivedEntriesAreRefusedOrRead) {
  const std::string body = encode_compact_body(parse_trace(poll_trace(true, true)));
  int refused = 0, read = 0;
  for (std::size_t at = 0; at < body.size(); ++at)
    for (unsigned char x : {0x01, 0x02, 0x40, 0x80, 0xff}) {
      std::string bad = body;
      bad[at] = static_cast<char>(static_cast<unsigned char>(bad[at]) ^ x);
      const std::string bytes = std::string("\x89TFC\x07", 5) + zstd_compress(bad);
      try {
        const Trace t = decode_compact(bytes, "bad.tf");
        ++read;
        EXPECT_NO_THROW(encode_compact(t)) << "byte " << at << " ^ " << int(x);
      } catch (const TraceFormatError&) {
        ++refused;
      } catch (const std::exception& ex) {
        ADD_FAILURE() << "byte " << at << " ^ " << int(x) << ": " << ex.what();
      }
    }
  EXPECT_GT(refused, 0);
  EXPECT_GT(read, 0);
}

// Files written by the version-6 writer (tests/data/compact-v6, from the
// text files of compact-v5), each next to its text form: still read, and
// rewritten in version 7 the same trace.
TEST(TraceCompactDerived, Version6FilesStillRead) {
  const fs::path dir = fs::path(TRACEFOLD_SOURCE_DIR) / "tests" / "data" / "compact-v6";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".v6.tf")) continue;
    ++files;
    const std::string v6 = read_bytes(entry.path());
    ASSERT_EQ(v6.substr(0, 5), std::string("\x89TFC\x06", 5)) << name;
    const std::string text = read_bytes(dir / (name.substr(0, name.size() - 6) + ".trace"));
    const Trace t = load_trace(entry.path());
    EXPECT_EQ(format_trace(t), format_trace(parse_trace(text))) << name;
    const std::string v7 = encode_compact(t);
    EXPECT_EQ(v7[4], written_version(t)) << name;
    EXPECT_EQ(format_trace(decode_compact(v7, name)), format_trace(parse_trace(text))) << name;
  }
  EXPECT_EQ(files, 10);
}

}  // namespace
}  // namespace tracefold
