// Reading traces of many ranks back (issue 14): `stats` and `print` work per
// ranklist entry, not per rank, and the overlap check of elastic values is
// a sweep. Each is checked against the per-rank answer it replaces: on a
// synthetic trace whose expansion is known by formula (at 4,194,304 ranks,
// the readers' limit, and at sizes small enough to expand every rank), on
// random programs, and on random ranklists.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "random_program.hpp"
#include "tracefold/analysis_basic.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/ranklist_sweep.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {
namespace {

using testing::RandomProgram;
using testing::splitmix64;

// ------------------------------------------------------- per-rank answers

struct CallsBytes {
  uint64_t calls = 0;
  uint64_t bytes = 0;
  bool operator==(const CallsBytes&) const = default;
};

// What `stats` counted before: every rank expanded.
std::map<EventKey, CallsBytes> calls_bytes_per_rank(const Trace& t) {
  std::map<EventKey, CallsBytes> out;
  for (int32_t r = 0; r < t.world_size; ++r) {
    RankIterator it(t, r);
    Event e;
    while (it.next(e)) {
      ++out[e.key()].calls;
      out[e.key()].bytes += event_bytes(e);
    }
  }
  return out;
}

std::map<EventKey, CallsBytes> calls_bytes(const Trace& t) {
  std::map<EventKey, CallsBytes> out;
  for (const StatsRow& row : compute_stats(t))
    if (row.calls > 0 || row.bytes > 0) out[row.key] = CallsBytes{row.calls, row.bytes};
  return out;
}

// What `print` indented each node by before (in steps of two spaces): the
// loops open for the node's lowest rank, every rank followed.
std::vector<std::size_t> depths_per_rank(const Trace& t) {
  std::map<int32_t, std::vector<std::size_t>> open;
  std::map<int32_t, std::size_t> seen;
  std::vector<std::size_t> depths;
  for (const Node& n : t.nodes) {
    n.ranks.for_each([&](int32_t r) {
      auto& ends = open[r];
      std::size_t& pos = seen[r];
      while (!ends.empty() && ends.back() <= pos) ends.pop_back();
      for (const LoopLevel& l : n.loops) {
        const ValueSeq* m = l.members.for_rank(r);
        if (!m || m->empty()) break;
        ends.push_back(pos + static_cast<std::size_t>(m->to_vector().front()));
      }
      ++pos;
    });
    depths.push_back(open[n.ranks.first()].size());
  }
  return depths;
}

// The indentation render_trace gives each node's `#i` line.
std::vector<std::size_t> printed_depths(const std::string& text) {
  std::vector<std::size_t> depths;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent != std::string::npos && line[indent] == '#') depths.push_back(indent / 2);
  }
  return depths;
}

// ------------------------------------------------------ a synthetic trace

// A side x side grid, rows of `side` ranks. Every rank: MPI_Init, a loop of
// 12 iterations (first half of the ranks) or 4 (second half) in which every
// rank but the last column sends east (count 100 in even iterations, 200
// in odd ones, 8-byte elements) and every rank joins an MPI_Allreduce of
// one 8-byte element in odd iterations; MPI_Finalize. The last column heads
// its loop with the Allreduce (it has no send), so the Allreduce is inside
// the loop for rank 0 and the head of a loop for the last column.
std::string grid_trace_text(int32_t side) {
  const int64_t w = int64_t{side} * side, half = w / 2, rows = side / 2;
  auto s = [](auto... v) {
    std::string out = "<";
    std::size_t i = 0;
    ((out += (i++ ? " " : "") + std::to_string(v)), ...);
    return out + ">";
  };
  const std::string senders1 = s(2, 0, rows, side, side - 1, 1);
  const std::string senders2 = s(2, half, rows, side, side - 1, 1);
  const std::string last1 = s(1, side - 1, rows, side);
  const std::string last2 = s(1, half + side - 1, rows, side);
  const std::string half1 = s(1, 0, half, 1), half2 = s(1, half, half, 1);
  return "tracefold-trace 2\nworld " + std::to_string(w) +
         "\nlossy -\nsites 4\nsite 0 app+0x10\nsite 1 app+0x20\nsite 2 app+0x30\n"
         "site 3 app+0x40\ncomms 1\ncomm 0 members *\nnodes 4\n"
         "node 0 MPI_Init site=0 ranks=*\n  count 1 @ *\n"
         "node 1 MPI_Send site=1 ranks=" +
         s(2, 0, side, side, side - 1, 1) +
         "\n"
         "  loop 0 members 2 @ *\n"
         "  loop 0 iters 12 @ " +
         senders1 + " ; 4 @ " + senders2 + "\n  count 1*12 @ " + senders1 + " ; 1*4 @ " + senders2 +
         "\n  field peer 1*12 @ " + senders1 + " ; 1*4 @ " + senders2 +
         "\n  field count (100 200)*6 @ " + senders1 + " ; (100 200)*2 @ " + senders2 +
         "\n  field dsize 8*12 @ " + senders1 + " ; 8*4 @ " + senders2 +
         "\n"
         "node 2 MPI_Allreduce site=2 ranks=*\n"
         "  loop 0 members 1 @ " +
         last1 + " ; 1 @ " + last2 + "\n  loop 0 iters 12 @ " + last1 + " ; 4 @ " + last2 +
         "\n  count (0 1)*6 @ " + half1 + " ; (0 1)*2 @ " + half2 + "\n  field count 1*6 @ " +
         half1 + " ; 1*2 @ " + half2 + "\n  field dsize 8*6 @ " + half1 + " ; 8*2 @ " + half2 +
         "\n"
         "node 3 MPI_Finalize site=3 ranks=*\n  count 1 @ *\nend\n";
}

