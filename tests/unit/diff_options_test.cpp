// diff's options relax exactly the fields they name: a test per option that
// the relaxed field no longer differs and that every other field still does.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "tracefold/analysis_basic.hpp"

namespace tracefold {
namespace {

using testing::make_event;
using testing::make_sites;

EventSource source_of(const std::vector<Event>& events) {
  auto pos = std::make_shared<std::size_t>(0);
  return [&events, pos](Event& e) {
    if (*pos >= events.size()) return false;
    e = events[(*pos)++];
    return true;
  };
}

void set_list(Event& e, const char* name, std::vector<int64_t> values) {
  e.set_list(FieldTable::intern(name, FieldKind::kList), std::move(values));
}

std::optional<Difference> diff(const std::vector<Event>& a, const std::vector<Event>& b,
                               const DiffOptions& options) {
  const SiteTable sites = make_sites(2);
  return diff_events(0, source_of(a), sites, source_of(b), sites, options);
}

// Two runs of one Isend/Irecv/Waitsome program whose Waitsome found a
// different set complete: [0] in one, [0,1] in the other, and the request
// that one run completed early shows as null in the later Waitall's links.
std::vector<Event> run(bool both_at_once) {
  Event waitsome = make_event("MPI_Waitsome", 0, {{"count", 2}});
  waitsome.set(FieldTable::intern("outcount", FieldKind::kScalar), both_at_once ? 2 : 1);
  set_list(waitsome, "indices",
           both_at_once ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0});
  set_list(waitsome, "links", {3, 4});
  Event waitany = make_event("MPI_Waitany", 1, {{"count", 2}});
  waitany.set(FieldTable::intern("index", FieldKind::kScalar), both_at_once ? 0 : 1);
  set_list(waitany, "links",
           both_at_once ? std::vector<int64_t>{5, 6} : std::vector<int64_t>{5, 7});
  return {waitsome, waitany};
}

bool is_outcome(const std::string& field) {
  return field == "index" || field == "indices" || field == "outcount" || field == "links";
}

TEST(DiffOptions, IgnoreOutcomesRelaxesOnlyWhatCompletionsFound) {
  const auto a = run(false), b = run(true);
  auto d = diff(a, b, {});
  ASSERT_TRUE(d);
  EXPECT_TRUE(is_outcome(d->field)) << d->describe();
  DiffOptions relaxed;
  relaxed.ignore_outcomes = true;
  EXPECT_FALSE(diff(a, b, relaxed)) << diff(a, b, relaxed)->describe();

  // Any other field still counts: the Waitany's request count.
  auto c = run(true);
  c[1].set(FieldTable::intern("count", FieldKind::kScalar), 3);
  d = diff(a, c, relaxed);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->field, "count");
  EXPECT_EQ(d->position, 1u);
}

TEST(DiffOptions, IgnoreMatchedLeavesOutcomesCompared) {
  const auto a = run(false), b = run(true);
  DiffOptions matched;
  matched.ignore_matched = true;
  auto d = diff(a, b, matched);
  ASSERT_TRUE(d);
  EXPECT_TRUE(is_outcome(d->field)) << d->describe();
}

}  // namespace
}  // namespace tracefold
