// Folder::append_repeats (the recorder hands it runs of identical
// unsuccessful polls) must fold exactly as that many single appends do,
// and the ValueSeq operations behind it must keep the representation that
// single calls give.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "random_program.hpp"
#include "test_util.hpp"
#include "tracefold/event.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/histogram.hpp"
#include "tracefold/trace.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold {
namespace {

using testing::RandomProgram;
using testing::Rng;

ValueSeq random_seq(Rng& rng) {
  ValueSeq s;
  const int64_t alphabet = rng.between(1, 4);
  const int len = static_cast<int>(rng.between(0, 40));
  for (int i = 0; i < len; ++i) s.push_back(rng.between(0, alphabet - 1));
  if (rng.percent(30)) s.append_repeated(rng.between(0, alphabet - 1), rng.below(6) + 1);
  if (rng.percent(5)) s.make_histogram();
  return s;
}

TEST(ValueSeqRepeats, PushBackNIsRepeatedPushBack) {
  Rng rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    ValueSeq a = random_seq(rng);
    ValueSeq b = a;
    const int64_t v = rng.between(0, 4);
    const uint64_t n = rng.below(8);
    a.push_back_n(v, n);
    for (uint64_t i = 0; i < n; ++i) b.push_back(v);
    ASSERT_TRUE(a.same_representation(b)) << a.to_string() << " vs " << b.to_string();
  }
}

TEST(ValueSeqRepeats, StepBackIsRepeatedSetBack) {
  Rng rng(11);
  for (int trial = 0; trial < 20000; ++trial) {
    ValueSeq a = random_seq(rng);
    if (a.empty() || a.is_histogram()) continue;
    ValueSeq b = a;
    const uint64_t n = rng.below(8);
    a.step_back(1, n);
    for (uint64_t i = 0; i < n; ++i) b.set_back(b.back() + 1);
    ASSERT_TRUE(a.same_representation(b)) << a.to_string() << " vs " << b.to_string();
  }
}

// A list field's values as the folder stores one execution: its length,
// then its elements (Folder::Impl::field_values).
ValueSeq list_values(Rng& rng, int64_t alphabet) {
  ValueSeq v;
  const auto len = static_cast<int64_t>(rng.below(4));
  v.push_back(len);
  for (int64_t i = 0; i < len; ++i) v.push_back(rng.between(0, alphabet - 1));
  return v;
}

TEST(ValueSeqRepeats, AppendNIsRepeatedAppend) {
  Rng rng(17);
  for (int trial = 0; trial < 20000; ++trial) {
    ValueSeq a = random_seq(rng);
    const int64_t alphabet = rng.between(1, 3);
    ValueSeq other = rng.percent(20) ? random_seq(rng) : list_values(rng, alphabet);
    // Often the polling loop's state: the list appended a few times already,
    // sometimes after an earlier stretch of the same run (folds may follow).
    // Stretches of the same length between the same value make the run
    // fold with the ones before it once it reaches that length.
    if (rng.percent(60)) {
      const uint64_t before = rng.below(12);
      const int64_t between = rng.between(0, alphabet);
      const bool separated = rng.percent(50);
      for (int64_t s = rng.between(1, 3); s-- > 0;) {
        if (separated) a.push_back(between);
        for (uint64_t i = 0; i < before; ++i) a.append(other);
      }
      if (separated) a.push_back(between);
    }
    ValueSeq b = a;
    const uint64_t n = rng.below(40);
    a.append_n(other, n);
    for (uint64_t i = 0; i < n; ++i) b.append(other);
    ASSERT_TRUE(a.same_representation(b)) << a.to_string() << " vs " << b.to_string() << " ("
                                          << other.to_string() << " x" << n << ")";
  }
}

