// The folder's index of item positions by last call (folding::KeyIndex)
// against std::map, through growth, colliding keys and emptied lists.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "folder_impl.hpp"

namespace tracefold {
namespace {

TEST(FolderKeyIndex, AgreesWithAMapThroughGrowthAndCollisions) {
  std::mt19937_64 rng(5);
  folding::KeyIndex index;
  std::map<uint64_t, std::vector<std::size_t>> ref;
  // Packed (op, site) keys, and keys equal modulo the table's sizes.
  std::vector<uint64_t> keys;
  for (uint64_t op = 1; op <= 6; ++op)
    for (uint64_t site = 0; site < 20; ++site) keys.push_back(op << 32 | site);
  for (uint64_t i = 0; i < 40; ++i) keys.push_back(i << 40);
  EXPECT_EQ(index.find(keys[0]), nullptr);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t key = keys[rng() % keys.size()];
    if (rng() % 3 == 0) {
      auto& v = index[key];
      auto& r = ref[key];
      ASSERT_EQ(v, r);
      if (!v.empty()) {
        v.pop_back();
        r.pop_back();
      }
    } else {
      index[key].push_back(static_cast<std::size_t>(step));
      ref[key].push_back(static_cast<std::size_t>(step));
    }
  }
  for (const uint64_t key : keys) {
    const auto* found = index.find(key);
    const auto r = ref.find(key);
    if (r == ref.end()) {
      EXPECT_EQ(found, nullptr) << key;
    } else {
      ASSERT_NE(found, nullptr) << key;
      EXPECT_EQ(*found, r->second) << key;
    }
  }
  EXPECT_EQ(ref.size(), keys.size());  // every key was used: the table grew
}

}  // namespace
}  // namespace tracefold