// The calls and bytes of grid_trace_text(side), by formula.
std::map<EventKey, CallsBytes> grid_calls_bytes(const Trace& t, int32_t side) {
  const uint64_t w = uint64_t(side) * uint64_t(side);
  const uint64_t senders_per_half = (w / 2) / uint64_t(side) * uint64_t(side - 1);
  std::map<EventKey, CallsBytes> out;
  out[t.nodes[0].key] = {w, 0};
  out[t.nodes[1].key] = {senders_per_half * (12 + 4), senders_per_half * (6 + 2) * (100 + 200) * 8};
  out[t.nodes[2].key] = {w / 2 * (6 + 2), w / 2 * (6 + 2) * 8};
  out[t.nodes[3].key] = {w, 0};
  return out;
}

TEST(ReadBack, StatsOfASyntheticGridAreItsPerRankExpansion) {
  for (int32_t side : {2, 4, 6, 16}) {
    SCOPED_TRACE("side " + std::to_string(side));
    const Trace t = parse_trace(grid_trace_text(side));
    const auto want = grid_calls_bytes(t, side);
    ASSERT_EQ(calls_bytes_per_rank(t), want);  // the formula is right
    EXPECT_EQ(calls_bytes(t), want);
    EXPECT_EQ(printed_depths(render_trace(t)), depths_per_rank(t));
    EXPECT_EQ(printed_depths(render_trace(t)), (std::vector<std::size_t>{0, 1, 1, 0}));
  }
}

TEST(ReadBack, StatsAndPrintOfFourMillionRanksWithoutExpandingThem) {
  // 2,048 x 2,048 = 4,194,304 ranks, the readers' limit; expanding each of
  // them (what stats did) takes minutes.
  const int32_t side = 2048;
  const Trace t = decode_trace(encode_compact(parse_trace(grid_trace_text(side))), "grid");
  ASSERT_EQ(t.world_size, side * side);
  EXPECT_EQ(calls_bytes(t), grid_calls_bytes(t, side));
  for (const StatsRow& row : compute_stats(t))
    if (row.op == "MPI_Send") {
      EXPECT_EQ(row.ranks.to_string(), "<2 0 2048 2048 2047 1>");
    }
  const std::string text = render_trace(t);
  EXPECT_EQ(printed_depths(text), (std::vector<std::size_t>{0, 1, 1, 0}));
  EXPECT_NE(text.find("#2 MPI_Allreduce"), std::string::npos) << text;
  EXPECT_NE(text.find("  loop iters 12 @ <1 2047 1024 2048> ; 4 @ <1 2099199 1024 2048>"),
            std::string::npos)
      << text;
}

// --------------------------------------------------------- random programs

Trace fold_and_merge(const RandomProgram& prog) {
  std::vector<Trace> parts;
  for (int32_t r = 0; r < prog.world_size(); ++r) {
    const CommTable comms = prog.comms_for(r);
    Folder folder(r);
    for (Event ev : prog.events(r)) {
      encode_relative(ev, r, comms);
      folder.append(ev);
    }
    parts.push_back(folder.finish(prog.world_size(), prog.sites(), comms));
  }
  return reduce_traces(std::move(parts));
}

TEST(ReadBack, StatsAndPrintOfRandomProgramsAreTheirPerRankAnswers) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Trace t = fold_and_merge(RandomProgram(seed));
    EXPECT_EQ(calls_bytes(t), calls_bytes_per_rank(t));
    EXPECT_EQ(printed_depths(render_trace(t)), depths_per_rank(t));
  }
}

// ---------------------------------------------------------- the sweeps

