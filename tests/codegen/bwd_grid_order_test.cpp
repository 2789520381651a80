// The backward main kernel's grid order (templates/common/bwd_grid_order.cuh): every (kv tile, head) taken exactly once; within a
// group the kv tile slowest; a head's kv tiles in ascending order (the deterministic dQ's turns
// wait on lower kv tiles, which must have been launched before); groups never mix.
#include <gtest/gtest.h>

#include <vector>

#include "templates/common/bwd_grid_order.cuh"

namespace {

using flexjit::bwd_grid_slot;
using flexjit::BwdGridSlot;

void expect_order(unsigned heads, unsigned kv_tiles, unsigned group) {
  const std::string where =
      "heads " + std::to_string(heads) + ", kv tiles " + std::to_string(kv_tiles) + ", group " + std::to_string(group);
  std::vector<int> taken(heads * kv_tiles, 0);
  std::vector<int> last_tile(heads, -1);
  for (unsigned i = 0; i < heads * kv_tiles; ++i) {
    const BwdGridSlot s = bwd_grid_slot(i, heads, kv_tiles, group);
    ASSERT_LT(s.head, heads) << where << ", CTA " << i;
    ASSERT_LT(s.kv_tile, kv_tiles) << where << ", CTA " << i;
    ++taken[s.head * kv_tiles + s.kv_tile];
    EXPECT_EQ(static_cast<int>(s.kv_tile), last_tile[s.head] + 1) << where << ", CTA " << i << ": head " << s.head;
    last_tile[s.head] = static_cast<int>(s.kv_tile);
    EXPECT_EQ(s.head / group, i / (group * kv_tiles)) << where << ", CTA " << i << " left its group";
    if (i > 0) {
      const BwdGridSlot p = bwd_grid_slot(i - 1, heads, kv_tiles, group);
      if (p.head / group == s.head / group) {
        EXPECT_LE(p.kv_tile, s.kv_tile) << where << ", CTA " << i;
      }
    }
  }
  for (int n : taken) EXPECT_EQ(n, 1) << where;
}

TEST(BwdGridOrder, TakesEveryTileOnceKvTileSlowestInEachGroup) {
  for (unsigned heads : {1u, 3u, 64u, 65u})
    for (unsigned kv_tiles : {1u, 2u, 7u, 32u})
      for (unsigned group : {1u, 2u, 5u, heads}) expect_order(heads, kv_tiles, group);
}

}  // namespace
