// Reading a block mask back on the host (flexjit/block_mask_read.hpp): the layout of
// flexjit/block_mask.hpp decoded, and malformed maps (a builder bug, or storage that was never
// written) reported instead of trusted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "flexjit/block_mask_read.hpp"

namespace flexjit {
namespace {

using ::testing::HasSubstr;

// Two query tiles, three kv tiles, shared by every batch entry and head.
BlockMask two_by_three() {
  BlockMask m;
  m.storage = reinterpret_cast<void*>(0x1000);
  m.B = 2, m.Hq = 4, m.Tq = 200, m.Tkv = 150;
  m.block_m = 128, m.block_n = 64;
  m.q_tiles = 2, m.kv_tiles = 3;
  return m;
}

// counts, then one row of kv_tiles entries per query tile (tile * 4 + class).
std::vector<std::int32_t> ints(std::vector<std::int32_t> counts, std::vector<std::vector<std::int32_t>> rows) {
  std::vector<std::int32_t> out = counts;
  for (auto& r : rows) {
    r.resize(3, -7);  // what lies past a row's count is never read
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

TEST(BlockMaskRead, DecodesRowsAndCounts) {
  const BlockMask m = two_by_three();
  const auto rows = decode_block_mask(m, ints({1, 3}, {{0 * 4 + 2}, {0 * 4 + 1, 1 * 4 + 1, 2 * 4 + 2}}));
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(rows[0].size(), 1u);
  EXPECT_EQ(rows[0][0].kv_tile, 0);
  EXPECT_EQ(rows[0][0].cls, 2);
  ASSERT_EQ(rows[1].size(), 3u);
  EXPECT_EQ(rows[1][2].kv_tile, 2);
  const BlockMaskCounts c = count_block_mask(m, rows);
  EXPECT_EQ(c.pairs, 6);
  EXPECT_EQ(c.visited, 4);
  EXPECT_EQ(c.full, 2);
  EXPECT_EQ(c.str(), "4 of 6 tile pairs visited (66.7%), 2 of them full");
}

TEST(BlockMaskRead, PerBatchMapsHaveMoreRows) {
  BlockMask m = two_by_three();
  EXPECT_EQ(m.storage_ints(), 2 * (1 + 3));
  m.per_batch = true;
  EXPECT_EQ(m.rows(), 4);
  EXPECT_EQ(m.storage_ints(), 4 * (1 + 3));
  EXPECT_EQ(decode_block_mask(m, ints({0, 0, 0, 0}, {{}, {}, {}, {}})).size(), 4u);
}

TEST(BlockMaskRead, MalformedMapsAreReported) {
  const BlockMask m = two_by_three();
  auto error = [&](const std::vector<std::int32_t>& v) {
    try {
      decode_block_mask(m, v);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error(ints({-1, 0}, {{}, {}})), HasSubstr("row 0: count -1 outside [0, 3]"));  // never written
  EXPECT_THAT(error(ints({4, 0}, {{}, {}})), HasSubstr("count 4 outside [0, 3]"));
  EXPECT_THAT(error(ints({2, 0}, {{1 * 4 + 1, 0 * 4 + 1}, {}})), HasSubstr("row 0: entry 1 = 1 is malformed"));  // order
  EXPECT_THAT(error(ints({1, 0}, {{3 * 4 + 1}, {}})), HasSubstr("entry 0 = 13 is malformed"));  // tile out of range
  EXPECT_THAT(error(ints({1, 0}, {{0 * 4 + 0}, {}})), HasSubstr("entry 0 = 0 is malformed"));   // EMPTY listed
  EXPECT_THAT(error({1, 0}), HasSubstr("2 ints given, the map has 8"));
}

}  // namespace
}  // namespace flexjit