Ranklist random_ranklist(uint64_t& state, int32_t world) {
  std::vector<Ranklist::Section> sections(1 + splitmix64(state) % 3);
  for (auto& s : sections) {
    s.start = static_cast<int32_t>(splitmix64(state) % static_cast<uint64_t>(world));
    const int32_t dims = static_cast<int32_t>(splitmix64(state) % 3);
    int64_t last = s.start;
    for (int32_t d = 0; d < dims; ++d) {
      const auto stride = static_cast<int32_t>(1 + splitmix64(state) % 7);
      const auto count = static_cast<int32_t>(1 + splitmix64(state) % 5);
      if (last + int64_t{count - 1} * stride >= world) break;
      last += int64_t{count - 1} * stride;
      s.dims.emplace_back(count, stride);
    }
  }
  return Ranklist::from_sections(sections);
}

TEST(ReadBack, FirstOverlappingIsThePairwiseAnswer) {
  uint64_t state = 7;
  int overlaps = 0;
  for (int round = 0; round < 2000; ++round) {
    const int32_t world = 8 + static_cast<int32_t>(splitmix64(state) % 200);
    std::vector<Ranklist> lists(1 + splitmix64(state) % 8);
    for (auto& l : lists) l = random_ranklist(state, world);
    std::size_t want = lists.size();
    for (std::size_t i = 0; i < lists.size() && want == lists.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (lists[i].intersects(lists[j])) {
          want = i;
          break;
        }
    std::vector<const Ranklist*> ptrs;
    for (const auto& l : lists) ptrs.push_back(&l);
    ASSERT_EQ(first_overlapping(ptrs), want) << "round " << round;
    overlaps += want < lists.size();
  }
  EXPECT_GT(overlaps, 100);  // both answers were exercised
  EXPECT_LT(overlaps, 1900);
}

TEST(ReadBack, FirstOverlappingOfAMillionRankGrid) {
  // 1,024 rows and 1,024 columns of a 1,024 x 1,024 grid: the rows are
  // disjoint, the first column meets the first row. Pairwise this is a
  // million pairs of up to 1,024 intervals each.
  std::vector<Ranklist> lists;
  for (int32_t r = 0; r < 1024; ++r) lists.push_back(Ranklist::range(r * 1024, 1024));
  for (int32_t c = 0; c < 1024; ++c)
    lists.push_back(Ranklist::from_sections({{c, {{1024, 1024}}}}));
  std::vector<const Ranklist*> ptrs;
  for (const auto& l : lists) ptrs.push_back(&l);
  EXPECT_EQ(first_overlapping(std::vector<const Ranklist*>(ptrs.begin(), ptrs.begin() + 1024)),
            1024u);
  EXPECT_EQ(first_overlapping(ptrs), 1024u);
  EXPECT_EQ(first_overlapping(std::vector<const Ranklist*>(ptrs.begin() + 1024, ptrs.end())),
            1024u);
}

TEST(ReadBack, SplitRanksGroupsRanksThatEveryGroupHoldsAlike) {
  uint64_t state = 11;
  for (int round = 0; round < 500; ++round) {
    const int32_t world = 8 + static_cast<int32_t>(splitmix64(state) % 120);
    // Groups of disjoint ranklists: random lists with the earlier lists'
    // ranks taken out.
    std::vector<std::vector<Ranklist>> groups(1 + splitmix64(state) % 5);
    for (auto& g : groups) {
      Ranklist used;
      for (uint64_t k = splitmix64(state) % 4; k > 0; --k) {
        std::vector<int32_t> fresh;
        random_ranklist(state, world).for_each([&](int32_t r) {
          if (!used.contains(r)) fresh.push_back(r);
        });
        if (fresh.empty()) continue;
        g.push_back(Ranklist::from_ranks(fresh));
        used.unite(g.back());
      }
    }
    const Ranklist ranks = random_ranklist(state, world).united(random_ranklist(state, world));
    std::vector<std::vector<const Ranklist*>> ptrs;
    for (const auto& g : groups) {
      auto& p = ptrs.emplace_back();
      for (const auto& l : g) p.push_back(&l);
    }
    // Per rank: the entry of each group that holds it.
    std::map<std::vector<int>, std::pair<int32_t, uint64_t>> want;  // -> first, size
    ranks.for_each([&](int32_t r) {
      std::vector<int> sig;
      for (const auto& g : groups) {
        int e = -1;
        for (std::size_t k = 0; k < g.size(); ++k)
          if (g[k].contains(r)) e = static_cast<int>(k);
        sig.push_back(e);
      }
      auto [it, added] = want.try_emplace(sig, r, 0);
      ++it->second.second;
    });
    std::vector<std::pair<int32_t, uint64_t>> want_sorted;
    for (const auto& [sig, c] : want) want_sorted.push_back(c);
    std::sort(want_sorted.begin(), want_sorted.end());
    std::vector<std::pair<int32_t, uint64_t>> got;
    for (const RankClass& c : split_ranks(ranks, ptrs)) got.emplace_back(c.first, c.size);
    ASSERT_EQ(got, want_sorted) << "round " << round;
  }
}

}  // namespace
}  // namespace tracefold
