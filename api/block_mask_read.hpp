// Reading a built block mask back on the host (after copying its storage there): the visited
// tiles of each query tile, decoded. Used by `flexjit run` to report a map and by the tests that
// check a map against brute force.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flexjit/block_mask.hpp"

namespace flexjit::api {

struct VisitedTile {
  int kv_tile;
  int cls;  // 1 = FULL, 2 = PARTIAL
};

// `ints`: the first block_mask_bytes / 4 ints of the mask's storage. Rows are indexed like the
// map: (b * maps_h + h) * q_tiles + q_tile. Throws std::runtime_error on a malformed row (count
// out of range, an entry out of range or out of order, a class other than FULL / PARTIAL).
std::vector<std::vector<VisitedTile>> decode_block_mask(const BlockMask& mask, const std::vector<std::int32_t>& ints);

struct BlockMaskCounts {
  std::int64_t pairs = 0;    // (query tile, kv tile) pairs in the map's rows
  std::int64_t visited = 0;  // of which not EMPTY
  std::int64_t full = 0;     // of which FULL (the mask is not evaluated there)
};
BlockMaskCounts count_block_mask(const BlockMask& mask, const std::vector<std::vector<VisitedTile>>& rows);

// "412 of 2080 tile pairs visited (19.8%), 356 of them full"
std::string describe(const BlockMaskCounts& c);

}  // namespace flexjit::api