TEST(HistogramRepeats, AddEachIsRepeatedAdd) {
  Rng rng(13);
  for (int trial = 0; trial < 2000; ++trial) {
    Histogram a, b;
    const int before = static_cast<int>(rng.below(5));
    for (int i = 0; i < before; ++i) {
      const int64_t v = rng.between(0, 1) ? rng.between(0, 100) : rng.between(0, 1'000'000);
      a.add(v, static_cast<int32_t>(rng.below(4)));
      b = a;
    }
    std::vector<int64_t> values(rng.below(50));
    for (int64_t& v : values)
      v = rng.percent(10) ? -1 : rng.percent(50) ? rng.between(90, 130) : rng.between(0, 5000);
    const auto rank = static_cast<int32_t>(rng.below(4));
    a.add_each(
        values.size(), [&](std::size_t i) { return values[i]; }, rank);
    for (int64_t v : values)
      if (v >= 0) b.add(v, rank);
    ASSERT_EQ(a.to_string(), b.to_string());
  }
  // A histogram read from an old trace may hold more bins than kMaxBins:
  // the next sample narrows it, whether or not its bin exists.
  Histogram old = Histogram::parse(
      "n=3 sum=1011 min=1@0 max=1000@0 bins=0:1:1:1:1,3:1:10:10:10,9:1:1000:1000:1000");
  Histogram copy = old;
  old.add_each(
      1, [](std::size_t) { return int64_t{1}; }, 0);
  copy.add(1, 0);
  EXPECT_EQ(old.to_string(), copy.to_string());
  EXPECT_LE(old.bins().size(), std::size_t{Histogram::kMaxBins});
}

// Bins whose range reaches 2^63 (spans of 32 and 64 log bins): a negative
// sample, 2^63 or more read as unsigned, must still count as no sample.
TEST(HistogramRepeats, AddEachAtTheTopOfTheRange) {
  Rng rng(31);
  const int64_t tops[] = {
      INT64_MAX, INT64_MAX - 1, int64_t{1} << 62, (int64_t{1} << 62) - 1, int64_t{1} << 32, 1, 0,
      -1,        INT64_MIN};
  for (int trial = 0; trial < 500; ++trial) {
    Histogram a, b;
    std::vector<int64_t> values(rng.below(40));
    for (int64_t& v : values)
      v = rng.percent(60) ? tops[rng.below(std::size(tops))] : rng.between(0, 1'000'000);
    const std::size_t cut = values.empty() ? 0 : rng.below(values.size());
    for (std::size_t i = 0; i < cut; ++i)
      if (values[i] >= 0) a.add(values[i], 0);
    a.add_each(
        values.size() - cut, [&](std::size_t i) { return values[cut + i]; }, 0);
    for (int64_t v : values)
      if (v >= 0) b.add(v, 0);
    ASSERT_EQ(a.to_string(), b.to_string());
  }
}

bool same_event(const Event& a, const Event& b) {
  return a.op == b.op && a.site == b.site && a.fields == b.fields && a.stats.empty() &&
         b.stats.empty();
}

// Folds `events` once with one append per event and once with each run of
// identical events (times aside) handed over as append + append_repeats in
// randomly cut pieces; expects the same structure and trace. With the walk
// path (elastic_iterations), which path takes an iteration depends on how
// earlier sessions ended, and a run of repeats gives up a session that
// single appends would finish, so the two may fold differently: there,
// both must expand to the events.
void expect_repeats_fold_alike(const std::vector<Event>& events, int32_t world,
                               const SiteTable& sites, const CommTable& comms, uint64_t seed,
                               std::size_t window, bool walk = false, int32_t rank = 0) {
  FoldOptions options;
  options.window = window;
  options.elastic_iterations = walk;
  Folder single(rank, options), repeated(rank, options);
  for (const Event& e : events) single.append(e);
  Rng rng(seed);
  std::vector<RepeatTiming> times;
  for (std::size_t i = 0; i < events.size();) {
    repeated.append(events[i]);
    std::size_t j = i + 1;
    while (j < events.size() && same_event(events[j], events[i])) {
      const std::size_t piece = std::min<std::size_t>(events.size() - j, rng.below(40) + 1);
      times.clear();
      std::size_t k = j;
      for (; k < j + piece && same_event(events[k], events[i]); ++k)
        times.push_back({events[k].compute_ns, events[k].comm_ns});
      if (seed % 2 == 1) {
        // The overload the recorder calls: it sets the event's times per
        // copy and must hand the event back as it was given.
        Event given = events[i];
        repeated.append_repeats(given, times);
        ASSERT_TRUE(given.same_call(events[i]) && given.compute_ns == events[i].compute_ns &&
                    given.comm_ns == events[i].comm_ns)
            << "seed " << seed << " event " << i;
      } else {
        repeated.append_repeats(events[i], times);
      }
      j = k;
    }
    i = j;
  }
  ASSERT_EQ(single.events(), repeated.events()) << "seed " << seed;
  if (walk) {
    for (const Folder* f : {&single, &repeated}) {
      auto out = expand_rank(f->finish(world, sites, comms), rank);
      ASSERT_EQ(out.size(), events.size()) << "seed " << seed << " window " << window;
      for (std::size_t i = 0; i < out.size(); ++i) {
        encode_relative(out[i], rank, comms);  // as the events were given
        ASSERT_TRUE(out[i].same_call(events[i])) << "seed " << seed << " event " << i;
      }
    }
    return;
  }
  ASSERT_EQ(single.structure(), repeated.structure()) << "seed " << seed << " window " << window;
  ASSERT_EQ(format_trace(single.finish(world, sites, comms)),
            format_trace(repeated.finish(world, sites, comms)))
      << "seed " << seed << " window " << window;
}

