// The walk and fast paths append a list field's values without making the
// sequence the general path makes for them (append_list_values); the two
// must give the same representation, or a trace would depend on the path.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "folder_impl.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold::folding {
namespace {

TEST(FolderLists, ShortListsAppendAsTheirSequence) {
  std::mt19937 rng(29);
  // Lists up to past the short bound, of few distinct values so that runs,
  // partial repeats and all-equal lists (length == every element) occur.
  for (int trial = 0; trial < 4000; ++trial) {
    ValueSeq a, b;
    const int events = 1 + static_cast<int>(rng() % 12);
    for (int e = 0; e < events; ++e) {
      std::vector<int64_t> list(rng() % (kSmallListValues + 3));
      const int64_t distinct = 1 + static_cast<int64_t>(rng() % 3);
      for (int64_t& x : list) x = static_cast<int64_t>(rng() % distinct);
      if (rng() % 4 == 0)
        for (int64_t& x : list) x = static_cast<int64_t>(list.size());
      a.append(list_values(list));
      append_list_values(b, list);
      ASSERT_TRUE(a.same_representation(b)) << "trial " << trial << " event " << e << ": "
                                            << a.to_string() << " vs " << b.to_string();
    }
    EXPECT_EQ(a.to_vector(), b.to_vector());
  }
}

}  // namespace
}  // namespace tracefold::folding
