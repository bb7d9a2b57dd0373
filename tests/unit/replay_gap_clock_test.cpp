// GapClock: the wall time a replay spends on recorded computation gaps, with
// the walk's overruns of short gaps owed to later ones.
#include <gtest/gtest.h>

#include "gap_clock.hpp"

using tracefold::replay_detail::GapClock;
using tracefold::replay_detail::kMaxWalkOverrunNs;

TEST(GapClock, SpendsWhatIsLeftOfTheGap) {
  GapClock g;
  // A 1,000 ns gap from t=0, 300 ns of it already gone on the walk.
  EXPECT_EQ(g.left(0, 1000, 300), 700);
  EXPECT_EQ(g.owed(), 0);
}

TEST(GapClock, OverrunOfAShortGapIsPaidByTheNextLongOne) {
  GapClock g;
  // Calls back to back: 100 ns recorded, the walk took 600.
  EXPECT_EQ(g.left(0, 100, 600), 0);
  EXPECT_EQ(g.owed(), 500);
  EXPECT_EQ(g.left(1000, 200, 1400), 0);  // another 200 over
  EXPECT_EQ(g.owed(), 700);
  // A computation of 10,000 ns, 50 gone: 9,950 left, less the 700 owed.
  EXPECT_EQ(g.left(2000, 10000, 2050), 9250);
  EXPECT_EQ(g.owed(), 0);
}

TEST(GapClock, ADebtLargerThanTheGapIsPaidInPart) {
  GapClock g;
  g.left(0, 0, 5000);
  ASSERT_EQ(g.owed(), 5000);
  EXPECT_EQ(g.left(10000, 3000, 10000), 0);
  EXPECT_EQ(g.owed(), 2000);
  EXPECT_EQ(g.left(20000, 3000, 20000), 1000);
  EXPECT_EQ(g.owed(), 0);
}

TEST(GapClock, ALostCoreIsNotOwed) {
  GapClock g;
  // The rank was descheduled during the walk: far more than any walk.
  EXPECT_EQ(g.left(0, 100, 100 + kMaxWalkOverrunNs + 1), 0);
  EXPECT_EQ(g.owed(), 0);
  EXPECT_EQ(g.left(0, 100, 100 + kMaxWalkOverrunNs), 0);
  EXPECT_EQ(g.owed(), kMaxWalkOverrunNs);
}