// Random programs, with timings, whose loops of single calls give runs of
// identical events.
TEST(Property, RepeatsFoldLikeSingleAppendsInRandomPrograms) {
  for (uint64_t seed = 23'000; seed < 23'080; ++seed) {
    const RandomProgram prog(seed);
    for (int32_t r = 0; r < prog.world_size(); ++r) {
      const CommTable comms = prog.comms_for(r);
      std::vector<Event> events = prog.events(r);
      for (std::size_t i = 0; i < events.size(); ++i) {
        encode_relative(events[i], r, comms);
        events[i].compute_ns = static_cast<int64_t>((i * 7919 + seed) % 1000);
        events[i].comm_ns = i % 5 == 0 ? -1 : static_cast<int64_t>(i % 13);
      }
      for (const std::size_t window : {std::size_t{4}, std::size_t{64}})
        for (const bool walk : {false, true})
          expect_repeats_fold_alike(events, prog.world_size(), prog.sites(), comms, seed + r,
                                    window, walk, r);
    }
  }
}

// Polling codes: steps of Isends, then per expected message a run of
// unsuccessful polls (MPI_Iprobe, or MPI_Test with its request link list)
// of varying length, the successful one and a Recv; the steps form loops
// whose bodies hold the polling loops.
TEST(Property, RepeatsFoldLikeSingleAppendsInPollingLoops) {
  const OpId isend = *OpTable::find("MPI_Isend"), iprobe = *OpTable::find("MPI_Iprobe"),
             test = *OpTable::find("MPI_Test"), recv = *OpTable::find("MPI_Recv"),
             waitall = *OpTable::find("MPI_Waitall"), allreduce = *OpTable::find("MPI_Allreduce");
  const FieldId peer = FieldTable::peer(), tag = *FieldTable::find("tag"),
                flag = *FieldTable::find("flag"), links = *FieldTable::find("links");
  SiteTable sites;
  for (SiteId i = 0; i < 6; ++i) sites.intern(RandomProgram::site_frames(i));
  CommTable comms;
  comms.define_world(4);
  for (uint64_t variant = 0; variant < 40; ++variant) {
    Rng rng(variant);
    std::vector<Event> events;
    auto call = [&](OpId op, SiteId site) -> Event& {
      Event& e = events.emplace_back();
      e.op = op;
      e.site = site;
      e.compute_ns = variant % 4 == 1 && rng.percent(10) ? -1 : rng.between(0, 3000);
      e.comm_ns = rng.percent(10) ? -1 : rng.between(0, 100);
      return e;
    };
    const int steps = 10 + static_cast<int>(variant % 7) * 5;
    for (int s = 0; s < steps; ++s) {
      const int msgs = 1 + static_cast<int>(variant % 3);
      for (int m = 0; m < msgs; ++m) call(isend, 0).set(peer, m + 1);
      for (int m = 0; m < msgs; ++m) {
        int64_t polls = rng.between(0, variant % 5 == 0 ? 3 : 60);
        if (rng.percent(3)) polls = 1000;
        const bool with_test = variant % 2 == 1 && m == 0;
        for (int64_t p = 0; p <= polls; ++p) {
          const bool found = p == polls;
          if (with_test) {
            Event& e = call(test, 4);
            e.set_list(links, {static_cast<int64_t>(2 + m)});
            e.set(flag, found ? 1 : 0);
          } else {
            Event& e = call(iprobe, 1);
            e.set(tag, 7);
            e.set(flag, found ? 1 : 0);
          }
        }
        if (!with_test) call(recv, 2).set(peer, m + 1);
      }
      call(waitall, 3);
      if (s % 4 == 3 || (variant % 6 == 5 && rng.percent(20))) call(allreduce, 5);
    }
    for (const std::size_t window : {std::size_t{4}, std::size_t{64}})
      for (const bool walk : {false, true})
        expect_repeats_fold_alike(events, 4, sites, comms, variant, window, walk);
  }
}

