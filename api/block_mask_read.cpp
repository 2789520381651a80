#include "flexjit/block_mask_read.hpp"

#include <fmt/format.h>

#include "flexjit/error.hpp"

namespace flexjit {

std::vector<std::vector<VisitedTile>> decode_block_mask(const BlockMask& mask, const std::vector<std::int32_t>& ints) {
  const std::int64_t rows = mask.rows();
  const std::int64_t need = mask.storage_ints();
  if (static_cast<std::int64_t>(ints.size()) < need)
    throw Error(fmt::format("block mask: {} ints given, the map has {}", ints.size(), need));
  std::vector<std::vector<VisitedTile>> out(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int32_t count = ints[static_cast<std::size_t>(r)];
    if (count < 0 || count > mask.kv_tiles)
      throw Error(fmt::format("block mask row {}: count {} outside [0, {}]", r, count, mask.kv_tiles));
    const std::size_t base = static_cast<std::size_t>(rows + r * mask.kv_tiles);
    int previous = -1;
    for (int i = 0; i < count; ++i) {
      const std::int32_t e = ints[base + static_cast<std::size_t>(i)];
      const int tile = e >> 2, cls = e & 3;
      if (e < 0 || tile >= mask.kv_tiles || tile <= previous || (cls != 1 && cls != 2))
        throw Error(fmt::format("block mask row {}: entry {} = {} is malformed", r, i, e));
      out[static_cast<std::size_t>(r)].push_back({tile, cls});
      previous = tile;
    }
  }
  return out;
}

BlockMaskCounts count_block_mask(const BlockMask& mask, const std::vector<std::vector<VisitedTile>>& rows) {
  BlockMaskCounts c;
  c.pairs = mask.rows() * mask.kv_tiles;
  for (const auto& row : rows) {
    c.visited += static_cast<std::int64_t>(row.size());
    for (const auto& t : row) c.full += t.cls == 1;
  }
  return c;
}

std::string BlockMaskCounts::str() const {
  const double pct = pairs ? 100.0 * static_cast<double>(visited) / static_cast<double>(pairs) : 0.0;
  return fmt::format("{} of {} tile pairs visited ({:.1f}%), {} of them full", visited, pairs, pct, full);
}

}  // namespace flexjit
