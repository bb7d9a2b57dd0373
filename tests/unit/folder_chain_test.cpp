// The calls the folder compares a trailing inner loop's body by are a
// slice of its top-level item's flattened calls (Folder::Impl::chain_calls),
// located by the offsets flatten_calls records for each loop of the
// trailing chain. Those offsets are read only when an iteration of a nested
// trailing loop is tested for likeness, which few traces reach, and a wrong
// one changes which iterations fold; so each slice is checked here against
// the calls of that loop's body, at every depth of the chain.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "folder_impl.hpp"

namespace tracefold::folding {
namespace {

Item event(uint64_t key) {
  Item it;
  it.key = key;
  it.reps.push_back(1);
  it.refresh_keys();
  return it;
}

Item loop(std::vector<Item> body) {
  Item it;
  it.loop = true;
  it.reps.push_back(2);
  it.body = std::move(body);
  it.refresh_keys();
  return it;
}

// The calls of a body, one pass through every loop: what the slice must be.
void calls_of(const std::vector<Item>& body, std::vector<uint64_t>& out) {
  for (const Item& it : body) {
    if (it.loop)
      calls_of(it.body, out);
    else
      out.push_back(it.key);
  }
}

TEST(FolderChain, TrailingLoopSlicesAreTheirBodysCalls) {
  // Items as a top level holds them: loops whose bodies end in loops ending
  // in loops (with calls before and between the inner loops), a loop
  // ending in an event (no chain), and an event. They are flattened into
  // one buffer one after another, as the folder does, so that the offsets
  // are absolute.
  const std::vector<Item> top = {
      event(1),
      loop({event(2), event(3),
            loop({event(4), loop({event(5)}), event(6),
                  loop({event(7), event(8), loop({event(9), event(10)})})})}),
      loop({event(11), loop({event(12)}), event(13)}),
      loop({loop({event(14), event(15)}), loop({event(16), loop({event(17)})})}),
  };
  std::vector<uint64_t> keys;
  std::vector<std::size_t> chain_at;
  int checked = 0;
  for (const Item& it : top) {
    const std::size_t from = keys.size(), chain_from = chain_at.size();
    flatten_calls(it, from + 1000, true, keys, chain_at);
    std::vector<const Item*> chain{&it};
    while (chain.back()->loop && chain.back()->body.back().loop)
      chain.push_back(&chain.back()->body.back());
    ASSERT_EQ(chain_at.size() - chain_from, chain.size() - 1);
    for (std::size_t c = 1; c < chain.size(); ++c) {
      std::vector<uint64_t> want;
      calls_of(chain[c]->body, want);
      const auto got = chain_slice(keys, std::span<const std::size_t>(chain_at).subspan(chain_from),
                                   keys.size(), c);
      EXPECT_EQ(std::vector<uint64_t>(got.begin(), got.end()), want) << "chain depth " << c;
      ++checked;
    }
  }
  // Three trailing loops in the first loop, none in the second, two in the third.
  EXPECT_EQ(checked, 5);
}

}  // namespace
}  // namespace tracefold::folding
