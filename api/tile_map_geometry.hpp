// The shape of a tile map (templates/common/tile_map.cuh) in either orientation: the forward's
// block mask has a row per query tile listing kv tiles, the backward's transposed map a row per kv
// tile listing query tiles. Either way there is a row per (map batch, map head, row tile): counts
// first (one int a row), then the entries (row_entries() ints a row). One type for the builder's
// launch, the workspace or storage size, and the kernels' TileMapRef. Internal to the library.
#pragma once

#include <array>
#include <cstddef>

#include "codegen/generated_kernel.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

enum class TileMapRows { query_tiles, kv_tiles };

struct TileMapGeometry {
  TileMapRows rows_are = TileMapRows::query_tiles;
  int q_tiles = 0, kv_tiles = 0;
  int maps_b = 0, maps_h = 0;  // B / Hq when the map has one per batch entry / query head, else 1

  int row_tiles() const { return rows_are == TileMapRows::query_tiles ? q_tiles : kv_tiles; }
  int row_entries() const { return rows_are == TileMapRows::query_tiles ? kv_tiles : q_tiles; }
  std::size_t rows() const;
  std::size_t ints() const { return rows() * (1 + static_cast<std::size_t>(row_entries())); }
  // Bytes from the map's start to its entries (after one count a row).
  std::size_t entries_offset() const { return rows() * sizeof(int); }
  // What a kernel follows; without `base` the two pointers stay null for the caller to point at
  // a map that does not exist yet (a workspace).
  TileMapRef ref() const;
  TileMapRef ref(const int* base) const;
  // The builder's arguments (pointers likewise) and grid (a CTA per row tile of each map).
  TileMapArgs builder_args(int Tq, int Tkv) const;
  TileMapArgs builder_args(int* base, int Tq, int Tkv) const;
  std::array<unsigned, 3> builder_grid() const;
};

// The map of `kernel`'s tiles for a call of these sizes. Zero rows when the kernel has no builder.
TileMapGeometry tile_map_geometry(const codegen::GeneratedKernel& kernel, TileMapRows rows_are, int B, int Hq, int Tq,
                                  int Tkv);

}  // namespace flexjit::api
