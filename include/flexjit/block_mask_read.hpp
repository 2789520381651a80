// Reading a built block mask back on the host (after copying its first mask.storage_ints() ints
// there): the visited tiles of each query tile, decoded, and how many there are. `flexjit run`
// reports a map this way; tests check maps against brute force with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flexjit/block_mask.hpp"
#include "flexjit/error.hpp"

namespace flexjit {

struct VisitedTile {
  int kv_tile;
  int cls;  // 1 = FULL, 2 = PARTIAL
};

// `ints`: the first mask.storage_ints() ints of the mask's storage. Rows are indexed like the
// map: (b * maps_h + h) * q_tiles + q_tile. Throws flexjit::Error on a malformed row (count out
// of range, an entry out of range or out of order, a class other than FULL / PARTIAL).
std::vector<std::vector<VisitedTile>> decode_block_mask(const BlockMask& mask, const std::vector<std::int32_t>& ints);

struct BlockMaskCounts {
  std::int64_t pairs = 0;    // (query tile, kv tile) pairs in the map's rows
  std::int64_t visited = 0;  // of which not EMPTY
  std::int64_t full = 0;     // of which FULL (the mask is not evaluated there)
  std::string str() const;   // "412 of 2080 tile pairs visited (19.8%), 356 of them full"
};
BlockMaskCounts count_block_mask(const BlockMask& mask, const std::vector<std::vector<VisitedTile>>& rows);

}  // namespace flexjit
