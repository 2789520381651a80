// The backward main kernel's grid order (templates/common/bwd_grid_order.cuh) over the grid
// {group * kv_tiles, groups} the launch plan gives it (group divides the heads): every (kv tile,
// head) taken exactly once; within a group the kv tile slowest; a
// head's kv tiles in ascending launch order (the deterministic dQ's turns wait on lower kv tiles,
// which must have been launched before); a group's CTAs hold its own heads only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "templates/common/bwd_grid_order.cuh"

namespace {

using flexjit::bwd_grid_slot;
using flexjit::BwdGridSlot;

void expect_order(unsigned heads, unsigned kv_tiles, unsigned group) {
  const unsigned groups = heads / group;
  const std::string where =
      "heads " + std::to_string(heads) + ", kv tiles " + std::to_string(kv_tiles) + ", group " + std::to_string(group);
  std::vector<int> taken(heads * kv_tiles, 0);
  std::vector<int> last_tile(heads, -1);
  for (unsigned y = 0; y < groups; ++y)
    for (unsigned x = 0; x < group * kv_tiles; ++x) {  // launch order: x fastest
      const BwdGridSlot s = bwd_grid_slot(x, y, group);
      ASSERT_LT(s.kv_tile, kv_tiles) << where << ", CTA " << x << ", " << y;
      EXPECT_EQ(s.head / group, y) << where << ", CTA " << x << ", " << y << " left its group";
      ASSERT_LT(s.head, heads) << where << ", CTA " << x << ", " << y;
      ++taken[s.head * kv_tiles + s.kv_tile];
      EXPECT_EQ(static_cast<int>(s.kv_tile), last_tile[s.head] + 1) << where << ", CTA " << x << ", " << y;
      last_tile[s.head] = static_cast<int>(s.kv_tile);
      if (x > 0) {
        EXPECT_LE(bwd_grid_slot(x - 1, y, group).kv_tile, s.kv_tile) << where << ", CTA " << x << ", " << y;
      }
    }
  for (int n : taken) EXPECT_EQ(n, 1) << where;
}

TEST(BwdGridOrder, TakesEveryTileOnceKvTileSlowestInEachGroup) {
  for (unsigned heads : {1u, 3u, 64u, 65u})
    for (unsigned kv_tiles : {1u, 2u, 7u, 32u})
      for (unsigned group = 1; group <= heads; ++group)
        if (heads % group == 0) expect_order(heads, kv_tiles, group);
}

}  // namespace
