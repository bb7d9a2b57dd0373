// Rank-by-rank comparison of two traces for unit tests (gtest assertions).
#pragma once

#include <gtest/gtest.h>

#include "tracefold/expand.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::testing {

/// Every rank's expansion the same: operation, call-site frames and fields
/// of each event (what `tracefold diff` compares).
inline void expect_same_ranks(const Trace& got, const Trace& want) {
  ASSERT_EQ(got.world_size, want.world_size);
  for (int32_t r = 0; r < want.world_size; ++r) {
    const auto a = expand_rank(got, r), b = expand_rank(want, r);
    ASSERT_EQ(a.size(), b.size()) << "rank " << r;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].op, b[i].op) << "rank " << r << " event " << i;
      EXPECT_EQ(got.sites.at(a[i].site), want.sites.at(b[i].site));
      EXPECT_EQ(a[i].fields, b[i].fields) << "rank " << r << " event " << i;
    }
  }
}

}  // namespace tracefold::testing