// A waiting loop nested in an outer loop (`[Irecv [Test]*n Barrier Wait]*R`):
// the outer loop ends in other calls, yet an earlier item ends in the
// poll, so the poll loop is refolded after each of its iterations. Those
// refolds find nothing, and the repeats must then be counted in place
// (FoldPathCounts::repeats), not appended one by one, while folding exactly
// as single appends do.
TEST(FolderRepeats, NestedPollingLoopRepeatsInPlace) {
  const OpId irecv = *OpTable::find("MPI_Irecv"), test = *OpTable::find("MPI_Test"),
             barrier = *OpTable::find("MPI_Barrier"), wait = *OpTable::find("MPI_Wait");
  const FieldId flag = *FieldTable::find("flag"), links = *FieldTable::find("links");
  SiteTable sites;
  for (SiteId i = 0; i < 4; ++i) sites.intern(RandomProgram::site_frames(i));
  CommTable comms;
  comms.define_world(2);
  auto event = [](OpId op, SiteId site, int64_t t) {
    Event e;
    e.op = op;
    e.site = site;
    e.compute_ns = 100 + t % 7;
    e.comm_ns = 10 + t % 3;
    return e;
  };
  Folder single(0), repeated(0);
  std::vector<RepeatTiming> times;
  uint64_t polls = 0;
  const int rounds = 20;
  for (int r = 0; r < rounds; ++r) {
    single.append(event(irecv, 0, r));
    repeated.append(event(irecv, 0, r));
    Event poll = event(test, 1, r);
    poll.set_list(links, {1});
    poll.set(flag, 0);
    const int n = 300 + (r * 7919) % 151;
    polls += static_cast<uint64_t>(n);
    single.append(poll);
    repeated.append(poll);
    times.clear();
    for (int p = 1; p < n; ++p) {
      Event again = poll;
      again.compute_ns = p % 11;
      again.comm_ns = 5 + p % 4;
      single.append(again);
      times.push_back({again.compute_ns, again.comm_ns});
    }
    repeated.append_repeats(poll, times);
    single.append(event(barrier, 2, r));
    repeated.append(event(barrier, 2, r));
    single.append(event(wait, 3, r));
    repeated.append(event(wait, 3, r));
  }
  ASSERT_EQ(single.structure(), repeated.structure());
  ASSERT_EQ(format_trace(single.finish(2, sites, comms)),
            format_trace(repeated.finish(2, sites, comms)));
  const FoldPathCounts paths = repeated.path_counts();
  EXPECT_EQ(paths.general + paths.fast + paths.replay + paths.repeats + paths.walk,
            polls + 3 * rounds);
  // A few events per round start or leave the poll loop; every other poll
  // is counted in place (before, the second round's polls were each taken
  // by the fast path, with a refold after every one).
  EXPECT_LE(paths.general + paths.fast + paths.replay + paths.walk, uint64_t{6} * rounds);
  EXPECT_GE(paths.repeats, polls - uint64_t{3} * rounds);
}

}  // namespace
}  // namespace tracefold
